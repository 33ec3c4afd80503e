"""Files replaced whole, appended to and read without following links (imports nothing of ragfacts).

A file replaced whole is written beside its path and moved over it only once complete: a reader, or a run killed
half-way, sees the old file or the new one, never part of one; a failed write leaves no temporary file behind.
Files a run writes into are opened without following a symbolic link (`O_NOFOLLOW`): a link planted in a run
directory (shipped in a cloned repository, or in a shared /tmp) makes the open fail instead of writing through it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, TextIO


@contextmanager
def replacing(path: Path, *, newline: str | None = None) -> Iterator[TextIO]:
    """A UTF-8 text file to write that takes the place of `path` when the block ends without an error."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.unlink(missing_ok=True)  # a link left (or planted) there is removed, never written through
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666)
        with os.fdopen(descriptor, "w", encoding="utf-8", newline=newline) as handle:
            yield handle
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # not on Windows, where creating a link takes privileges
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def open_own(path: Path, flags: int) -> int:
    """A descriptor of `path` opened with `flags` (os.O_*), created 0o666 less the umask if O_CREAT is among them;
    OSError if `path` is a symbolic link (ELOOP) rather than following it."""
    return os.open(path, flags | _NOFOLLOW | _CLOEXEC, 0o666)


def appending(path: Path, *, end_torn_line: bool = False) -> BinaryIO:
    """`path` opened to append bytes, unbuffered, created if missing, never through a link. With `end_torn_line`,
    a last line torn by a killed process is ended first, so that the first line appended is not glued to it (a
    reader skips the torn line and reads the next whole); logs that cut a torn line before appending leave it out."""
    handle = os.fdopen(open_own(path, os.O_RDWR | os.O_APPEND | os.O_CREAT), "r+b", buffering=0)
    try:
        size = os.fstat(handle.fileno()).st_size
        if end_torn_line and size and os.pread(handle.fileno(), 1, size - 1) != b"\n":
            handle.write(b"\n")
    except BaseException:
        handle.close()
        raise
    return handle


def replace_text(path: Path, text: str) -> None:
    """Write `text` to `path`, replacing it whole."""
    with replacing(path) as handle:
        handle.write(text)


def read_regular_file(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them; OSError for anything else.

    Opened without blocking (a FIFO would wait for a writer) and checked on the open handle: a FIFO, a device
    (/dev/zero, /dev/stdin), a directory or a file larger than `limit` is refused before a byte is read.
    """
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(descriptor, "rb") as handle:
        found = os.fstat(descriptor)
        if not stat.S_ISREG(found.st_mode):
            raise OSError(f"{path} is not a regular file")
        if found.st_size > limit:
            raise OSError(f"{path} is larger than {limit:,} bytes")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"{path} is larger than {limit:,} bytes")
    return data
