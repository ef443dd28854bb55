"""A failed cycle's rejecting and pending plugins, read off distinct status objects, are those of every node."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kschedlib._internal import cycle
from kschedlib.framework import Code, Status

_SHARED = [Status(Code.UNSCHEDULABLE, ("Insufficient cpu",), "NodeResourcesFit"),
           Status(Code.PENDING, ("waiting",), "DynamicResources"),
           Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("taint",), "TaintToleration")]
_STATUS = st.one_of(
    st.sampled_from(_SHARED),
    st.builds(Status, st.sampled_from(list(Code)), st.just(("r",)), st.sampled_from(["", "A", "B"])),
)


@given(st.dictionaries(st.sampled_from([f"n{i}" for i in range(8)]), _STATUS))
def test_plugins_of_distinct_statuses_are_those_of_every_node(statuses: dict[str, Status]) -> None:
    diagnosis = cycle._diagnosis(statuses)
    assert diagnosis.unschedulable_plugins == frozenset(
        s.plugin for s in statuses.values() if s.plugin and s.is_rejected)
    assert diagnosis.pending_plugins == frozenset(
        s.plugin for s in statuses.values() if s.plugin and s.code is Code.PENDING)
    assert diagnosis.node_statuses == statuses
