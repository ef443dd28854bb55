"""kube-apiserver's field errors and name checks, worded as v1.36 words them.

A :class:`FieldError` is one ``field.Error``: the path of the offending field and the body kube
writes after it (``Invalid value: -3: must be greater than zero``).  The name checks return
apimachinery's messages for DNS labels and subdomains, label keys and values, and C identifiers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ManifestError

__all__ = [
    "FieldError",
    "c_identifier_errors",
    "dns_label_errors",
    "dns_subdomain_errors",
    "duplicate",
    "forbidden",
    "go_value",
    "invalid",
    "label_key_errors",
    "label_value_errors",
    "not_supported",
    "qualified_name_errors",
    "raise_errors",
    "regex_error",
    "required",
    "too_long",
    "too_many",
]


@final
@attrs.frozen(slots=True, repr=False)
class FieldError(FieldsRepr):
    """One validation error: ``field`` (``spec.devices[1]``) and kube's ``text`` after it."""

    field: str
    text: str

    def __str__(self) -> str:
        return f"{self.field}: {self.text}"


def go_value(value: object) -> str:
    """A bad value as ``field.Error`` prints it: numbers and booleans plainly, strings quoted, the
    rest as JSON (``None`` is ``null``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def invalid(field: str, value: object, detail: str) -> FieldError:
    return FieldError(field, f"Invalid value: {go_value(value)}: {detail}")


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(field, f"Required value: {detail}" if detail else "Required value")


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(field, f"Forbidden: {detail}")


def duplicate(field: str, value: object) -> FieldError:
    return FieldError(field, f"Duplicate value: {go_value(value)}")


def not_supported(field: str, value: object, supported: Iterable[str]) -> FieldError:
    listed = ", ".join(json.dumps(v) for v in supported)
    return FieldError(field, f"Unsupported value: {go_value(value)}: supported values: {listed}")


def too_long(field: str, limit: int) -> FieldError:
    return FieldError(field, f"Too long: may not be more than {limit} {'byte' if limit == 1 else 'bytes'}")


def too_many(field: str, count: int, limit: int) -> FieldError:
    return FieldError(field, f"Too many: {count}: must have at most {limit} {'item' if limit == 1 else 'items'}")


def raise_errors(errors: Sequence[FieldError], obj: str) -> None:
    """Refuse an object as kube-apiserver would: a :class:`ManifestError` naming the first error's field
    with kube's wording, and the other errors after it."""
    if not errors:
        return
    first, rest = errors[0], errors[1:]
    message = first.text + "".join(f"; {error}" for error in rest)
    raise ManifestError(message, obj=obj, field=first.field)


# -- apimachinery's name checks ------------------------------------------------------------------------


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError text (with its double space between examples)."""
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')" if examples else \
        f"{message} (regex used for validation is '{fmt}')"


_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT: Final = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_KEY_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE_FMT: Final = "(" + _KEY_FMT + ")?"
_C_IDENTIFIER_FMT: Final = "[A-Za-z_][A-Za-z0-9_]*"
_LABEL_RE: Final = re.compile(_LABEL_FMT)
_SUBDOMAIN_RE: Final = re.compile(_SUBDOMAIN_FMT)
_KEY_RE: Final = re.compile(_KEY_FMT)
_VALUE_RE: Final = re.compile(_VALUE_FMT)
_C_IDENTIFIER_RE: Final = re.compile(_C_IDENTIFIER_FMT)
_LABEL_MSG: Final = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                     "and must start and end with an alphanumeric character")
_SUBDOMAIN_MSG: Final = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                         "'.', and must start and end with an alphanumeric character")
_KEY_MSG: Final = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                   "alphanumeric character")
_VALUE_MSG: Final = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                     "and must start and end with an alphanumeric character")
_C_IDENTIFIER_MSG: Final = ("a valid C identifier must start with alphabetic character or '_', followed by a string "
                            "of alphanumeric characters or '_'")


def _size(value: str) -> int:
    return len(value.encode())  # Go counts bytes


def _matches(regex: re.Pattern[str], value: str) -> bool:
    return value.isascii() and regex.fullmatch(value) is not None


def dns_label_errors(value: str) -> list[str]:
    """``IsDNS1123Label``."""
    errors = ["must be no more than 63 characters"] if _size(value) > 63 else []
    if not _matches(_LABEL_RE, value):
        errors.append("must not contain dots" if _matches(_SUBDOMAIN_RE, value)
                      else regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errors


def dns_subdomain_errors(value: str) -> list[str]:
    """``IsDNS1123Subdomain``."""
    errors = ["must be no more than 253 characters"] if _size(value) > 253 else []
    if not _matches(_SUBDOMAIN_RE, value):
        errors.append(regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errors


def label_key_errors(value: str) -> list[str]:
    """``IsLabelKey``: an optional DNS-subdomain prefix and a name (the API server's label and annotation keys)."""
    return _prefixed_name_errors(value, "a valid label key")


def qualified_name_errors(value: str) -> list[str]:
    """``IsQualifiedName`` (what ``ValidateLabelName`` and the scheduler's args and selectors report)."""
    return _prefixed_name_errors(value, "a qualified name")


def _prefixed_name_errors(value: str, noun: str) -> list[str]:
    """An optional DNS-subdomain prefix and a name; ``noun`` opens the message of a value with two slashes."""
    parts = value.split("/")
    if len(parts) > 2:
        return [f"{noun} " + regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    errors = []
    if len(parts) == 2:
        prefix = parts[0]
        errors = ["prefix part " + m for m in dns_subdomain_errors(prefix)] if prefix else \
            ["prefix part must be non-empty"]
    name = parts[-1]
    if not name:
        errors.append("name part must be non-empty")
    elif _size(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if not _matches(_KEY_RE, name):
        errors.append("name part " + regex_error(_KEY_MSG, _KEY_FMT, "MyName", "my.name", "123-abc"))
    return errors


def label_value_errors(value: str) -> list[str]:
    """``IsLabelValue``."""
    errors = ["must be no more than 63 characters"] if _size(value) > 63 else []
    if not _matches(_VALUE_RE, value):
        errors.append(regex_error(_VALUE_MSG, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return errors


def c_identifier_errors(value: str) -> list[str]:
    """``IsCIdentifier`` (format only)."""
    return [] if _matches(_C_IDENTIFIER_RE, value) else \
        [regex_error(_C_IDENTIFIER_MSG, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")]
