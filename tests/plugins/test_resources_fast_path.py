"""The cpu+memory fast paths of NodeResourcesFit and NodeResourcesBalancedAllocation score exactly as
the plain per-resource path, on any node and pod (where they do not apply, the plain path runs)."""

from __future__ import annotations

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.framework import CycleState, NodeInfo, Status
from kschedlib.model import Container, Pod, parse_quantity
from kschedlib.plugins.node_resources_balanced_allocation import PRE_SCORE_KEY as BALANCE_KEY
from kschedlib.plugins.node_resources_balanced_allocation import (
    NodeResourcesBalancedAllocation,
    _node_balance,
    _node_balances,
    balance_change_score,
)
from kschedlib.plugins.node_resources_fit import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    PRE_FILTER_KEY,
    NodeResourcesFit,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
)
from kschedlib.plugins.node_resources_fit import PRE_SCORE_KEY as FIT_KEY
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod, node_info

GPU = "nvidia.com/gpu"
_CPU = st.sampled_from(["0", "1m", "100m", "250m", "1", "2", "4", "32"])
_MEMORY = st.sampled_from(["0", "1", "200Mi", "1Gi", "8Gi", "128Gi"])
_GPU = st.sampled_from(["0", "1", "2"])


@st.composite
def _amounts(draw: st.DrawFn, gpu: bool = True) -> dict[str, str]:
    amounts = {}
    if draw(st.booleans()):
        amounts["cpu"] = draw(_CPU)
    if draw(st.booleans()):
        amounts["memory"] = draw(_MEMORY)
    if gpu and draw(st.integers(0, 3)) == 0:
        amounts[GPU] = draw(_GPU)
    return amounts


def _container(name: str, amounts: dict[str, str], sidecar: bool = False) -> Container:
    parsed = {key: parse_quantity(value) for key, value in amounts.items()}
    limits = {key: value for key, value in parsed.items() if key == GPU}
    return Container(name, requests=parsed, limits=limits, restart_policy="Always" if sidecar else None)


@st.composite
def _pods(draw: st.DrawFn) -> Pod:
    containers = tuple(_container(f"c{i}", draw(_amounts())) for i in range(draw(st.integers(1, 2))))
    inits = tuple(_container(f"i{i}", draw(_amounts()), draw(st.booleans())) for i in range(draw(st.integers(0, 2))))
    overhead = draw(st.none() | _amounts(gpu=False))
    return Pod("p", containers=containers, init_containers=inits,
               overhead={k: parse_quantity(v) for k, v in overhead.items()} if overhead is not None else None)


@st.composite
def _nodes(draw: st.DrawFn) -> NodeInfo:
    alloc = {"cpu": draw(_CPU), "memory": draw(_MEMORY), "pods": draw(st.sampled_from(["110", "2", "0"]))}
    if draw(st.booleans()):
        alloc[GPU] = draw(_GPU)
    bound = [make_pod(f"b{i}", requests=draw(_amounts()), node_name="n") for i in range(draw(st.integers(0, 3)))]
    return node_info(make_node("n", allocatable=alloc), *bound)


_STRATEGIES = st.sampled_from([
    ScoringStrategy(),
    ScoringStrategy(LEAST_ALLOCATED, (ResourceSpec("cpu", 3), ResourceSpec("memory", 1))),
    ScoringStrategy(LEAST_ALLOCATED, (ResourceSpec("memory", 1), ResourceSpec("cpu", 1))),
    ScoringStrategy(LEAST_ALLOCATED, (ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec(GPU, 2))),
    ScoringStrategy(MOST_ALLOCATED),
])


@settings(max_examples=400)
@given(_pods(), _nodes(), _STRATEGIES, st.sampled_from(["1.30", "1.36"]))
def test_fit_score_matches_the_plain_scorer(pod: Pod, info: NodeInfo, strategy: ScoringStrategy,
                                            version: str) -> None:
    plugin = NodeResourcesFit(NodeResourcesFitArgs(scoring_strategy=strategy), FakeHandle(kube_version=version))
    state = CycleState()
    assert plugin.pre_score(state, pod, [info]).is_success
    entries = state.read(FIT_KEY).entries
    assert plugin.score(state, pod, info) == plugin._scorer(entries, info)
    if state.read(FIT_KEY).cpu_memory is not None:  # only the default-shaped resources take it
        assert strategy.type == LEAST_ALLOCATED
        assert [e[1] for e in entries] == ["cpu", "memory"]


@settings(max_examples=400)
@given(_pods(), _nodes(), st.sampled_from(["1.30", "1.36"]))
def test_balance_score_matches_the_plain_path(pod: Pod, info: NodeInfo, version: str) -> None:
    plugin = NodeResourcesBalancedAllocation(None, FakeHandle(kube_version=version))
    state = CycleState()
    if not plugin.pre_score(state, pod, [info]).is_success:
        return  # a best-effort pod is skipped (v1.33+): nothing to score
    s = state.read(BALANCE_KEY)
    plain = (balance_change_score(*_node_balances(s.entries, s.base, info)) if version == "1.36"
             else _node_balance(s.entries, info))
    assert plugin.score(state, pod, info) == plain


@settings(max_examples=400)
@given(_pods(), _nodes(), st.sampled_from(["1.30", "1.36"]))
def test_fit_filter_matches_the_plain_path(pod: Pod, info: NodeInfo, version: str) -> None:
    plugin = NodeResourcesFit(None, FakeHandle(kube_version=version))
    state = CycleState()
    outcome = plugin.pre_filter(state, pod)
    assert isinstance(outcome, Status)
    assert outcome.is_success
    plain = CycleState()
    plain.write(PRE_FILTER_KEY, attrs.evolve(state.read(PRE_FILTER_KEY), cpu_memory=None))
    assert plugin.filter(state, pod, info) == plugin.filter(plain, pod, info)
