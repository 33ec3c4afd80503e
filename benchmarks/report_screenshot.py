"""A screenshot of a run's report as a user first sees it, with one answer opened: for docs/guides/reports.md.

Renders the report of RUN_DIR to HTML (as `ragfacts report` does), opens it in headless Chromium (Debian's
chromium and chromium-driver, through selenium), scrolls to the answers, opens the first answer whose label
disagrees with its gold label (else the first), and saves the window as PNG.

    python benchmarks/report_screenshot.py RUN_DIR [--out docs/report.png] [--width 1280] [--height 1500]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.common.by import By

from ragfacts.report.html_report import render_html
from ragfacts.report.report import load_runs

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "report.png")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=1500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragfacts-shot-") as scratch:
        page = Path(scratch) / "report.html"
        page.write_text(render_html(load_runs([args.run])), encoding="utf-8")
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "chromium"
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-component-update", "--no-first-run", "--disable-sync",
                     f"--window-size={args.width},{args.height}"):  # fmt: skip
            options.add_argument(flag)
        service = webdriver.ChromeService(executable_path=shutil.which("chromedriver") or "chromedriver")
        driver = webdriver.Chrome(service=service, options=options)
        try:
            driver.get(page.as_uri() + "#disagree=1")
            answers = [a for a in driver.find_elements(By.CSS_SELECTOR, "#answers .answer") if a.is_displayed()]
            if not answers:
                driver.get(page.as_uri())
                answers = driver.find_elements(By.CSS_SELECTOR, "#answers .answer")
            driver.execute_script("document.getElementById('answers-title').scrollIntoView()")
            answers[0].find_element(By.CLASS_NAME, "head").click()
            args.out.parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(args.out))
        finally:
            driver.quit()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
