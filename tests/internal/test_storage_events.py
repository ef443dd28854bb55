"""Storage objects as cluster events (queueing hints on): what each added object replaces."""

from __future__ import annotations

import pytest

from kschedlib._internal.store import StorageStore
from kschedlib.framework import events as ev
from kschedlib.model.quantity import parse_quantity
from kschedlib.model.storage import CSIDriver, CSINode, CSIStorageCapacity, StorageClass, VolumeAttachment
from tests.helpers import make_pv, make_pvc

OBJECTS = [
    (make_pv("pv"), make_pv("pv", size="20Gi"), ev.PERSISTENT_VOLUME),
    (make_pvc("c"), make_pvc("c", size="1Gi"), ev.PERSISTENT_VOLUME_CLAIM),
    (StorageClass("sc"), StorageClass("sc", provisioner="x"), ev.STORAGE_CLASS),
    (CSINode("n"), CSINode("n", annotations={"a": "b"}), ev.CSI_NODE),
    (CSIDriver("d"), CSIDriver("d", storage_capacity=True), ev.CSI_DRIVER),
    (CSIStorageCapacity("cap"), CSIStorageCapacity("cap", capacity=parse_quantity("1Gi")), ev.CSI_STORAGE_CAPACITY),
    (VolumeAttachment("va", "d", "n1", "pv"), VolumeAttachment("va", "d", "n2", "pv"), ev.VOLUME_ATTACHMENT),
]


@pytest.mark.parametrize(("first", "second", "resource"), OBJECTS, ids=[o[2] for o in OBJECTS])
def test_a_storage_object_replaces_its_earlier_version(first: object, second: object, resource: str) -> None:
    store = StorageStore()
    assert store.replaced(first) == (resource, None)
    store.add(first)
    assert store.replaced(second) == (resource, first)


def test_other_objects_are_not_storage_events() -> None:
    assert StorageStore().replaced("a pod") is None
