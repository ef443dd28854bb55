"""``placed`` (the assumed pod's copy) is ``attrs.evolve`` without the second check: same pod, same errors."""

from __future__ import annotations

from typing import Any, cast

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.errors import ModelError
from kschedlib.model._placed import placed
from kschedlib.model.objects import Pod, Toleration
from tests.helpers import make_pod

_NAMES = st.text(st.characters(codec="ascii"), max_size=12)
_PODS = st.builds(
    lambda name, node, nominated, priority, labels, tolerate, cpu: make_pod(
        name or "p", node_name=node, nominated_node_name=nominated, priority=priority, labels=labels,
        tolerations=(Toleration("k", "Exists"),) if tolerate else (), requests={"cpu": f"{cpu}m"}),
    _NAMES, _NAMES, _NAMES, st.none() | st.integers(-10, 10),
    st.dictionaries(st.sampled_from("abc"), st.sampled_from("xyz"), max_size=2), st.booleans(),
    st.integers(0, 4000),
)


def _evolve(pod: Pod, field: str, value: object) -> Pod:
    changes: dict[str, Any] = {field: value}
    return attrs.evolve(pod, **changes)


@given(_PODS, st.sampled_from(["node_name", "nominated_node_name"]), _NAMES)
def test_placed_is_evolve(pod: Pod, field: str, value: str) -> None:
    fast = placed(pod, field, value)
    plain = _evolve(pod, field, value)
    assert fast == plain
    assert fast is not pod
    for name in (f.name for f in attrs.fields(Pod)):
        assert getattr(fast, name) == getattr(plain, name)
        if name != field:
            assert getattr(fast, name) is getattr(pod, name)  # copied, not rebuilt
    assert getattr(pod, field) == getattr(_evolve(fast, field, getattr(pod, field)), field)


@pytest.mark.parametrize(("field", "value"), [("node_name", 5), ("nominated_node_name", None), ("phase", 3)])
def test_placed_refuses_what_evolve_refuses(field: str, value: object) -> None:
    pod = make_pod("p")
    with pytest.raises(ModelError) as plain:
        _evolve(pod, field, value)
    with pytest.raises(ModelError) as fast:
        placed(pod, field, cast(str, value))
    assert str(fast.value) == str(plain.value)


def test_placed_other_fields_take_evolve() -> None:
    pod = make_pod("p")
    assert placed(pod, "phase", "Running") == attrs.evolve(pod, phase="Running")
