"""A request never names a file on the server: options that name one are refused (422) before anything is read,
with the same answer whether or not the path exists, so a client can neither read, block nor probe the server's
files. The server's operator may still choose a head file for the server's default method."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from ragfacts.methods.base import file_options, method_class, registered_methods

REFUSED = "names a file on the server"


@pytest.fixture
def paths(tmp_path: Path) -> dict[str, str]:
    """A FIFO (opening it for reading waits for a writer), a device, a file that exists and one that does not."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    existing = tmp_path / "head.json"
    existing.write_text("{}", encoding="utf-8")
    return {"fifo": str(fifo), "zero": "/dev/zero", "existing": str(existing), "missing": str(tmp_path / "none")}


def check_body(**given: object) -> dict[str, object]:
    return {"reference": "The Nile flows north.", "answer": "The Nile flows south.", **given}


@pytest.mark.parametrize("where", ["fifo", "zero", "existing", "missing"])
@pytest.mark.parametrize("how", ["options", "spec"])
async def test_a_head_named_by_a_request_is_refused_alike_for_any_path(
    service_settings, open_client, scripted_server, paths, where, how
):
    client = await open_client(service_settings())
    path = paths[where]
    if how == "options":
        body = check_body(options={"strategy": "trained_head", "head": path})
    else:
        body = check_body(method=f"lface4rag:strategy=trained_head,head={path}")
    response = await asyncio.wait_for(client.post("/check", json=body), timeout=10)  # a FIFO read would block
    assert response.status_code == 422, response.text
    message = response.json()["message"]
    assert REFUSED in message and path not in message  # one answer for every path: nothing learnt of the files
    assert scripted_server.requests == []


async def test_evaluate_refuses_a_head_in_its_precision_spec(service_settings, open_client, scripted_server, paths):
    client = await open_client(service_settings())
    body = {
        "rows": [{"answer": "A.", "reference": "R."}],
        "precision": f"lface4rag:strategy=trained_head,head={paths['fifo']}",
        "recall": "none",
    }
    response = await asyncio.wait_for(client.post("/evaluate", json=body), timeout=10)
    assert response.status_code == 422 and REFUSED in response.json()["message"]
    assert scripted_server.requests == []


async def test_the_service_stays_up_for_other_requests_after_a_refused_path(service_settings, open_client, paths):
    client = await open_client(service_settings())
    await client.post("/check", json=check_body(options={"strategy": "trained_head", "head": paths["fifo"]}))
    health = await asyncio.wait_for(client.get("/health"), timeout=5)
    assert health.status_code == 200 and health.json()["status"] == "ok"


def test_every_option_that_names_a_file_is_declared():
    """The audit, kept true: an option whose name or description says it is a file or a path is declared as one
    (and so refused over HTTP); today that is lface4rag's head, and no method takes a URL."""
    found = {}
    for name, cls in registered_methods().items():
        for option, field in cls.Options.model_fields.items():
            said = f"{option} {field.description or ''}".lower()
            if any(word in said for word in ("file", "path", "url", "directory")):
                found[(name, option)] = option in file_options(method_class(name))
    assert found == {("lface4rag", "head"): True}
