"""NodeResourcesFitArgs: decoding with kube's defaults and kube's validation (the first error is raised)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, NamedTuple, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError
from kschedlib.framework._config_fields import expect_type as _expect
from kschedlib.model.resources import CPU, MEMORY
from kschedlib.plugins._helpers.validation import qualified_name_errors

__all__ = [
    "DEFAULT_RESOURCES",
    "LEAST_ALLOCATED",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_UTILIZATION",
    "MOST_ALLOCATED",
    "NodeResourcesFitArgs",
    "REQUESTED_TO_CAPACITY_RATIO",
    "ResourceSpec",
    "ScoringStrategy",
    "ShapePoint",
    "decode_args",
    "decode_resources",
    "validate_args",
    "validate_resources",
    "validate_shape",
]

LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"
_STRATEGIES: Final = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

MAX_CUSTOM_PRIORITY_SCORE: Final = 10
MAX_UTILIZATION: Final = 100

class ResourceSpec(NamedTuple):
    """A resource to score and its weight (``scoringStrategy.resources[i]``)."""

    name: str
    weight: int = 1


class ShapePoint(NamedTuple):
    """A point of the RequestedToCapacityRatio shape: utilization 0..100 -> score 0..10."""

    utilization: int
    score: int


DEFAULT_RESOURCES: Final = (ResourceSpec(CPU, 1), ResourceSpec(MEMORY, 1))


@final
@attrs.frozen(slots=True, repr=False)
class ScoringStrategy(FieldsRepr):
    """``scoringStrategy``: the type, the weighted resources and (for RTCR) the shape points."""

    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    requested_to_capacity_ratio: tuple[ShapePoint, ...] | None = None
    """``requestedToCapacityRatio.shape``; ``None`` when ``requestedToCapacityRatio`` is absent."""


@final
@attrs.frozen(slots=True, repr=False)
class NodeResourcesFitArgs(FieldsRepr):
    """NodeResourcesFitArgs with kube's defaults (LeastAllocated over cpu and memory, weight 1)."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = ScoringStrategy()


def _strings(raw: Any, field: str) -> tuple[str, ...]:
    items = _expect(raw if raw is not None else [], list, field)
    return tuple(_expect(item, str, f"{field}[{i}]") for i, item in enumerate(items))


def decode_resources(raw: Any, field: str) -> tuple[ResourceSpec, ...]:
    """A ``resources`` list with kube's defaulting: empty => cpu+memory, weight 0/missing => 1."""
    items = _expect(raw if raw is not None else [], list, field)
    if not items:
        return DEFAULT_RESOURCES
    specs = []
    for i, item in enumerate(items):
        entry = _expect(item, Mapping, f"{field}[{i}]")
        name = _expect(entry.get("name") or "", str, f"{field}[{i}].name")
        weight = _expect(entry.get("weight") or 0, int, f"{field}[{i}].weight")
        specs.append(ResourceSpec(name, weight or 1))
    return tuple(specs)


def _shape(raw: Any, field: str) -> tuple[ShapePoint, ...] | None:
    if raw is None:
        return None
    param = _expect(raw, Mapping, field)
    points = _expect(param.get("shape") or [], list, f"{field}.shape")
    shape = []
    for i, item in enumerate(points):
        point = _expect(item, Mapping, f"{field}.shape[{i}]")
        utilization = _expect(point.get("utilization") or 0, int, f"{field}.shape[{i}].utilization")
        score = _expect(point.get("score") or 0, int, f"{field}.shape[{i}].score")
        shape.append(ShapePoint(utilization, score))
    return tuple(shape)


def decode_args(raw: Mapping[str, Any] | None) -> NodeResourcesFitArgs:
    """Decode and validate ``NodeResourcesFitArgs`` (JSON field names); ``None`` gives the defaults."""
    raw = _expect(raw if raw is not None else {}, Mapping, "args")
    strategy = ScoringStrategy()
    if raw.get("scoringStrategy") is not None:
        s = _expect(raw["scoringStrategy"], Mapping, "scoringStrategy")
        strategy = ScoringStrategy(
            _expect(s.get("type") or "", str, "scoringStrategy.type"),
            decode_resources(s.get("resources"), "scoringStrategy.resources"),
            _shape(s.get("requestedToCapacityRatio"), "scoringStrategy.requestedToCapacityRatio"),
        )
    args = NodeResourcesFitArgs(
        _strings(raw.get("ignoredResources"), "ignoredResources"),
        _strings(raw.get("ignoredResourceGroups"), "ignoredResourceGroups"),
        strategy,
    )
    validate_args(args)
    return args


# --- validation (kube's ValidateNodeResourcesFitArgs; the first error is raised) ---------------

def validate_resources(resources: Sequence[ResourceSpec], field: str) -> None:
    """Every weight must be in (0, 100]."""
    for i, (name, weight) in enumerate(resources):
        if weight <= 0 or weight > 100:
            raise ConfigError(f"resource weight of {name} not in valid range (0, 100]",
                              field=f"{field}[{i}].weight", value=weight)


def validate_shape(shape: Sequence[ShapePoint], field: str) -> None:
    """At least one point, strictly increasing utilization, utilization in [0, 100], score in [0, 10]."""
    if not shape:
        raise ConfigError("at least one point must be specified", field=field)
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            raise ConfigError("utilization values must be sorted in increasing order",
                              field=f"{field}[{i}].utilization", value=shape[i].utilization)
    for i, (utilization, score) in enumerate(shape):
        if not 0 <= utilization <= MAX_UTILIZATION:
            raise ConfigError("not in valid range [0, 100]", field=f"{field}[{i}].utilization",
                              value=utilization)
        if not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise ConfigError("not in valid range [0, 10]", field=f"{field}[{i}].score", value=score)


def validate_args(args: NodeResourcesFitArgs) -> None:
    """Raise :class:`ConfigError` for the first problem kube's validation would report.

    Kube reports shape errors under ``scoringStrategy.shape`` (not
    ``...requestedToCapacityRatio.shape``); that path is kept.  A
    RequestedToCapacityRatio strategy without ``requestedToCapacityRatio``
    makes kube-scheduler crash at start-up; here it is a ConfigError.
    """
    for i, name in enumerate(args.ignored_resources):
        errors = qualified_name_errors(name)
        if errors:
            raise ConfigError(errors[0], field=f"ignoredResources[{i}]", value=name)
    for i, group in enumerate(args.ignored_resource_groups):
        errors = qualified_name_errors(group)
        if "/" in group:
            errors.insert(0, "resource group name can't contain '/'")
        if errors:
            raise ConfigError(errors[0], field=f"ignoredResourceGroups[{i}]", value=group)
    strategy = args.scoring_strategy
    if strategy.type not in _STRATEGIES:
        supported = ", ".join(f'"{s}"' for s in _STRATEGIES)
        raise ConfigError(f'Unsupported value: "{strategy.type}": supported values: {supported}',
                          field="scoringStrategy.type", value=strategy.type)
    validate_resources(strategy.resources, "scoringStrategy.resources")
    if strategy.requested_to_capacity_ratio is not None:
        validate_shape(strategy.requested_to_capacity_ratio, "scoringStrategy.shape")
    elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        raise ConfigError("Required value", field="scoringStrategy.requestedToCapacityRatio")

