"""``builder`` makes the same instances as the classes' own ``__init__`` (the cache and node infos use it)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib._internal.cache import PodState, _state
from kschedlib._internal.engine import _bound_result
from kschedlib.framework._slots import builder
from kschedlib.framework.node_info import NodeInfo, _with_ports
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.status import Status
from kschedlib.model.resources import Resources
from kschedlib.results import ScheduleResult
from tests.helpers import make_node, make_pod


def _fields(obj: Any) -> dict[str, object]:
    return {field.name: getattr(obj, field.name) for field in attrs.fields(type(obj))}


@given(st.booleans(), st.booleans(), st.one_of(st.none(), st.floats(allow_nan=False)))
def test_pod_state(assumed: bool, finished: bool, deadline: float | None) -> None:
    info = PodInfo.of(make_pod("a", requests={"cpu": "100m"}))
    built = _state(info, assumed, finished, deadline)
    assert type(built) is PodState
    assert _fields(built) == _fields(PodState(info, assumed, finished, deadline))


@given(st.lists(st.sampled_from(["100m", "1", "250m"]), max_size=5), st.booleans())
def test_node_info_with_pod_is_the_constructor(cpus: list[str], ghost: bool) -> None:
    """with_pod (built) equals a NodeInfo made by __init__ with the same fields, generation and name included."""
    info = NodeInfo.of(None if ghost else make_node("n1"))
    for i, cpu in enumerate(cpus):
        pod_info = PodInfo.of(make_pod(f"p{i}", requests={"cpu": cpu}, host_ports=[80 + i], node_name="n1"))
        built = info.with_pod(pod_info)
        plain = NodeInfo(info.node, (*info.pods, pod_info), info.pods_with_affinity,
                         info.pods_with_required_anti_affinity, _with_ports(info.used_ports, pod_info.host_ports, True),
                         info.requested.add(pod_info.requests),
                         Resources(info.non_zero_requested.milli_cpu + pod_info.non_zero_cpu,
                                   info.non_zero_requested.memory + pod_info.non_zero_memory),
                         info.allocatable, info.image_states, built.generation, info.pvc_ref_counts)
        assert type(built) is NodeInfo
        assert _fields(built) == _fields(plain)
        assert built.generation > info.generation
        info = built


def test_pod_info_with_pod_is_the_constructor() -> None:
    info = PodInfo.of(make_pod("a", requests={"cpu": "100m"}))
    pod = make_pod("a", requests={"cpu": "100m"}, node_name="n1")
    assert _fields(info.with_pod(pod)) == _fields(attrs.evolve(info, pod=pod))


def test_a_bound_result_is_the_constructor() -> None:
    pod = make_pod("a", node_name="n1")
    built = _bound_result(pod, "n1", Status.success(), None, None, (), 3, None)
    assert type(built) is ScheduleResult
    assert _fields(built) == _fields(ScheduleResult(pod, "n1", Status.success(), attempts=3))


def test_validated_classes_are_refused() -> None:
    @attrs.frozen(slots=True)
    class Checked:
        x: int = attrs.field(validator=attrs.validators.instance_of(int))

    with pytest.raises(TypeError, match="validated"):
        builder(Checked)


def test_a_post_init_hook_is_refused_unless_the_caller_derives_its_fields() -> None:
    @attrs.frozen(slots=True)
    class Derived:
        x: int
        double: int = attrs.field(init=False)

        def __attrs_post_init__(self) -> None:
            object.__setattr__(self, "double", 2 * self.x)

    with pytest.raises(TypeError, match="__attrs_post_init__"):
        builder(Derived)
    build = builder(Derived, caller_derives=True)
    assert _fields(build(3, 6)) == _fields(Derived(3))
