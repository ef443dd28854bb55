"""Character classes of Go's regexp: Perl and POSIX groups, Unicode categories and scripts by name,
and case folding, as predicates the pure-Python automaton tests one character at a time.

A class item is ``("range", ((lo, hi), ...), negated)``, ``("cat", categories, negated)`` (general
categories from :mod:`unicodedata`, whose Unicode version is Python's) or ``("script", name,
negated)`` (scripts need RE2's tables: the pure-Python automaton refuses them).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable
from typing import Final

__all__ = [
    "CLASS_NAMES",
    "PERL_GROUPS",
    "POSIX_GROUPS",
    "ClassItem",
    "class_predicate",
    "fold_orbit",
    "unicode_group",
]

ClassItem = tuple[object, ...]

_ASCII_WORD: Final = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))


def _perl(ranges: tuple[tuple[int, int], ...]) -> tuple[ClassItem, ClassItem]:
    return ("range", ranges, False), ("range", ranges, True)


_DIGIT, _NOT_DIGIT = _perl(((0x30, 0x39),))
_SPACE, _NOT_SPACE = _perl(((0x09, 0x0A), (0x0C, 0x0D), (0x20, 0x20)))
_WORD, _NOT_WORD = _perl(_ASCII_WORD)

PERL_GROUPS: Final[dict[str, ClassItem]] = {
    "\\d": _DIGIT, "\\D": _NOT_DIGIT, "\\s": _SPACE, "\\S": _NOT_SPACE, "\\w": _WORD, "\\W": _NOT_WORD,
}  # fmt: skip
"""``\\d``, ``\\s``, ``\\w`` and their negations: ASCII only, as in Go."""

_POSIX_RANGES: Final[dict[str, tuple[tuple[int, int], ...]]] = {
    "alnum": ((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)),
    "alpha": ((0x41, 0x5A), (0x61, 0x7A)),
    "ascii": ((0x00, 0x7F),),
    "blank": ((0x09, 0x09), (0x20, 0x20)),
    "cntrl": ((0x00, 0x1F), (0x7F, 0x7F)),
    "digit": ((0x30, 0x39),),
    "graph": ((0x21, 0x7E),),
    "lower": ((0x61, 0x7A),),
    "print": ((0x20, 0x7E),),
    "punct": ((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)),
    "space": ((0x09, 0x0D), (0x20, 0x20)),
    "upper": ((0x41, 0x5A),),
    "word": _ASCII_WORD,
    "xdigit": ((0x30, 0x39), (0x41, 0x46), (0x61, 0x66)),
}
POSIX_GROUPS: Final[dict[str, ClassItem]] = {
    f"[:{neg}{name}:]": ("range", ranges, bool(neg)) for name, ranges in _POSIX_RANGES.items() for neg in ("", "^")
}
"""``[:alpha:]`` and ``[:^alpha:]`` inside brackets."""

_CATEGORIES: Final = (
    "Cc Cf Cn Co Cs Ll Lm Lo Lt Lu Mc Me Mn Nd Nl No Pc Pd Pe Pf Pi Po Ps Sc Sk Sm So Zl Zp Zs".split()  # noqa: SIM905
)
_CATEGORY_SETS: Final[dict[str, frozenset[str]]] = {
    **{c: frozenset({c}) for c in _CATEGORIES},
    **{major: frozenset(c for c in _CATEGORIES if c[0] == major) for major in "CLMNPSZ"},
    "LC": frozenset({"Lu", "Ll", "Lt"}),
}
_CATEGORY_ALIASES: Final = {
    "Other": "C", "Control": "Cc", "Cntrl": "Cc", "Format": "Cf", "Unassigned": "Cn", "PrivateUse": "Co",
    "Surrogate": "Cs", "Letter": "L", "CasedLetter": "LC", "LowercaseLetter": "Ll", "ModifierLetter": "Lm",
    "OtherLetter": "Lo", "TitlecaseLetter": "Lt", "UppercaseLetter": "Lu", "Mark": "M", "CombiningMark": "M",
    "SpacingMark": "Mc", "EnclosingMark": "Me", "NonspacingMark": "Mn", "Number": "N", "DecimalNumber": "Nd",
    "Digit": "Nd", "LetterNumber": "Nl", "OtherNumber": "No", "Punctuation": "P", "Punct": "P",
    "ConnectorPunctuation": "Pc", "DashPunctuation": "Pd", "ClosePunctuation": "Pe", "FinalPunctuation": "Pf",
    "InitialPunctuation": "Pi", "OtherPunctuation": "Po", "OpenPunctuation": "Ps", "Symbol": "S",
    "CurrencySymbol": "Sc", "ModifierSymbol": "Sk", "MathSymbol": "Sm", "OtherSymbol": "So", "Separator": "Z",
    "LineSeparator": "Zl", "ParagraphSeparator": "Zp", "SpaceSeparator": "Zs",
}  # fmt: skip
_SCRIPTS: Final = """
Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali
Beria_Erfe Bhaiksuki Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian
Caucasian_Albanian Chakma Cham Cherokee Chorasmian Common Coptic Cuneiform Cypriot Cypro_Minoan
Cyrillic Deseret Devanagari Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan Elymaic
Ethiopic Garay Georgian Glagolitic Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi
Gurung_Khema Han Hangul Hanifi_Rohingya Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inherited
Inscriptional_Pahlavi Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kawi Kayah_Li
Kharoshthi Khitan_Small_Script Khmer Khojki Khudawadi Kirat_Rai Lao Latin Lepcha Limbu Lisu Lycian
Lydian Mahajani Makasar Malayalam Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek
Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar
Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki
Ol_Onal Old_Hungarian Old_Italic Old_North_Arabian Old_Permic Old_Persian Old_Sogdian
Old_South_Arabian Old_Turkic Old_Uyghur Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau
Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham
Sidetic Sinhala Sogdian Sora_Sompeng Soyombo Sundanese Sunuwar Syloti_Nagri Syriac Tagalog Tagbanwa
Tai_Le Tai_Tham Tai_Viet Tai_Yo Takri Tamil Tangsa Tangut Telugu Thaana Thai Tibetan Tifinagh
Tirhuta Todhri Tolong_Siki Toto Tulu_Tigalari Ugaritic Vai Vithkuqi Wancho Warang_Citi Yezidi
Zanabazar_Square
""".split()  # noqa: SIM905
"""Unicode 17's scripts, which Go 1.27's ``\\p{...}`` knows."""


def _canonical(name: str) -> str:
    """Go's lookup key: separators dropped, the first letter upper case, the rest lower case."""
    squeezed = "".join(c for c in name if c not in "_- ")
    return squeezed[:1].upper() + squeezed[1:].lower()


_BY_CANONICAL: Final[dict[str, tuple[ClassItem, str | None]]] = {
    **{_canonical(s): (("script", s, False), s) for s in _SCRIPTS},
    **{_canonical(a): (("cat", _CATEGORY_SETS[c], False), None if c == "LC" else c)
       for a, c in _CATEGORY_ALIASES.items()},
    **{_canonical(c): (("cat", s, False), None if c in ("LC", "Cn") else c) for c, s in _CATEGORY_SETS.items()},
    "Any": (("range", ((0, 0x10FFFF),), False), "Any"),
    "Assigned": (("cat", frozenset({"Cn"}), True), None),
    "Ascii": (("range", ((0, 0x7F),), False), None),
}  # fmt: skip
CLASS_NAMES: Final = frozenset(_BY_CANONICAL)


def unicode_group(name: str, negated: bool) -> tuple[ClassItem, str | None] | None:
    """``\\p{name}`` (``negated`` for ``\\P``): the class item and RE2's spelling of the name (None
    where RE2 has none), or None for a name Go does not know."""
    found = _BY_CANONICAL.get(_canonical(name))
    if found is None:
        return None
    item, re2_name = found
    return (item[0], item[1], bool(item[2]) != negated), re2_name


# -- matching one character ---------------------------------------------------------------------------


def _in_ranges(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def _item_matches(item: ClassItem, cp: int) -> bool:
    kind, data, negated = item
    if kind == "range":
        assert isinstance(data, tuple)
        found = _in_ranges(cp, data)
    elif kind == "cat":
        assert isinstance(data, frozenset)
        found = unicodedata.category(chr(cp)) in data
    else:
        raise RegexUnsupportedError(f"the Unicode script class {data}")
    return found != negated


class RegexUnsupportedError(Exception):
    """A construct the pure-Python automaton cannot run (Unicode scripts, huge programs)."""


def class_predicate(items: tuple[ClassItem, ...], negated: bool, fold: bool) -> Callable[[int], bool]:
    """Whether a code point is in ``[items]`` (``[^items]`` if ``negated``), case-folded if ``fold``.

    Go folds each item before negating it, so an item matches when any case variant of the
    character is in it (or, negated, when none is).
    """
    for item in items:
        if item[0] == "script":
            raise RegexUnsupportedError(f"the Unicode script class {item[1]}")

    def matches(cp: int) -> bool:
        variants = fold_orbit(cp) if fold else (cp,)
        hit = False
        for item in items:
            if item[2]:
                hit = not any(_item_matches((item[0], item[1], False), v) for v in variants)
            else:
                hit = any(_item_matches(item, v) for v in variants)
            if hit:
                break
        return hit != negated

    return matches


@functools.lru_cache(maxsize=4096)
def fold_orbit(cp: int) -> tuple[int, ...]:
    """The characters equal to ``cp`` under simple case folding (``k``, ``K`` and the Kelvin sign)."""
    key = _fold_key(cp)
    return _fold_classes().get(key, (cp,))


def _fold_key(cp: int) -> int:
    if cp == 0x131:  # dotless i folds only in Turkic rules, which Go does not use
        return cp
    upper = chr(cp).upper()
    base = upper if len(upper) == 1 else chr(cp)
    lower = base.lower()
    return ord(lower) if len(lower) == 1 else cp


@functools.cache
def _fold_classes() -> dict[int, tuple[int, ...]]:
    classes: dict[int, list[int]] = {}
    for cp in range(0x41, 0x1E944):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        classes.setdefault(_fold_key(cp), []).append(cp)
    return {key: tuple(members) for key, members in classes.items() if len(members) > 1}
