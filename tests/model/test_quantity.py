"""resource.Quantity: grammar, exact values, rounding, caps, canonical strings and errors.

Expected values come from the reference (§16) and from apimachinery's own test tables; the
property tests compare the parser with an independent exact model built from the grammar.
"""

from __future__ import annotations

import math
from fractions import Fraction

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.errors import ManifestError, QuantityError
from kschedlib.model.quantity import Quantity, QuantityFormat, parse_quantity

FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
NUMERIC_ERROR = "unable to parse numeric part of quantity"
SUFFIX_ERROR = "unable to parse quantity's suffix"
SIZE_ERROR = (
    "quantities of 10^1000 or more, or BinarySI ones with over 1000 significant digits, are not supported"
)
MESSAGES = {"format": FORMAT_ERROR, "numeric": NUMERIC_ERROR, "suffix": SUFFIX_ERROR, "size": SIZE_ERROR}
CAP = 2**63 - 1
NANO = Fraction(1, 10**9)


def ident(value: object) -> str:
    """A readable test id: strings as written (quoted if blank-edged, shortened if long), numbers typed."""
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, str):
        text = value if value.isprintable() and value.strip() == value != "" else repr(value)
        return text if len(text) <= 24 else f"{text[:12]}...({len(value)} chars)"
    text = repr(value)
    return f"{type(value).__name__}:{text if len(text) <= 24 else text[:12] + '...'}"


# --- reference §16.2 --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "milli", "value"),
    [
        ("100m", 100, 1),
        ("0.5", 500, 1),
        ("1", 1000, 1),
        (1, 1000, 1),
        ("2.5", 2500, 3),
        ("0.1m", 1, 1),
        ("1e3", 1_000_000, 1000),
        ("128974848", 128_974_848_000, 128_974_848),
        ("129e6", 129_000_000_000, 129_000_000),
        ("129M", 129_000_000_000, 129_000_000),
        ("123Mi", 128_974_848_000, 128_974_848),
        ("1.5Gi", 1_610_612_736_000, 1_610_612_736),
        ("1E", 10**21, 10**18),
        ("200Mi", 209_715_200_000, 209_715_200),
    ],
    ids=ident,
)
def test_reference_table(text: str | int, milli: int, value: int) -> None:
    quantity = parse_quantity(text)
    assert quantity.milli_value() == milli
    assert quantity.value() == value


# --- exact values and remembered formats ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "amount", "format"),
    [
        # decimal suffixes, lower-case k only, E alone is exa
        ("5n", Fraction(5, 10**9), "DecimalSI"),
        ("4u", Fraction(4, 10**6), "DecimalSI"),
        ("3m", Fraction(3, 1000), "DecimalSI"),
        ("8k", Fraction(8000), "DecimalSI"),
        ("7M", Fraction(7 * 10**6), "DecimalSI"),
        ("6G", Fraction(6 * 10**9), "DecimalSI"),
        ("5T", Fraction(5 * 10**12), "DecimalSI"),
        ("2P", Fraction(2 * 10**15), "DecimalSI"),
        ("1E", Fraction(10**18), "DecimalSI"),
        ("12E", Fraction(12 * 10**18), "DecimalSI"),
        ("1.01E", Fraction(101 * 10**16), "DecimalSI"),
        ("1000E", Fraction(10**21), "DecimalSI"),  # decimal values are never capped
        # binary suffixes
        ("1Ki", Fraction(1024), "BinarySI"),
        ("7Mi", Fraction(7 * 2**20), "BinarySI"),
        ("5Ti", Fraction(5 * 2**40), "BinarySI"),
        ("4Pi", Fraction(4 * 2**50), "BinarySI"),
        ("3Ei", Fraction(3 * 2**60), "BinarySI"),
        ("100.035Ki", Fraction(102435840, 1000), "BinarySI"),
        ("0.5Mi", Fraction(2**19), "BinarySI"),
        ("0.5Ki", Fraction(512), "BinarySI"),
        # exponents: E or e followed by a signed integer
        ("1E3", Fraction(1000), "DecimalExponent"),
        ("1e3", Fraction(1000), "DecimalExponent"),
        ("1E-3", Fraction(1, 1000), "DecimalExponent"),
        ("1.3E+6", Fraction(1_300_000), "DecimalExponent"),
        ("0.5e-2", Fraction(5, 1000), "DecimalExponent"),
        ("1e-0", Fraction(1), "DecimalExponent"),
        ("1e03", Fraction(1000), "DecimalExponent"),
        # number forms
        (".5", Fraction(1, 2), "DecimalSI"),
        ("5.", Fraction(5), "DecimalSI"),
        ("1.G", Fraction(10**9), "DecimalSI"),
        ("+1", Fraction(1), "DecimalSI"),
        ("-1", Fraction(-1), "DecimalSI"),
        ("-3m", Fraction(-3, 1000), "DecimalSI"),
        ("007", Fraction(7), "DecimalSI"),
        ("0.00500", Fraction(5, 1000), "DecimalSI"),
        ("100.035k", Fraction(100035), "DecimalSI"),
        ("0", Fraction(0), "DecimalSI"),
        ("0Ki", Fraction(0), "BinarySI"),
        ("-0", Fraction(0), "DecimalSI"),
        # rounding up in magnitude to a multiple of 1e-9
        ("0.1m", Fraction(1, 10_000), "DecimalSI"),
        ("1e-10", NANO, "DecimalExponent"),
        ("-1e-10", -NANO, "DecimalExponent"),
        ("3.001n", 4 * NANO, "DecimalSI"),
        ("0.9n", NANO, "DecimalSI"),
        ("0.00000012345", 124 * NANO, "DecimalSI"),
        ("1.1E-9", 2 * NANO, "DecimalExponent"),
        ("1e-100000", NANO, "DecimalExponent"),
        ("0.000000000001Ki", 2 * NANO, "DecimalSI"),  # below 1: BinarySI becomes DecimalSI
        ("-0.000000000001Ki", -2 * NANO, "DecimalSI"),
        (".001Ki", Fraction(1024, 1000), "BinarySI"),  # 1.024 is not below 1: stays BinarySI
        # the BinarySI cap, in magnitude
        ("9Ei", Fraction(CAP), "BinarySI"),
        ("9223372036854775807Ki", Fraction(CAP), "BinarySI"),
        ("-9Ei", Fraction(-CAP), "BinarySI"),
        ("8Ei", Fraction(CAP), "BinarySI"),
        ("7.99999999999999999999Ei", Fraction(CAP), "BinarySI"),
        ("1" + "0" * 40 + "Ki", Fraction(CAP), "BinarySI"),
        # the exponent is kept in an int32 and wraps, as in apimachinery
        ("1e4294967296", Fraction(1), "DecimalExponent"),
        ("1e-4294967297", Fraction(1, 10), "DecimalExponent"),
    ],
    ids=ident,
)
def test_parse_exact(text: str, amount: Fraction, format: QuantityFormat) -> None:
    quantity = parse_quantity(text)
    assert quantity.amount == amount
    assert quantity.format == format


@pytest.mark.parametrize(
    ("text", "format"),
    [
        ("-", "DecimalSI"),
        ("+", "DecimalSI"),
        (".", "DecimalSI"),
        ("-.", "DecimalSI"),
        ("m", "DecimalSI"),
        ("E", "DecimalSI"),
        ("Ki", "BinarySI"),
        ("Ti", "BinarySI"),
        ("e3", "DecimalExponent"),
        ("e-9", "DecimalExponent"),
    ],
    ids=ident,
)
def test_number_without_digits_is_zero_like_kubernetes(text: str, format: QuantityFormat) -> None:
    quantity = parse_quantity(text)
    assert quantity.amount == 0
    assert quantity.format == format


@pytest.mark.parametrize(
    ("value", "amount", "format"),
    [
        (" 1", Fraction(1), "DecimalSI"),
        ("1 ", Fraction(1), "DecimalSI"),
        ("\t100m\n", Fraction(1, 10), "DecimalSI"),
        ("\u00a01Gi\u3000", Fraction(2**30), "BinarySI"),
        (2, Fraction(2), "DecimalSI"),
        (-1, Fraction(-1), "DecimalSI"),
        (10**30, Fraction(10**30), "DecimalSI"),
        (0.5, Fraction(1, 2), "DecimalSI"),
        (2.0, Fraction(2), "DecimalSI"),
        (-0.0, Fraction(0), "DecimalSI"),
        (1e20, Fraction(10**20), "DecimalExponent"),
        (1e-7, Fraction(1, 10**7), "DecimalExponent"),
        (1e-10, NANO, "DecimalExponent"),
    ],
    ids=ident,
)
def test_json_values(value: str | float, amount: Fraction, format: QuantityFormat) -> None:
    quantity = parse_quantity(value)
    assert quantity.amount == amount
    assert quantity.format == format


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("", "format"),
        ("   ", "format"),
        ("aoeu", "format"),
        ("1x", "format"),
        ("1 Ki", "format"),
        ("1.1.M", "format"),
        ("1+1.0M", "format"),
        ("0.1am", "format"),
        ("1Kb", "format"),
        ("1e3x", "format"),
        ("\u0661", "format"),  # an Arabic-Indic digit is not [0-9]
        ("\x1c1", "format"),  # str.strip() would remove it, Go's TrimSpace does not
        (True, "format"),
        (False, "format"),
        (None, "format"),
        ([], "format"),
        (float("nan"), "format"),
        (float("inf"), "format"),
        ("1e", "suffix"),
        ("1K", "suffix"),
        ("1k-", "suffix"),
        ("1i", "suffix"),
        (".5i", "suffix"),
        ("0.1mi", "suffix"),
        ("-3.01i", "suffix"),
        ("-3.01e-", "suffix"),
        ("1e+", "suffix"),
        ("1EE3", "suffix"),
        ("1Ki3", "suffix"),
        ("1-", "suffix"),
        ("--1", "suffix"),
        ("1e99999999999999999999", "suffix"),  # beyond int64
        ("1e9223372036854775808", "suffix"),
        ("Pi", "numeric"),
        ("Ei", "numeric"),
        ("-Pi", "numeric"),
        ("e-10", "numeric"),
        (".e-10", "numeric"),
        ("+.e-10", "numeric"),
        ("1e1000", "size"),
        ("1" + "0" * 1000, "size"),
        (10**1000, "size"),
        ("1." + "1" * 1000 + "Ki", "size"),
    ],
    ids=ident,
)
def test_errors_keep_kubernetes_message_and_value(value: object, kind: str) -> None:
    with pytest.raises(QuantityError) as caught:
        parse_quantity(value)  # type: ignore[arg-type]  # invalid JSON types on purpose
    assert caught.value.message == MESSAGES[kind]
    assert caught.value.value == value or value != value  # nan is never equal to itself
    assert isinstance(caught.value, ManifestError)
    assert isinstance(caught.value, ValueError)


def test_largest_decimal_below_the_size_limit_is_exact() -> None:
    assert parse_quantity("9" * 1000).value() == 10**1000 - 1
    assert parse_quantity("1e999").value() == 10**999


# --- canonical strings ---------------------------------------------------------------------------


def q(amount: int | Fraction, format: QuantityFormat = "DecimalSI") -> Quantity:
    return Quantity(Fraction(amount), format)


@pytest.mark.parametrize(
    ("quantity", "expected"),
    [
        (q(2**30, "BinarySI"), "1Gi"),
        (q(300 * 2**20, "BinarySI"), "300Mi"),
        (q(6 * 1024, "BinarySI"), "6Ki"),
        (q(1001 * 2**30, "BinarySI"), "1001Gi"),
        (q(2**40, "BinarySI"), "1Ti"),
        (q(7 * 2**60, "BinarySI"), "7Ei"),
        (q(3 * 2**29, "BinarySI"), "1536Mi"),
        (q(5, "BinarySI"), "5"),
        (q(1023, "BinarySI"), "1023"),
        (q(1000, "BinarySI"), "1k"),  # below 1024: printed as DecimalSI
        (q(2000, "BinarySI"), "2000"),  # whole and not below 1024: BinarySI with no suffix
        (q(1025, "BinarySI"), "1025"),
        (q(CAP, "BinarySI"), "9223372036854775807"),
        (q(Fraction(1, 2), "BinarySI"), "500m"),
        (q(Fraction(1234567, 1000), "BinarySI"), "1234567m"),
        (q(Fraction(10241024, 10000), "BinarySI"), "1024102400u"),  # not whole: DecimalSI
        (q(10**9), "1G"),
        (q(3000), "3k"),
        (q(300 * 10**6), "300M"),
        (q(10**12), "1T"),
        (q(1234567 * 10**6), "1234567M"),
        (q(12 * 10**18), "12E"),
        (q(10**20), "100E"),
        (q(10**21), "1000E"),  # apimachinery would print "1"
        (q(Fraction(1, 1000)), "1m"),
        (q(Fraction(80, 1000)), "80m"),
        (q(Fraction(1080, 1000)), "1080m"),
        (q(Fraction(3, 2)), "1500m"),
        (q(Fraction(1, 10**4)), "100u"),
        (q(Fraction(1, 10**6)), "1u"),
        (q(Fraction(1080, 10**6)), "1080u"),
        (q(Fraction(1, 10**9)), "1n"),
        (q(Fraction(1080, 10**9)), "1080n"),
        (q(0), "0"),
        (q(0, "BinarySI"), "0"),
        (q(0, "DecimalExponent"), "0"),
        (q(10**9, "DecimalExponent"), "1e9"),
        (q(129 * 10**6, "DecimalExponent"), "129e6"),
        (q(Fraction(1, 1000), "DecimalExponent"), "1e-3"),
        (q(Fraction(1, 10**9), "DecimalExponent"), "1e-9"),
        (q(Fraction(80, 1000), "DecimalExponent"), "80e-3"),
        (q(1500, "DecimalExponent"), "1500"),
        (q(10**20, "DecimalExponent"), "100e18"),
        (q(10**21, "DecimalExponent"), "1e21"),
    ],
    ids=lambda value: value if isinstance(value, str) else value.format,
)
def test_canonical_string(quantity: Quantity, expected: str) -> None:
    assert str(quantity) == expected
    if quantity.amount:
        assert str(Quantity(-quantity.amount, quantity.format)) == "-" + expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1Ki", "1Ki"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("1000M", "1G"),
        ("0.001T", "1G"),
        ("1000m", "1"),
        ("1.5", "1500m"),
        ("0.1m", "100u"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
        ("1e-10", "1e-9"),
        ("1E3", "1e3"),
        (".001e12", "1e9"),
        ("1.2e3", "1200"),
        ("1.3E+6", "1300e3"),
        ("12e-1", "1200e-3"),
        ("9Ei", "9223372036854775807"),
        ("+100m", "100m"),
        ("-100m", "-100m"),
        ("-1.5Gi", "-1536Mi"),
        ("00", "0"),
    ],
    ids=ident,
)
def test_parse_then_print(text: str, expected: str) -> None:
    assert str(parse_quantity(text)) == expected


@pytest.mark.parametrize(
    ("constructor", "number", "format", "expected"),
    [
        ("from_int", 1, "DecimalSI", "1"),
        ("from_int", 1000, "DecimalSI", "1k"),
        ("from_int", 1234000, "DecimalSI", "1234k"),
        ("from_int", 1024, "BinarySI", "1Ki"),
        ("from_int", 2**20, "BinarySI", "1Mi"),
        ("from_int", 10**6, "DecimalExponent", "1e6"),
        ("from_int", 2**70, "BinarySI", "9223372036854775807"),  # capped
        ("from_milli", 1, "DecimalSI", "1m"),
        ("from_milli", 1000, "DecimalSI", "1"),
        ("from_milli", 1234000, "DecimalSI", "1234"),
        ("from_milli", 1024, "BinarySI", "1024m"),  # below 1024: printed as DecimalSI
        ("from_milli", 2**20, "BinarySI", "1048576m"),  # not whole: printed as DecimalSI
        ("from_milli", -250, "DecimalSI", "-250m"),
    ],
    ids=ident,
)
def test_constructors(constructor: str, number: int, format: QuantityFormat, expected: str) -> None:
    quantity = getattr(Quantity, constructor)(number, format)
    assert str(quantity) == expected
    assert quantity.format == format


def test_from_int_and_from_milli_keep_exact_values() -> None:
    assert Quantity.from_int(7).value() == 7
    assert Quantity.from_milli(1500).milli_value() == 1500
    assert Quantity.from_milli(1500).value() == 2
    assert Quantity.from_milli(1500) == parse_quantity("1.5")


# --- the Quantity value object -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "format", "normalized"),
    [
        pytest.param(Fraction(1, 3), "DecimalSI", Fraction(333333334, 10**9), id="rounds-up"),
        pytest.param(Fraction(-1, 3), "DecimalSI", Fraction(-333333334, 10**9), id="rounds-away-from-zero"),
        pytest.param(Fraction(1, 2), "DecimalSI", Fraction(1, 2), id="exact-kept"),
        pytest.param(Fraction(2**64), "BinarySI", Fraction(CAP), id="binary-capped"),
        pytest.param(Fraction(-(2**64)), "BinarySI", Fraction(-CAP), id="binary-capped-negative"),
        pytest.param(Fraction(2**64), "DecimalSI", Fraction(2**64), id="decimal-not-capped"),
    ],
)
def test_construction_enforces_invariants(
    amount: Fraction, format: QuantityFormat, normalized: Fraction
) -> None:
    assert Quantity(amount, format).amount == normalized


def test_construction_rejects_bad_fields() -> None:
    with pytest.raises(ValueError, match="format"):
        Quantity(Fraction(1), "Binary")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Quantity(0.5, "DecimalSI")  # type: ignore[arg-type]


def test_immutable() -> None:
    quantity = parse_quantity("1")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        quantity.amount = Fraction(2)  # type: ignore[misc]


def test_equality_and_hash_ignore_format() -> None:
    assert parse_quantity("1Gi") == parse_quantity("1073741824")
    assert parse_quantity("1k") == parse_quantity("1e3") == parse_quantity(1000)
    assert hash(parse_quantity("1Gi")) == hash(parse_quantity("1073741824"))
    assert len({parse_quantity("1k"), parse_quantity("1e3"), parse_quantity("1000")}) == 1
    assert parse_quantity("1k") != parse_quantity("1Ki")
    assert parse_quantity("1") != 1  # a Quantity is not a number


def test_ordering() -> None:
    assert parse_quantity("100m") < parse_quantity("1")
    assert parse_quantity("1Ki") > parse_quantity("1k")
    assert parse_quantity("1k") <= parse_quantity("1e3") <= parse_quantity("1000")
    assert parse_quantity("-1") < parse_quantity("0") < parse_quantity("1n")
    assert max(map(parse_quantity, ["1Gi", "1G", "999Mi"])) == parse_quantity("1Gi")
    with pytest.raises(TypeError):
        assert parse_quantity("1") < 2


def test_value_and_milli_value_round_up() -> None:
    assert parse_quantity("1n").value() == 1
    assert parse_quantity("1n").milli_value() == 1
    assert parse_quantity("1001m").value() == 2
    assert parse_quantity("-1500m").value() == -1  # ceil, towards +infinity
    assert parse_quantity("-0.5m").milli_value() == 0


def test_repeated_strings_share_one_instance() -> None:
    assert parse_quantity("250m") is parse_quantity("250m")


# --- properties ----------------------------------------------------------------------------------

FORMATS: tuple[QuantityFormat, ...] = ("DecimalSI", "BinarySI", "DecimalExponent")


@st.composite
def quantities(draw: st.DrawFn) -> Quantity:
    """Valid quantities: nano multiples of every size, and whole binary multiples like 3Gi."""
    format = draw(st.sampled_from(FORMATS))
    amount = draw(
        st.one_of(
            st.integers(-(10**25), 10**25).map(lambda n: Fraction(n, 10**9)),
            st.integers(-(10**6), 10**6).map(lambda n: Fraction(n, 1000)),
            st.builds(lambda m, k: Fraction(m * 1024**k), st.integers(-1023, 1023), st.integers(0, 6)),
        )
    )
    return Quantity(amount, format)


@given(quantities())
def test_string_round_trips(quantity: Quantity) -> None:
    parsed = parse_quantity(str(quantity))
    assert parsed == quantity
    if quantity.format != "BinarySI":  # BinarySI may print in DecimalSI, which then prints differently
        assert str(parsed) == str(quantity)


@given(quantities())
def test_integer_views_are_ceilings(quantity: Quantity) -> None:
    assert quantity.value() == math.ceil(quantity.amount)
    assert quantity.milli_value() == math.ceil(quantity.amount * 1000)


@given(quantities(), quantities())
def test_ordering_follows_amounts(a: Quantity, b: Quantity) -> None:
    assert (a < b) == (a.amount < b.amount)
    assert (a <= b) == (a.amount <= b.amount)
    assert (a > b) == (a.amount > b.amount)
    assert (a >= b) == (a.amount >= b.amount)
    assert (a == b) == (a.amount == b.amount)
    if a == b:
        assert hash(a) == hash(b)


SUFFIX_SCALE: dict[str, tuple[Fraction, QuantityFormat]] = {
    "": (Fraction(1), "DecimalSI"),
    "n": (Fraction(1, 10**9), "DecimalSI"),
    "u": (Fraction(1, 10**6), "DecimalSI"),
    "m": (Fraction(1, 10**3), "DecimalSI"),
    "k": (Fraction(10**3), "DecimalSI"),
    "M": (Fraction(10**6), "DecimalSI"),
    "G": (Fraction(10**9), "DecimalSI"),
    "T": (Fraction(10**12), "DecimalSI"),
    "P": (Fraction(10**15), "DecimalSI"),
    "E": (Fraction(10**18), "DecimalSI"),
    "Ki": (Fraction(2**10), "BinarySI"),
    "Mi": (Fraction(2**20), "BinarySI"),
    "Gi": (Fraction(2**30), "BinarySI"),
    "Ti": (Fraction(2**40), "BinarySI"),
    "Pi": (Fraction(2**50), "BinarySI"),
    "Ei": (Fraction(2**60), "BinarySI"),
}


@st.composite
def written_quantities(draw: st.DrawFn) -> tuple[str, Fraction, QuantityFormat]:
    """A string in the §16.1 grammar with at least one digit, and its value and format by §16.2."""
    sign = draw(st.sampled_from(["", "+", "-"]))
    whole = draw(st.text("0123456789", max_size=12))
    fraction = draw(st.none() | st.text("0123456789", min_size=0 if whole else 1, max_size=14))
    if not whole and fraction is None:
        whole = "0"
    if draw(st.booleans()):
        suffix = draw(st.sampled_from(sorted(SUFFIX_SCALE)))
        scale, format = SUFFIX_SCALE[suffix]
    else:
        exponent = draw(st.integers(-40, 40))
        plus = draw(st.sampled_from(["", "+"])) if exponent >= 0 else ""
        suffix = draw(st.sampled_from(["e", "E"])) + plus + str(exponent)
        scale, format = Fraction(10) ** exponent, "DecimalExponent"
    number = whole + ("" if fraction is None else "." + fraction)
    decimals = fraction or ""
    exact = Fraction(int(whole or "0")) + Fraction(int(decimals or "0"), 10 ** len(decimals))
    magnitude = exact * scale
    if magnitude:
        magnitude = Fraction(math.ceil(magnitude * 10**9), 10**9)
    if format == "BinarySI":
        magnitude = min(magnitude, Fraction(CAP))
        if 0 < magnitude < 1:
            format = "DecimalSI"
    return sign + number + suffix, (-magnitude if sign == "-" else magnitude), format


@given(written_quantities())
def test_parse_matches_exact_model(case: tuple[str, Fraction, QuantityFormat]) -> None:
    text, amount, format = case
    quantity = parse_quantity(text)
    assert quantity.amount == amount
    assert quantity.format == format
    assert quantity.value() == math.ceil(amount)
    assert quantity.milli_value() == math.ceil(amount * 1000)


@given(st.text("0123456789.+-eEinumkKMGTPx ", max_size=12))
def test_any_text_parses_or_raises_a_kubernetes_error(text: str) -> None:
    outcome: Quantity | QuantityError
    try:
        outcome = parse_quantity(text)
    except QuantityError as err:
        outcome = err
    if isinstance(outcome, QuantityError):
        assert outcome.message in {FORMAT_ERROR, NUMERIC_ERROR, SUFFIX_ERROR}
        assert outcome.value == text
    else:
        assert 10**9 % outcome.amount.denominator == 0  # a multiple of 1e-9


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_read_as_their_shortest_text(number: float) -> None:
    assert parse_quantity(number) == parse_quantity(repr(number))
