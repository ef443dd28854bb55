"""The FitError sentence counts reasons per node whether or not nodes share a Status object."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from kschedlib.framework import Diagnosis, Status, fit_error_message

_REASONS = st.sampled_from(["Insufficient cpu", "Insufficient memory", "node(s) had untolerated taint",
                            "node(s) didn't match Pod's node affinity/selector", "Too many pods"])
_STATUS = st.one_of(
    st.lists(_REASONS, min_size=1, max_size=3).map(lambda reasons: Status.unschedulable(*reasons)),
    st.lists(_REASONS, max_size=2).map(lambda reasons: Status.unresolvable(*reasons)),
    st.builds(lambda text: Status.from_error(RuntimeError(text)), st.sampled_from(["boom", "lost"])),
)


def _plain(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    """The sentence as kube builds it: every node's reasons added to one histogram, node by node."""
    histogram: Counter[str] = Counter()
    for status in diagnosis.node_statuses.values():
        histogram.update(status.all_reasons())
    items = sorted(f"{count} {reason}" for reason, count in histogram.items())
    return f"0/{num_all_nodes} nodes are available:" + (" " + ", ".join(items) + "." if items else "")


@given(st.lists(_STATUS, min_size=1, max_size=4),
       st.lists(st.integers(min_value=0, max_value=3), max_size=40))
def test_shared_and_distinct_statuses_count_alike(pool: list[Status], picks: list[int]) -> None:
    """Nodes pointing at one Status object and nodes with equal but separate ones give the same counts."""
    shared = {f"n{i}": pool[pick % len(pool)] for i, pick in enumerate(picks)}
    copies = {name: Status(status.code, status.reasons, status.plugin, status.error)
              for name, status in shared.items()}
    for statuses in (shared, copies):
        diagnosis = Diagnosis(statuses)
        assert fit_error_message(len(picks) + 1, diagnosis) == _plain(len(picks) + 1, diagnosis)


def test_a_reason_listed_twice_by_one_node_counts_twice() -> None:
    twice = Status.unschedulable("Insufficient cpu", "Insufficient cpu")
    assert fit_error_message(3, Diagnosis({"a": twice, "b": twice})) == "0/3 nodes are available: 4 Insufficient cpu."
