"""A custom Score plugin with its own typed, validated arguments.

``PreferLabelValues`` prefers nodes whose value for a label is in a configured
list, earlier values more strongly (with ``values: [nvme, ssd]``: ``nvme`` 100,
``ssd`` 50, anything else 0).  Its arguments come from the profile's
``pluginConfig`` and are decoded into a frozen dataclass by a decoder that
raises ``kschedlib.errors.ConfigError`` naming the bad field; its weight comes
from the ``multiPoint`` entry that enables it.  Each node's total score with the
plugin, minus its total under the default profile, is the plugin's weighted score.

Run it with ``python examples/custom_score_with_args.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar, Final

import kschedlib
from kschedlib.errors import ConfigError
from kschedlib.framework import MAX_NODE_SCORE, CycleState, Handle, NodeInfo, ScorePlugin
from kschedlib.model import Pod


@dataclasses.dataclass(frozen=True)
class PreferLabelValuesArgs:
    """The plugin's arguments, as read from ``pluginConfig``."""

    label_key: str
    values: tuple[str, ...]


def decode_args(raw: Mapping[str, Any] | None) -> PreferLabelValuesArgs:
    """Validate ``{"labelKey": str, "values": [str, ...]}``; ``None`` (no pluginConfig entry) is an error."""
    if raw is None:
        raise ConfigError("PreferLabelValues needs args: labelKey and values")
    unknown = sorted(set(raw) - {"apiVersion", "kind", "labelKey", "values"})
    if unknown:
        raise ConfigError("unknown field", field=unknown[0])
    label_key = raw.get("labelKey")
    if not isinstance(label_key, str) or not label_key:
        raise ConfigError("must be a non-empty string", field="labelKey", value=label_key)
    values = raw.get("values")
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise ConfigError("must be a non-empty list of strings", field="values", value=values)
    return PreferLabelValuesArgs(label_key, tuple(values))


def label_score(value: str | None, preferred: tuple[str, ...]) -> int:
    """100 for the first preferred value, decreasing evenly down the list; 0 when not listed."""
    if value not in preferred:
        return 0
    return MAX_NODE_SCORE * (len(preferred) - preferred.index(value)) // len(preferred)


class PreferLabelValues(ScorePlugin):
    """Scores nodes by where their label value stands in the configured list (already in [0, 100])."""

    name: ClassVar[str] = "PreferLabelValues"

    def __init__(self, args: PreferLabelValuesArgs, handle: Handle) -> None:
        self.args = args

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        node = node_info.node
        value = node.labels.get(self.args.label_key) if node is not None else None
        return label_score(value, self.args.values)


def node(name: str, disk: str) -> dict[str, Any]:
    allocatable = {"cpu": "8", "memory": "32Gi", "pods": "110"}
    return {"kind": "Node", "metadata": {"name": name, "labels": {"disktype": disk}},
            "status": {"allocatable": allocatable, "capacity": allocatable}}


def pod(name: str, cpu: str, node_name: str = "") -> dict[str, Any]:
    requests = {"cpu": cpu, "memory": "2Gi"}
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": node_name,
                     "containers": [{"name": "main", "image": "db:1", "resources": {"requests": requests}}]}}


CLUSTER: Final = [
    node("node-hdd", "hdd"),
    node("node-nvme", "nvme"),
    node("node-ssd", "ssd"),
    pod("busy", "5", node_name="node-nvme"),  # node-nvme is busy,
    pod("cache", "500m", node_name="node-ssd"),  # node-ssd a little,
    pod("db-0", "1"),  # node-hdd not at all: without the plugin, db-0 goes there
]


def config(weight: int, args: Mapping[str, Any] | None) -> dict[str, Any]:
    """The default profile plus PreferLabelValues (through multiPoint, with ``weight``) and its ``args``."""
    profile: dict[str, Any] = {
        "schedulerName": "default-scheduler",
        "plugins": {"multiPoint": {"enabled": [{"name": "PreferLabelValues", "weight": weight}]}},
    }
    if args is not None:
        profile["pluginConfig"] = [{"name": "PreferLabelValues", "args": dict(args)}]
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
            "profiles": [profile]}


ARGS: Final = {"labelKey": "disktype", "values": ["nvme", "ssd"]}


def first_decision(registry: kschedlib.Registry, cfg: dict[str, Any] | None) -> tuple[str | None, dict[str, int]]:
    """The node chosen for the cluster's pending pod, and every feasible node's total score."""
    cluster = kschedlib.load_cluster(CLUSTER)
    pod = cluster.pending_pods[0]
    explanation = kschedlib.explain(cluster, pod.key, cfg, registry=registry)
    scores = explanation.to_dict()["scores"]
    return explanation.selected, {name: entry["total"] for name, entry in scores.items()}


def main() -> None:
    registry = kschedlib.in_tree_registry()
    registry.register(PreferLabelValues.name, PreferLabelValues, args=decode_args)

    chosen, default_totals = first_decision(registry, None)
    print("default profile:")
    for name, total in default_totals.items():
        print(f"  {name}: {total}")
    print(f"  -> db-0 on {chosen}")
    for weight in (1, 3):
        chosen, totals = first_decision(registry, config(weight, ARGS))
        print(f"with PreferLabelValues {ARGS['values']}, weight {weight}:")
        for name, total in totals.items():
            print(f"  {name}: {total} = {default_totals[name]} + PreferLabelValues {total - default_totals[name]}")
        print(f"  -> db-0 on {chosen}")

    print("bad arguments are refused when the scheduler is built:")
    bad_args: tuple[Mapping[str, Any] | None, ...] = (
        None,
        {"labelKey": "", "values": ["ssd"]},
        {"labelKey": "disktype", "values": "ssd"},
        {"labelKey": "disktype", "values": ["ssd"], "prefer": "nvme"},
    )
    for bad in bad_args:
        try:
            kschedlib.Scheduler(config(1, bad), registry=registry)
        except ConfigError as exc:
            print(f"  ConfigError: {exc}")


if __name__ == "__main__":
    main()
