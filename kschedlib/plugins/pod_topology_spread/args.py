"""PodTopologySpread's arguments: decoding, defaults and kube-scheduler's validation.

Part of the :mod:`kschedlib.plugins.pod_topology_spread` package; only the package itself is public.
Validation mirrors ``ValidatePodTopologySpreadArgs`` check for check and in the
same order; where kube-scheduler aggregates several errors, the first one is
raised.  A message is the detail kube-scheduler prints after the field path
(``not in valid range (0, inf)``), or the error type when it has no detail
(``Duplicate value``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ConfigError, KschedError
from kschedlib.framework._config_fields import expect_type as _expect
from kschedlib.model.convert import label_selector_from_dict
from kschedlib.model.labels import LabelSelector
from kschedlib.model.objects import TopologySpreadConstraint
from kschedlib.plugins._helpers.validation import qualified_name_errors

__all__ = [
    "DO_NOT_SCHEDULE",
    "LIST_DEFAULTING",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpreadArgs",
    "decode_args",
    "validate_args",
]

DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
SYSTEM_DEFAULTING: Final = "System"
LIST_DEFAULTING: Final = "List"

SYSTEM_DEFAULT_CONSTRAINTS: Final = (
    TopologySpreadConstraint(3, "kubernetes.io/hostname", SCHEDULE_ANYWAY),
    TopologySpreadConstraint(5, "topology.kubernetes.io/zone", SCHEDULE_ANYWAY),
)
"""What ``defaultingType: System`` applies: soft hostname and zone spreading, so scoring only."""


@final
@attrs.frozen(slots=True, repr=False)
class PodTopologySpreadArgs(FieldsRepr):
    """``PodTopologySpreadArgs``: the constraints applied to pods that declare none.

    ``defaulting_type`` ``System`` uses :data:`SYSTEM_DEFAULT_CONSTRAINTS` (and
    requires ``default_constraints`` to be empty); ``List`` uses ``default_constraints``.
    """

    default_constraints: tuple[TopologySpreadConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING


def decode_args(raw: Mapping[str, Any] | None) -> PodTopologySpreadArgs:
    """Decode ``pluginConfig`` args (``None`` = defaults), default them and validate them."""
    if raw is None:
        return PodTopologySpreadArgs()
    _expect(raw, Mapping, "")
    defaulting = raw.get("defaultingType")
    if defaulting is None or defaulting == "":
        defaulting = SYSTEM_DEFAULTING
    _expect(defaulting, str, "defaultingType")
    items = _expect(raw.get("defaultConstraints") or [], list, "defaultConstraints")
    constraints = tuple(_constraint(item, f"defaultConstraints[{i}]") for i, item in enumerate(items))
    args = PodTopologySpreadArgs(constraints, defaulting)
    validate_args(args)
    return args


def validate_args(args: PodTopologySpreadArgs) -> None:
    """Raise :class:`ConfigError` for the first problem kube-scheduler would report."""
    _validate_defaulting_type(args.defaulting_type, args.default_constraints)
    for index, constraint in enumerate(args.default_constraints):
        _validate_constraint(constraint, f"defaultConstraints[{index}]")
        _validate_not_repeated(args.default_constraints, index)


# --- decoding --------------------------------------------------------------------------------


def _optional(raw: Mapping[str, Any], key: str, kind: type, path: str) -> Any:
    value = raw.get(key)
    return None if value is None else _expect(value, kind, f"{path}.{key}")


def _constraint(item: Any, path: str) -> TopologySpreadConstraint:
    raw = _expect(item, Mapping, path)
    keys = _optional(raw, "matchLabelKeys", list, path) or []
    return TopologySpreadConstraint(
        max_skew=_optional(raw, "maxSkew", int, path) or 0,
        topology_key=_optional(raw, "topologyKey", str, path) or "",
        when_unsatisfiable=_optional(raw, "whenUnsatisfiable", str, path) or "",
        label_selector=_selector(raw.get("labelSelector")),
        min_domains=_optional(raw, "minDomains", int, path),
        node_affinity_policy=_optional(raw, "nodeAffinityPolicy", str, path),
        node_taints_policy=_optional(raw, "nodeTaintsPolicy", str, path),
        match_label_keys=tuple(_expect(k, str, f"{path}.matchLabelKeys[{i}]") for i, k in enumerate(keys)),
    )


def _selector(raw: Any) -> LabelSelector | None:
    """The selector as written; any non-null value counts as defined (validation forbids it anyway)."""
    if raw is None:
        return None
    try:
        return label_selector_from_dict(raw) or LabelSelector()
    except (KschedError, TypeError, AttributeError):
        return LabelSelector()


# --- validation ------------------------------------------------------------------------------


def _supported(values: Sequence[str]) -> str:
    return "supported values: " + ", ".join(f'"{v}"' for v in values)


def _validate_defaulting_type(value: str, constraints: Sequence[TopologySpreadConstraint]) -> None:
    if value not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        supported = _supported((SYSTEM_DEFAULTING, LIST_DEFAULTING))
        raise ConfigError(supported, field="defaultingType", value=value)
    if value == SYSTEM_DEFAULTING and constraints:
        raise ConfigError("when .defaultConstraints are not empty", field="defaultingType", value=value)


def _validate_constraint(c: TopologySpreadConstraint, path: str) -> None:
    if c.max_skew <= 0:
        raise ConfigError("not in valid range (0, inf)", field=f"{path}.maxSkew", value=c.max_skew)
    if not c.topology_key:
        raise ConfigError("can not be empty", field=f"{path}.topologyKey")
    problems = qualified_name_errors(c.topology_key)
    if problems:
        raise ConfigError(problems[0], field=f"{path}.topologyKey", value=c.topology_key)
    if not c.when_unsatisfiable:
        raise ConfigError("can not be empty", field=f"{path}.whenUnsatisfiable")
    if c.when_unsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        raise ConfigError(_supported((DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)), field=f"{path}.whenUnsatisfiable",
                          value=c.when_unsatisfiable)
    if c.label_selector is not None:
        raise ConfigError("constraint must not define a selector, as they deduced for each pod",
                          field=f"{path}.labelSelector")


def _validate_not_repeated(constraints: Sequence[TopologySpreadConstraint], index: int) -> None:
    c = constraints[index]
    for other in constraints[:index]:
        if (other.topology_key, other.when_unsatisfiable) == (c.topology_key, c.when_unsatisfiable):
            raise ConfigError("Duplicate value", field=f"defaultConstraints[{index}]",
                              value=f"{{{c.topology_key}, {c.when_unsatisfiable}}}")


