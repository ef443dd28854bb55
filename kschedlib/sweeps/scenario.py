"""A sweep's unit of work and its result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ScenarioError

__all__ = ["Scenario", "SweepResult"]

R = TypeVar("R")


def _no_params() -> Mapping[str, Any]:
    return {}


@final
@attrs.frozen(slots=True, eq=True, hash=False, repr=False)
class Scenario(FieldsRepr):
    """One case of a sweep: a cluster and a workload (each sent to a worker once, however many
    scenarios share it), small parameters (sent with every scenario) and a name for reports.

    ``cluster`` and ``workload`` are usually :class:`~kschedlib.Cluster` objects, but any picklable
    value travels the same way; share one object between scenarios to have it sent once.
    """

    cluster: Any = None
    workload: Any = None
    params: Mapping[str, Any] = attrs.field(factory=_no_params)
    name: str = ""


@final
@attrs.frozen(slots=True, repr=False)
class SweepResult(FieldsRepr, Generic[R]):
    """What one scenario gave, in input order: ``value``, or ``error`` (``"TypeName: message"``) and
    the worker's ``traceback``; ``seconds`` is the time the run took where it ran."""

    index: int
    scenario: Any
    value: R | None = None
    error: str | None = None
    traceback: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether the scenario gave a value."""
        return self.error is None

    @property
    def name(self) -> str:
        """The scenario's name (its index when it has none)."""
        name = getattr(self.scenario, "name", "")
        return name if isinstance(name, str) and name else str(self.index)

    def unwrap(self) -> R:
        """The value; :class:`ScenarioError` naming the scenario when it ended in an error."""
        if self.error is not None:
            raise ScenarioError(f"scenario {self.name} failed: {self.error}")
        return self.value  # type: ignore[return-value]
