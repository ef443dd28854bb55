"""The Kubernetes CEL libraries device selectors may call, with the results Go gives.

Cases come from the apiserver library tests (quantity, semver) and cel-go's standard and
extension libraries; each expression is evaluated without a device and compared with Go's value.
"""

from __future__ import annotations

import math

import pytest

from kschedlib.dra._cel import CelCompileError, compile_selector
from kschedlib.dra._cel._compile import compile_tree
from kschedlib.dra._cel._cost import COST, COST_LIMIT
from kschedlib.dra._cel._nodes import Uint
from kschedlib.dra._cel._semver import Semver, parse_semver
from kschedlib.dra._cel._syntax import parse
from kschedlib.dra._cel._values import Fault
from kschedlib.model.quantity import parse_quantity


def value_of(expression: str) -> object:
    """The value (or error) of ``expression``: the same untracked (when its cost bound allows) and
    with cost tracking."""
    tree = parse(expression)
    outcomes: list[object] = []
    for tracked in (False, True):
        compiled = compile_tree(tree, tracked=tracked)
        if tracked or compiled.max_cost <= COST_LIMIT:
            try:
                outcomes.append(compiled.evaluator({COST: [COST_LIMIT]}))
            except Fault as exc:
                outcomes.append(exc)
    fast, tracked_outcome = outcomes if len(outcomes) == 2 else (outcomes[0], outcomes[0])
    if isinstance(fast, Fault):
        assert isinstance(tracked_outcome, Fault)
        assert tracked_outcome.message == fast.message
        raise fast
    assert type(tracked_outcome) is type(fast)
    assert tracked_outcome == fast or (fast != fast and tracked_outcome != tracked_outcome)  # NaN
    return fast


def error_of(expression: str) -> str:
    with pytest.raises(Fault) as info:
        value_of(expression)
    return info.value.message


QUANTITY = {
    "parse": ('quantity("12Mi")', parse_quantity("12Mi")),
    "isQuantity": ('isQuantity("20")', True),
    "isQuantity_megabytes": ('isQuantity("20M")', True),
    "isQuantity_mebibytes": ('isQuantity("20Mi")', True),
    "isQuantity_invalidSuffix": ('isQuantity("20Mo")', False),
    "isQuantity_passingRegex": ('isQuantity("10Mm")', False),
    "isQuantity_leading_space": ('isQuantity(" 1")', False),
    "equality_reflexivity": ('quantity("200M") == quantity("200M")', True),
    "equality_symmetry": ('quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', True),
    "equality_transitivity": (
        'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") '
        '&& quantity("0.002G") == quantity("2000k")',
        True,
    ),
    "inequality": ('quantity("200M") == quantity("0.3G")', False),
    "quantity_less": ('quantity("50M").isLessThan(quantity("50Mi"))', True),
    "quantity_less_obvious": ('quantity("50M").isLessThan(quantity("100M"))', True),
    "quantity_less_false": ('quantity("100M").isLessThan(quantity("50M"))', False),
    "quantity_greater": ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
    "quantity_greater_obvious": ('quantity("150Mi").isGreaterThan(quantity("100Mi"))', True),
    "quantity_greater_false": ('quantity("50M").isGreaterThan(quantity("100M"))', False),
    "compare_equal": ('quantity("200M").compareTo(quantity("0.2G"))', 0),
    "compare_less": ('quantity("50M").compareTo(quantity("50Mi"))', -1),
    "compare_greater": ('quantity("50Mi").compareTo(quantity("50M"))', 1),
    "add_quantity": ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    "add_int": ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
    "sub_quantity": ('quantity("50k").sub(quantity("20")) == quantity("49.98k")', True),
    "sub_int": ('quantity("50k").sub(20) == quantity("49980")', True),
    "arith_chain_1": ('quantity("50k").add(20).sub(quantity("100k")).asInteger()', -49980),
    "arith_chain": ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
    "as_integer": ('quantity("50k").asInteger()', 50000),
    "is_integer_huge": ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    "is_integer": ('quantity("50").isInteger()', True),
    "is_integer_fraction": ('quantity("1500m").isInteger()', False),
    "as_float": ('quantity("50.703k").asApproximateFloat()', 50703.0),
    "sign_positive": ('sign(quantity("5m"))', 1),
    "sign_negative": ('sign(quantity("-1Gi"))', -1),
    "sign_zero": ('sign(quantity("0"))', 0),
}


@pytest.mark.parametrize(("expression", "expected"), QUANTITY.values(), ids=QUANTITY.keys())
def test_quantity_library(expression: str, expected: object) -> None:
    assert value_of(expression) == expected


QUANTITY_ERRORS = {
    "parseInvalidSuffix": ('quantity("10Mo")', "quantities must match the regular expression"),
    "parseInvalidSuffixPassesRegex": ('quantity("10Mm")', "unable to parse quantity's suffix"),
    "as_integer_error": (
        'quantity("9999999999999999999999999999999999999G").asInteger()',
        "cannot convert value to integer",
    ),
    "as_integer_fraction": ('quantity("1.5").asInteger()', "cannot convert value to integer"),
}


@pytest.mark.parametrize(("expression", "message"), QUANTITY_ERRORS.values(), ids=QUANTITY_ERRORS.keys())
def test_quantity_library_errors(expression: str, message: str) -> None:
    assert error_of(expression).startswith(message)


SEMVER = {
    "parse": ('semver("1.2.3")', parse_semver("1.2.3")),
    "isSemver": ('isSemver("1.2.3-beta.1+build.1")', True),
    "isSemver_empty_false": ('isSemver("")', False),
    "isSemver_v_prefix_false": ('isSemver("v1.0.0")', False),
    "isSemver_v_leading_whitespace_false": ('isSemver(" 1.0.0")', False),
    "isSemver_v_contains_whitespace_false": ('isSemver("1. 0.0")', False),
    "isSemver_v_trailing_whitespace_false": ('isSemver("1.0.0 ")', False),
    "isSemver_leading_zeros_false": ('isSemver("01.01.01")', False),
    "isSemver_major_only_false": ('isSemver("1")', False),
    "isSemver_major_minor_only_false": ('isSemver("1.1")', False),
    "isSemver_empty_normalize_false": ('isSemver("", true)', False),
    "isSemver_v_leading_whitespace_normalize_false": ('isSemver(" 1.0.0", true)', False),
    "isSemver_v_contains_whitespace_normalize_false": ('isSemver("1. 0.0", true)', False),
    "isSemver_v_trailing_whitespace_normalize_false": ('isSemver("1.0.0 ", true)', False),
    "isSemver_v_prefix_normalize_true": ('isSemver("v1.0.0", true)', True),
    "isSemver_leading_zeros_normalize_true": ('isSemver("01.01.01", true)', True),
    "isSemver_major_only_normalize_true": ('isSemver("1", true)', True),
    "isSemver_major_minor_only_normalize_true": ('isSemver("1.1", true)', True),
    "isSemver_short_prerelease_normalize_false": ('isSemver("1.1-rc", true)', False),
    "equality_normalize": ('semver("v01.01", true) == semver("1.1.0")', True),
    "equality_reflexivity": ('semver("1.2.3") == semver("1.2.3")', True),
    "equality_ignores_build": ('semver("1.2.3+a") == semver("1.2.3+b")', True),
    "inequality": ('semver("1.2.3") == semver("1.0.0")', False),
    "semver_less": ('semver("1.0.0").isLessThan(semver("1.2.3"))', True),
    "semver_less_false": ('semver("1.0.0").isLessThan(semver("1.0.0"))', False),
    "semver_greater": ('semver("1.2.3").isGreaterThan(semver("1.0.0"))', True),
    "semver_greater_false": ('semver("1.0.0").isGreaterThan(semver("1.0.0"))', False),
    "compare_equal": ('semver("1.2.3").compareTo(semver("1.2.3"))', 0),
    "compare_less": ('semver("1.0.0").compareTo(semver("1.2.3"))', -1),
    "compare_greater": ('semver("1.2.3").compareTo(semver("1.0.0"))', 1),
    "prerelease_before_release": ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
    "prerelease_numeric_before_alpha": ('semver("1.0.0-1").isLessThan(semver("1.0.0-alpha"))', True),
    "prerelease_numeric_order": ('semver("1.0.0-beta.2").isLessThan(semver("1.0.0-beta.11"))', True),
    "prerelease_shorter_first": ('semver("1.0.0-alpha").isLessThan(semver("1.0.0-alpha.1"))', True),
    "major": ('semver("1.2.3").major()', 1),
    "minor": ('semver("1.2.3").minor()', 2),
    "patch": ('semver("1.2.3").patch()', 3),
}


@pytest.mark.parametrize(("expression", "expected"), SEMVER.values(), ids=SEMVER.keys())
def test_semver_library(expression: str, expected: object) -> None:
    assert value_of(expression) == expected


SEMVER_ERRORS = {
    "parseInvalidVersion": ('semver("v1.0")', "No Major.Minor.Patch elements found"),
    "empty": ('semver("")', "Version string empty"),
    "major_letters": ('semver("a.0.0")', 'Invalid character(s) found in major number "a"'),
    "minor_leading_zero": ('semver("1.01.0")', 'Minor number must not contain leading zeroes "01"'),
    "patch_empty": ('semver("1.0.")', 'strconv.ParseUint: parsing "": invalid syntax'),
    "prerelease_empty": ('semver("1.0.0-")', "Prerelease is empty"),
    "prerelease_leading_zero": (
        'semver("1.0.0-01")',
        'Numeric PreRelease version must not contain leading zeroes "01"',
    ),
    "prerelease_bad_char": ('semver("1.0.0-a_b")', 'Invalid character(s) found in prerelease "a_b"'),
    "build_empty": ('semver("1.0.0+")', "Build meta data is empty"),
    "build_bad_char": ('semver("1.0.0+a_b")', 'Invalid character(s) found in build meta data "a_b"'),
    "short_with_prerelease": ('semver("1.0-rc", true)', "short version cannot contain PreRelease/Build meta data"),
}


@pytest.mark.parametrize(("expression", "message"), SEMVER_ERRORS.values(), ids=SEMVER_ERRORS.keys())
def test_semver_library_errors(expression: str, message: str) -> None:
    assert error_of(expression) == message


STANDARD = {
    "int_arith": ("1 + 2 * 3 - 4 / 2", 5),
    "int_division_truncates": ("-7 / 2", -3),
    "int_modulo_sign": ("-7 % 3", -1),
    "uint_arith": ("3u * 2u", Uint(6)),
    "double_arith": ("1.5 + 2.25", 3.75),
    "string_concat": ('"ab" + "cd"', "abcd"),
    "list_concat": ("[1] + [2, 3]", (1, 2, 3)),
    "cross_numeric_compare": ("1 < 1.5 && 2u > 1", True),
    "heterogeneous_equality": ("dyn(1) == 1.0 && dyn(1u) == 1", True),
    "different_types_not_equal": ('dyn(1) == dyn("1")', False),
    "list_equality": ("[dyn(1), dyn([2])] == [dyn(1), dyn([2])]", True),
    "map_equality": ('{"a": dyn(1)} == {"a": dyn(1.0)}', True),
    "ternary": ('1 > 2 ? "a" : "b"', "b"),
    "in_list": ("2 in [1, 2, 3]", True),
    "in_map": ('"a" in {"a": 1}', True),
    "size_string_codepoints": ('size("héllo")', 5),
    "size_member": ("[1, 2].size()", 2),
    "contains": ('"fish".contains("is")', True),
    "startsWith": ('"fish".startsWith("fi")', True),
    "endsWith": ('"fish".endsWith("sh")', True),
    "matches_partial": ('"asymetric".matches("[^a]?sym")', True),
    "matches_global": ('matches("abc", "^a.c$")', True),
    "int_conversion": ('int("42") + int(2.9) + int(3u)', 47),
    "uint_conversion": ("uint(7)", Uint(7)),
    "double_conversion": ("double(3)", 3.0),
    "string_conversion": ('string(1) + string(true) + string(2.5) + string(b"x")', "1true2.5x"),
    "bool_conversion": ('bool("true")', True),
    "bytes_literal": ('b"ab" + bytes("c")', b"abc"),
    "raw_string": (r'r"a\nb"', "a\\nb"),
    "escapes": (r'"\x41\u0042\103\t"', "ABC\t"),
    "triple_quoted": ("'''a'b'''", "a'b"),
    "hex_literal": ("0x1F", 31),
    "has_map_key": ('has({"a": 1}.a)', True),
    "has_map_key_missing": ('has({"a": 1}.b)', False),
    "all": ("[1, 2, 3].all(x, x > 0)", True),
    "exists": ("[1, 2, 3].exists(x, x > 2)", True),
    "exists_one": ("[1, 2, 3].exists_one(x, x > 2)", True),
    "map": ("[1, 2].map(x, x * 2)", (2, 4)),
    "map_filter": ("[1, 2, 3].map(x, x > 1, x * 10)", (20, 30)),
    "filter": ("[1, 2, 3].filter(x, x != 2)", (1, 3)),
    "map_keys": ('{"a": 1, "b": 2}.all(k, k in ["a", "b"])', True),
    "bind": ("cel.bind(x, 5, x * x)", 25),
    "error_absorbed_by_and": ('{"a": 1}.b == 1 && false', False),
    "error_absorbed_by_or": ('true || {"a": 1}.b == 1', True),
    "error_absorbed_by_exists": ("[0, 1].exists(x, 1 / x == 1)", True),
    "error_absorbed_by_all": ("[0, 1].all(x, 1 / x > 5)", False),
}


@pytest.mark.parametrize(("expression", "expected"), STANDARD.values(), ids=STANDARD.keys())
def test_standard_library(expression: str, expected: object) -> None:
    result = value_of(expression)
    assert result == expected
    assert type(result) is type(expected)


EXTENSIONS = {
    "charAt": ('"hello".charAt(1)', "e"),
    "charAt_end": ('"hello".charAt(5)', ""),
    "indexOf": ('"hello mellow".indexOf("ello")', 1),
    "indexOf_start": ('"hello mellow".indexOf("ello", 2)', 7),
    "lastIndexOf": ('"hello mellow".lastIndexOf("ello")', 7),
    "lastIndexOf_before": ('"hello mellow".lastIndexOf("ello", 6)', 1),
    "indexOf_empty_needle": ('"abc".indexOf("", 2)', 2),
    "lastIndexOf_empty_needle": ('"abc".lastIndexOf("")', 3),
    "lastIndexOf_empty_needle_offset": ('"abc".lastIndexOf("", 1)', 1),
    "lastIndexOf_clamped": ("'tacocat'.lastIndexOf('at', 6)", 5),
    "lowerAscii": ('"TacoCat".lowerAscii()', "tacocat"),
    "upperAscii": ('"TacoCat".upperAscii()', "TACOCAT"),
    "replace": ('"hello hello".replace("he", "we")', "wello wello"),
    "replace_limit": ('"hello hello".replace("he", "we", 1)', "wello hello"),
    "split": ('"a,b,c".split(",")', ("a", "b", "c")),
    "split_limit": ('"a,b,c".split(",", 2)', ("a", "b,c")),
    "split_attribute": ('"some_example_value".split("example").size() >= 2', True),
    "substring": ('"tacocat".substring(4)', "cat"),
    "substring_range": ('"tacocat".substring(0, 4)', "taco"),
    "trim": ('"  \\ttrim\\n ".trim()', "trim"),
    "join": ('["a", "b"].join("-")', "a-b"),
    "join_plain": ('["a", "b"].join()', "ab"),
    "find": ('"abc 123".find("[0-9]+")', "123"),
    "find_none": ('"abc".find("[0-9]+")', ""),
    "findAll": ('"1 2 3".findAll("[0-9]")', ("1", "2", "3")),
    "findAll_limit": ('"1 2 3".findAll("[0-9]", 2)', ("1", "2")),
    "isSorted": ("[1, 2, 2, 3].isSorted()", True),
    "isSorted_false": ('["b", "a"].isSorted()', False),
    "sum": ("[1, 2, 3].sum()", 6),
    "sum_empty": ("[].sum()", 0),
    "min": ("[3, 1, 2].min()", 1),
    "max": ('["a", "c", "b"].max()', "c"),
    "list_indexOf": ("[1, 2, 3, 2].indexOf(2)", 1),
    "list_lastIndexOf": ("[1, 2, 3, 2].lastIndexOf(2)", 3),
    "sets_contains": ("sets.contains([1, 2, 3], [2, 3])", True),
    "sets_equivalent": ("sets.equivalent([1, 2], [2, 1, 1])", True),
    "sets_intersects": ("sets.intersects([1, 2], [3])", False),
    "includes_scalar": ('"fish".includes("fish")', True),
    "includes_list": ("[1, 2].includes(3)", False),
}


@pytest.mark.parametrize(("expression", "expected"), EXTENSIONS.values(), ids=EXTENSIONS.keys())
def test_extension_libraries(expression: str, expected: object) -> None:
    assert value_of(expression) == expected


@pytest.mark.parametrize("expression", ['"abc".reverse() == "cba"', "device.driver.reverse() == \"a\""])
def test_strings_have_no_reverse_in_kube_v136(expression: str) -> None:
    """kube v1.36's strings extension is version 2 (no ``reverse``); its API server refuses these selectors so."""
    column = expression.index("(") + 1
    with pytest.raises(CelCompileError) as caught:
        compile_selector(expression)
    assert caught.value.message.startswith(
        f"compilation failed: ERROR: <input>:1:{column}: found no matching overload for 'reverse' applied to "
        "'string.()'")


RUNTIME_ERRORS = {
    "division_by_zero": ("1 / 0", "division by zero"),
    "modulus_by_zero": ("1 % 0", "modulus by zero"),
    "int_overflow": ("9223372036854775807 + 1", "integer overflow"),
    "uint_underflow": ("1u - 2u", "unsigned integer overflow"),
    "negate_min_int": ("-(-9223372036854775808)", "integer overflow"),
    "missing_key": ('{"a": 1}["b"]', "no such key: b"),
    "missing_field": ('{"a": 1}.b', "no such key: b"),
    "list_out_of_range": ("[1][3]", "index '3' out of range in list size '1'"),
    "dyn_compare": ('dyn(1) < dyn("a")', "no such overload"),
    "dyn_add": ('dyn(1) + dyn("a")', "no such overload"),
    "quantity_equals_string": ('dyn(quantity("1")) == dyn("1")', "no such overload"),
    "not_iterable_int": ("dyn(1).all(x, x > 0)", "got 'types.Int', expected iterable type"),
    "not_iterable_semver": ('dyn(semver("1.0.0")).exists(x, true)', "got 'cel.Semver', expected iterable type"),
    "error_kept_by_and": ('{"a": 1}.b == 1 && true', "no such key: b"),
    "error_kept_by_exists": ("[0].exists(x, 1 / x == 1)", "division by zero"),
    "cost_limit": (
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, "
        "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, "
        "int('1'.find('[0-9]*')) < 100))))))",
        "operation cancelled: actual cost limit exceeded",
    ),
    "includes_too_long": (
        "[" + ", ".join(str(i) for i in range(49)) + "].includes(100)",
        "'includes' function cannot be applied to lists longer than 48 values",
    ),
}


@pytest.mark.parametrize(("expression", "message"), RUNTIME_ERRORS.values(), ids=RUNTIME_ERRORS.keys())
def test_runtime_errors(expression: str, message: str) -> None:
    assert error_of(expression) == message


def test_semver_values_order_and_print() -> None:
    low, high = parse_semver("1.0.0-rc.1+build.5"), parse_semver("1.0.0")
    assert low.compare(high) == -1
    assert high.compare(low) == 1
    assert str(low) == "1.0.0-rc.1+build.5"
    assert repr(high) == "Semver('1.0.0')"
    assert hash(parse_semver("1.0.0+x")) == hash(high)
    assert low != "1.0.0"
    assert isinstance(low, Semver)


def test_double_division_follows_ieee() -> None:
    assert value_of("1.0 / 0.0") == math.inf
    assert value_of("-1.0 / 0.0") == -math.inf
    assert math.isnan(value_of("0.0 / 0.0"))  # type: ignore[arg-type]


MORE_VALUES = {
    "repeated_map_key_last_wins": ('{"a": 1, "a": 2}["a"]', 2),
    "homogeneous_list_of_dyn": ('[dyn(1), dyn("a")].size()', 2),
    "int_from_negative_double": ("int(-2.9)", -2),
    "uint_from_double": ("uint(2.5)", Uint(2)),
    "uint_from_string": ('uint("7")', Uint(7)),
    "double_from_string": ('double("2.5")', 2.5),
    "string_of_inf": ("string(1.0 / 0.0)", "+Inf"),
    "string_of_negative_inf": ("string(-1.0 / 0.0)", "-Inf"),
    "string_of_nan": ("string(0.0 / 0.0)", "NaN"),
    "string_of_uint": ("string(3u)", "3"),
    "string_of_whole_double": ("string(100.0)", "100"),
    "string_of_million": ("string(1000000.0)", "1e+06"),
    "string_of_big_double": ("string(123456789.0)", "1.23456789e+08"),
    "string_of_small_double": ("string(0.00001)", "1e-05"),
    "string_of_tenth": ("string(0.0001)", "0.0001"),
    "string_of_fraction": ("string(123456.7)", "123456.7"),
    "string_of_negative_zero": ("string(-0.0)", "-0"),
    "string_of_zero": ("string(0.0)", "0"),
    "bool_of_bool": ("bool(false)", False),
    "bytes_of_bytes": ('bytes(b"a")', b"a"),
    "split_empty_separator": ('"abc".split("")', ("a", "b", "c")),
    "split_empty_separator_limit": ('"abc".split("", 2)', ("a", "bc")),
    "split_zero": ('"a,b".split(",", 0)', ()),
    "findAll_zero": ('"1 2".findAll("[0-9]", 0)', ()),
    "sum_double": ("[1.5, 2.5].sum()", 4.0),
    "list_indexOf_missing": ("[1, 2].indexOf(5)", -1),
    "list_lastIndexOf_missing": ("[1, 2].lastIndexOf(5)", -1),
    "includes_list_hit": ('["a", "b"].includes("b")', True),
    "map_literal_key_lookup_numeric": ("{1: 'a'}[1u]", "a"),
    "map_literal_double_key_lookup": ("{1: 'a'}[dyn(1.0)]", "a"),
    "in_map_numeric": ("dyn(1u) in {1: 'a'}", True),
    "in_map_missing": ("2 in {1: 'a'}", False),
    "bool_key_apart_from_int": ("dyn(true) in {1: 'a'}", False),
    "list_index_double": ("[7, 8][dyn(1.0)]", 8),
    "list_index_uint": ("[7, 8][dyn(1u)]", 8),
    "list_equality_length": ("[1] == [1, 2]", False),
    "list_equality_items": ("[1, 2] == [1, 3]", False),
    "map_equality_size": ('{"a": 1} == {"a": 1, "b": 2}', False),
    "map_equality_value": ('{"a": 1} == {"a": 2}', False),
    "map_equality_key": ('{"a": 1} == {"b": 1}', False),
    "not_equal": ("1 != 2", True),
    "le": ('"a" <= "b"', True),
    "gt_bytes": ('b"b" > b"a"', True),
    "bool_order": ("false < true", True),
    "uint_add": ("1u + 2u", Uint(3)),
    "uint_division": ("7u / 2u", Uint(3)),
    "uint_modulo": ("7u % 2u", Uint(1)),
    "double_multiply": ("1.5 * 2.0", 3.0),
    "double_subtract": ("1.5 - 2.0", -0.5),
    "negative_double": ("-(1.5)", -1.5),
    "not": ("!false", True),
    "ternary_true": ('true ? "a" : "b"', "a"),
    "null_equality": ("null == null", True),
    "dyn_null_not_equal": ("dyn(1) == null", False),
    "has_on_dyn_map": ('has(dyn({"a": 1}).a)', True),
    "select_on_dyn_map": ('dyn({"a": 1}).a', 1),
    "index_on_dyn_list": ("dyn([1, 2])[1]", 2),
    "trailing_comma_list": ("[1, 2,].size()", 2),
    "trailing_comma_map": ('{"a": 1,}.size()', 1),
    "trailing_comma_call": ('"abc".contains("b",)', True),
    "empty_map": ("{}.size()", 0),
    "leading_dot_ident": ('.cel.bind(x, 1, x) == 1 || true', True),
    "uint_hex": ("0x10u", Uint(16)),
    "negative_double_literal": ("-2.5e1", -25.0),
    "leading_dot_double": (".5", 0.5),
    "comment": ("1 // one\n + 1", 2),
    "null_literal": ("null", None),
    "sign_via_dyn": ('sign(dyn(quantity("-1")))', -1),
    "compare_via_dyn": ('dyn(semver("1.0.0")).compareTo(dyn(semver("2.0.0")))', -1),
    "quantity_float_overflow": ('quantity("1e400").asApproximateFloat()', math.inf),
    "exists_one_none": ("[1, 2].exists_one(x, x > 5)", False),
    "all_on_empty": ("[].all(x, x > 0)", True),
    "bind_shadow": ("cel.bind(x, 1, cel.bind(x, 2, x)) == 2", True),
}


@pytest.mark.parametrize(("expression", "expected"), MORE_VALUES.values(), ids=MORE_VALUES.keys())
def test_more_values(expression: str, expected: object) -> None:
    assert value_of(expression) == expected


MORE_ERRORS = {
    "bad_regex": ('"a".matches("(" + "")', "error parsing regexp: missing closing ): `(`"),
    "int_of_nan": ("int(0.0 / 0.0)", "integer overflow"),
    "int_of_string": ('int("x")', "type conversion error from 'string' to 'int'"),
    "int_of_padded_string": ('int(" 1")', "type conversion error from 'string' to 'int'"),
    "int_of_underscored_string": ('int("1_000")', "type conversion error from 'string' to 'int'"),
    "uint_of_negative_string": ('uint("-1")', "type conversion error from 'string' to 'uint'"),
    "double_of_padded_string": ('double("1.5 ")', "type conversion error from 'string' to 'double'"),
    "int_of_big_uint": ("int(18446744073709551615u)", "integer overflow"),
    "uint_of_negative": ("uint(-1)", "unsigned integer overflow"),
    "uint_of_negative_double": ("uint(-1.5)", "unsigned integer overflow"),
    "uint_of_string": ('uint("x")', "type conversion error from 'string' to 'uint'"),
    "double_of_string": ('double("x")', "type conversion error from 'string' to 'double'"),
    "string_of_bad_bytes": ('string(b"\\xff")', "invalid UTF-8 in bytes, cannot convert to string"),
    "bool_of_string": ('bool("yes")', "type conversion error from 'string' to 'bool'"),
    "charAt_out_of_range": ('"ab".charAt(3)', "index out of range: 3"),
    "indexOf_out_of_range": ('"ab".indexOf("a", 3)', "index out of range: 3"),
    "lastIndexOf_out_of_range": ('"ab".lastIndexOf("a", -1)', "index out of range: -1"),
    "substring_start": ('"ab".substring(3)', "index out of range: 3"),
    "substring_end": ('"ab".substring(1, 3)', "index out of range: 3"),
    "substring_reversed": ('"tacocat".substring(4, 3)', "invalid substring range. start: 4, end: 3"),
    "substring_negative": ('"tacocat".substring(-1)', "index out of range: -1"),
    "indexOf_far_offset": ("'tacocat'.indexOf('a', 30)", "index out of range: 30"),
    "indexOf_in_empty": ('"".indexOf("a")', "index out of range: 0"),
    "lastIndexOf_far_offset": ("'tacocat'.lastIndexOf('a', 30)", "index out of range: 30"),
    "join_non_string": ("dyn([1]).join()", "join: invalid input: 1"),
    "join_on_map": ("dyn({}).join()", "no such overload: join(map)"),
    "max_mixed": ('[dyn(1), dyn("a")].max()', "no such overload"),
    "min_empty": ("[].min()", "min(list) argument must not be empty"),
    "max_empty": ("[].max()", "max(list) argument must not be empty"),
    "compare_mixed": (
        'dyn(quantity("1")).compareTo(dyn(semver("1.0.0")))',
        "no such overload: compareTo(kubernetes.Quantity, kubernetes.Semver)",
    ),
    "dispatch_miss": ('dyn("a").compareTo(dyn("b"))', "no such overload: compareTo(string, string)"),
    "global_dispatch_miss": ("size(dyn(1))", "no such overload: size(int)"),
    "select_on_string": ('dyn("a").b', "type 'string' does not support field selection"),
    "has_on_string": ('has(dyn("a").b)', "invalid type for field selection: string"),
    "index_on_int": ("dyn(1)[0]", "no such overload"),
    "list_index_fraction": ("[1][dyn(0.5)]", "unsupported index value 0.5 in list"),
    "list_index_string": ('[1][dyn("a")]', "unsupported index type 'string' in list"),
    "map_missing_int_key": ("{1: 2}[3]", "no such key: 3"),
    "map_missing_bool_key": ("{true: 2}[false]", "no such key: false"),
    "unhashable_map_key": ("{dyn({}): 1}", "unsupported map key type: map"),
    "not_on_int": ("!dyn(1)", "no such overload"),
    "negate_string": ('-dyn("a")', "no such overload"),
    "in_on_int": ("1 in dyn(1)", "no such overload"),
    "subtract_mixed": ("dyn(1) - dyn(1.0)", "no such overload"),
    "double_modulo": ("dyn(1.0) % dyn(2.0)", "no such overload"),
    "ternary_on_int": ('dyn(1) ? "a" : "b"', "no such overload"),
    "or_non_bool": ("false || dyn(1)", "no such overload"),
    "or_error_kept": ('{"a": 1}.b == 1 || false', "no such key: b"),
    "exists_one_error": ("[0].exists_one(x, 1 / x == 1)", "division by zero"),
    "map_macro_error": ("[0].map(x, 1 / x)", "division by zero"),
}


@pytest.mark.parametrize(("expression", "message"), MORE_ERRORS.values(), ids=MORE_ERRORS.keys())
def test_more_runtime_errors(expression: str, message: str) -> None:
    assert error_of(expression) == message


PRECEDENCE = {
    "multiplication_before_addition": ("1 + 2 * 3", 7),
    "unary_minus_binds_tighter": ("-1 * 2", -2),
    "and_before_or": ("true || false && false", True),
    "not_binds_tighter_than_and": ("!false && false", False),
    "ternary_is_right_associative": ("true ? 1 : false ? 2 : 3", 1),
    "ternary_nested_else": ("false ? 1 : false ? 2 : 3", 3),
    "relations_left_associative": ("1 < 2 == true", True),
    "parentheses": ("(1 + 2) * 3", 9),
    "member_after_index": ('{"a": "xy"}["a"].size()', 2),
    "double_negation": ("!!true", True),
}


@pytest.mark.parametrize(("expression", "expected"), PRECEDENCE.values(), ids=PRECEDENCE.keys())
def test_operator_precedence(expression: str, expected: object) -> None:
    assert value_of(expression) == expected
