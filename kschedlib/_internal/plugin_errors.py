"""What a plugin did wrong, as kube-scheduler words it: one helper per extension point.

The runtime's plain path and the reuse layer's fast path both call plugins; both turn an
exception, a value of the wrong type or a code the point does not accept into an ``ERROR``
status through these helpers, so the wording is written once.  The Filter runners live here
for the same reason: the plain runner and the one-plugin runner of the column search must
judge a Filter's answer alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extension_points import MAX_NODE_SCORE, MIN_NODE_SCORE
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.status import REJECTED_CODES, Code, Status
from kschedlib.model.objects import Pod

__all__ = [
    "FilterRunner",
    "OutOfRange",
    "PluginFailure",
    "WrongScore",
    "WrongScores",
    "bound_filter_runner",
    "error",
    "filter_error",
    "go_quote",
    "normalize_error",
    "not_int",
    "plain_filter_runner",
    "point_error",
    "range_error",
    "wrong_return",
    "score_error",
    "shown",
]

_SUCCESS: Final = Code.SUCCESS
_REJECTED: Final = REJECTED_CODES

FilterRunner = Callable[[CycleState, Pod, NodeInfo], Status]


def error(message: str, plugin: str) -> Status:
    return Status(Code.ERROR, (message,), plugin)


def go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def shown(value: object) -> str:
    """A value and its type for an error message (the repr kept short)."""
    text = repr(value)
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{text} ({type(value).__name__})"


def wrong_return(value: object, expected: str = "a Status") -> str:
    """What a plugin wrongly returned, for its error message."""
    return f"returned {shown(value)}, not {expected}"


def point_error(point: str, plugin: str, what: object) -> Status:
    """``running <Point> plugin "<name>": <what>`` (PreEnqueue, PreFilter, PreScore, Reserve, Permit, ...)."""
    return error(f"running {point} plugin {go_quote(plugin)}: {what}", plugin)


def filter_error(plugin: str, what: object) -> Status:
    """A Filter plugin raised, returned a wrong value, or a code Filter does not accept."""
    return error(f"running {go_quote(plugin)} filter plugin: {what}", plugin)


def score_error(plugin: str, what: object) -> Status:
    """A Score plugin raised or returned something other than an int score."""
    return error(f"running Score plugins: plugin {go_quote(plugin)} failed with: {what}", plugin)


def normalize_error(plugin: str, what: object) -> Status:
    """A NormalizeScore raised or returned something other than one int score per node."""
    return error(f"running Normalize on Score plugins: plugin {go_quote(plugin)} failed with: {what}", plugin)


def range_error(plugin: str, value: int) -> Status:
    return error(f"applying score defaultWeights on Score plugins: plugin {go_quote(plugin)} returns an invalid "
                 f"score {value}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                 plugin)


def _unexpected(status: Status, plugin: str) -> Status:
    """A Filter status that is neither success nor a rejection: kube-scheduler reports it as an error."""
    return filter_error(plugin, status.message())


def plain_filter_runner(active: tuple[tuple[str, FilterRunner], ...]) -> FilterRunner:
    """The Filter plugins ``active`` run in order on one node; the first failure wins."""
    success = Status.success()

    def run(state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        for name, check in active:
            try:
                status: object = check(state, pod, node_info)
            except Exception as exc:
                return filter_error(name, exc)
            if status is success:  # the shared status most plugins return: decided at once
                continue
            if not isinstance(status, Status):
                return filter_error(name, wrong_return(status))
            code = status.code
            if code is not _SUCCESS:
                if code in _REJECTED:
                    return status if status.plugin == name else status.with_plugin(name)
                return _unexpected(status, name)
        return success

    return run


def bound_filter_runner(
    active: tuple[tuple[str, FilterRunner], ...], state: CycleState, pod: Pod
) -> Callable[[NodeInfo], Status]:
    """Filter plugins run on one node for this cycle's pod; one plugin is called without a loop."""
    if len(active) != 1:
        run = plain_filter_runner(active)
        return lambda info: run(state, pod, info)
    ((name, check),) = active

    def run_one(info: NodeInfo) -> Status:
        try:
            status: object = check(state, pod, info)
        except Exception as exc:
            return filter_error(name, exc)
        if not isinstance(status, Status):
            return filter_error(name, wrong_return(status))
        code = status.code
        if code is _SUCCESS or status.plugin == name:
            return status if code is _SUCCESS or code in _REJECTED else _unexpected(status, name)
        return status.with_plugin(name) if code in _REJECTED else _unexpected(status, name)

    return run_one


class OutOfRange(Exception):
    """A Score plugin without normalization returned a score outside [0, 100]."""

    def __init__(self, plugin: str, value: int) -> None:
        super().__init__(plugin)
        self.plugin = plugin
        self.value = value


class WrongScore(Exception):
    """A Score plugin returned something other than an int (a bool or a float is not a score)."""

    def __init__(self, value: object) -> None:
        super().__init__(wrong_return(value, "an int score"))


class WrongScores(Exception):
    """A :class:`~kschedlib.framework.memo.BatchScore` plugin returned something other than one score per node."""

    def __init__(self, value: object, count: int) -> None:
        super().__init__(wrong_return(value, f"a list of {count} int scores"))


class PluginFailure(Exception):
    """A Score plugin raised, or returned a score that is not an int; carries its name to the error status."""

    def __init__(self, plugin: str, error: BaseException) -> None:
        super().__init__(plugin)
        self.plugin = plugin
        self.error = error


def not_int(values: Sequence[object]) -> tuple[object] | None:
    """The first value that is not an int score (in a 1-tuple: it may be ``None``), or ``None``.

    The common all-int case is decided at C speed; a bool or a float is not a score.
    """
    if not values or (type(values[0]) is int and len(set(map(type, values))) == 1):
        return None
    return (next(value for value in values if type(value) is not int),)
