"""The two how-tos about live clusters run against a real API server holding the tutorial's cluster: their python
and console blocks print what the pages say (``KSCHEDLIB_UPDATE_DOCS=1`` rewrites the outputs, as in
``tests/examples/test_docs.py``), and the deployment manifest's RBAC is all the scheduler needs: it is applied,
and the scheduler runs as its ServiceAccount (a token of its own, the in-cluster configuration)."""

from __future__ import annotations

import json
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedlib.kube import KubeClient, LiveScheduler, connect, read_settings
from kschedlib.kube import client as client_module
from tests.examples.test_docs import DOCS, TUTORIAL, blocks, check_console_blocks, run_python_blocks
from tests.kube.cluster import create, pods, wait_for
from tests.kube.envtest import ControlPlane, control_plane

ASK = DOCS / "how-to" / "ask-a-live-cluster.md"
SECOND = DOCS / "how-to" / "run-as-a-second-scheduler.md"
OBJECT_PATHS = {
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "Deployment": "/apis/apps/v1/namespaces/{ns}/deployments",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
}


@pytest.fixture(scope="module")
def tutorial_cluster() -> Iterator[ControlPlane]:
    """An API server holding the tutorial's cluster (its own: the pages' outputs depend on every object)."""
    with control_plane() as plane:
        admin = connect(str(plane.kubeconfig), qps=0, burst=0)
        document = json.loads((TUTORIAL.parent / "cluster.json").read_text())
        items = document["items"] if isinstance(document, dict) else document
        for item in items:
            item = {key: value for key, value in item.items() if key != "status" or item["kind"] == "Node"}
            for container in item.get("spec", {}).get("containers", ()):  # the API server wants extended
                requests = container.get("resources", {}).get("requests", {})  # resources' limits too
                container["resources"]["limits"] = {k: v for k, v in requests.items() if "/" in k}
            create(admin, item)
        yield plane


@pytest.fixture
def on_cluster(tutorial_cluster: ControlPlane, monkeypatch: pytest.MonkeyPatch) -> KubeClient:
    monkeypatch.setenv("KUBECONFIG", str(tutorial_cluster.kubeconfig))
    return connect(str(tutorial_cluster.kubeconfig), qps=0, burst=0)


def test_ask_a_live_cluster_console_blocks(on_cluster: KubeClient, tmp_path: Path) -> None:
    check_console_blocks(ASK, tmp_path)


def test_ask_a_live_cluster_python_blocks(on_cluster: KubeClient, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    run_python_blocks(ASK, tmp_path, monkeypatch)


def test_second_scheduler_python_blocks(on_cluster: KubeClient, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        run_python_blocks(SECOND, tmp_path, monkeypatch)
    finally:
        on_cluster.request("DELETE", "/api/v1/namespaces/default/pods/with-my-plugins", body={"gracePeriodSeconds": 0})


def _yaml_blocks(page: Path) -> list[list[dict[str, Any]]]:
    return [[doc for doc in yaml.safe_load_all(block.text) if doc] for block in blocks(page) if block.lang == "yaml"]


def _plugin_class() -> type:
    """The page's plugin, from its first python block."""
    first = next(block for block in blocks(SECOND) if block.lang == "python")
    module = types.ModuleType("docs_second_scheduler_plugin")
    exec(compile(first.text, str(SECOND), "exec"), module.__dict__)
    plugin: type = module.NoMaintenance
    return plugin


def test_the_manifest_is_all_the_scheduler_needs(tutorial_cluster: ControlPlane, on_cluster: KubeClient,
                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config_file, manifest = _yaml_blocks(SECOND)
    read_settings(config_file[0], default_lease="unused")  # the config the page shows reads as it says
    for obj in manifest:
        path = OBJECT_PATHS[obj["kind"]].format(ns=obj["metadata"].get("namespace"))
        on_cluster.request("POST", path, body=obj)
    account = next(o for o in manifest if o["kind"] == "ServiceAccount")["metadata"]
    token = on_cluster.request(
        "POST", f"/api/v1/namespaces/{account['namespace']}/serviceaccounts/{account['name']}/token",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}})
    (tmp_path / "token").write_text(token["status"]["token"])
    (tmp_path / "ca.crt").write_bytes((tutorial_cluster.workdir / "certs" / "apiserver.crt").read_bytes())
    monkeypatch.setattr(client_module, "SERVICE_ACCOUNT", tmp_path)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(tutorial_cluster.port))
    config_map = next(o for o in manifest if o["kind"] == "ConfigMap")
    settings = read_settings(yaml.safe_load(config_map["data"]["my-scheduler.yaml"]), default_lease="unused")
    assert settings.leader_election.leader_elect
    live = LiveScheduler(connect(), settings, plugins=[_plugin_class()], seed=0)  # in-cluster, as the pod runs it
    live.start()
    try:
        assert live.ready.wait(30)
        create(on_cluster, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "as-deployed",
                                                                            "namespace": "default"},
                            "spec": {"schedulerName": "my-scheduler",
                                     "containers": [{"name": "c", "image": "pause",
                                                     "resources": {"requests": {"cpu": "100m"}}}]}})
        wait_for("the pod bound by the deployed scheduler",
                 lambda: bool(pods(on_cluster, "default")["as-deployed"]["spec"].get("nodeName")), timeout=60)
        lease = on_cluster.request("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/my-scheduler")
        assert lease["spec"]["holderIdentity"] == live.elector.identity  # type: ignore[union-attr]
        assert pods(on_cluster, "default")["as-deployed"]["spec"]["nodeName"] != "node-b"  # NoMaintenance
    finally:
        live.stop()
        live.join(30)
        on_cluster.request("DELETE", "/api/v1/namespaces/default/pods/as-deployed", body={"gracePeriodSeconds": 0})
    assert live.exit_status == 0
