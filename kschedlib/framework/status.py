"""Status and Code: how a plugin says "fits", "does not fit" or "something broke".

"Does not fit" is a value, never an exception: a Filter returns
``Status.unschedulable("Insufficient cpu")`` and the framework turns the
per-node statuses into the ``0/N nodes are available: ...`` sentence.  An
exception raised by a plugin becomes an ``ERROR`` status for that pod.
"""

from __future__ import annotations

import enum
from typing import ClassVar, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr

__all__ = ["REJECTED_CODES", "Code", "Status"]


@final
class Code(enum.IntEnum):
    """Status codes, with the queue's reaction to each."""

    SUCCESS = 0
    """The plugin ran fine; for a Filter, the node fits."""
    ERROR = 1
    """An internal failure: the cycle is aborted and the pod retried with backoff, no preemption."""
    UNSCHEDULABLE = 2
    """The pod does not fit now; preemption may help."""
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    """The pod does not fit and evicting pods will not help; the node is no preemption candidate."""
    WAIT = 4
    """Permit only: hold the pod before binding."""
    SKIP = 5
    """PreFilter/PreScore: skip this plugin's Filter/Score. Bind: not mine, try the next binder."""
    PENDING = 6
    """The plugin waits for an external actor; counts as a rejection."""

    @property
    def label(self) -> str:
        """Kubernetes' name for the code (``UnschedulableAndUnresolvable``), used in reports."""
        return _LABELS[self]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}
_SUCCESS_CODE: Final = Code.SUCCESS
_SKIP_CODE: Final = Code.SKIP
_WAIT_CODE: Final = Code.WAIT
"""Codes read through module names: reading an enum member off its class costs a descriptor call."""

REJECTED_CODES: Final = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})
"""The codes that reject a pod (the queue retries it on a later event); the rest succeed, wait, skip or fail."""


@final
@attrs.frozen(slots=True, repr=False)
class Status(FieldsRepr):
    """The outcome of a plugin call: a code, reasons, the plugin and, for errors, the exception."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    error: BaseException | None = attrs.field(default=None, eq=False)

    SUCCESS: ClassVar[Status]
    SKIP: ClassVar[Status]

    @classmethod
    def success(cls) -> Status:
        """The shared success status."""
        return SUCCESS

    @classmethod
    def skip(cls) -> Status:
        """The shared skip status."""
        return SKIP

    @classmethod
    def unschedulable(cls, *reasons: str, plugin: str = "") -> Status:
        """The pod does not fit (preemption may help)."""
        return cls(Code.UNSCHEDULABLE, reasons, plugin)

    @classmethod
    def unresolvable(cls, *reasons: str, plugin: str = "") -> Status:
        """The pod does not fit and preemption cannot help (``UnschedulableAndUnresolvable``)."""
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)

    @classmethod
    def from_error(cls, error: BaseException | str, *, plugin: str = "") -> Status:
        """An ``ERROR`` status for an exception or an error message."""
        if isinstance(error, str):
            return cls(Code.ERROR, (error,), plugin)
        return cls(Code.ERROR, (), plugin, error)

    @property
    def is_success(self) -> bool:
        """Whether the code is SUCCESS."""
        return self.code is _SUCCESS_CODE

    @property
    def is_skip(self) -> bool:
        """Whether the code is SKIP."""
        return self.code is _SKIP_CODE

    @property
    def is_wait(self) -> bool:
        """Whether the code is WAIT."""
        return self.code is _WAIT_CODE

    @property
    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in REJECTED_CODES

    def all_reasons(self) -> tuple[str, ...]:
        """The reasons, with the error's text first when there is an error."""
        if self.error is not None:
            return (str(self.error), *self.reasons)
        return self.reasons

    def message(self) -> str:
        """The reasons joined by ``", "``."""
        return ", ".join(self.all_reasons())

    def with_plugin(self, plugin: str) -> Status:
        """This status attributed to ``plugin``: without an error, one shared object per code, reasons
        and plugin.

        Filter runners attribute each rejected node's status here; sharing them lets the readers of a
        failed cycle's statuses (its FitError message, its rejecting plugins) go by distinct objects
        instead of visiting every node.
        """
        if self.plugin == plugin:
            return self
        if self.error is not None:
            return Status(self.code, self.reasons, plugin, self.error)
        key = (self.code, self.reasons, plugin)
        try:
            shared = _ATTRIBUTED.get(key)
        except TypeError:  # reasons a plugin gave as a list: attributed as before, just not shared
            return Status(self.code, self.reasons, plugin)
        if shared is None:
            if len(_ATTRIBUTED) >= _ATTRIBUTED_MAX:
                _ATTRIBUTED.clear()
            shared = _ATTRIBUTED[key] = Status(self.code, self.reasons, plugin)
        return shared

    def with_reason(self, reason: str) -> Status:
        """This status with one more reason appended."""
        return Status(self.code, (*self.reasons, reason), self.plugin, self.error)

    def __str__(self) -> str:
        text = self.code.label
        if self.plugin:
            text += f" from {self.plugin}"
        message = self.message()
        return f"{text}: {message}" if message else text


_ATTRIBUTED: Final[dict[tuple[Code, tuple[str, ...], str], Status]] = {}
"""The shared attributed statuses (:meth:`Status.with_plugin`); emptied whole beyond the bound."""
_ATTRIBUTED_MAX: Final = 4096

SUCCESS = Status()
SKIP = Status(Code.SKIP)
Status.SUCCESS = SUCCESS
Status.SKIP = SKIP
