"""apimachinery's label syntax checks, with its exact messages (plugin args, selectors of incoming pods)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final

from kschedlib.model.labels import LabelSelector

__all__ = ["label_value_errors", "qualified_name_errors", "regex_error", "requirement_error", "selector_error"]

_QNAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG: Final = ("must consist of alphanumeric characters, '-', '_' or '.', "
                     "and must start and end with an alphanumeric character")
_DNS_FMT: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_DNS_MSG: Final = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                   "'-' or '.', and must start and end with an alphanumeric character")
_QNAME_RE: Final = re.compile(_QNAME_FMT)
_DNS_RE: Final = re.compile(_DNS_FMT)


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError text, including its double spaces between examples."""
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def qualified_name_errors(value: str) -> list[str]:
    """apimachinery's IsQualifiedName messages (what ``ValidateLabelName`` reports), in its order."""
    parts = value.split("/")
    if len(parts) > 2:
        return ["a qualified name " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    errors = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            if len(prefix.encode()) > 253:  # Go counts bytes
                errors.append("prefix part must be no more than 253 characters")
            if not _DNS_RE.fullmatch(prefix):
                errors.append("prefix part " + regex_error(_DNS_MSG, _DNS_FMT, "example.com"))
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _QNAME_RE.fullmatch(name):
        errors.append("name part " + regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errors




_LABEL_VALUE_FMT: Final = "(" + _QNAME_FMT + ")?"
_LABEL_VALUE_MSG: Final = ("a valid label must be an empty string or consist of alphanumeric characters, "
                           "'-', '_' or '.', and must start and end with an alphanumeric character")
_LABEL_VALUE_RE: Final = re.compile(_LABEL_VALUE_FMT)


def _go_quote(text: str) -> str:
    """Go's ``%q`` of a string (exact for printable text; other runes are escaped JSON-style)."""
    return json.dumps(text, ensure_ascii=False)


def label_value_errors(value: str) -> list[str]:
    """apimachinery's IsValidLabelValue messages, in its order."""
    errors = []
    if len(value.encode()) > 63:
        errors.append("must be no more than 63 characters")
    if not _LABEL_VALUE_RE.fullmatch(value):
        errors.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errors


def requirement_error(key: str, values: Sequence[str]) -> str | None:
    """The error labels.NewRequirement gives for a key and its values (operators are checked at load).

    One field error reads ``values[0][app]: Invalid value: "a b": a valid label must be ...``;
    several are aggregated as Go aggregates them (``[first, second]``).
    """
    errors = []
    key_errors = qualified_name_errors(key)
    if key_errors:
        errors.append(f"key: Invalid value: {_go_quote(key)}: {'; '.join(key_errors)}")
    for i, value in enumerate(values):
        value_errors = label_value_errors(value)
        if value_errors:
            errors.append(f"values[{i}][{key}]: Invalid value: {_go_quote(value)}: {'; '.join(value_errors)}")
    if not errors:
        return None
    return errors[0] if len(errors) == 1 else "[" + ", ".join(dict.fromkeys(errors)) + "]"


def selector_error(selector: LabelSelector | None) -> str | None:
    """The error metav1.LabelSelectorAsSelector gives for ``selector`` (its first failing requirement)."""
    if selector is None:
        return None
    for key, value in selector.match_labels.items():
        error = requirement_error(key, (value,))
        if error is not None:
            return error
    for req in selector.match_expressions:
        error = requirement_error(req.key, req.values)
        if error is not None:
            return error
    return None
