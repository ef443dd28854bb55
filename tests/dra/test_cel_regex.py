"""Regular expressions of CEL selectors: Go's syntax, RE2's linear time, with and without google-re2.

The real kube-scheduler's answers are in ``data/cel_oracle_v136.json`` (group ``regex``, replayed by
``test_cel_oracle.py`` on both engines); here the two engines are compared with each other on
generated patterns, and the promises that need no oracle are checked: no pattern makes a
selector hang, the pure-Python automaton is bounded, and the core import stays free of RE2.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.dra._cel import DeviceView, _regex_vm, compile_selector
from kschedlib.dra._cel._regex import Regex, compiled, re2_module
from kschedlib.dra._cel._regex_classes import RegexUnsupportedError
from kschedlib.dra._cel._regex_syntax import RegexSyntaxError, parse
from kschedlib.dra._cel._regex_vm import compile_program
from kschedlib.dra._cel._values import Fault
from kschedlib.errors import CelRuntimeError

DRIVER = "gpu.example.com"


def answers_within(seconds: float, work: Callable[[], object]) -> object:
    """``work()``'s result, failing the test (not hanging it) if it takes longer than ``seconds``."""
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert result, f"no answer within {seconds} s"
    return result[0]


CATASTROPHIC = {
    "attribute": ('device.attributes["gpu.example.com"].model.matches("^(a+)+$")', "a" * 30 + "b", False),
    "attribute-match": ('device.attributes["gpu.example.com"].model.matches("^(a+)+$")', "a" * 31, True),
    "constant-folded": ('"' + "a" * 30 + 'b".matches("^(a+)+$")', "x", False),
    "find": ('device.attributes["gpu.example.com"].model.find("(a|aa)+$") == ""', "a" * 30 + "b", True),
    "findAll": ('device.attributes["gpu.example.com"].model.findAll("(a*)*b").size() == 1', "a" * 40, False),
}


@pytest.mark.parametrize("engine", ["re2", "automaton"])
@pytest.mark.parametrize(("expression", "model", "expected"), CATASTROPHIC.values(), ids=CATASTROPHIC.keys())
def test_backtracking_patterns_answer_at_once(
    engine: str, expression: str, model: str, expected: bool, request: pytest.FixtureRequest
) -> None:
    if engine == "automaton":
        request.getfixturevalue("automaton_only")
    device = DeviceView(DRIVER, {"model": model})
    assert answers_within(10, lambda: compile_selector(expression).matches(device)) is expected


def test_automaton_gives_up_with_the_cost_error(automaton_only: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_regex_vm, "STEP_BUDGET", 10_000)
    with pytest.raises(Fault, match="actual cost limit exceeded"):
        compiled("(a|b|ab)*c").matches("ab" * 5000)


def test_automaton_refuses_scripts_by_name(automaton_only: None) -> None:
    selector = compile_selector('device.attributes["gpu.example.com"].model.matches("^\\\\p{Greek}+$")')
    with pytest.raises(CelRuntimeError, match=r"Unicode script class Greek \(install kschedlib\[dra\] for RE2\)"):
        selector.matches(DeviceView(DRIVER, {"model": "αβ"}))


@pytest.mark.skipif(re2_module() is None, reason="google-re2 is not installed")
def test_re2_runs_scripts() -> None:
    assert compiled("^\\p{greek}+$").matches("αβ") is True


def test_core_import_does_not_load_re2() -> None:
    code = "import sys, kschedlib, kschedlib.dra, kschedlib.dra._cel; print('re2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- the two engines agree -----------------------------------------------------------------------------

ATOMS = ["a", "b", "c", ".", "\\d", "\\w", "\\s", "\\b", "\\B", "^", "$", "\\A", "\\z", "[ab]", "[^a]",
         "[[:alpha:]]", "\\pL", "\\p{Lu}", "(?i:a)", "(?i)", "(?s)", "(?m)", "(?U)", "x", "\\n", "é", "K", "k",
         "\\x{212A}", "", "\\Qa.\\E", "[a-c]", "(?i)[k-l]", "\\PL", "\u017f", "S"]  # fmt: skip
SUFFIXES = ["*", "+", "?", "*?", "+?", "??", "{2}", "{1,3}", "{0,}", "{2,}?", ""]


def patterns() -> st.SearchStrategy[str]:
    return st.recursive(
        st.sampled_from(ATOMS),
        lambda inner: st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map("|".join),
            st.tuples(inner, st.sampled_from(SUFFIXES)).map(lambda p: f"({p[0]}){p[1]}"),
            st.tuples(inner, st.sampled_from(SUFFIXES)).map(lambda p: f"(?:{p[0]}){p[1]}"),
        ),
        max_leaves=8,
    )


TEXTS = st.text(alphabet="abcK\u212ak x\né_1S\u017f", max_size=8)


@pytest.mark.skipif(re2_module() is None, reason="google-re2 is not installed")
@settings(max_examples=300)
@given(patterns(), st.lists(TEXTS, min_size=1, max_size=4))
def test_automaton_agrees_with_re2(pattern: str, texts: list[str]) -> None:
    try:
        tree, re2_text = parse(pattern)
    except RegexSyntaxError:
        return
    try:
        program = compile_program(tree)
    except RegexUnsupportedError:
        return
    assert re2_text is not None
    options = re2_module().Options()
    options.log_errors = False
    both = Regex(pattern, re2_module().compile(re2_text, options), program, tree)
    alone = Regex(pattern, None, program, tree)
    for text in texts:
        assert (both.matches(text), both.find(text), both.find_all(text, -1)) == (
            alone.matches(text),
            alone.find(text),
            alone.find_all(text, -1),
        )
