"""Scoring requests are the pod's requests when there is nothing to default: the shortcut and the
defaulting computation agree for every request rule, and pods with something to default take the latter."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.model import resources
from kschedlib.model.objects import Container, ContainerStatus, Pod, PodCondition
from kschedlib.model.quantity import parse_quantity
from kschedlib.model.resources import Accounting, RequestRules

_AMOUNTS = {"cpu": ["0", "1m", "250m", "1"], "memory": ["0", "1Mi", "3Gi"], "ephemeral-storage": ["1Gi"],
            "example.com/gpu": ["1", "2"]}
_REQUESTS = st.dictionaries(st.sampled_from(sorted(_AMOUNTS)), st.integers(0, 3), max_size=4).map(
    lambda picks: {name: parse_quantity(_AMOUNTS[name][i % len(_AMOUNTS[name])]) for name, i in picks.items()})
_CONTAINERS = st.builds(lambda i, requests, sidecar: Container(
    f"c{i}", requests=requests, restart_policy="Always" if sidecar else None), st.integers(0, 9), _REQUESTS,
    st.booleans())
_PODS = st.builds(
    lambda containers, init, overhead, pod_level, status, infeasible: Pod(
        "p", containers=tuple({c.name: c for c in containers}.values()),
        init_containers=tuple(Container(f"i{j}", requests=c.requests, restart_policy=c.restart_policy)
                              for j, c in enumerate(init)),
        overhead=overhead, pod_level_requests=pod_level,
        container_statuses=(ContainerStatus(containers[0].name, requests=status),) if status else (),
        conditions=(PodCondition("PodResizePending", "True", "Infeasible"),) if infeasible else ()),
    st.lists(_CONTAINERS, min_size=1, max_size=3), st.lists(_CONTAINERS, max_size=2), st.none() | _REQUESTS,
    st.none() | _REQUESTS, st.none() | _REQUESTS, st.booleans(),
)
_RULES = [RequestRules(*flags) for flags in itertools.product([False, True], repeat=4)]


def _defaulted(rules: RequestRules, pod: Pod) -> resources.Resources:
    """The plain computation: each container's missing cpu/memory defaulted, then summed."""
    if rules == RequestRules():
        return resources._compute_scoring_requests(pod)
    counter = resources._Counter(rules)
    return resources._from_nanos(counter.nanos(pod, resources._DEFAULTS, counter.pod_level_amounts(pod)))


@pytest.mark.parametrize("rules", _RULES, ids=str)
@given(pod=_PODS)
def test_scoring_requests_equal_the_defaulting_computation(rules: RequestRules, pod: Pod) -> None:
    assert Accounting(rules).scoring_requests(pod) == _defaulted(rules, pod)


def test_default_rules_use_the_shortcut_only_with_nothing_to_default() -> None:
    full = Pod("p", containers=(Container("c", requests={"cpu": parse_quantity("1"),
                                                           "memory": parse_quantity("1Gi")}),))
    partial = Pod("q", containers=(Container("c", requests={"cpu": parse_quantity("1")}),))
    assert resources.pod_scoring_requests(full) is resources.pod_requests(full)
    assert resources.pod_scoring_requests(partial).memory == resources.DEFAULT_MEMORY_REQUEST
    assert resources.pod_requests(partial).memory == 0
