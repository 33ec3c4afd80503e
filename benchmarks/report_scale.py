"""A report of 1,000 answers: its file size, and how soon a real browser shows it and can filter it.

Evaluates 1,000 RAGAS-style rows (precision and recall) against the scripted test server with replies of
realistic size (three segments an answer, each with its points, quotes and checks; facts with verdicts),
writes the HTML report, then opens it in headless Chromium (Debian's chromium + chromedriver) and measures
the time from navigation to the page being interactive (its script has built every answer row), and to a
filter applied over all rows.

    python benchmarks/report_scale.py [--answers 1000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _provenance import provenance  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402

import ragfacts  # noqa: E402
from ragfacts.report.html_report import render_html  # noqa: E402
from ragfacts.report.report import load_run  # noqa: E402
from ragfacts.text import delimit  # noqa: E402

REFERENCE = (
    "The Nile is a major north-flowing river in northeastern Africa. It flows into the Mediterranean Sea. "
    "With a length of about 6,650 km, it has historically been considered the longest river in the world. "
    "Its drainage basin covers eleven countries. The river has two major tributaries, the White Nile and the "
    "Blue Nile. The White Nile is the longer one; the Blue Nile carries most of the water and silt. "
)


def rows(count: int) -> list[dict]:
    return [
        {
            "user_input": f"What do we know about the Nile (question {n})?",
            "response": f"The Nile flows north into the Mediterranean Sea. It is about 6,650 km long. "
            f"Its basin covers {n % 20} countries.",
            "retrieved_contexts": [f"Document {n}. " + REFERENCE, "The Blue Nile carries most of the silt."],
            "reference": "The Nile flows north for about 6,650 km into the Mediterranean Sea.",
        }
        for n in range(count)
    ]


def script(server: ScriptedServer) -> None:
    point = {
        "point": "The Nile flows north",
        "reference_quote": "It flows into the Mediterranean Sea.",
        "check": "The reference states the direction and the sea; the segment matches both.",
        "verdict": "consistent",
    }
    server.when("<segment>", Reply.json({"points": [point, point], "error_type": None, "verdict": "consistent"}))
    server.when("<reference_answer>", Reply.json({"facts": ["The Nile flows north.", "The Nile is 6,650 km long."]}))


def measure_browser(path: Path) -> dict[str, float]:
    from selenium import webdriver
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync",
        "--window-size=1280,1000",
    ):
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    driver = webdriver.Chrome(service=service, options=options)
    try:
        driver.get(path.as_uri())
        timing = driver.execute_script(
            "var n = performance.getEntriesByType('navigation')[0];"
            "return {interactive: n.domInteractive, content_loaded: n.domContentLoadedEventEnd, load: n.loadEventEnd};"
        )
        rows = len(driver.find_elements(By.CSS_SELECTOR, "#answers .answer"))
        started = time.perf_counter()
        driver.find_element(By.ID, "f-search").send_keys("question 99")
        count = driver.find_element(By.ID, "count").text
        filtered_ms = 1000 * (time.perf_counter() - started)
        return {
            **{k: round(v) for k, v in timing.items()},
            "rows": rows,
            "filter_ms": round(filtered_ms),
            "after_filter": count,
        }
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "report_scale.json")
    args = parser.parse_args()
    server = ScriptedServer().start()
    script(server)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        started = time.perf_counter()
        for row in rows(args.answers):
            sentences = row["response"].split(". ")
            server.when(
                delimit("answer", row["response"]), Reply.json({"segments": [s.rstrip(".") + "." for s in sentences]})
            )
        ragfacts.evaluate(
            rows(args.answers),
            model="openai:scripted",
            output=work / "run",
            settings={"base_url": server.base_url, "concurrency": 16, "cache": False},
        )
        run_s = time.perf_counter() - started
        started = time.perf_counter()
        page = render_html([load_run(work / "run")])
        render_s = time.perf_counter() - started
        path = work / "report.html"
        path.write_text(page, encoding="utf-8")
        browser = measure_browser(path)
    server.stop()
    generated = "".join(json.dumps(row) + "\n" for row in rows(args.answers)).encode()
    report = {
        "provenance": provenance(data={"rows (report_scale.rows)": generated}),
        "answers": args.answers,
        "html_bytes": len(page.encode("utf-8")),
        "evaluate_s": round(run_s, 1),
        "render_s": round(render_s, 2),
        "browser_ms": browser,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
