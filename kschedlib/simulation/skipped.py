"""What a cluster dump held that explain and simulate did not use, and why.

A dump of a real cluster holds Deployments, ConfigMaps, custom resources and pods for other
schedulers.  None of them is an error, but a user asking "where do my pods go" must be told
that a Deployment's pods were not created, or that a pod was left to another scheduler.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from kschedlib.explanation import deleting_message
from kschedlib.model.objects import OwnerSelector
from kschedlib.simulation.cluster import CONTROLLER_KINDS, Cluster

__all__ = ["deleting_message", "listing", "skipped_section", "skipped_text"]


def skipped_section(cluster: Cluster, profiles: Collection[str]) -> dict[str, Any]:
    """The JSON ``skipped`` section: objects not used by kind, custom resource kinds, pending pods
    left to schedulers without a profile here (``{pod: schedulerName}``), pending pods being
    deleted, finished pods (``Succeeded``/``Failed``, dropped) and objects the input held twice
    (the later copy used)."""
    kinds: Counter[str] = Counter(cluster.skipped)
    kinds.update(o.kind for o in cluster.objects if isinstance(o, OwnerSelector) and o.kind in CONTROLLER_KINDS)
    pending = cluster.pending_pods
    return {
        "kinds": dict(sorted(kinds.items())),
        "custom_resources": sorted(cluster.custom_kinds),
        "other_schedulers": {p.key: p.scheduler_name for p in pending if p.scheduler_name not in profiles},
        "deleting": [p.key for p in pending if p.deletion_timestamp is not None and p.scheduler_name in profiles],
        "finished": list(cluster.finished),
        "duplicates": list(cluster.duplicates),
    }


def listing(names: Sequence[str], most: int = 5) -> str:
    """``a, b, c`` — or ``a, b, c, d, e and 7 more`` past ``most`` names."""
    if len(names) <= most:
        return ", ".join(names)
    return f"{', '.join(names[:most])} and {len(names) - most} more"


def _counts(kinds: Mapping[str, int]) -> str:
    return ", ".join(f"{count} {kind}" for kind, count in kinds.items())


def skipped_text(section: Mapping[str, Any]) -> str | None:
    """One summary line for the text reports; ``None`` when nothing was skipped."""
    kinds: dict[str, int] = section["kinds"]
    custom = set(section["custom_resources"])
    parts = []
    controllers = {k: n for k, n in kinds.items() if k in CONTROLLER_KINDS}
    if controllers:
        parts.append(f"{_counts(controllers)} (controllers: their pods are not created)")
    resources = {k: n for k, n in kinds.items() if k in custom}
    if resources:
        parts.append(f"{_counts(resources)} (custom resources)")
    others = {k: n for k, n in kinds.items() if k not in CONTROLLER_KINDS and k not in custom}
    if others:
        parts.append(f"{_counts(others)} (not read by the scheduler)")
    schedulers: dict[str, str] = section["other_schedulers"]
    if schedulers:
        names = ", ".join(sorted(set(schedulers.values())))
        parts.append(f"{len(schedulers)} pending pod(s) for schedulers without a profile ({names})")
    if section["deleting"]:
        parts.append(f"{len(section['deleting'])} pending pod(s) being deleted")
    if section.get("finished"):
        parts.append(f"{len(section['finished'])} finished pod(s) (Succeeded or Failed: they hold nothing)")
    if section.get("duplicates"):
        twice = section["duplicates"]
        parts.append(f"{len(twice)} object(s) given twice, the later copy used ({listing(twice, 3)})")
    return "skipped: " + "; ".join(parts) if parts else None
