"""apimachinery's label selector errors, with its exact messages (plugin args, selectors of incoming pods).

The name and value checks themselves are the model's (:mod:`kschedlib.model._field_errors`); they are
re-exported here for the plugins."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache

from kschedlib.model._field_errors import label_value_errors, qualified_name_errors, regex_error
from kschedlib.model.labels import LabelSelector

__all__ = ["label_value_errors", "qualified_name_errors", "regex_error", "requirement_error", "selector_error"]

def _go_quote(text: str) -> str:
    """Go's ``%q`` of a string (exact for printable text; other runes are escaped JSON-style)."""
    return json.dumps(text, ensure_ascii=False)


def requirement_error(key: str, values: Sequence[str]) -> str | None:
    """The error labels.NewRequirement gives for a key and its values (operators are checked at load).

    One field error reads ``values[0][app]: Invalid value: "a b": a valid label must be ...``;
    several are aggregated as Go aggregates them (``[first, second]``).  Remembered per key and
    values: every incoming pod's selectors are checked again in each cycle, and pods of one
    workload repeat the same few.
    """
    return _requirement_error(key, tuple(values))


@lru_cache(maxsize=4096)
def _requirement_error(key: str, values: tuple[str, ...]) -> str | None:
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
