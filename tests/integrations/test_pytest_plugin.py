"""The pytest plugin, run by pytest itself (pytester): options and ini keys configure `ragfacts_judge`, a failing
assertion shows the flagged segment, and loading the plugin costs no model-client import.

The user's test runs are pytest subprocesses, as a user's are: the plugin loads from the installed entry point, and
the judge's calls reach the scripted server over HTTP with the key from the environment.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from ragfacts.integrations import Judge
from ragfacts.text import delimit
from tests.conftest import TEST_KEY
from tests.methods.test_lface4rag import REFERENCE, SEG1, decomposition, segment_rule
from tests.scripted_server import Reply, ScriptedServer

pytest_plugins = ["pytester"]

WRONG = "The Nile flows south through Egypt."

USER_TESTS = f"""
from ragfacts.testing import assert_faithful

REFERENCE = {REFERENCE!r}

def test_supported(ragfacts_judge):
    assert_faithful({SEG1!r}, REFERENCE, judge=ragfacts_judge)

def test_unsupported(ragfacts_judge):
    assert_faithful({WRONG!r}, REFERENCE, judge=ragfacts_judge)

def test_the_default_judge_is_the_sessions():
    assert_faithful({SEG1!r}, REFERENCE)
"""


def script(server: ScriptedServer) -> None:
    """SEG1 is judged consistent; WRONG is one segment, judged inconsistent (KInve.) by both stages."""
    server.when(delimit("answer", SEG1), decomposition(SEG1))
    server.when(delimit("answer", WRONG), decomposition(WRONG))
    server.when(segment_rule(WRONG), Reply.schema_valid(overrides={"verdict": "inconsistent", "error_type": "KInve."}))


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    plugins = {e.name: e.value for e in entry_points(group="pytest11")}
    assert plugins.get("ragfacts") == "ragfacts.integrations.pytest_plugin", "reinstall: pip install -e ."


def test_a_supported_answer_passes_and_an_unsupported_one_fails_showing_its_segment(pytester, server):
    script(server)
    pytester.makepyfile(test_answers=USER_TESTS)
    result = pytester.runpytest_subprocess(
        "--ragfacts-model", "openai:scripted-model", "--ragfacts-base-url", server.base_url
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: ragfacts (lface4rag): INCONSISTENT, faithfulness 0.00",
            f'*flagged segment #1 (inconsistent): "{WRONG}"',
            "*error types: KInve. entity inversion",
            "*FAILED test_answers.py::test_unsupported*",
        ]
    )
    assert {r.headers["authorization"] for r in server.requests} == {f"Bearer {TEST_KEY}"}


def test_ini_keys_configure_the_judge_and_the_command_line_wins(pytester, server):
    pytester.makeini(
        f"""
        [pytest]
        ragfacts_model = openai:from-ini
        ragfacts_base_url = {server.base_url}
        ragfacts_method = lface4rag:strategy=paper
        ragfacts_recall_method = prompt-tf
        """
    )
    pytester.makepyfile(
        test_judge="""
        from ragfacts.integrations import Judge

        def test_judge(ragfacts_judge):
            assert ragfacts_judge == Judge(
                model="openai:from-cli", base_url=BASE_URL, method="lface4rag:strategy=paper", recall_method="prompt-tf"
            )
        """.replace("BASE_URL", repr(server.base_url))
    )
    pytester.runpytest_subprocess("--ragfacts-model", "openai:from-cli").assert_outcomes(passed=1)


def test_without_options_the_judge_is_ragfacts_defaults(pytester):
    pytester.makepyfile(
        test_judge="""
        from ragfacts.integrations import Judge

        def test_judge(ragfacts_judge):
            assert ragfacts_judge == Judge()
        """
    )
    pytester.runpytest_subprocess().assert_outcomes(passed=1)


def test_an_answer_that_could_not_be_judged_fails_the_test_and_says_so(pytester, server):
    server.when(delimit("answer", SEG1), Reply.malformed())
    pytester.makepyfile(USER_TESTS)
    options = ("--ragfacts-model", "openai:m", "--ragfacts-base-url", server.base_url)
    result = pytester.runpytest_subprocess("-k", "supported and not un", *options)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*could not judge this answer (UNSCORED)*", "*failed call: decompose*"])


def test_loading_the_plugin_imports_no_model_client():
    code = (
        "import sys, ragfacts.integrations.pytest_plugin, ragfacts.testing;"
        "print(sorted(m for m in ('ragfacts.api', 'openai', 'httpx', 'pydantic', 'numpy') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_the_fixture_holds_a_judge(ragfacts_judge):
    assert isinstance(ragfacts_judge, Judge)
