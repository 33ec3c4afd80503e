"""The method registry: one interface, options declared once, configurations that identify results."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from pydantic import BaseModel, ConfigDict

from ragfacts.items import Item
from ragfacts.methods import base
from ragfacts.methods.base import Method, MethodError, Outcome, create_method, method, registered_methods
from ragfacts.methods.faaf import FaaF
from ragfacts.methods.lface4rag import LFace4RAG
from ragfacts.models import ChatModel
from ragfacts.usage import Usage


def test_the_built_in_methods_are_registered_with_their_kinds():
    methods = registered_methods()
    kinds = {name: cls.kind for name, cls in methods.items()}
    assert kinds.items() >= {("lface4rag", "precision"), ("faaf", "recall"), ("prompt-tf", "recall")}


def test_a_spec_string_carries_options_converted_to_their_types():
    judge = create_method("faaf:mode=tf,citations=true,chunk_size=2")
    assert isinstance(judge, FaaF)
    assert (judge.options.mode, judge.options.citations, judge.options.chunk_size) == ("tf", True, 2)
    assert judge.spec == "faaf:chunk_size=2,citations=true,mode=tf"


def test_keyword_options_override_the_spec_and_aliases_name_the_paper_ablations():
    judge = create_method("lface4rag:cot=false,logic=false", chain_of_thought=True)
    assert isinstance(judge, LFace4RAG)
    assert judge.options.chain_of_thought is True and judge.options.logic_stage is False
    assert judge.spec == "lface4rag:logic_stage=false"


def test_default_options_give_the_bare_name_as_spec():
    assert create_method("lface4rag").spec == "lface4rag"


def test_an_unknown_method_names_the_registered_ones():
    with pytest.raises(MethodError, match=r"unknown method 'minicheck'.*faaf"):
        create_method("minicheck")


def test_a_misspelled_option_fails_loudly_and_names_the_options():
    with pytest.raises(MethodError, match=r"chunksize.*Options of faaf: mode, citations, chunk_size, lang"):
        create_method("faaf", chunksize=2)


def test_a_bad_option_value_is_refused():
    with pytest.raises(MethodError, match="threshold"):
        create_method("lface4rag:threshold=1.5")


def test_an_option_written_without_a_value_is_refused():
    with pytest.raises(MethodError, match="key=value"):
        create_method("faaf:mode")


def test_none_in_a_spec_means_none():
    assert base.parse_option_pairs(["lang=none", "x=NULL"]) == {"lang": None, "x": None}


def test_the_configuration_changes_with_options_and_model(make_model):
    model = make_model()
    default = create_method("faaf").configuration_hash(model)
    assert create_method("faaf").configuration_hash(model) == default
    assert create_method("faaf:mode=tf").configuration_hash(model) != default
    assert create_method("faaf").configuration_hash(make_model(temperature=0.7)) != default
    prompts = create_method("faaf").configuration(model)["prompts"]
    assert "verify_facts/en@2" in prompts and "verify_facts/zh@2" in prompts


def test_a_resolved_method_keeps_the_spec_it_was_asked_for(make_model):
    judge = create_method("lface4rag").resolved(make_model())
    assert judge.options.strategy == "paper" and judge.spec == "lface4rag"


def test_what_a_method_cannot_judge_is_said():
    assert create_method("lface4rag").accepts(Item(answer="a")) is not None
    assert create_method("faaf").accepts(Item(answer="a", reference="r")) is not None
    assert create_method("faaf").accepts(Item(answer="a", facts=["f"])) is None


class EchoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    verdict: str = "consistent"


class EchoResult(BaseModel):
    label: str

    def outcome(self) -> Outcome:
        return Outcome(kind="precision", label=self.label, score=1.0, usage=Usage())


@pytest.fixture
def registry() -> Iterator[None]:
    with base.METHODS.restored():
        yield


async def test_a_new_method_is_one_class_and_its_registration(registry, make_model):
    @method("echo")
    class Echo(Method):
        kind = "precision"
        Options = EchoOptions

        async def evaluate(self, item: Item, model: ChatModel) -> EchoResult:
            return EchoResult(label=self.options.verdict)

        def estimate(self, item: Item, model: ChatModel) -> Usage:
            return Usage()

    judge = create_method("echo:verdict=inconsistent")
    assert isinstance(judge, Echo) and "echo" in registered_methods()
    result = await judge.evaluate(Item(answer="a", reference="r"), make_model())
    assert result.outcome().label == "inconsistent"


def test_two_methods_cannot_share_a_name(registry):
    with pytest.raises(MethodError, match="two methods"):

        @method("faaf")
        class Another(FaaF):
            pass


def test_every_module_that_registers_a_method_is_declared_as_built_in():
    import importlib
    import pkgutil

    import ragfacts.methods

    declared: dict[str, str] = {}
    for info in pkgutil.walk_packages(ragfacts.methods.__path__, "ragfacts.methods."):
        module = importlib.import_module(info.name)
        for cls in vars(module).values():
            registered = isinstance(cls, type) and base.METHODS.find(getattr(cls, "name", "")) is cls
            if registered and cls.__module__ == info.name:
                declared[cls.name] = info.name
    assert declared == base.BUILT_IN


def test_asking_for_one_method_imports_its_module_only():
    code = (
        "import sys\nfrom ragfacts.methods.base import create_method\ncreate_method('holistic')\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('ragfacts.methods.'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = set(done.stdout.split())
    assert "ragfacts.methods.holistic" in loaded and "ragfacts.methods.faaf" not in loaded


def test_editing_a_schema_description_makes_earlier_results_stale(make_model, monkeypatch):
    from ragfacts.methods import bilingual
    from ragfacts.methods.base import create_method

    judge, model = create_method("lface4rag"), make_model()
    before = judge.configuration_hash(model)
    from ragfacts.methods.precision.schemas import FactVerdict

    text = FactVerdict.model_json_schema()["properties"]["verdict"]["description"]
    monkeypatch.setitem(bilingual._ZH, text, bilingual._ZH[text] + "（已修改）")  # its Chinese text edited
    assert judge.configuration_hash(model) != before
    monkeypatch.undo()
    assert judge.configuration_hash(model) == before


def test_every_schema_text_has_both_languages_and_is_used():
    import pathlib

    from ragfacts.prompts import schema_texts

    (en_id, en), (zh_id, zh) = schema_texts("en"), schema_texts("zh")
    assert en_id == "schemas/en@2" and zh_id == "schemas/zh@2"
    assert set(en) <= set(zh) and all(key.endswith(".doc") for key in set(zh) - set(en))
    import ragfacts

    package = pathlib.Path(ragfacts.__file__).parent
    source = "".join(p.read_text(encoding="utf-8") for p in package.rglob("*.py"))
    assert [key for key in zh if f'"{key}"' not in source and not key.startswith("typology.")] == []  # none stale
    from ragfacts.typology import ErrorType

    assert {f"typology.{t.name}.{part}" for t in ErrorType for part in ("name", "definition")} <= set(en)


def test_the_registry_is_filled_once_when_many_threads_ask_at_once():
    # A fresh interpreter, so that the methods' modules are really imported while the threads ask.
    code = """
import threading
from ragfacts.methods.base import create_method
start, errors = threading.Barrier(8), []
def ask():
    start.wait()
    try:
        create_method("faaf")
        create_method("holistic")
    except Exception as error:
        errors.append(repr(error))
threads = [threading.Thread(target=ask) for _ in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
print(errors or "ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "ok", done.stdout + done.stderr
