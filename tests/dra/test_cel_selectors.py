"""Device selectors through the public interface: the cases of kube's DRA ``cel/compile_test.go``.

Every case gives a device (driver, attributes, capacity) and an expression, and expects what the
v1.36 compiler and ``DeviceMatches`` give: a match, a compile error or a runtime error.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.dra._cel import (
    AttributeValue,
    DeviceView,
    Selector,
    Version,
    compile_selector,
    selector_error,
)
from kschedlib.errors import CelCompileError, CelError, CelRuntimeError, KschedError, ModelError
from kschedlib.model.quantity import Quantity, parse_quantity

DRIVER = "dra.example.com"


def device(
    attributes: dict[str, AttributeValue] | None = None,
    capacity: dict[str, str] | None = None,
    *,
    driver: str = DRIVER,
    allow_multiple_allocations: bool = False,
) -> DeviceView:
    quantities = {name: parse_quantity(text) for name, text in (capacity or {}).items()}
    return DeviceView(driver, attributes, quantities, allow_multiple_allocations=allow_multiple_allocations)


MATCHES = {
    "true": ("true", device(), True),
    "false": ("false", device(), False),
    "domain-check-negative": ('"no-such-domain" in device.attributes', device(), False),
    "domain-check-positive": (
        '"dra.example.com" in device.attributes',
        device({"dra.example.com/something": True}),
        True,
    ),
    "empty-driver-name": ('device.driver == ""', device(driver=""), True),
    "real-driver-name": ('device.driver == "dra.example.com"', device(), True),
    "driver-name-qualifier": ('device.attributes["dra.example.com"].name', device({"name": True}), True),
    "driver-name-qualifier-map-lookup": ('device.attributes["dra.example.com"]["name"]', device({"name": True}), True),
    "bind": ('cel.bind(dra, device.attributes["dra.example.com"], dra.name)', device({"name": True}), True),
    "qualified-attribute-name": (
        'device.attributes["other.example.com"].name',
        device({"other.example.com/name": True}),
        True,
    ),
    "int": ('device.attributes["dra.example.com"].name > 0', device({"name": 1}), True),
    "string": ('device.attributes["dra.example.com"].name == "fish"', device({"name": "fish"}), True),
    "version": (
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
        device({"name": Version("1.0.0")}),
        True,
    ),
    "version_v": (
        'device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
        device({"name": Version("1.0.0")}),
        True,
    ),
    "quantity": (
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        device(capacity={"name": "1Mi"}),
        True,
    ),
    "check-positive": (
        '"name" in device.capacity["dra.example.com"] && '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        device(capacity={"name": "1Mi"}),
        True,
    ),
    "check-negative": (
        '!("name" in device.capacity["dra.example.com"]) || '
        'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
        device(),
        True,
    ),
    "all": (
        """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
""",
        device({"bool": True, "int": 1, "string": "fish", "version": Version("1.0.0")}, {"quantity": "1Mi"}),
        True,
    ),
    "many": (
        'device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b '
        '&& device.attributes["dra.example.com"].c',
        device({"a": True, "b": True, "c": True}),
        True,
    ),
    "check_attribute_domains": (
        'device.attributes.exists_one(x, x == "dra.example.com")',
        device({"services": "some_example_value"}),
        True,
    ),
    "check_attribute_ids": (
        'device.attributes["dra.example.com"].exists_one(x, x == "services")',
        device({"services": "some_example_value"}),
        True,
    ),
    "split_attribute": (
        'device.attributes["dra.example.com"].services.split("example").size() >= 2',
        device({"services": "some_example_value"}),
        True,
    ),
    "regexp_attribute": (
        'device.attributes["dra.example.com"].services.matches("[^a]?sym")',
        device({"services": "asymetric"}),
        True,
    ),
    "check_capacity_domains": (
        'device.capacity.exists_one(x, x == "dra.example.com")',
        device(capacity={"memory": "1Mi"}),
        True,
    ),
    "check_capacity_ids": (
        'device.capacity["dra.example.com"].exists_one(x, x == "memory")',
        device(capacity={"memory": "1Mi"}),
        True,
    ),
    "allow_multiple_allocations": (
        "device.allowMultipleAllocations == true",
        device(allow_multiple_allocations=True),
        True,
    ),
    "allow_multiple_allocations_default": ("device.allowMultipleAllocations == false", device(), True),
    "includes-function-on-string-scalar-positive": (
        'device.attributes["dra.example.com"].name.includes("fish")',
        device({"name": "fish"}),
        True,
    ),
    "includes-function-on-semver-scalar-negative": (
        'device.attributes["dra.example.com"].name.includes(semver("2.0.0"))',
        device({"name": Version("1.0.0")}),
        False,
    ),
    # The sample's selector shapes (conformance-sample-v1.36/dra).
    "sample-in-list": ('device.attributes["dra.example.com"].model in ["l4", "a100"]', device({"model": "a100"}), True),
    "sample-in-list-miss": (
        'device.attributes["dra.example.com"].model in ["l4", "a100"]',
        device({"model": "t4"}),
        False,
    ),
    "sample-int": ('device.attributes["dra.example.com"].index >= 3', device({"index": 2}), False),
    "sample-capacity": (
        'device.capacity["dra.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
        device(capacity={"memory": "80Gi"}),
        True,
    ),
    "sample-guarded-missing": (
        '"numa" in device.attributes["dra.example.com"] && device.attributes["dra.example.com"].numa == 1',
        device({"model": "a100"}),
        False,
    ),
    "has-attribute": ('has(device.attributes["dra.example.com"].numa)', device({"numa": 0}), True),
    "has-attribute-missing": ('has(device.attributes["dra.example.com"].numa)', device(), False),
    "has-device-field": ("has(device.driver)", device(), True),
    "string-attribute-vs-int-is-false": (
        'device.attributes["dra.example.com"].model == 1',
        device({"model": "x"}),
        False,
    ),
    "bool-attribute-not-int": ('device.attributes["dra.example.com"].flag == 1', device({"flag": True}), False),
}


@pytest.mark.parametrize(("expression", "dev", "expected"), MATCHES.values(), ids=MATCHES.keys())
def test_selector_matches(expression: str, dev: DeviceView, expected: bool) -> None:
    assert compile_selector(expression).matches(dev) is expected


RUNTIME_ERRORS = {
    "runtime-error-lookup-identifier": (
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        device(),
        "no such key: noSuchAttr",
    ),
    "runtime-error-lookup-map": (
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        device(),
        "no such key: noSuchAttr",
    ),
    "missing-attribute": ('device.attributes["dra.example.com"].model == "a100"', device(), "no such key: model"),
    "missing-capacity": (
        'device.capacity["dra.example.com"].memory.isGreaterThan(quantity("1"))',
        device(),
        "no such key: memory",
    ),
    "wrong-attribute-type": (
        'device.attributes["dra.example.com"].model > 1',
        device({"model": "a"}),
        "no such overload",
    ),
    "string-not-a-semver": (
        'device.attributes["dra.example.com"].v.isGreaterThan(semver("1.0.0"))',
        device({"v": "1.0.0"}),
        "no such overload: isGreaterThan(string, kubernetes.Semver)",
    ),
    "macro-exists-on-int": (
        'device.attributes["dra.example.com"].name.exists(x, x > 0)',
        device({"name": 1}),
        "got 'types.Int', expected iterable type",
    ),
    "macro-exists-on-bool": (
        'device.attributes["dra.example.com"].name.exists(x, x == true)',
        device({"name": True}),
        "got 'types.Bool', expected iterable type",
    ),
    "macro-exists-on-string": (
        'device.attributes["dra.example.com"].name.exists(x, x == "fish")',
        device({"name": "fish"}),
        "got 'types.String', expected iterable type",
    ),
    "macro-exists-on-version": (
        'device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1")))',
        device({"name": Version("1.0.0")}),
        "got 'cel.Semver', expected iterable type",
    ),
    "non-bool-result": (
        'device.attributes["dra.example.com"].name',
        device({"name": 3}),
        "CEL result of type int could not be converted to bool",
    ),
    "bad-version-attribute": (
        "true",
        device({"v": Version("1.0")}),
        "attribute v: parse semantic version: No Major.Minor.Patch elements found",
    ),
}


@pytest.mark.parametrize(("expression", "dev", "message"), RUNTIME_ERRORS.values(), ids=RUNTIME_ERRORS.keys())
def test_selector_runtime_errors(expression: str, dev: DeviceView, message: str) -> None:
    selector = compile_selector(expression)
    with pytest.raises(CelRuntimeError) as info:
        selector.matches(dev)
    assert str(info.value).startswith(message)
    assert info.value.expression == expression
    with pytest.raises(CelRuntimeError):  # the memoised error is raised again
        selector.matches(dev)


COMPILE_ERRORS = {
    "syntax-error": ("?!", "compilation failed: ERROR: <input>:1:1: Syntax error:"),
    "type-error": ("1", "must evaluate to bool or the unknown type, not int"),
    "string-result": ("device.driver", "must evaluate to bool or the unknown type, not string"),
    "undefined-field": (
        "device.foo == 1",
        "compilation failed: ERROR: <input>:1:7: undefined field 'foo'\n | device.foo == 1\n | ......^",
    ),
    "undeclared-variable": ("node.name == 1", "compilation failed: ERROR: <input>:1:1: undeclared reference to 'node'"),
    "undeclared-function": ("device.driver.lower() == 1", "undeclared reference to 'lower' (in container '')"),
    "no-overload": ("device.driver > 1", "found no matching overload for '_>_' applied to '(string, int)'"),
    "no-member-overload": (
        'device.driver.contains(1)',
        "found no matching overload for 'contains' applied to 'string.(int)'",
    ),
    "quantity-not-ordered": (
        'quantity("1") < quantity("2")',
        "found no matching overload for '_<_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'",
    ),
    "isQuantity_noOverload": ("isQuantity([1, 2, 3])", "found no matching overload for 'isQuantity' applied to"),
    "isSemver_noOverload": ("isSemver([1, 2, 3])", "found no matching overload for 'isSemver' applied to"),
    "multi-line-location": (
        "true &&\n  device.nope",
        "ERROR: <input>:2:9: undefined field 'nope'\n |   device.nope\n | ........^",
    ),
    "unterminated-string": ('device.driver == "abc', "Syntax error: token recognition error"),
    "reserved-word": ("device.driver == if", "Syntax error: reserved identifier: if"),
    "int-literal-too-big": ("9223372036854775808 > 0", "ERROR: <input>:1:1: invalid int literal"),
    "bad-has": ("has(device)", "Syntax error: invalid argument to has() macro"),
    "bad-macro-var": ("[1].all(1, true)", "Syntax error: argument must be a simple name"),
}


@pytest.mark.parametrize(("expression", "message"), COMPILE_ERRORS.values(), ids=COMPILE_ERRORS.keys())
def test_selector_compile_errors(expression: str, message: str) -> None:
    with pytest.raises(CelCompileError) as info:
        compile_selector(expression)
    assert message in str(info.value)
    assert info.value.expression == expression


def test_errors_are_typed() -> None:
    assert issubclass(CelCompileError, CelError)
    assert issubclass(CelRuntimeError, CelError)
    assert issubclass(CelError, KschedError)
    assert issubclass(CelError, ValueError)
    with pytest.raises(CelCompileError, match="expression must be a string"):
        compile_selector(1)  # type: ignore[arg-type]


def test_selector_error_wraps_as_the_allocator_does() -> None:
    with pytest.raises(CelRuntimeError) as runtime:
        compile_selector('device.attributes["x"].model == "a"').matches(device())
    wrapped = selector_error("class gpu", 0, runtime.value)
    assert wrapped == "class gpu: selector #0: CEL runtime error: no such key: model"
    with pytest.raises(CelCompileError) as compile_error:
        compile_selector("1")
    assert (
        selector_error("claim default/c1", 2, compile_error.value)
        == "claim default/c1: selector #2: CEL compile error: must evaluate to bool or the unknown type, not int"
    )


def test_compile_is_cached_per_expression() -> None:
    first = compile_selector('device.driver == "a"')
    assert compile_selector('device.driver == "a"') is first
    assert repr(first) == "Selector('device.driver == \"a\"')"


def test_device_view_equality_and_validation() -> None:
    a = device({"model": "a100", "index": 1}, {"memory": "1Gi"})
    b = device({"index": 1, "model": "a100"}, {"memory": "1024Mi"})
    assert a == b
    assert hash(a) == hash(b)
    assert a != device({"index": True, "model": "a100"}, {"memory": "1Gi"})
    assert a != "device"
    assert "a100" in repr(a)
    with pytest.raises(ModelError, match=r"field attributes\[x\]"):
        DeviceView(DRIVER, {"x": 1.5})  # type: ignore[dict-item]
    with pytest.raises(ModelError, match=r"field attributes\[big\]: must fit in 64 bits"):
        DeviceView(DRIVER, {"big": 2**63})
    with pytest.raises(ModelError, match=r"field capacity\[m\]"):
        DeviceView(DRIVER, capacity={"m": "1Gi"})  # type: ignore[dict-item]
    with pytest.raises(ModelError, match="field driver"):
        DeviceView(None)  # type: ignore[arg-type]


def test_memo_is_bounded_per_device() -> None:
    dev = device({"i": 5})
    for i in range(300):
        assert compile_selector(f'device.attributes["dra.example.com"].i < {i}').matches(dev) is (i > 5)
    assert len(dev._results) <= 256


attribute_values = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.text(max_size=5),
    st.sampled_from([Version("1.0.0"), Version("2.1.0-rc.1"), Version("bad")]),
)
names = st.sampled_from(["a", "b", "other.example.com/a", "other.example.com/c"])
devices = st.builds(
    DeviceView,
    st.sampled_from([DRIVER, "other.example.com"]),
    st.dictionaries(names, attribute_values, max_size=4),
    st.dictionaries(names, st.integers(min_value=0, max_value=2**40).map(Quantity.from_int), max_size=3),
    allow_multiple_allocations=st.booleans(),
)
SELECTORS = [
    'device.driver == "dra.example.com"',
    'device.attributes["dra.example.com"].a == 1',
    '"a" in device.attributes["dra.example.com"] && device.attributes["dra.example.com"].a > 0',
    'device.attributes["other.example.com"].a.isGreaterThan(semver("1.0.0"))',
    'device.capacity["dra.example.com"].b.compareTo(quantity("1Gi")) >= 0',
    'has(device.attributes["other.example.com"].c) || device.allowMultipleAllocations',
    'device.attributes.exists(d, "a" in device.attributes[d])',
]


def _outcome(selector: Selector, dev: DeviceView) -> bool | str:
    try:
        return selector.matches(dev)
    except CelRuntimeError as exc:
        return "error: " + exc.message


@given(dev=devices, expression=st.sampled_from(SELECTORS))
def test_memoised_result_equals_fresh_result(dev: DeviceView, expression: str) -> None:
    selector = compile_selector(expression)
    first = _outcome(selector, dev)
    fresh = selector.evaluate(dev)
    assert first == (fresh if isinstance(fresh, bool) else "error: " + fresh)
    assert _outcome(selector, dev) == first  # from the memo
    twin = DeviceView(
        dev.driver, dev.attributes, dev.capacity, allow_multiple_allocations=dev.allow_multiple_allocations
    )
    assert _outcome(selector, twin) == first  # an equal device gives the same answer


MORE_COMPILE_ERRORS = {
    "select-on-string": ("device.driver.x", "type 'string' does not support field selection"),
    "map-index-type": ("device.attributes[1]", "found no matching overload for '_[_]' applied to"),
    "list-index-type": ('[1]["a"] == 1', "found no matching overload for '_[_]' applied to '(list(int), string)'"),
    "index-on-string": ('"abc"[0] == "a"', "found no matching overload for '_[_]' applied to '(string, int)'"),
    "not-on-string": ('!"a"', "found no matching overload for '!_' applied to '(string)'"),
    "negate-string": ('-"a" == 1', "found no matching overload for '-_' applied to '(string)'"),
    "ternary-condition": ('1 ? true : false', "found no matching overload for '_?_:_' applied to '(int, bool, bool)'"),
    "map-key-type": ("{[1]: 1}.size() == 1", "unsupported map key type: list(int)"),
    "macro-on-int": ("1.all(x, true)", "found no matching overload for 'all' applied to '(int)'"),
    "macro-body-not-bool": ("[1].all(x, x)", "expected type 'bool' but found 'int'"),
    "filter-predicate-not-bool": ("[1].map(x, x, x).size() == 1", "expected type 'bool' but found 'int'"),
    "and-on-int": ("1 && true", "found no matching overload for '_&&_' applied to '(int, bool)'"),
    "equal-different-types": ('1 == "a"', "found no matching overload for '_==_' applied to '(int, string)'"),
    "in-list-type": ('1 in ["a"]', "found no matching overload for '@in' applied to '(int, list(string))'"),
    "in-map-type": ('1 in {"a": 1}', "found no matching overload for '@in' applied to '(int, map(string, int))'"),
    "in-int": ("1 in 1", "found no matching overload for '@in' applied to '(int, int)'"),
    "add-bool": ("true + true", "found no matching overload for '_+_' applied to '(bool, bool)'"),
    "add-dyn-bool": ("dyn(1) + true == 1", "found no matching overload for '_+_' applied to '(dyn, bool)'"),
    "modulo-double": ("1.0 % 2.0 == 1.0", "found no matching overload for '_%_' applied to '(double, double)'"),
    "mixed-list-concat": ('([1] + ["a"]).size() == 2', ""),
    "double-result": ("1.5", "must evaluate to bool or the unknown type, not double"),
    "list-result": ("[true]", "must evaluate to bool or the unknown type, not list(bool)"),
    "surrogate-escape": (r'"\ud800" == "a"', "Syntax error: invalid unicode code point: \\ud800"),
    "bad-escape": (r'"\q" == "q"', "Syntax error: token recognition error at: '\\q'"),
    "bad-character": ("device.driver == #", "Syntax error: token recognition error at: '#'"),
    "missing-paren": ("(true", "Syntax error: mismatched input '<EOF>' expecting ')'"),
    "trailing-input": ("true true", "Syntax error: extraneous input 'true' expecting <EOF>"),
    "dot-number": ("device.1 == 1", "Syntax error:"),
    "reserved-member": ("device.if == 1", "Syntax error: reserved identifier: if"),
    "bad-argument-list": ('"a".contains("b" "c")', "Syntax error: mismatched input '\"c\"' expecting {',', ')'}"),
    "message-construction": ("Foo{a: 1}", "Syntax error: message construction is not supported"),
    "empty": ("", "Syntax error: mismatched input '<EOF>' expecting an expression"),
    "uint-too-big": ("18446744073709551616u > 0u", "ERROR: <input>:1:1: invalid uint literal"),
    "macro-arity": ("[1].map(x) == [1]", "Syntax error: no matching overload for 'map' with 1 arguments"),
    "bad-operator-start": ("* 1", "Syntax error: extraneous input '*' expecting an expression"),
    "deep-nesting": ("(" * 2000 + "true" + ")" * 2000, "ERROR: <input>:-1:0: expression recursion limit exceeded: 250"),
}


@pytest.mark.parametrize(("expression", "message"), MORE_COMPILE_ERRORS.values(), ids=MORE_COMPILE_ERRORS.keys())
def test_more_compile_errors(expression: str, message: str) -> None:
    if not message:  # compiles: mixed list concatenation is list(dyn)
        assert compile_selector(expression).matches(device()) is True
        return
    with pytest.raises(CelCompileError) as info:
        compile_selector(expression)
    assert message in str(info.value)


def test_results_that_are_not_bool() -> None:
    cases = {
        "uint": ("1u", "unsupported type conversion from 'uint' to bool"),
        "string": ('"a"', "unsupported native conversion from string to 'bool'"),
        "list": ("[1]", "type conversion error from list to 'bool'"),
        "map": ("{}", "type conversion error from map to 'bool'"),
        "null_type": ("null", "type conversion error from 'null_type' to 'bool'"),
        "kubernetes.Quantity": ('quantity("1")', "type conversion error from 'Quantity' to 'bool'"),
    }
    for name, (value, detail) in cases.items():
        selector = compile_selector(f"dyn({value})")
        with pytest.raises(CelRuntimeError) as info:
            selector.matches(device())
        assert str(info.value) == f"CEL result of type {name} could not be converted to bool: {detail}"


_PYTHON_OPS = {"<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__, "==": int.__eq__,
               "!=": int.__ne__}  # fmt: skip
int64s = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@given(value=int64s, bound=int64s, op=st.sampled_from(sorted(_PYTHON_OPS)))
def test_int_attribute_comparisons_agree_with_integers(value: int, bound: int, op: str) -> None:
    selector = compile_selector(f'device.attributes["dra.example.com"].n {op} {bound}')
    assert selector.matches(device({"n": value})) is _PYTHON_OPS[op](value, bound)


@given(model=st.text(max_size=4), models=st.lists(st.text(max_size=4), max_size=4))
def test_string_attribute_in_list_agrees_with_membership(model: str, models: list[str]) -> None:
    literal = "[" + ", ".join(json.dumps(m, ensure_ascii=False) for m in models) + "]"
    selector = compile_selector(f'device.attributes["dra.example.com"].model in {literal}')
    assert selector.matches(device({"model": model})) is (model in models)


@given(memory=st.integers(min_value=0, max_value=2**50), threshold=st.integers(min_value=0, max_value=2**50))
def test_capacity_compare_to_agrees_with_quantities(memory: int, threshold: int) -> None:
    selector = compile_selector(f'device.capacity["dra.example.com"].memory.compareTo(quantity("{threshold}")) >= 0')
    dev = DeviceView(DRIVER, capacity={"memory": Quantity.from_int(memory, "BinarySI")})
    assert selector.matches(dev) is (memory >= threshold)
