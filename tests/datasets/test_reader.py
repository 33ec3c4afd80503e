"""The one dataset reader: JSONL, JSON and CSV rows, UTF-8 only, errors that name the line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ragfacts.datasets.reader import DatasetError, check_readable, read_rows


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_jsonl_splits_on_newline_only_so_unicode_line_separators_stay_text(tmp_path):
    answer = "first\u2028second\u0085third\rfourth"
    path = write(tmp_path / "rows.jsonl", json.dumps({"answer": answer}, ensure_ascii=False) + "\r\n\n")
    assert [row for _, row in read_rows(path)] == [{"answer": answer}]


def test_a_broken_jsonl_line_is_named(tmp_path):
    path = write(tmp_path / "rows.jsonl", '{"answer": "a"}\n\n{broken\n')
    with pytest.raises(DatasetError, match="line 3: not JSON"):
        list(read_rows(path))


def test_a_jsonl_line_must_be_an_object(tmp_path):
    with pytest.raises(DatasetError, match="line 1: expected a JSON object"):
        list(read_rows(write(tmp_path / "rows.jsonl", "[1, 2]\n")))


@pytest.mark.parametrize(
    "document",
    [
        [{"answer": "a"}, {"answer": "b"}],
        {"data": [{"answer": "a"}, {"answer": "b"}]},
        {"answer": ["a", "b"]},
    ],
)
def test_json_is_an_array_of_objects_a_wrapped_array_or_columns(tmp_path, document):
    path = write(tmp_path / "rows.json", json.dumps(document))
    assert [row["answer"] for _, row in read_rows(path)] == ["a", "b"]


def test_csv_with_a_byte_order_mark_and_quoted_newlines(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_bytes('\ufeffanswer,reference\n"two\nlines",r\n'.encode())
    ((where, row),) = list(read_rows(path))
    assert row == {"answer": "two\nlines", "reference": "r"} and where == "line 2"


def test_an_unterminated_csv_quote_is_an_error_with_its_line_never_merged_rows(tmp_path):
    path = write(tmp_path / "rows.csv", 'answer,reference\nfine,r\n"open quote,r\nlast,r\n')
    rows = read_rows(path)
    assert next(rows)[1] == {"answer": "fine", "reference": "r"}
    with pytest.raises(DatasetError, match=r"line 3: malformed CSV.*never closed"):
        next(rows)


def test_a_csv_row_with_more_fields_than_the_header_is_refused(tmp_path):
    with pytest.raises(DatasetError, match="line 2 has 3 fields, the header 2"):
        list(read_rows(write(tmp_path / "rows.csv", "answer,reference\na,b,c\n")))


def test_an_empty_csv_is_refused(tmp_path):
    with pytest.raises(DatasetError, match="empty"):
        list(read_rows(write(tmp_path / "rows.csv", "")))


def test_text_that_is_not_utf8_is_named_with_its_line(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_bytes("answer,reference\nok,r\ncaf\xe9,r\n".encode("latin-1"))
    with pytest.raises(DatasetError, match=r"not UTF-8 text \(byte 0xe9 at offset 25, line 3\)"):
        check_readable(path)


def test_check_readable_returns_the_sha256_and_refuses_unknown_types(tmp_path):
    path = write(tmp_path / "rows.jsonl", '{"answer": "a"}\n')
    assert check_readable(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    with pytest.raises(DatasetError, match=r"unsupported file type \.txt"):
        check_readable(write(tmp_path / "rows.txt", "x"))
    with pytest.raises(DatasetError, match="no such file"):
        check_readable(tmp_path / "absent.csv")
