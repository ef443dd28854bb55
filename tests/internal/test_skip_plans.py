"""Filter and Score plans worked out once per set of skipped plugins are the ones worked out per pod."""

from __future__ import annotations

from typing import cast

from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib._internal.profile import build_profile
from kschedlib._internal.reuse.memo import memo_key
from kschedlib._internal.runtime import ProfileRuntime
from kschedlib.framework import CycleState, Handle, parse_config
from kschedlib.framework.memo import ExternalNodeState, NodeLocalFilter, NodeLocalScore
from kschedlib.model import Pod
from kschedlib.plugins import default_plugin_sets, in_tree_registry
from kschedlib.testing import FakeHandle
from kschedlib.versions import resolve
from tests.helpers import make_pod

_SWITCHES = resolve("1.36").switches
_RUNTIME = ProfileRuntime(build_profile(parse_config({}).profiles[0], in_tree_registry(),
                                        cast(Handle, FakeHandle(kube_version="1.36")),
                                        default_plugin_sets(_SWITCHES)), switches=_SWITCHES)
_FILTERS = [name for name, _ in _RUNTIME.filter]
_SCORES = [name for name, _ in _RUNTIME.score]
_PODS = [make_pod("plain", requests={"cpu": "1"}), make_pod("empty"),
         make_pod("spread", labels={"app": "a"}, requests={"memory": "1Gi", "nvidia.com/gpu": "1"})]


def _plain_filter_plan(state: CycleState, pod: Pod) -> tuple[list[str], int, tuple[object, ...], list[object]]:
    """The plan as it was worked out per pod: every plugin looked at in order."""
    active: list[str] = []
    keys: list[object] = ["filter"]
    external: list[ExternalNodeState] = []
    local = 0
    for name, plugin in _RUNTIME.filter:
        if name in state.skip_filter_plugins:
            continue
        active.append(name)
        if local == len(active) - 1 and isinstance(plugin, NodeLocalFilter):
            key = memo_key(plugin.filter_key, state, pod)
            if key is not None:
                keys.append((name, key))
                local += 1
                if isinstance(plugin, ExternalNodeState):
                    external.append(plugin)
    return active, local, tuple(keys), list(external)


@settings(max_examples=200)
@given(st.sets(st.sampled_from(_FILTERS)), st.sets(st.sampled_from(_SCORES)), st.sampled_from(_PODS))
def test_plans_per_skip_set_are_the_plans_per_pod(skip_filter: set[str], skip_score: set[str], pod: Pod) -> None:
    for _ in range(2):  # worked out, then taken from the cache
        state = CycleState()
        _RUNTIME.run_pre_filter(state, pod)
        state.skip_filter_plugins = frozenset(skip_filter)
        state.skip_score_plugins = frozenset(skip_score)
        plan = _RUNTIME.reuse.filter_plan(state, pod)
        active, local, key, external = _plain_filter_plan(state, pod)
        assert [name for name, _ in plan.active] == active
        assert (plan.local, plan.key, list(plan.external)) == (local, key, external)
        assert plan.run is not None

        scores = _RUNTIME.reuse.score_plugins(state.skip_score_plugins)
        assert scores == [(name, p) for name, p in _RUNTIME.score if name not in skip_score]
        local_scores, keys = _RUNTIME.reuse.local_score_plugins(state, pod, scores)
        plain_local = [i for i, (_, p) in enumerate(scores) if isinstance(p, NodeLocalScore)
                       and memo_key(p.score_key, state, pod) is not None]
        assert local_scores == plain_local
        assert keys == ("score", *((scores[i][0], memo_key(cast(NodeLocalScore, scores[i][1]).score_key, state, pod))
                                   for i in plain_local))
