"""One plugin on one scenario: its extension points called in the scheduler's order, answers recorded.

A :class:`Run` builds the plugin over a :class:`~kschedlib.testing.FakeHandle` of the scenario and
calls its points through :meth:`Run.call`, which turns an exception into a
:class:`~kschedlib.testing.ContractViolation` and, when guarding, checks that the call left its inputs
(the pod, the NodeInfo, other plugins' CycleState entries) as they were. :func:`cycle` runs one
scheduling attempt and returns its trace: readable ``(step, answer)`` pairs.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any, Final, NoReturn, TypeVar, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.framework.cycle_state import CycleState, StateKey
from kschedlib.framework.extension_points import (
    FilterPlugin,
    Plugin,
    PostFilterPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.registry import PluginFactory
from kschedlib.framework.results import PostFilterResult, PreFilterResult, Wait
from kschedlib.framework.status import Code, Status
from kschedlib.model.objects import Pod
from kschedlib.testing._clusters import Scenario
from kschedlib.testing._fingerprint import Sealed, differences, freeze, seal
from kschedlib.testing._report import ContractViolation
from kschedlib.testing.fakes import FakeHandle

__all__ = ["Cycle", "Run", "cycle", "describe"]

T = TypeVar("T")
Step = tuple[str, str]


@final
class _AnotherPlugins:
    """A CycleState entry written by some other plugin: the plugin under test must leave it alone."""

    __slots__ = ("data",)

    def __init__(self) -> None:
        self.data: dict[str, list[str]] = {"written by": ["another plugin"]}

    def clone(self) -> _AnotherPlugins:
        copy = _AnotherPlugins()
        copy.data = {key: list(values) for key, values in self.data.items()}
        return copy


_FOREIGN_KEY: Final[StateKey[_AnotherPlugins]] = StateKey("AnotherPlugin")
_ROOTS: Final = (("the pod", "pod"), ("the NodeInfo", "node_info"), ("the PodInfo", "pod_info"),
                 ("the snapshot", "snapshot"), ("the CycleState", "state"))


def describe(value: object) -> str:
    """A status or result as one readable line (``Unschedulable: Insufficient cpu``)."""
    if isinstance(value, Status):
        message = value.message()
        return f"{value.code.label}: {message}" if message else value.code.label
    if isinstance(value, PreFilterResult):
        return "Success" if value.node_names is None else f"Success, only on {sorted(value.node_names)}"
    if isinstance(value, PostFilterResult):
        return (f"{describe(value.status)} (nominated node {value.nominated_node_name!r}, "
                f"victims {list(value.victims)})")
    if isinstance(value, Wait):
        return f"Wait {value.timeout}s"
    return repr(value)


def _one_of(value: object, kinds: tuple[type, ...]) -> bool:
    """``isinstance``, except that an ``int`` must be exactly one (``True`` and ``3.7`` are not scores)."""
    return any(type(value) is int if kind is int else isinstance(value, kind) for kind in kinds)


def _a(noun: str) -> str:
    return f"an {noun}" if noun[0] in "aeiouAEIOU" else f"a {noun}"


def _name(plugin: Plugin) -> str:
    return getattr(type(plugin), "name", type(plugin).__name__)


@final
class Run:
    """The plugin built over a FakeHandle of ``scenario``, and a CycleState for one attempt."""

    def __init__(self, factory: PluginFactory, args: Any, scenario: Scenario, *, contract: str, seed: int,
                 filter_plugins: Sequence[PluginFactory], guard: bool = False) -> None:
        self.scenario = scenario
        self.contract = contract
        self.guard = False
        self.name: str = getattr(factory, "name", getattr(factory, "__name__", repr(factory)))
        self.state = CycleState()
        self.own: set[str] = set()
        # When guarding, the plugin may mutate what it is given: it works on a copy, the report shows the original.
        self.working = pickle.loads(pickle.dumps(scenario)) if guard else scenario
        self.handle = FakeHandle(self.working.cluster, pods=(self.working.pod,), seed=seed)
        self.pod = self.working.pod
        self.plugin: Plugin = self.call("building the plugin", factory, args, self.handle)
        self.name = _name(self.plugin)
        self.handle.add_plugin(self.plugin)
        for other in filter_plugins:
            self.handle.build(other)
        self.guard = guard
        self.reset()

    def reset(self) -> None:
        """A fresh CycleState (holding another plugin's entry) and the random generator back at its seed."""
        self.state = CycleState()
        self.state.write(_FOREIGN_KEY, _AnotherPlugins())
        self.own = set()
        self.handle.reseed()

    def fail(self, detail: str) -> NoReturn:
        raise ContractViolation(self.contract, self.name, detail, self.scenario)

    def _keys(self) -> set[str]:
        return {key.name for key in self.state._data}

    def foreign(self) -> dict[str, object]:
        """The CycleState entries the plugin under test did not write, and the skip sets."""
        entries: dict[str, object] = {key.name: value for key, value in self.state._data.items()
                                      if key.name not in self.own}
        return {**entries, "<skip_filter_plugins>": self.state.skip_filter_plugins,
                "<skip_score_plugins>": self.state.skip_score_plugins}

    def call(self, what: str, method: Callable[..., T], *args: Any,
             inputs: Sequence[tuple[str, object]] = (), returns: tuple[type, ...] = ()) -> T:
        """``method(*args)``; an exception is a violation, and so is an answer of none of the ``returns``
        types (when given) and (when guarding) a change to ``inputs`` or to other plugins' CycleState entries."""
        watched = [*inputs, ("the CycleState entries of other plugins", self.foreign())] if self.guard else []
        before = [seal(value) for _, value in watched]
        keys = self._keys()
        try:
            result = method(*args)
        except Exception as exc:
            self.fail(f"{what} raised {type(exc).__name__}: {exc}")
        if returns and not _one_of(result, returns):
            wanted = " or ".join(_a(kind.__name__) for kind in returns)
            self.fail(f"{what} returned {result!r} ({type(result).__name__}), not {wanted}")
        self.own |= self._keys() - keys
        if self.guard:
            watched[-1] = (watched[-1][0], self.foreign())
            for (label, value), sealed in zip(watched, before, strict=True):
                self.unchanged(what, label, sealed, value)
        return result

    def unchanged(self, what: str, label: str, sealed: Sealed, value: object) -> None:
        """Fail unless ``value`` is still as ``sealed`` recorded it."""
        if sealed.same_as(value):
            return
        root = next((name for prefix, name in _ROOTS if label.startswith(prefix)), "value")
        lines = differences(sealed.before(), freeze(value), root) or ["(the difference is in an unpicklable part)"]
        self.fail(f"{what} changed {label}:\n" + "\n".join(f"  {line}" for line in lines))

    def snapshot_picture(self) -> Sealed:
        return seal(self.handle.snapshot)

    def pre_filter(self, pod: Pod | None = None, state: CycleState | None = None) -> Status | PreFilterResult | None:
        """Other plugins' PreFilter, then this plugin's, for ``pod`` (default: the scenario's) on ``state``
        (default: the run's); records skips. ``None`` when it has no PreFilter."""
        pod = self.pod if pod is None else pod
        state = self.state if state is None else state
        skipped: set[str] = set()
        for other in self.handle.plugins[1:]:
            if not isinstance(other, PreFilterPlugin):
                continue
            answer = other.pre_filter(state, pod)
            if isinstance(answer, Status) and answer.code is Code.SKIP:
                skipped.add(_name(other))
        result = None
        if isinstance(self.plugin, PreFilterPlugin):
            what = "PreFilter" if pod is self.pod else f"PreFilter of {pod.key}"
            result = self.call(what, self.plugin.pre_filter, state, pod, inputs=[("the pod", pod)],
                               returns=(Status, PreFilterResult))
            if isinstance(result, Status) and result.code is Code.SKIP:
                skipped.add(self.name)
        state.skip_filter_plugins = frozenset(skipped)
        return result

    def filter(self, state: CycleState, node: NodeInfo, pod: Pod | None = None) -> Status:
        assert isinstance(self.plugin, FilterPlugin)
        pod = self.pod if pod is None else pod
        what = f'Filter on node "{node.name}"' if pod is self.pod else f'Filter of {pod.key} on node "{node.name}"'
        return self.call(what, self.plugin.filter, state, pod, node,
                         inputs=[("the pod", pod), (f'the NodeInfo of node "{node.name}"', node)], returns=(Status,))

    def verdicts(self, state: CycleState) -> list[Step]:
        """Filter's verdict on every node, each on a clone of ``state`` (Filter may write its own entries)."""
        if not isinstance(self.plugin, FilterPlugin):
            return []
        return [(node.name, describe(self.filter(state.clone(), node))) for node in self.handle.snapshot]


@attrs.define(repr=False)
class Cycle(FieldsRepr):
    """What one attempt did: its trace and the nodes that passed Filter (all nodes without Filter)."""

    trace: list[Step]
    pre_filter: Status | PreFilterResult | None
    feasible: list[NodeInfo]


def _narrowed(run: Run, result: Status | PreFilterResult | None) -> list[NodeInfo]:
    nodes = list(run.handle.snapshot)
    if isinstance(result, PreFilterResult) and result.node_names is not None:
        nodes = [node for node in nodes if node.name in result.node_names]
    return nodes


def _filter_phase(run: Run, trace: list[Step], result: Status | PreFilterResult | None) -> list[NodeInfo]:
    if isinstance(result, Status) and not result.is_success and not result.is_skip:
        return []
    nodes = _narrowed(run, result)
    if not isinstance(run.plugin, FilterPlugin) or run.name in run.state.skip_filter_plugins:
        return nodes
    feasible = []
    for node in nodes:
        status = run.filter(run.state, node)
        trace.append((f'Filter on "{node.name}"', describe(status)))
        if status.is_success:
            feasible.append(node)
    return feasible


def _post_filter_phase(run: Run, trace: list[Step], result: Status | PreFilterResult | None) -> None:
    if not isinstance(run.plugin, PostFilterPlugin):
        return
    if isinstance(result, Status) and result.is_rejected:
        statuses = {node.name: result for node in run.handle.snapshot}
    else:
        statuses = {node.name: run.handle.run_filter_plugins_with_nominated_pods(run.state, run.pod, node)
                    for node in run.handle.snapshot}
    if all(status.is_success for status in statuses.values()):
        return
    answer = run.call("PostFilter", run.plugin.post_filter, run.state, run.pod, statuses,
                      inputs=[("the pod", run.pod)], returns=(PostFilterResult,))
    trace.append(("PostFilter", describe(answer)))


def _check_scores(run: Run, feasible: list[NodeInfo], raw: list[int], final: list[int] | None) -> None:
    for node, score in zip(feasible, raw, strict=True):
        if type(score) is not int:
            run.fail(f'Score on node "{node.name}" returned {score!r} ({type(score).__name__}), not an int')
    if final is None:
        bad = [(node.name, score) for node, score in zip(feasible, raw, strict=True) if not 0 <= score <= 100]
        if bad:
            run.fail(f'Score on node "{bad[0][0]}" returned {bad[0][1]}, outside [0, 100], and the plugin '
                     "has no NormalizeScore")
        return
    if len(final) != len(feasible):
        run.fail(f"NormalizeScore returned {len(final)} scores for {len(feasible)} nodes: {final!r}")
    for node, raw_score, score in zip(feasible, raw, final, strict=True):
        if type(score) is not int or not 0 <= score <= 100:
            run.fail(f'NormalizeScore left node "{node.name}" at {score!r} (raw score {raw_score}), '
                     "outside [0, 100]")


def _score_phase(run: Run, trace: list[Step], feasible: list[NodeInfo], *, check_range: bool) -> None:
    plugin = run.plugin
    if not feasible or not isinstance(plugin, PreScorePlugin | ScorePlugin):
        return
    if isinstance(plugin, PreScorePlugin):
        status = run.call("PreScore", plugin.pre_score, run.state, run.pod, feasible, inputs=[("the pod", run.pod)],
                          returns=(Status,))
        trace.append(("PreScore", describe(status)))
        if not status.is_success:
            return
    if not isinstance(plugin, ScorePlugin):
        return
    raw = [run.call(f'Score on node "{node.name}"', plugin.score, run.state, run.pod, node,
                    inputs=[("the pod", run.pod), (f'the NodeInfo of node "{node.name}"', node)], returns=(int,))
           for node in feasible]
    trace.append(("Score", repr(dict(zip([n.name for n in feasible], raw, strict=True)))))
    final = None
    if isinstance(plugin, ScoreExtensions):
        final = run.call("NormalizeScore", plugin.normalize_score, run.state, run.pod, feasible, list(raw),
                         inputs=[("the pod", run.pod)], returns=(list,))
        trace.append(("NormalizeScore", repr(final)))
    if check_range:
        _check_scores(run, feasible, raw, final)


def cycle(run: Run, *, check_scores: bool = False) -> Cycle:
    """PreEnqueue, PreFilter, Filter (per node), PostFilter (when some node is rejected), PreScore, Score and
    NormalizeScore (on the feasible nodes), as the points the plugin implements; the snapshot is checked
    after each phase when ``run`` guards."""
    trace: list[Step] = []
    picture = run.snapshot_picture() if run.guard else None

    def phase_done(name: str) -> None:  # the NodeInfos given to each call are checked per call
        if picture is not None:
            run.unchanged(name, "the snapshot", picture, run.handle.snapshot)

    if isinstance(run.plugin, PreEnqueuePlugin):
        status = run.call("PreEnqueue", run.plugin.pre_enqueue, run.pod, inputs=[("the pod", run.pod)],
                          returns=(Status,))
        trace.append(("PreEnqueue", describe(status)))
    result = run.pre_filter()
    if result is not None:
        trace.append(("PreFilter", describe(result)))
    phase_done("PreFilter")
    feasible = _filter_phase(run, trace, result)
    _post_filter_phase(run, trace, result)
    _score_phase(run, trace, feasible, check_range=check_scores)
    phase_done("Filter, PostFilter, PreScore, Score or NormalizeScore")
    return Cycle(trace, result, feasible)
