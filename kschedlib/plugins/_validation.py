"""apimachinery's label-name syntax checks, with its exact messages (shared by plugin args validation)."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["qualified_name_errors", "regex_error"]

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


