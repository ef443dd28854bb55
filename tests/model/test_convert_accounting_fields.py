"""Fields read for kube-scheduler versions after v1.30: pod-level resources, resize statuses,
VolumeAttachments and VolumeAttributesClass names."""

from __future__ import annotations

from typing import Any

import pytest

from kschedlib.errors import ManifestError
from kschedlib.model import (
    ContainerStatus,
    PersistentVolume,
    PersistentVolumeClaim,
    VolumeAttachment,
    parse_quantity,
)
from kschedlib.model.convert import object_from_dict, object_to_dict, pod_from_dict, pod_to_dict


def pod(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "300m"}}}], **spec},
            "status": status or {}}


@pytest.mark.parametrize(("level", "requests"), [
    pytest.param({"requests": {"cpu": "1"}}, {"cpu": "1"}, id="requests-as-given"),
    pytest.param({"limits": {"cpu": "2", "memory": "1Gi"}}, {"cpu": "300m", "memory": "1Gi"},
                 id="limits-default-missing-requests-containers-first"),
    pytest.param({"requests": {"cpu": "1"}, "limits": {"cpu": "2", "hugepages-2Mi": "4Mi"}},
                 {"cpu": "1", "hugepages-2Mi": "4Mi"}, id="limits-default-missing-requests-hugepages"),
    pytest.param({}, None, id="empty"),
])
def test_pod_level_resources_defaulted_as_the_api_server_does(level: dict[str, Any],
                                                               requests: dict[str, str] | None) -> None:
    read = pod_from_dict(pod({"resources": level}))
    expected = None if requests is None else {k: parse_quantity(v) for k, v in requests.items()}
    assert read.pod_level_requests == expected
    assert pod_from_dict(pod_to_dict(read)) == read


def test_container_statuses_keep_only_those_reporting_resources() -> None:
    read = pod_from_dict(pod({}, {"containerStatuses": [
        {"name": "a", "resources": {"requests": {"cpu": "1"}}, "allocatedResources": {"cpu": "500m"}},
        {"name": "b", "ready": True},
        {"name": "c", "resources": {}},
    ]}))
    assert read.container_statuses == (
        ContainerStatus("a", {"cpu": parse_quantity("1")}, {"cpu": parse_quantity("500m")}),
        ContainerStatus("c", {}),
    )
    assert pod_from_dict(pod_to_dict(read)) == read


def test_a_bad_status_quantity_names_its_field() -> None:
    with pytest.raises(ManifestError, match=r"status.containerStatuses\[0\].resources.requests.cpu"):
        pod_from_dict(pod({}, {"containerStatuses": [{"name": "a", "resources": {"requests": {"cpu": "x"}}}]}))


def test_volume_attachment_round_trip() -> None:
    doc = {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "metadata": {"name": "va"},
           "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "n", "source": {"persistentVolumeName": "pv"}},
           "status": {"attached": True}}
    read = object_from_dict(doc)
    assert read == VolumeAttachment("va", "ebs.csi.aws.com", "n", "pv")
    assert object_from_dict(object_to_dict(read)) == read
    inline = object_from_dict({**doc, "spec": {"attacher": "x", "nodeName": "n", "source": {"inlineVolumeSpec": {}}}})
    assert inline == VolumeAttachment("va", "x", "n", None)
    assert object_from_dict(object_to_dict(inline)) == inline


@pytest.mark.parametrize("kind", ["PersistentVolume", "PersistentVolumeClaim"])
def test_volume_attributes_class_name_round_trip(kind: str) -> None:
    doc = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "v", "namespace": "default"},
           "spec": {"volumeAttributesClassName": "gold"}}
    read = object_from_dict(doc)
    assert isinstance(read, PersistentVolume | PersistentVolumeClaim)
    assert read.volume_attributes_class_name == "gold"
    assert object_from_dict(object_to_dict(read)) == read
