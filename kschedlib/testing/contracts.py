"""The plugin contract kit: checks that a plugin keeps the framework's promises, on generated scenarios.

Each ``check_*`` function takes a plugin factory (a plugin class, or any ``(args, handle) -> Plugin``
callable, as registered in a :class:`~kschedlib.Registry`) and one :class:`Scenario`, builds the
plugin over a :class:`~kschedlib.testing.FakeHandle` of the scenario, runs the extension points it
implements, and raises :class:`ContractViolation` (an ``AssertionError``) with the scenario as
Kubernetes YAML when a promise is broken. Use them inside your own ``@given`` tests, or let
:func:`check_plugin` run all of them under Hypothesis, which shrinks a failure to a small scenario::

    from kschedlib.testing import check_plugin

    def test_my_plugin_keeps_the_contracts():
        check_plugin(MyPlugin, max_examples=200)

Checks that do not apply (no Score, no PreFilterExtensions, no Reserve) pass at once. Plugins
receive ``filter_plugins`` too: the Filter plugins of the profile, which the FakeHandle runs for a
preemption-style PostFilter and whose PreFilter runs before the plugin's.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Final, Protocol

import attrs
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as Settings
from hypothesis.errors import FlakyFailure, InvalidArgument
from hypothesis.strategies import SearchStrategy

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extension_points import FilterPlugin, PreFilterExtensions, ReservePlugin
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.pod_info import PodInfo
from kschedlib.framework.registry import PluginFactory
from kschedlib.framework.results import PreFilterResult
from kschedlib.framework.status import Status
from kschedlib.testing._clusters import Scenario, scenarios
from kschedlib.testing._fingerprint import differences, freeze, seal
from kschedlib.testing._harness import Run, Step, cycle, describe
from kschedlib.testing._memo_keys import check_keys
from kschedlib.testing._report import CONTRACTS, ContractViolation
from kschedlib.testing.fakes import FakeHandle

__all__ = [
    "ALL_CHECKS",
    "CONTRACTS",
    "Check",
    "ContractViolation",
    "check_add_remove_inverse",
    "check_contracts",
    "check_determinism",
    "check_memo_keys",
    "check_no_mutation",
    "check_plugin",
    "check_reserve_unreserve",
    "check_score_range",
    "check_state_clone",
]

class Check(Protocol):
    """What every ``check_*`` function is: one contract, checked on one scenario."""

    def __call__(self, plugin: PluginFactory, scenario: Scenario, *, args: Any = None, seed: int = 0,
                 filter_plugins: Sequence[PluginFactory] = ()) -> None:
        """Raise :class:`ContractViolation` if ``plugin(args, handle)`` breaks the contract on ``scenario``."""


def _run(contract: str, plugin: PluginFactory, scenario: Scenario, args: Any, seed: int,
         filter_plugins: Sequence[PluginFactory], *, guard: bool = False) -> Run:
    return Run(plugin, args, scenario, contract=contract, seed=seed, filter_plugins=filter_plugins, guard=guard)


def _prefiltered(result: Status | PreFilterResult | None) -> bool:
    """Whether PreFilter ran and wrote state the extensions work on (success, not skip or rejection)."""
    return isinstance(result, PreFilterResult) or (isinstance(result, Status) and result.is_success)


@attrs.frozen(repr=False)
class _Move(FieldsRepr):
    """A pod joining (``bound=False``) or already on (``bound=True``) a node, with the node without and with it."""

    label: str
    info: PodInfo
    without: NodeInfo
    with_: NodeInfo
    bound: bool


def _moves(run: Run, *, limit: int = 2) -> list[_Move]:
    out = []
    for node in run.handle.snapshot:
        for other in run.working.other_pods[:limit]:
            info = PodInfo.of(attrs.evolve(other, node_name=node.name))
            out.append(_Move(f'{other.key} on node "{node.name}"', info, node, node.with_pod(info), False))
        for info in node.pods:
            out.append(_Move(f'{info.pod.key} (bound to node "{node.name}")', info, node.without_pod(info.pod),
                             node, True))
    return out


def _apply(run: Run, state: CycleState, move: _Move, verb: str) -> None:
    """AddPod or RemovePod of ``move`` on ``state``; a status other than success is a violation."""
    ext = run.plugin
    assert isinstance(ext, PreFilterExtensions)
    add = verb == "AddPod"
    method = ext.add_pod if add else ext.remove_pod
    node = move.with_ if add else move.without
    status = run.call(f"{verb} of {move.label}", method, state, run.pod, move.info, node,
                      inputs=[("the pod", run.pod), ("the PodInfo", move.info), ("the NodeInfo", node)],
                      returns=(Status,))
    if not status.is_success:
        run.fail(f"{verb} of {move.label} returned {describe(status)}")


def check_no_mutation(plugin: PluginFactory, scenario: Scenario, *, args: Any = None, seed: int = 0,
                      filter_plugins: Sequence[PluginFactory] = ()) -> None:
    """Every point the plugin implements (PreEnqueue to NormalizeScore, PostFilter, AddPod/RemovePod,
    Reserve/Unreserve) leaves the snapshot, the NodeInfo and pod it is given, and the CycleState entries
    other plugins wrote, as they were. A plugin may change its own entries (VolumeBinding's Filter does)."""
    run = _run("no-mutation", plugin, scenario, args, seed, filter_plugins, guard=True)
    result = cycle(run)
    if isinstance(run.plugin, PreFilterExtensions) and _prefiltered(result.pre_filter):
        for move in _moves(run, limit=1)[:3]:
            state = run.state.clone()
            _apply(run, state, move, "RemovePod" if move.bound else "AddPod")
    if isinstance(run.plugin, ReservePlugin):
        picture = run.snapshot_picture()
        for node in result.feasible[:1]:
            run.call(f'Reserve on node "{node.name}"', run.plugin.reserve, run.state, run.pod, node.name,
                     inputs=[("the pod", run.pod)], returns=(Status,))
            run.call(f'Unreserve on node "{node.name}"', run.plugin.unreserve, run.state, run.pod, node.name,
                     inputs=[("the pod", run.pod)])
        run.unchanged("Reserve or Unreserve", "the snapshot", picture, run.handle.snapshot)


def check_score_range(plugin: PluginFactory, scenario: Scenario, *, args: Any = None, seed: int = 0,
                      filter_plugins: Sequence[PluginFactory] = ()) -> None:
    """Score returns an ``int`` per feasible node; after NormalizeScore (if the plugin has it) every score is
    within [0, 100] and the node list is unchanged; without NormalizeScore the raw scores must be."""
    cycle(_run("score-range", plugin, scenario, args, seed, filter_plugins), check_scores=True)


def _first_difference(first: list[Step], second: list[Step]) -> str:
    for index in range(max(len(first), len(second))):
        a = first[index] if index < len(first) else ("<nothing>", "")
        b = second[index] if index < len(second) else ("<nothing>", "")
        if a != b:
            return f"first: {a[0]}: {a[1]}\n  then:  {b[0]}: {b[1]}"
    return ""


def check_determinism(plugin: PluginFactory, scenario: Scenario, *, args: Any = None, seed: int = 0,
                      filter_plugins: Sequence[PluginFactory] = ()) -> None:
    """Two attempts of one plugin instance (the random generator reseeded in between) and one attempt of a
    second instance built alike all answer the same at every step."""
    run = _run("deterministic", plugin, scenario, args, seed, filter_plugins)
    first = cycle(run).trace
    run.reset()
    again = cycle(run).trace
    if again != first:
        run.fail("a second attempt of the same plugin instance answered differently:\n  "
                 + _first_difference(first, again))
    fresh = cycle(_run("deterministic", plugin, scenario, args, seed, filter_plugins)).trace
    if fresh != first:
        run.fail("a second plugin instance built the same way answered differently:\n  "
                 + _first_difference(first, fresh))


def check_state_clone(plugin: PluginFactory, scenario: Scenario, *, args: Any = None, seed: int = 0,
                      filter_plugins: Sequence[PluginFactory] = ()) -> None:
    """For a PreFilterExtensions plugin: after PreFilter, AddPod/RemovePod on a CycleState leave its clone
    unchanged, and AddPod/RemovePod on the clone leave the original unchanged."""
    run = _run("state-clone", plugin, scenario, args, seed, filter_plugins)
    if not isinstance(run.plugin, PreFilterExtensions) or not _prefiltered(run.pre_filter()):
        return
    for mutated, watched in (("the original", "its clone"), ("a clone", "the original")):
        original = run.state.clone()
        clone = original.clone()
        target, other = (original, clone) if mutated == "the original" else (clone, original)
        picture = seal(dict(other._data))
        for move in _moves(run):  # checked after each move: an AddPod and a RemovePod may cancel out
            verb = "RemovePod" if move.bound else "AddPod"
            _apply(run, target, move, verb)
            run.unchanged(f"{verb} of {move.label} on {mutated} CycleState", f"the CycleState, {watched}",
                          picture, dict(other._data))


def _differing_verdicts(before: list[Step], after: list[Step]) -> str:
    return "\n".join(f'  node "{name}": {old} before, {new} after'
                     for (name, old), (_, new) in zip(before, after, strict=True) if old != new)


def check_add_remove_inverse(plugin: PluginFactory, scenario: Scenario, *, args: Any = None, seed: int = 0,
                             filter_plugins: Sequence[PluginFactory] = ()) -> None:
    """For a Filter plugin with PreFilterExtensions: AddPod of a pod then RemovePod of it (and RemovePod of
    a bound pod then AddPod of it) leave Filter's verdict on every node as it was after PreFilter."""
    run = _run("add-remove-inverse", plugin, scenario, args, seed, filter_plugins)
    if not isinstance(run.plugin, PreFilterExtensions) or not isinstance(run.plugin, FilterPlugin):
        return
    if not _prefiltered(run.pre_filter()):
        return
    expected = run.verdicts(run.state)
    for move in _moves(run):
        state = run.state.clone()
        order = ("RemovePod", "AddPod") if move.bound else ("AddPod", "RemovePod")
        for verb in order:
            _apply(run, state, move, verb)
        got = run.verdicts(state)
        if got != expected:
            run.fail(f"{order[0]} then {order[1]} of {move.label} changed Filter's verdicts:\n"
                     + _differing_verdicts(expected, got))


def _reservation_picture(run: Run) -> list[tuple[str, object]]:
    storage = run.handle.storage
    return [
        ("Filter's verdicts", run.verdicts(run.state)),
        ("the plugin's attributes", freeze(run.plugin, opaque=(FakeHandle,))),
        ("the cluster's storage objects", freeze([storage.pvs, storage.pvcs, storage.classes, storage.csi_nodes,
                                                  storage.csi_drivers, storage.capacities])),
    ]


def _compare(run: Run, what: str, before: list[tuple[str, object]], after: list[tuple[str, object]]) -> None:
    for (label, old), (_, new) in zip(before, after, strict=True):
        if old != new:
            run.fail(f"{what} changed {label}:\n" + "\n".join(f"  {line}" for line in differences(old, new, "")))


def check_reserve_unreserve(plugin: PluginFactory, scenario: Scenario, *, args: Any = None, seed: int = 0,
                            filter_plugins: Sequence[PluginFactory] = ()) -> None:
    """For a Reserve plugin: Reserve then Unreserve on a feasible node, a second Unreserve, and an Unreserve
    without Reserve leave the plugin's attributes, the cluster's storage objects and Filter's verdicts as
    they were."""
    run = _run("reserve-unreserve", plugin, scenario, args, seed, filter_plugins)
    reserve = run.plugin
    if not isinstance(reserve, ReservePlugin):
        return
    feasible = cycle(run).feasible
    pod = run.pod
    for node in feasible[:2]:
        before = _reservation_picture(run)
        run.call(f'Reserve on node "{node.name}"', reserve.reserve, run.state, pod, node.name, returns=(Status,))
        run.call(f'Unreserve on node "{node.name}"', reserve.unreserve, run.state, pod, node.name)
        _compare(run, f'Reserve then Unreserve on node "{node.name}"', before, _reservation_picture(run))
        run.call(f'a second Unreserve on node "{node.name}"', reserve.unreserve, run.state, pod, node.name)
        _compare(run, f'a second Unreserve on node "{node.name}"', before, _reservation_picture(run))
    for node in list(run.handle.snapshot)[:1]:
        before = _reservation_picture(run)
        run.call(f'Unreserve without Reserve on node "{node.name}"', reserve.unreserve, run.state, pod, node.name)
        _compare(run, f'Unreserve without Reserve on node "{node.name}"', before, _reservation_picture(run))


def check_memo_keys(plugin: PluginFactory, scenario: Scenario, *, args: Any = None, seed: int = 0,
                    filter_plugins: Sequence[PluginFactory] = ()) -> None:
    """For a NodeLocalFilter (NodeLocalScore): ``filter_key`` (``score_key``) returns a hashable key or
    ``None``, and pods with equal keys get equal Filter verdicts (raw scores) on every node.  The pods
    compared are the scenario's pod, the other pods, and the pod with one field taken from another pod."""
    check_keys(_run("memo-key", plugin, scenario, args, seed, filter_plugins))


ALL_CHECKS: Final[tuple[Check, ...]] = (
    check_no_mutation,
    check_score_range,
    check_state_clone,
    check_add_remove_inverse,
    check_reserve_unreserve,
    check_memo_keys,
    check_determinism,
)
"""Every check, in the order :func:`check_contracts` runs them."""


def _checked(checks: Sequence[Check]) -> tuple[Check, ...]:
    chosen = tuple(checks)
    unknown = [c for c in chosen if c not in ALL_CHECKS]
    if unknown or not chosen:
        raise InvalidArgument(f"checks must be a non-empty selection of ALL_CHECKS, got {chosen!r}")
    return chosen


def check_contracts(plugin: PluginFactory, scenario: Scenario, *, args: Any = None, seed: int = 0,
                    filter_plugins: Sequence[PluginFactory] = (), checks: Sequence[Check] = ALL_CHECKS) -> None:
    """Run ``checks`` (default: all) on one scenario; for use inside a ``@given`` test."""
    for check in _checked(checks):
        check(plugin, scenario, args=args, seed=seed, filter_plugins=filter_plugins)


def check_plugin(
    plugin: PluginFactory, *, args: Any = None, scenarios: SearchStrategy[Scenario] | None = None,
    checks: Sequence[Check] = ALL_CHECKS, filter_plugins: Sequence[PluginFactory] = (), seed: int = 0,
    max_examples: int | None = None, settings: Settings | None = None,
) -> None:
    """Check ``plugin`` (built as ``plugin(args, handle)``) on generated scenarios; pytest-friendly.

    Scenarios come from ``scenarios`` (default :func:`~kschedlib.testing.strategies.scenarios`). Hypothesis
    runs with ``settings`` (default: the loaded profile) with ``max_examples`` when given, no deadline, no
    example database, no explain phase and one reported failure: a :class:`ContractViolation` for the
    shrunk scenario.
    """
    if not callable(plugin):
        raise InvalidArgument(f"plugin={plugin!r} must be a plugin class or factory")
    chosen = _checked(checks)
    strategy = scenarios if scenarios is not None else _default_scenarios()
    parent = settings if settings is not None else Settings.default
    assert parent is not None
    overrides: dict[str, Any] = {
        "deadline": None, "database": None, "report_multiple_bugs": False,
        "suppress_health_check": [*parent.suppress_health_check, HealthCheck.too_slow, HealthCheck.data_too_large],
        # Hypothesis' explain phase re-runs the failing scenario many times to annotate which arguments
        # matter; the violation's message already says what broke, so that time is better saved.
        "phases": [phase for phase in parent.phases if phase is not Phase.explain],
    }
    if max_examples is not None:
        overrides["max_examples"] = max_examples

    focus = list(chosen)

    @Settings(parent, **overrides)
    @given(strategy)
    def holds_on(scenario: Scenario) -> None:
        for check in focus:
            try:
                check(plugin, scenario, args=args, seed=seed, filter_plugins=filter_plugins)
            except ContractViolation:
                # From the first violation on, only its check runs: Hypothesis shrinks that failure,
                # and every scenario that passed before passes this check still.
                focus[:] = [check]
                raise

    try:
        holds_on()
    except FlakyFailure as flaky:
        violation = next((e for e in flaky.exceptions if isinstance(e, ContractViolation)), None)
        if violation is None:
            raise
        raise ContractViolation(violation.contract, violation.plugin, violation.detail + "\n(the failure did not "
                                "recur on every run of this scenario: the plugin is nondeterministic)",
                                violation.scenario) from flaky


@functools.cache
def _default_scenarios() -> SearchStrategy[Scenario]:
    """Built once: a strategy validates itself on first use, which is worth doing once per process."""
    return scenarios()

