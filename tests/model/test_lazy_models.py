"""The DRA and storage models are imported by the first such object, not by every process that schedules."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap

import pytest

import kschedlib.model.convert as convert
from kschedlib.model import dra, storage
from kschedlib.model._kinds import DRA_MODULE, dra_kind, is_dra_object, is_storage_object
from kschedlib.model.objects import Node, Pod

_WITHOUT_DRA = textwrap.dedent('''
    import sys
    import kschedlib
    from kschedlib.model.convert import object_to_dict

    node = {"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4", "pods": "10",
            "example.com/gpu": "1"}}}
    gpu = {"kind": "Pod", "metadata": {"name": "gpu"}, "spec": {"containers": [{"name": "c", "resources": {
           "requests": {"cpu": "1", "example.com/gpu": "2"}, "limits": {"example.com/gpu": "2"}}}]}}
    web = {"kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": [{"name": "c"}],
           "volumes": [{"name": "config", "configMap": {"name": "web"}}, {"name": "scratch", "emptyDir": {}}]}}
    cluster = kschedlib.load_cluster([node, gpu, web])
    scheduler = kschedlib.Scheduler()
    scheduler.add_objects(cluster.objects)
    results = list(scheduler.run_until_idle())
    kschedlib.explain(cluster, "default/gpu").to_dict()
    [object_to_dict(o) for o in cluster.objects]
    print(sorted((r.pod.name, r.node_name or r.message) for r in results))
    print("kschedlib.model.dra" in sys.modules, "kschedlib.model.storage" in sys.modules)
''')


def test_scheduling_without_dra_or_storage_objects_imports_neither_model() -> None:
    out = subprocess.run([sys.executable, "-c", _WITHOUT_DRA], capture_output=True, text=True, check=True).stdout
    placements, imported = out.splitlines()
    assert "('web', 'n')" in placements
    assert "Insufficient example.com/gpu" in placements  # the whole cycle ran, PostFilter included
    assert imported == "False False"


def test_storage_names_are_still_offered_by_model_and_convert() -> None:
    import kschedlib.model as model

    assert model.PersistentVolume is storage.PersistentVolume
    assert "StorageClass" in dir(model)
    pv = convert.pv_from_dict({"kind": "PersistentVolume", "metadata": {"name": "pv"},
                               "spec": {"capacity": {"storage": "1Gi"}, "csi": {"driver": "d", "volumeHandle": "h"}}})
    assert is_storage_object(pv)
    assert not is_storage_object(Pod("p"))
    assert convert.object_from_dict(convert.object_to_dict(pv)) == pv
    assert storage.PersistentVolume in convert.KubeObject.__args__


def test_every_dra_model_class_is_recognised() -> None:
    classes = [c for _, c in inspect.getmembers(dra, inspect.isclass) if c.__module__ == DRA_MODULE]
    assert len(classes) >= 10
    for cls in classes:
        assert cls.__module__ == DRA_MODULE
    assert is_dra_object(dra.DeviceClass("gpu"))
    assert not is_dra_object(Pod("p"))
    assert not is_dra_object(Node("n"))
    assert not is_dra_object({"kind": "DeviceClass"})


def test_the_dra_readers_and_writers_are_still_offered_by_convert() -> None:
    claim = convert.resource_claim_from_dict({"kind": "ResourceClaim", "metadata": {"name": "c"},
                                              "spec": {"devices": {"requests": []}}})
    assert isinstance(claim, dra.ResourceClaim)
    assert convert.resource_claim_to_dict(claim)["metadata"]["name"] == "c"
    assert convert.object_from_dict(convert.object_to_dict(claim)) == claim
    assert dra.ResourceClaim in convert.KubeObject.__args__
    with pytest.raises(AttributeError, match="no attribute 'nothing_from_dict'"):
        _ = convert.nothing_from_dict


def test_dra_kind_names_dra_objects_only() -> None:
    assert dra_kind(dra.ResourceClaim("c")) == "ResourceClaim"
    assert dra_kind(dra.DeviceClass("gpu")) == "DeviceClass"
    assert dra_kind(Pod("p")) is None
    assert dra_kind(None) is None


def test_dir_of_convert_lists_the_lazy_names() -> None:
    names = dir(convert)
    assert {"pv_from_dict", "resource_claim_to_dict", "KubeObject", "pod_from_dict"} <= set(names)
    assert convert.KubeObject is convert.KubeObject
