"""A live snapshot read into kschedlib's model.

The API server accepted every object of a snapshot, so one that kschedlib cannot read (a selector using a CEL
library kschedlib does not have, say) is left out with a warning, as a watch event it cannot read is, instead of
stopping the scheduler or the command: a file is refused whole, a running cluster is taken as it is.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from kschedlib.errors import ManifestError
from kschedlib.kube._snapshot import snapshot_document
from kschedlib.simulation.cluster import Cluster, load_cluster

__all__ = ["load_live"]

log = logging.getLogger("kschedlib.kube")


def load_live(objects: Sequence[dict[str, Any]], resource_version: str) -> Cluster:
    """``objects`` as one cluster, less those kschedlib cannot read (each a warning); objects that only clash
    with one another still raise :class:`~kschedlib.errors.ManifestError`."""
    try:
        return load_cluster(snapshot_document(objects, resource_version))
    except ManifestError:
        pass  # find the objects to blame, one by one (the common case above reads everything once)
    kept = []
    for obj in objects:
        try:
            load_cluster([obj])
        except ManifestError as exc:
            log.warning("left out: kschedlib cannot read what the API server accepted: %s", exc)
            continue
        kept.append(obj)
    return load_cluster(snapshot_document(kept, resource_version))
