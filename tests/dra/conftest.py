"""Fixtures shared by the DRA tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kschedlib.dra import _cel
from kschedlib.dra._cel import _regex


@pytest.fixture
def automaton_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run CEL selectors as if google-re2 were not installed (selectors compiled afresh)."""
    monkeypatch.setattr(_regex, "re2_module", lambda: None)
    _regex._compile.cache_clear()
    _cel._compile.cache_clear()
    yield
    _regex._compile.cache_clear()
    _cel._compile.cache_clear()
