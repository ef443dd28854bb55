"""The ``config`` section of results: which KubeSchedulerConfiguration an answer is for."""

from __future__ import annotations

from collections.abc import Mapping
from os import fspath
from typing import Any

from kschedlib._internal.documents import read_config_document
from kschedlib.framework.config import SchedulerConfig
from kschedlib.scheduler import ConfigSource

__all__ = ["config_section"]


def config_section(config: ConfigSource) -> dict[str, Any]:
    """``{"source", "document"}``: the file a config came from (``default`` for kube-scheduler's default
    profile, ``inline`` for a dict, ``SchedulerConfig`` for a parsed one) and the document as given
    (``None`` when there is none to show), so that a saved result says what produced it."""
    if config is None:
        return {"source": "default", "document": None}
    if isinstance(config, SchedulerConfig):
        return {"source": "SchedulerConfig", "document": None}
    if isinstance(config, Mapping):
        return {"source": "inline", "document": dict(config)}
    return {"source": fspath(config), "document": dict(read_config_document(config))}
