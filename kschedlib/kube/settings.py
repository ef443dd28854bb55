"""What a running scheduler reads from its KubeSchedulerConfiguration beyond the profiles: ``clientConnection``
(qps, burst, kubeconfig) and ``leaderElection``, with kube-scheduler's defaults."""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike, fspath
from typing import Any, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib._internal.documents import read_config_document
from kschedlib.errors import ConfigError
from kschedlib.framework._go_duration import parse_duration
from kschedlib.kube.client import DEFAULT_BURST, DEFAULT_QPS

__all__ = ["ClientConnection", "LeaderElection", "RunSettings", "read_settings"]


@final
@attrs.frozen(slots=True, repr=False)
class LeaderElection(FieldsRepr):
    """KubeSchedulerConfiguration's ``leaderElection`` (durations in seconds)."""

    leader_elect: bool = False
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@final
@attrs.frozen(slots=True, repr=False)
class ClientConnection(FieldsRepr):
    """``clientConnection``: the API client's rate limits and kubeconfig."""

    qps: float = DEFAULT_QPS
    burst: int = DEFAULT_BURST
    kubeconfig: str | None = None


@final
@attrs.frozen(slots=True, repr=False)
class RunSettings(FieldsRepr):
    """The config document (for the Scheduler), its client connection and its leader election."""

    document: Mapping[str, Any] | None
    client: ClientConnection
    leader_election: LeaderElection


def _number(section: Mapping[str, Any], key: str, default: float, field: str) -> float:
    value = section.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError("expected a number", field=f"{field}.{key}", value=value)
    return float(value)


def _duration(section: Mapping[str, Any], key: str, default: float) -> float:
    value = section.get(key)
    if value is None:
        return default
    try:
        seconds = parse_duration(value) if isinstance(value, str) else None
    except ValueError:
        seconds = None
    if seconds is None or seconds <= 0:
        raise ConfigError("expected a positive duration such as \"15s\"", field=f"leaderElection.{key}", value=value)
    return seconds


def _section(document: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    section = document.get(key) or {}
    if not isinstance(section, Mapping):
        raise ConfigError("expected a mapping", field=key, value=section)
    return section


def read_settings(config: str | PathLike[str] | Mapping[str, Any] | None, *, default_lease: str) -> RunSettings:
    """Read ``config`` (a file or a document; ``None``: every default).  The Lease is named ``default_lease``
    unless ``leaderElection.resourceName`` says otherwise (kube-scheduler's own is ``kube-scheduler``)."""
    document: Mapping[str, Any] | None
    if config is None:
        document = None
    elif isinstance(config, Mapping):
        document = config
    else:
        document = read_config_document(fspath(config))
    doc = document or {}
    connection = _section(doc, "clientConnection")
    election = _section(doc, "leaderElection")
    burst = _number(connection, "burst", DEFAULT_BURST, "clientConnection")
    client = ClientConnection(qps=_number(connection, "qps", DEFAULT_QPS, "clientConnection"), burst=int(burst),
                              kubeconfig=connection.get("kubeconfig") or None)
    leader = LeaderElection(
        leader_elect=bool(election.get("leaderElect", False)),
        lease_duration=_duration(election, "leaseDuration", 15.0),
        renew_deadline=_duration(election, "renewDeadline", 10.0),
        retry_period=_duration(election, "retryPeriod", 2.0),
        resource_name=str(election.get("resourceName") or default_lease),
        resource_namespace=str(election.get("resourceNamespace") or "kube-system"),
    )
    if not leader.retry_period < leader.renew_deadline < leader.lease_duration:
        raise ConfigError("needs retryPeriod < renewDeadline < leaseDuration", field="leaderElection",
                          value=dict(election))
    return RunSettings(document, client, leader)
