"""Synthetic labelled data: flawed answers with one error of each type of the typology, and faithful paraphrases.

`ragfacts synth ROWS -o OUT.jsonl` (Face4RAG §3.2 and Appendix A) makes, from rows with a reference and a
faithful answer (or a reference alone: the model writes the answer first), one flawed answer per error type
and paraphrases as positives, checks each with a second call, and writes what passes as a dataset that
`ragfacts bench` reads as is. A generator, not a judge: the runner drives it, the method registry does not
know it.
"""

from ragfacts.synth.edits import EditError, Span, apply_edit
from ragfacts.synth.generator import Synthesiser, inject_prompt
from ragfacts.synth.options import INJECTABLE, NINE_TYPES, SynthOptions, parse_types
from ragfacts.synth.output import SynthOutput, SynthSummary, Tally, dataset_rows, write_dataset
from ragfacts.synth.results import Candidate, SynthResult
from ragfacts.synth.sources import SourceDataset

__all__ = [
    "INJECTABLE",
    "NINE_TYPES",
    "Candidate",
    "EditError",
    "SourceDataset",
    "Span",
    "SynthOptions",
    "SynthOutput",
    "SynthResult",
    "SynthSummary",
    "Synthesiser",
    "Tally",
    "apply_edit",
    "dataset_rows",
    "inject_prompt",
    "parse_types",
    "write_dataset",
]
