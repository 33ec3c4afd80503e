"""Tables of the shipped head on long English RAG answers: per held-out source, per injected error type, and where
a flagged answer's flag points (`benchmarks/rag_en_report.py`)."""

from __future__ import annotations

from typing import Any

from _gen.markdown import table
from _gen.results import interval, results_table

_SOURCES = {
    "lfqa": "LFQA-Verification (long-form answers, 3 annotators a sentence)",
    "mtrag": "MTRAG (multi-turn RAG answers, human faithfulness 1-4)",
    "ares": "ARES judge test set (answers over Databricks docs)",
}
_TYPES = {
    "KCont.": "KCont. (a statement negated)",
    "KInve.": "KInve. (two numbers, dates or names swapped)",
    "LOver.": "LOver. (a hedge made universal)",
    "LCaus.": "LCaus. (cause and effect swapped)",
    "LConf.": "LConf. (a condition's sides swapped)",
    "LOthe.": "LOthe. (a concession's sides swapped)",
}


@results_table("rag_en.answers", "rag_en_report.json")
def _answers(data: dict[str, Any]) -> str:
    rows = []
    for source, name in _SOURCES.items():
        found = data["answers"][source]
        rows.append(
            [
                name,
                f"{found['extracted']} of {found['rows']}",
                interval(found.get("balanced_accuracy")),
                interval(found.get("faithful_passed")),
                interval(found.get("flawed_caught")),
                f"{found['auc']:.3f}" if found.get("auc") is not None else "-",
            ]
        )
    header = ["held-out test split", "answers", "balanced accuracy", "faithful passed %", "flawed caught %", "AUC"]
    return table(header, rows) + f"\nThe shipped head (digest `{data['head_digest']}`); bootstrap 95% intervals.\n"


@results_table("rag_en.injections", "rag_en_report.json")
def _injections(data: dict[str, Any]) -> str:
    by_type = data["injections"]["by_type"]
    rows = []
    for kind, name in (*_TYPES.items(), ("faithful", "faithful sentences mined with them (passed %)")):
        found = by_type.get(kind, {}).get("all")
        rows.append([name, str(found["n"]) if found else "0", interval(found) if found and found["n"] else "-"])
    originals = data["injections"].get("originals_passed")
    if originals:
        rows.append(["faithful answers they were injected into (passed %)", str(originals["n"]), interval(originals)])
    header = ["injected error type", "answers", "caught % (faithful: passed %)"]
    read = data["injections"]
    return table(header, rows) + f"\n{read['extracted']} of the {read['rows']} rows of the test file read.\n"


@results_table("rag_en.localisation", "rag_en_report.json")
def _localisation(data: dict[str, Any]) -> str:
    found = data["localisation_lfqa"]
    points = found["flag_points_at_unsupported"]
    rows = [
        ["every sentence scored, flagged under the head's threshold", interval(found["sentence_scores"])],
        ["as the report marks them (only a flagged answer's sentences)", interval(found["as_reported"])],
    ]
    return (
        table(["sentences of LFQA's held-out answers", "F1 of “not supported”"], rows)
        + f"\n{found['sentences']} labelled sentences of {found['answers']} answers, {found['not_supported']} of them "
        f"not supported. Of the {points['flagged_answers_with_an_unsupported_sentence']} flagged answers that hold "
        f"a sentence labelled not supported, the sentence carrying the verdict is one in "
        f"{interval(points)}% (a sentence drawn at random: {100 * points['random_sentence']:.1f}%).\n"
    )
