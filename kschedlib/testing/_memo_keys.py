"""The memo-key promise of NodeLocalFilter / NodeLocalScore, checked on pods that differ a little.

The runtime reuses a verdict (a raw score) for every pod whose key equals an
earlier pod's, on the same NodeInfo.  A key that misses something the verdict
depends on gives wrong decisions silently, so the check asks the plugin for
the keys of the scenario's pod, of the other pods, and of the scenario's pod
with one field taken from another pod, and compares the answers of pods whose
keys are equal, node by node.  A PureNormalize plugin's ``normalize_key`` is checked alike: with
equal keys, the same raw scores must normalize to the same list, whatever the nodes' order.  A
LabelKeyedFilter's ``filter_label_keys`` is checked within each pod's cycle: nodes that agree on those
labels must get the same Filter answer.  A BatchScore's ``score_nodes`` must answer what Score answers
node by node, for the nodes in order, reversed, and every other one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Final

import attrs

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extension_points import FilterPlugin, PreScorePlugin, ScoreExtensions, ScorePlugin
from kschedlib.framework.memo import BatchScore, LabelKeyedFilter, NodeLocalFilter, NodeLocalScore, PureNormalize
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod
from kschedlib.testing._harness import Run, describe

__all__ = ["check_keys"]

_SWAPPED: Final = ("labels", "containers", "init_containers", "overhead", "node_selector", "affinity",
                   "tolerations", "topology_spread_constraints", "volumes", "host_network", "priority",
                   "scheduling_gates")
"""Pod fields taken one at a time from another pod to make near-twins of the scenario's pod."""
_OTHERS: Final = 3


def variants(pod: Pod, others: Sequence[Pod]) -> list[Pod]:
    """The scenario's pod under another name, the other pods as pending pods, and near-twins of the pod."""
    out = [attrs.evolve(pod, name=f"{pod.name}-twin", uid=f"{pod.uid}-twin")]
    for index, other in enumerate(others[:_OTHERS]):
        out.append(attrs.evolve(other, node_name="", phase="Pending"))
        for field in _SWAPPED:
            if getattr(other, field) != getattr(pod, field):
                out.append(attrs.evolve(pod, name=f"{pod.name}-{field.replace('_', '-')}-{index}",
                                        uid=f"{pod.uid}-{field}-{index}", **{field: getattr(other, field)}))
    return out


def _hashable(run: Run, what: str, key: Hashable | None) -> Hashable | None:
    try:
        hash(key)
    except TypeError as exc:
        run.fail(f"{what} returned {key!r}, which is not hashable ({exc})")
    return key


Answers = Callable[[Pod], tuple[Hashable | None, list[str]] | None]
"""A pod's key and its answer per node, or ``None`` when the plugin would not be asked (skipped, rejected)."""


def _compare(run: Run, method: str, verb: str, pods: Sequence[Pod], answers: Answers) -> None:
    nodes = [node.name for node in run.handle.snapshot]
    first: dict[object, tuple[Pod, list[str]]] = {}
    for pod in pods:
        answered = answers(pod)
        if answered is None or answered[0] is None:
            continue
        key, got = answered
        seen = first.setdefault(key, (pod, got))
        if seen[1] == got:
            continue
        name, before, now = next((n, a, b) for n, a, b in zip(nodes, seen[1], got, strict=True) if a != b)
        run.fail(f"{method} gave pods {seen[0].key} and {pod.key} the same key {key!r}, yet {verb} on node "
                 f'"{name}" answered {before} for {seen[0].key} and {now} for {pod.key}')


def _filter_answers(run: Run) -> Answers:
    plugin = run.plugin
    assert isinstance(plugin, NodeLocalFilter)

    def answers(pod: Pod) -> tuple[Hashable | None, list[str]] | None:
        state = CycleState()
        result = run.pre_filter(pod, state)
        if (isinstance(result, Status) and not result.is_success) or run.name in state.skip_filter_plugins:
            return None
        key = _hashable(run, f"filter_key of {pod.key}", run.call(f"filter_key of {pod.key}", plugin.filter_key,
                                                                    state, pod))
        return key, [describe(run.filter(state.clone(), node, pod)) for node in run.handle.snapshot]

    return answers


def _score_answers(run: Run) -> Answers:
    plugin = run.plugin
    assert isinstance(plugin, NodeLocalScore)
    assert isinstance(plugin, ScorePlugin)
    nodes: list[NodeInfo] = list(run.handle.snapshot)

    def answers(pod: Pod) -> tuple[Hashable | None, list[str]] | None:
        state = CycleState()
        result = run.pre_filter(pod, state)
        if isinstance(result, Status) and not result.is_success:
            return None
        if isinstance(plugin, PreScorePlugin):
            status = run.call(f"PreScore of {pod.key}", plugin.pre_score, state, pod, nodes, returns=(Status,))
            if not status.is_success:
                return None
        key = _hashable(run, f"score_key of {pod.key}", run.call(f"score_key of {pod.key}", plugin.score_key,
                                                                   state, pod))
        return key, [repr(run.call(f'Score of {pod.key} on node "{node.name}"', plugin.score, state, pod, node,
                                   returns=(int,))) for node in nodes]

    return answers


def check_keys(run: Run) -> None:
    """Fail ``run`` unless its plugin's memo keys are hashable and equal keys give equal answers."""
    plugin = run.plugin
    if not run.handle.snapshot.num_nodes:
        return
    pods = [run.pod, *variants(run.pod, run.working.other_pods)]
    if isinstance(plugin, NodeLocalFilter) and isinstance(plugin, FilterPlugin):
        _compare(run, "filter_key", "Filter", pods, _filter_answers(run))
    if isinstance(plugin, NodeLocalScore) and isinstance(plugin, ScorePlugin):
        _compare(run, "score_key", "Score", pods, _score_answers(run))
    if isinstance(plugin, PureNormalize) and isinstance(plugin, ScoreExtensions):
        _check_pure_normalize(run, pods)
    if isinstance(plugin, LabelKeyedFilter) and isinstance(plugin, FilterPlugin):
        _check_label_keys(run, pods)
    if isinstance(plugin, BatchScore) and isinstance(plugin, ScorePlugin):
        _check_batch_score(run, pods)


def _check_batch_score(run: Run, pods: Sequence[Pod]) -> None:
    """``score_nodes`` answers Score's raw scores, node for node, whatever nodes it is given."""
    plugin = run.plugin
    assert isinstance(plugin, BatchScore)
    assert isinstance(plugin, ScorePlugin)
    nodes: list[NodeInfo] = list(run.handle.snapshot)
    for pod in pods:
        state = CycleState()
        result = run.pre_filter(pod, state)
        if isinstance(result, Status) and not (result.is_success or result.code is Code.SKIP):
            continue  # a PreFilter that skips its own Filter still scores
        if isinstance(plugin, PreScorePlugin) and not run.call(
                f"PreScore of {pod.key}", plugin.pre_score, state, pod, nodes, returns=(Status,)).is_success:
            continue
        single = {node.name: run.call(f'Score of {pod.key} on node "{node.name}"', plugin.score, state, pod, node,
                                      returns=(int,)) for node in nodes}
        for order in (nodes, nodes[::-1], nodes[::2]):
            got = run.call(f"score_nodes of {pod.key}", plugin.score_nodes, state, pod, order, returns=(list,))
            expected = [single[node.name] for node in order]
            if got != expected:
                run.fail(f"score_nodes of {pod.key} on nodes {[node.name for node in order]} answered {got}, "
                         f"yet Score answered {expected} node by node")


def _domain(node: NodeInfo, keys: tuple[str, ...]) -> tuple[str | None, ...] | None:
    """A node's values of ``keys`` (``None`` for a NodeInfo without a Node)."""
    return tuple(node.node.labels.get(key) for key in keys) if node.node is not None else None


def _check_label_keys(run: Run, pods: Sequence[Pod]) -> None:
    """Nodes with equal values of ``filter_label_keys`` get equal Filter answers in one cycle."""
    plugin = run.plugin
    assert isinstance(plugin, LabelKeyedFilter)
    for pod in pods:
        state = CycleState()
        result = run.pre_filter(pod, state)
        if (isinstance(result, Status) and not result.is_success) or run.name in state.skip_filter_plugins:
            continue
        keys = run.call(f"filter_label_keys of {pod.key}", plugin.filter_label_keys, state, pod)
        if keys is None:
            continue
        if type(keys) is not tuple or not all(type(key) is str for key in keys):
            run.fail(f"filter_label_keys of {pod.key} returned {keys!r}, not a tuple of label keys")
        first: dict[object, tuple[str, str]] = {}
        for node in run.handle.snapshot:
            got = describe(run.filter(state.clone(), node, pod))
            name, before = first.setdefault(_domain(node, keys), (node.name, got))
            if before != got:
                run.fail(f"filter_label_keys gave {pod.key} the keys {keys!r}, on which nodes \"{name}\" and "
                         f'"{node.name}" agree, yet Filter answered {before} on the one and {got} on the other')


def _check_pure_normalize(run: Run, pods: Sequence[Pod]) -> None:
    """Equal ``normalize_key``s normalize the same raw scores alike, in either order of the nodes."""
    plugin = run.plugin
    assert isinstance(plugin, PureNormalize)
    assert isinstance(plugin, ScoreExtensions)
    nodes: list[NodeInfo] = list(run.handle.snapshot)
    lists = [[0] * len(nodes), [7] * len(nodes), list(range(len(nodes)))]
    first: dict[object, tuple[Pod, list[list[int]]]] = {}
    for pod in pods:
        state = CycleState()
        result = run.pre_filter(pod, state)
        if isinstance(result, Status) and not result.is_success:
            continue
        if isinstance(plugin, PreScorePlugin) and not run.call(
                f"PreScore of {pod.key}", plugin.pre_score, state, pod, nodes, returns=(Status,)).is_success:
            continue
        key = _hashable(run, f"normalize_key of {pod.key}",
                        run.call(f"normalize_key of {pod.key}", plugin.normalize_key, state, pod))
        if key is None:
            continue
        got = []
        for scores in lists:
            forward, backward = (run.call(f"NormalizeScore of {pod.key}", plugin.normalize_score, state, pod,
                                          order, list(scores), returns=(list,)) for order in (nodes, nodes[::-1]))
            if forward != backward:
                run.fail(f"normalize_key gave {pod.key} the key {key!r}, yet NormalizeScore of {scores} answered "
                         f"{forward} for the nodes in order and {backward} in reverse")
            got.append(forward)
        seen = first.setdefault(key, (pod, got))
        if seen[1] != got:
            scores, before, now = next(t for t in zip(lists, seen[1], got, strict=True) if t[1] != t[2])
            run.fail(f"normalize_key gave pods {seen[0].key} and {pod.key} the same key {key!r}, yet "
                     f"NormalizeScore of {scores} answered {before} for {seen[0].key} and {now} for {pod.key}")
