"""Selectors cannot hang or crash the scheduler: recursion, cost and every failure as a CEL error.

kube's own answers for the limits (parser recursion, cost budget) are replayed by
``test_cel_oracle.py``; here: deep expressions never meet Python's recursion limit, the cost
charged is cel-go's, the untracked and tracked evaluators agree, and random expressions give
only values or CEL errors.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.dra._cel import DeviceView, compile_selector
from kschedlib.dra._cel._compile import CheckFault, compile_tree
from kschedlib.dra._cel._cost import COST, COST_LIMIT
from kschedlib.dra._cel._syntax import SyntaxFault, parse
from kschedlib.dra._cel._values import Fault
from kschedlib.errors import CelError

DRIVER = "gpu.example.com"
A = 'device.attributes["gpu.example.com"]'


@pytest.fixture
def python_default_recursion_limit() -> Iterator[None]:
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(max(previous, sys.getrecursionlimit()))


DEEP = {
    "plus-250": " + ".join(["1"] * 250) + " == 250",
    "or-400": " || ".join(["false"] * 399 + ["true"]),
    "not-400": "!" * 400 + "true",
    "lowerAscii-246": f"{A}.model" + ".lowerAscii()" * 246 + ' != ""',
    "parens-249": "(" * 249 + "true" + ")" * 249,
    "lists-249": "[" * 249 + "true" + "]" * 249 + " != []",
    "ternary-249": "true ? true : " * 249 + "false",
    "lists-around-sums": "[" * 240 + " + ".join(["1"] * 240) + " == 240" + "]" * 240 + " != []",
}


@pytest.mark.usefixtures("python_default_recursion_limit")
@pytest.mark.parametrize("expression", DEEP.values(), ids=DEEP.keys())
def test_deep_expressions_within_cel_limits_evaluate(expression: str) -> None:
    device = DeviceView(DRIVER, {"model": "A100"})
    assert compile_selector(expression).matches(device) is True


def actual_cost(expression: str, attributes: dict[str, object] | None = None) -> int:
    """What the tracked evaluator charged for one evaluation on a device with ``attributes``."""
    device = DeviceView(DRIVER, attributes or {})  # type: ignore[arg-type]
    budget = [COST_LIMIT]
    compile_tree(parse(expression), tracked=True).evaluator({"device": device._value, COST: budget})
    return COST_LIMIT - budget[0]


COSTS = {
    # kube's DRA compile tests (staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go)
    "driver-empty": ('device.driver == ""', 2),
    "driver-compare": ('device.driver == "gpu.example.com"', 4),
    "attribute": (f"{A}.model == true", 5),
    "attribute-by-index": (f'{A}["model"] == true', 5),
    "int-compare": (f"{A}.count > 0", 5),
    "string-compare": (f'{A}.name == "fish"', 5),
    "domain-check": ('"no-such-domain" in device.attributes', 3),
    # cel-go's cost of calls, by size
    "matches": (f'{A}.name.matches("^f.*h$")', 4 + 1 * 2),
    "replace": (f'{A}.name.replace("i", "ii") != ""', 4 + 1 + 0),
    "list-literal-constant": ("[1, 2, 3].size() == 3", 2),
    "list-literal-built": (f"[{A}.count].size() == 1", 4 + 10 + 1 + 1),
    "in-constant-list": (f'{A}.name in ["fish", "bird"]', 4),
    "in-list": (f"{A}.name in [{A}.name, {A}.name]", 4 + 4 + 4 + 10 + 2),
    "exists": ("[1, 2, 3].exists(x, x == 2)", (3 + 1 + 1 + 1) * 2 + 3 + 1),
    "all": ("[1, 2, 3].all(x, x > 0)", (2 + 1 + 1 + 1) * 3 + 1),
    "map": ("[1, 2, 3].map(x, x * 2).size() == 3", (12 + 1 + 1) * 3 + 1 + 1 + 1),
    "bind-unused": ("cel.bind(x, [1, 2].map(y, y), true)", 0),
    "sets": ("sets.intersects([1, 2, 3], [3, 4])", 1 + 6),
}


@pytest.mark.parametrize(("expression", "cost"), COSTS.values(), ids=COSTS.keys())
def test_cost_is_cel_gos(expression: str, cost: int) -> None:
    attributes = {"model": True, "count": 3, "name": "fish"}
    assert actual_cost(expression, attributes) == cost


def test_budget_stops_an_evaluation_at_kubes_limit() -> None:
    # Each step costs 19: condition 3, accumulator 1, the list 10 and its 3 elements, size 1, == 1.
    def exists_over(doublings: int) -> str:
        ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
        body = "l.exists(x, [x, x, x].size() == -1)"
        return f"cel.bind(l, {ten}, " + "cel.bind(l, l + l, " * doublings + body + ")" * (doublings + 1)

    device = DeviceView(DRIVER)
    assert compile_selector(exists_over(12)).matches(device) is False  # 40,960 steps: 778,241
    over = compile_selector(exists_over(13))  # 81,920 steps
    assert over.evaluate(device) == "operation cancelled: actual cost limit exceeded"


# -- random expressions: values or CEL errors, and the same from both evaluators ------------------------

LEAVES = [
    "1", "-1", "0", "9223372036854775807", "-9223372036854775808", "18446744073709551615u", "0u", "1.5",
    "-0.0", '"a"', '""', '"\\u00e9"', "b'x'", "true", "false", "null", "[]", "[1, 2]", '["a", "b"]', "{}",
    '{"k": 1}', f"{A}.model", f"{A}.count", f"{A}.name", "device.driver", 'quantity("1Gi")',
    'semver("1.2.3")', "9" * 30, "1e400", '"\\ud800"',
]  # fmt: skip
UNARY = ["!{}", "-{}", "size({})", "int({})", "uint({})", "double({})", "string({})", "bytes({})", "bool({})",
         "dyn({})", "{}.lowerAscii()", "{}.reverse()", "{}.sum()", "{}.isSorted()", "{}.min()", "[{}]",
         "{{{}: 1}}", "{}.exists(x, x == 1)", "{}.all(x, x != 2)", "{}.map(x, x)", "{}.filter(x, true)",
         "{}.exists_one(x, true)", "cel.bind(v, {}, v)", "has({}.a)", "{}.split(\"\")", "{}.join()",
         "quantity({})", "semver({})", "{}.isGreaterThan(quantity(\"1\"))", "{}.charAt(0)",
         "{}.asInteger()"]  # fmt: skip
BINARY = ["{} + {}", "{} - {}", "{} * {}", "{} / {}", "{} % {}", "{} == {}", "{} != {}", "{} < {}",
          "{} >= {}", "{} && {}", "{} || {}", "{} in {}", "{}[{}]", "{}.matches({})", "{}.contains({})",
          "{}.replace({}, \"xx\")", "{}.indexOf({})", "{}.find({})", "{}.findAll({})", "sets.intersects({}, {})",
          "{}.substring({})", "{}.split({})", "{}.join({})", "{}.compareTo({})", "{}.add({})"]  # fmt: skip


def expressions() -> st.SearchStrategy[str]:
    return st.recursive(
        st.sampled_from(LEAVES),
        lambda inner: st.one_of(
            st.tuples(st.sampled_from(UNARY), inner).map(lambda p: p[0].format(p[1])),
            st.tuples(st.sampled_from(BINARY), inner, inner).map(lambda p: p[0].format(p[1], p[2])),
            st.tuples(inner, inner, inner).map(lambda p: f"({p[0]} ? {p[1]} : {p[2]})"),
        ),
        max_leaves=6,
    )


DEVICES = st.builds(
    lambda model, count, name: DeviceView(DRIVER, {"model": model, "count": count, "name": name}),
    st.one_of(st.booleans(), st.text(max_size=5)),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.text(alphabet="ab\u00e9\ud800", max_size=5),
)


@settings(max_examples=400, deadline=None)
@given(expressions(), DEVICES)
def test_only_values_or_cel_errors_come_out(expression: str, device: DeviceView) -> None:
    try:
        selector = compile_selector(expression)
    except CelError:
        return
    with contextlib.suppress(CelError):
        selector.matches(device)


@settings(max_examples=300, deadline=None)
@given(expressions(), DEVICES)
def test_untracked_and_tracked_evaluations_agree(expression: str, device: DeviceView) -> None:
    try:
        tree = parse(expression)
        fast = compile_tree(tree)
    except (CelError, CheckFault, SyntaxFault):  # compile errors are another test's business
        return
    if fast.max_cost > COST_LIMIT or not device._bounded:
        return
    outcomes = []
    for compiled in (fast, compile_tree(tree, tracked=True)):
        try:
            outcomes.append(compiled.evaluator({"device": device._value, COST: [COST_LIMIT]}))
        except Fault as exc:
            outcomes.append(exc.message)
    assert repr(outcomes[0]) == repr(outcomes[1])
