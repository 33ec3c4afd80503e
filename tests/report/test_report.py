"""Reports: one self-contained file, every text from data escaped, runs compared; checked in a real browser."""

from __future__ import annotations

import html
import json
import os
import shutil
from pathlib import Path

import pytest

from ragfacts.datasets.dataset import Dataset
from ragfacts.methods.base import create_method
from ragfacts.report.html_report import render_html, script_json
from ragfacts.report.report import differing_labels, load_run, load_runs, report_markdown
from ragfacts.runs.planning import RunPlan
from ragfacts.runs.rundir import RunDir
from ragfacts.runs.runner import run
from ragfacts.text import delimit
from tests.scripted_server import Reply

HOSTILE = [
    "<script>window.pwned = 1</script> The Nile flows north.",
    "</textarea><img src=x onerror=window.pwned=2> It floods.",
    "javascript:window.pwned=3 It is long.",
    "A plain faithful answer.",
]


def rows() -> list[dict]:
    return [
        {
            "id": f"r{n}",
            "question": "Where?",
            "answer": answer,
            "reference": "The Nile flows north. </script><script>window.pwned=4</script> It floods in summer.",
            "label": "consistent" if n % 2 else "inconsistent",
            "error_type": "KCont." if n % 2 == 0 else None,
            "ground_truth": "The Nile flows north.",
            "lang": "zh" if n == 3 else "en",  # the row's own language column wins over detection
        }
        for n, answer in enumerate(HOSTILE)
    ]


async def make_run(tmp_path: Path, make_model, server, name: str = "run", flip: bool = False) -> Path:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows()), encoding="utf-8")
    server.when(delimit("answer", HOSTILE[1]), Reply.error(400))
    verdict = "consistent" if flip else "inconsistent"
    server.when(delimit("answer", HOSTILE[0]), Reply.json({"problems": ["<b>bold</b>"], "verdict": verdict}))
    plan = RunPlan(dataset=Dataset.open(data), methods=[create_method("holistic"), create_method("faaf")])
    await run(RunDir(tmp_path / name), plan, make_model())
    return tmp_path / name


async def test_the_report_is_one_file_that_needs_no_network_and_holds_every_answer(
    tmp_path, make_model, scripted_server
):
    page = render_html([load_run(await make_run(tmp_path, make_model, scripted_server))])
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page
    assert "default-src 'none'" in page  # the page itself forbids any load
    data = json.loads(page.split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert [item["id"] for item in data["items"]] == ["r0", "r1", "r2", "r3"]
    assert data["items"][1]["flags"]["failures"] and data["items"][0]["flags"]["disagree"] is False


async def test_the_report_lists_answers_in_the_dataset_s_order_not_the_order_they_were_judged(
    tmp_path, make_model, scripted_server
):
    run_dir = await make_run(tmp_path, make_model, scripted_server)
    results = run_dir / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    results.write_text("".join(reversed(lines)), encoding="utf-8")  # as if the last row had been judged first
    data = json.loads(render_html([load_run(run_dir)]).split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert [item["id"] for item in data["items"]] == ["r0", "r1", "r2", "r3"]
    (tmp_path / "data.jsonl").unlink()  # without the dataset: the row each line records
    data = json.loads(render_html([load_run(run_dir)]).split('id="report-data">', 1)[1].split("</script>", 1)[0])
    assert [item["id"] for item in data["items"]] == ["r0", "r1", "r2", "r3"]
    older = [json.loads(line) for line in reversed(lines)]
    for line in older:  # lines written by a version that did not record the row: the order they were judged in
        del line["row"]
    results.write_text("".join(json.dumps(line) + "\n" for line in older), encoding="utf-8")
    data = json.loads(render_html([load_run(run_dir)]).split('id="report-data">', 1)[1].split("</script>", 1)[0])
    judged_order = list(dict.fromkeys(line["id"] for line in older))
    assert [item["id"] for item in data["items"]] == judged_order != ["r0", "r1", "r2", "r3"]


async def test_text_from_data_cannot_become_markup(tmp_path, make_model, scripted_server):
    page = render_html([load_run(await make_run(tmp_path, make_model, scripted_server))])
    assert page.count("<script") == 2  # ours: the JSON data and the page's code
    assert "window.pwned" not in page.split("<script", 1)[0]  # nothing before the data block
    assert "<img src=x" not in page and "</textarea>" not in page
    assert script_json({"a": "</script><b>&"}) == '{"a":"\\u003c/script\\u003e\\u003cb\\u003e\\u0026"}'


async def test_markdown_report_and_runs_compared(tmp_path, make_model, scripted_server):
    first = await make_run(tmp_path, make_model, scripted_server, "first")
    scripted_server.reset()
    second = await make_run(tmp_path, make_model, scripted_server, "second", flip=True)
    runs = [load_run(first), load_run(second)]
    assert differing_labels(runs) == [
        {"id": "r0", "method": "holistic", "labels": {"first": "inconsistent", "second": "consistent"}}
    ]
    markdown = report_markdown(runs)
    assert "## Run first" in markdown and "## Labels that differ between runs (1)" in markdown
    assert "| holistic |" in markdown and "Usage ledger" in markdown
    assert "Runs compared" in render_html(runs)


MARKUP = "<img src=x onerror=alert(1)>"
TICKED_ID = f"a`b``c {MARKUP}"  # backtick runs of one and two: a one-backtick code span would end inside it


async def hostile_markdown_run(tmp_path: Path, make_model, server, name: str, flip: bool) -> Path:
    """Two answers whose id, source model and language come from the data: backticks, a `|`, a newline, HTML."""
    data = tmp_path / "hostile.jsonl"
    rows = [
        {"id": TICKED_ID, "answer": "The Nile flows north.", "model": f"gpt|4\n{MARKUP}", "lang": "en"},
        {"id": "plain", "answer": "It floods in winter.", "model": "m2", "lang": f"zh|{MARKUP}"},
    ]
    for row, label in zip(rows, ("consistent", "inconsistent"), strict=True):
        row |= {"reference": "The Nile flows north. It floods in summer.", "label": label}
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    verdict = "consistent" if flip else "inconsistent"
    server.when(delimit("answer", "The Nile flows north."), Reply.json({"problems": [], "verdict": verdict}))
    plan = RunPlan(dataset=Dataset.open(data), methods=[create_method("holistic")])
    await run(RunDir(tmp_path / name), plan, make_model())
    return tmp_path / name


async def test_the_markdown_report_keeps_text_from_data_as_text_in_a_commonmark_renderer(
    tmp_path, make_model, scripted_server
):
    from markdown_it import MarkdownIt

    first = await hostile_markdown_run(tmp_path, make_model, scripted_server, MARKUP, flip=False)  # a run folder, too
    scripted_server.reset()
    second = await hostile_markdown_run(tmp_path, make_model, scripted_server, "second", flip=True)
    parser = MarkdownIt("commonmark").enable("table")  # raw HTML passes through, as in most renderers
    markdown = report_markdown(load_runs([first, second]))
    page = parser.render(markdown)
    assert "<img" not in page and MARKUP in html.unescape(page)  # shown as text, never an element
    tokens = [child for token in parser.parse(markdown) if token.children for child in token.children]
    assert TICKED_ID in [token.content for token in tokens if token.type == "code_inline"]  # the id whole, in code
    headers = [cells.split("</th>")[0] for cells in page.split("<th>")[1:]]
    assert html.escape(f"gpt|4 {MARKUP}", quote=False) + " (n=1)" in headers  # `|` and newline: still one cell
    assert html.escape(f"zh|{MARKUP}", quote=False) + " (n=1)" in headers


async def test_runs_in_folders_of_the_same_name_keep_apart(tmp_path, make_model, scripted_server):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    await make_run(tmp_path / "a", make_model, scripted_server)
    scripted_server.reset()
    await make_run(tmp_path / "b", make_model, scripted_server, flip=True)
    runs = load_runs([tmp_path / "a" / "run", tmp_path / "b" / "run"])
    assert [run.name for run in runs] == ["a/run", "b/run"]
    assert differing_labels(runs)[0]["labels"] == {"a/run": "inconsistent", "b/run": "consistent"}


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
REQUIRED = os.environ.get("RAGFACTS_REQUIRE_BROWSER_TESTS") == "1"


def browser():
    if not (CHROMIUM and CHROMEDRIVER):
        if REQUIRED:
            pytest.fail("RAGFACTS_REQUIRE_BROWSER_TESTS=1 but chromium or chromedriver is missing")
        pytest.skip(
            "the browser test needs Debian's chromium and chromium-driver (apt install chromium chromium-driver)"
        )
    try:
        from selenium import webdriver
    except ImportError:
        if REQUIRED:
            raise
        pytest.skip("the browser test needs selenium (pip install -e '.[dev]')")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        "--window-size=1280,1600",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=webdriver.ChromeService(executable_path=CHROMEDRIVER), options=options)


async def test_the_report_works_in_a_real_browser(tmp_path, make_model, scripted_server):
    path = tmp_path / "report.html"
    path.write_text(render_html([load_run(await make_run(tmp_path, make_model, scripted_server))]), encoding="utf-8")
    driver = browser()
    try:
        from selenium.webdriver.common.by import By

        driver.get(path.as_uri())
        assert driver.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1"
        assert driver.execute_script("return window.pwned === undefined")
        answers = driver.find_elements(By.CSS_SELECTOR, "#answers .answer")
        assert len(answers) == 4
        assert "<script>window.pwned = 1</script>" in answers[0].text  # shown as text

        driver.find_element(By.ID, "f-failures").click()
        visible = [a for a in answers if a.is_displayed()]
        assert len(visible) == 1 and "onerror" in visible[0].text
        assert driver.find_element(By.ID, "count").text == "1 of 4 answers"
        assert "failures=1" in driver.current_url

        driver.find_element(By.ID, "f-failures").click()
        driver.find_element(By.ID, "f-search").send_keys("plain faithful")
        assert [a.find_element(By.CLASS_NAME, "id").text for a in answers if a.is_displayed()] == ["r3"]
        driver.find_element(By.ID, "f-search").clear()

        from selenium.webdriver.support.ui import Select

        Select(driver.find_element(By.ID, "f-lang")).select_by_value("zh")  # a select fires `change`
        assert [a.find_element(By.CLASS_NAME, "id").text for a in answers if a.is_displayed()] == ["r3"]
        Select(driver.find_element(By.ID, "f-lang")).select_by_value("")
        Select(driver.find_element(By.ID, "f-type")).select_by_value("KCont.")
        assert driver.find_element(By.ID, "count").text == "2 of 4 answers"

        driver.get(path.as_uri() + "#disagree=1")
        assert driver.find_element(By.ID, "count").text == "2 of 4 answers"
        driver.get(path.as_uri() + "#q=r0")
        first = next(a for a in driver.find_elements(By.CSS_SELECTOR, "#answers .answer") if a.is_displayed())
        first.find_element(By.CLASS_NAME, "head").click()
        detail = first.find_element(By.CLASS_NAME, "detail")
        assert "<b>bold</b>" in detail.text and driver.execute_script("return window.pwned === undefined")
        assert detail.find_elements(By.TAG_NAME, "b") == []
        assert "</script><script>window.pwned=4</script>" in detail.find_element(By.CLASS_NAME, "reference").text
        driver.save_screenshot(str(tmp_path / "report.png"))
        assert (tmp_path / "report.png").stat().st_size > 10_000
    finally:
        driver.quit()


async def test_the_answer_is_coloured_by_its_segments_verdicts_in_a_browser(tmp_path, make_model, scripted_server):
    answer = "The Nile flows north. It floods in winter."
    data = tmp_path / "data.jsonl"
    row = {
        "id": "s1",
        "answer": answer,
        "reference": "The Nile flows north. It floods in summer.",
        "label": "inconsistent",
    }
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    scripted_server.enqueue(Reply.json({"segments": ["The Nile flows north.", "It floods in winter."]}))
    scripted_server.when(
        delimit("segment", "It floods in winter."),
        Reply.schema_valid({"verdict": "inconsistent", "error_type": "KCont."}),
    )
    plan = RunPlan(dataset=Dataset.open(data), methods=[create_method("lface4rag", strategy="paper")])
    await run(RunDir(tmp_path / "run"), plan, make_model())
    path = tmp_path / "report.html"
    path.write_text(render_html([load_run(tmp_path / "run")]), encoding="utf-8")
    driver = browser()
    try:
        from selenium.webdriver.common.by import By

        driver.get(path.as_uri())
        driver.find_element(By.CSS_SELECTOR, "#answers .answer .head").click()
        marks = driver.find_elements(By.CSS_SELECTOR, ".answer-text mark")
        assert [(m.text, m.get_attribute("class")) for m in marks] == [
            ("The Nile flows north.", "consistent"),
            ("It floods in winter.", "inconsistent"),
        ]
    finally:
        driver.quit()


def stored_check(label: str, probability: float, explanation: str, reason: str | None = None, **judged) -> dict:
    """A whole-answer check as a results line stores it: a probability against a threshold."""
    from ragfacts.methods.lface4rag import AnswerLabel, CheckResult
    from ragfacts.methods.precision.options import CheckOptions
    from ragfacts.methods.precision.results import CallRecord, HolisticResult

    holistic = HolisticResult(
        call=CallRecord(stage="holistic_score"), probability=probability, explanation=explanation, **judged
    )
    result = CheckResult(label=AnswerLabel(label), lang="en", options=CheckOptions(), holistic=holistic, reason=reason)
    return result.model_dump(mode="json")


def test_a_holistic_score_shows_its_probability_against_the_threshold_once():
    from ragfacts.report.views import result_view

    passed = stored_check("consistent", 0.91, "P(supported) = 0.91 >= 0.58", verdict="consistent")
    view = result_view("lface4rag", passed, {"kind": "precision", "label": "consistent", "score": 1.0})
    assert view["problems"] == ["whole answer: P(supported) = 0.91 >= 0.58"]

    reason = "judged inconsistent as a whole (P(supported) = 0.41 < 0.58)"
    flagged = stored_check("inconsistent", 0.41, "P(supported) = 0.41 < 0.58", reason, verdict="inconsistent")
    view = result_view("lface4rag", flagged, {"kind": "precision", "label": "inconsistent", "score": 0.0})
    assert view["problems"] == []  # the reason, shown above the segments, already says it


def test_an_uncertain_answer_shows_its_probability_and_a_cascade_shows_who_decided():
    from ragfacts.report.views import result_view

    first = stored_check("uncertain", 0.47, "x", "uncertain: x", calibrated=True, verdict="inconsistent")
    view = result_view("lface4rag", first, {"kind": "precision", "label": "uncertain", "score": None})
    assert view["label"] == "uncertain" and view["probability"] == 0.47 and view["calibrated"] is True

    second = {"id": "a", "label": "consistent", "lang": "en", "judgement": {"problems": [], "call": {"stage": "h"}}}
    cascade = {
        "first": first,
        "first_outcome": {"kind": "precision", "label": "uncertain"},
        "second": second,
        "second_outcome": {"kind": "precision", "label": "consistent"},
        "second_model": "gpt-4o",
    }
    spec = "lface4rag » holistic @ gpt-4o"  # a cascade's spec names no registered method
    view = result_view(spec, cascade, {"kind": "precision", "label": "consistent", "score": 1.0})
    assert view["label"] == "consistent" and view["probability"] == 0.47
    assert view["problems"] == ["the first judge left it uncertain (P(faithful) 0.47); gpt-4o decided"]
