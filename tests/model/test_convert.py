"""Reading and writing Kubernetes v1 objects: defaults, every field, errors, documents, round trips."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kschedlib.errors import ManifestError, QuantityError
from kschedlib.model.convert import (
    label_selector_from_dict,
    label_selector_to_dict,
    namespace_from_dict,
    namespace_to_dict,
    node_from_dict,
    node_to_dict,
    object_from_dict,
    object_to_dict,
    objects_from_document,
    owner_selector_from_dict,
    owner_selector_to_dict,
    pdb_from_dict,
    pdb_to_dict,
    pod_from_dict,
    pod_to_dict,
)
from kschedlib.model.labels import (
    LabelSelector,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Requirement,
)
from kschedlib.model.objects import (
    Affinity,
    Container,
    ContainerExtendedResourceRequest,
    ContainerImage,
    ContainerPort,
    ContainerRestartRule,
    ContainerStatus,
    Namespace,
    Node,
    NodeAffinity,
    OwnerReference,
    OwnerSelector,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodCondition,
    PodDisruptionBudget,
    PodExtendedResourceClaimStatus,
    PodResourceClaim,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
)
from kschedlib.model.quantity import Quantity, parse_quantity
from tests.scenarios.conformance import admitted

SAMPLES = Path("/work/shared/conformance-sample/explain")
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def q(text: str) -> Quantity:
    return parse_quantity(text)


def pod_doc(spec: dict[str, Any] | None = None, **metadata: Any) -> dict[str, Any]:
    """A minimal v1 Pod named ``web-1`` with one container, plus ``spec`` and ``metadata`` overrides."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-1", **metadata},
        "spec": {"containers": [{"name": "c"}], **(spec or {})},
    }


def node_doc(**status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}, "status": status}


# --- API-server defaults -------------------------------------------------------------------------


def test_missing_namespace_is_default() -> None:
    assert pod_from_dict(pod_doc()).namespace == "default"
    assert pod_from_dict(pod_doc(namespace="")).namespace == "default"
    assert pod_from_dict(pod_doc(namespace="team-a")).namespace == "team-a"


def test_missing_uid_is_namespace_slash_name() -> None:
    assert pod_from_dict(pod_doc(namespace="team-a")).uid == "team-a/web-1"
    assert pod_from_dict(pod_doc(uid="abc-123")).uid == "abc-123"


@pytest.mark.parametrize("key", ["containers", "initContainers"])
def test_limits_without_requests_become_requests_per_resource(key: str) -> None:
    container = {
        "name": "c",
        "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "500m"}},
    }
    pod = pod_from_dict(pod_doc({key: [container]}))
    (read,) = pod.containers if key == "containers" else pod.init_containers
    assert read.requests == {"cpu": q("500m"), "memory": q("1Gi")}
    assert read.limits == {"cpu": q("2"), "memory": q("1Gi")}


def test_limits_only_container_requests_its_limits() -> None:
    pod = pod_from_dict(
        pod_doc({"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]})
    )
    assert pod.containers[0].requests == {"nvidia.com/gpu": q("1")}


def test_requests_without_limits_stay_alone() -> None:
    pod = pod_from_dict(pod_doc({"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}))
    assert pod.containers[0].requests == {"cpu": q("1")}
    assert pod.containers[0].limits == {}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({}, "default-scheduler", id="missing"),
        pytest.param({"schedulerName": ""}, "default-scheduler", id="empty"),
        pytest.param({"schedulerName": "batch"}, "batch", id="explicit"),
    ],
)
def test_scheduler_name_default(spec: dict[str, Any], expected: str) -> None:
    assert pod_from_dict(pod_doc(spec)).scheduler_name == expected


@pytest.mark.parametrize(
    ("host_network", "port", "expected_host_port"),
    [
        pytest.param(True, {"containerPort": 8080}, 8080, id="hostnetwork-defaults-hostport"),
        pytest.param(True, {"containerPort": 8080, "hostPort": 0}, 8080, id="hostnetwork-zero-hostport"),
        pytest.param(
            True, {"containerPort": 8080, "hostPort": 9090}, 9090, id="hostnetwork-explicit-hostport"
        ),
        pytest.param(False, {"containerPort": 8080}, 0, id="no-hostnetwork-no-hostport"),
        pytest.param(False, {"containerPort": 8080, "hostPort": 80}, 80, id="no-hostnetwork-explicit"),
    ],
)
@pytest.mark.parametrize("key", ["containers", "initContainers"])
def test_host_network_defaults_host_port(
    key: str, host_network: bool, port: dict[str, int], expected_host_port: int
) -> None:
    pod = pod_from_dict(pod_doc({"hostNetwork": host_network, key: [{"name": "c", "ports": [port]}]}))
    container = pod.containers[0] if key == "containers" else pod.init_containers[0]
    assert container.ports[0].host_port == expected_host_port


@pytest.mark.parametrize(
    ("port", "expected"),
    [
        pytest.param({"containerPort": 53}, "TCP", id="missing"),
        pytest.param({"containerPort": 53, "protocol": ""}, "TCP", id="empty"),
        pytest.param({"containerPort": 53, "protocol": "UDP"}, "UDP", id="udp"),
    ],
)
def test_port_protocol_default(port: dict[str, Any], expected: str) -> None:
    pod = pod_from_dict(pod_doc({"containers": [{"name": "c", "ports": [port]}]}))
    assert pod.containers[0].ports[0].protocol == expected


def test_missing_priority_stays_none_and_zero_stays_zero() -> None:
    assert pod_from_dict(pod_doc()).priority is None
    assert pod_from_dict(pod_doc({"priority": 0})).priority == 0


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        pytest.param({"key": "k", "value": "v"}, "Equal", id="missing"),
        pytest.param({"key": "k", "operator": ""}, "Equal", id="empty"),
        pytest.param({"operator": "Exists"}, "Exists", id="exists"),
    ],
)
def test_toleration_operator_default(toleration: dict[str, str], expected: str) -> None:
    assert pod_from_dict(pod_doc({"tolerations": [toleration]})).tolerations[0].operator == expected


def test_pod_status_defaults() -> None:
    pod = pod_from_dict(pod_doc())
    assert (pod.phase, pod.nominated_node_name, pod.start_time, pod.conditions) == ("Pending", "", None, ())


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({}, None, id="absent-is-none"),
        pytest.param({"nodeSelector": None}, None, id="null-is-none"),
        pytest.param({"nodeSelector": {}}, {}, id="empty-stays-empty"),
        pytest.param({"nodeSelector": {"disk": "ssd"}}, {"disk": "ssd"}, id="map"),
    ],
)
def test_node_selector_absent_versus_empty(spec: dict[str, Any], expected: dict[str, str] | None) -> None:
    assert pod_from_dict(pod_doc(spec)).node_selector == expected


def test_overhead_absent_versus_empty() -> None:
    assert pod_from_dict(pod_doc()).overhead is None
    assert pod_from_dict(pod_doc({"overhead": {}})).overhead == {}
    assert pod_from_dict(pod_doc({"overhead": {"cpu": "100m"}})).overhead == {"cpu": q("100m")}


def test_volume_without_source_is_empty_dir() -> None:
    (volume,) = pod_from_dict(pod_doc({"volumes": [{"name": "scratch"}]})).volumes
    assert volume == Volume("scratch", source_kind="emptyDir", source={})


def test_node_without_allocatable_has_capacity_allocatable() -> None:
    node = node_from_dict(node_doc(capacity={"cpu": "4", "pods": "110"}))
    assert node.allocatable == node.capacity == {"cpu": q("4"), "pods": q("110")}


def test_node_with_empty_allocatable_keeps_it_empty() -> None:
    node = node_from_dict(node_doc(capacity={"cpu": "4"}, allocatable={}))
    assert node.allocatable == {}


def test_namespace_gets_its_name_label() -> None:
    ns = namespace_from_dict({"kind": "Namespace", "metadata": {"name": "team-a", "labels": {"env": "prod"}}})
    assert ns == Namespace("team-a", {"env": "prod", "kubernetes.io/metadata.name": "team-a"})


def test_namespace_name_label_cannot_be_spoofed() -> None:
    labels = {"kubernetes.io/metadata.name": "other"}
    ns = namespace_from_dict({"kind": "Namespace", "metadata": {"name": "team-a", "labels": labels}})
    assert ns.labels == {"kubernetes.io/metadata.name": "team-a"}


# --- every field ---------------------------------------------------------------------------------

FULL_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-1",
        "namespace": "team-a",
        "uid": "uid-1",
        "labels": {"app": "web"},
        "annotations": {"note": "x"},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": "web",
                "uid": "rs-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "creationTimestamp": "2024-01-02T03:04:05Z",
        "deletionTimestamp": "2024-01-02T03:04:06.5+01:00",
        "resourceVersion": "ignored",
    },
    "spec": {
        "nodeName": "node-1",
        "schedulerName": "batch",
        "priority": 1000,
        "preemptionPolicy": "Never",
        "hostNetwork": True,
        "hostUsers": False,
        "containers": [
            {
                "name": "app",
                "image": "nginx:1.25",
                "restartPolicyRules": [{"action": "RestartAllContainers",
                                        "exitCodes": {"operator": "In", "values": [42]}}],
                "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"memory": "128Mi"}},
                "ports": [
                    {
                        "containerPort": 80,
                        "hostPort": 8080,
                        "protocol": "UDP",
                        "hostIP": "10.0.0.1",
                        "name": "http",
                    }
                ],
                "env": [{"name": "IGNORED", "value": "1"}],
            }
        ],
        "initContainers": [
            {
                "name": "sidecar",
                "image": "envoy",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "100m"}},
            }
        ],
        "overhead": {"cpu": "10m"},
        "nodeSelector": {"disk": "ssd"},
        "affinity": {
            "nodeAffinity": {
                REQUIRED: {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["4"]}],
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}],
                        }
                    ]
                },
                PREFERRED: [
                    {
                        "weight": 10,
                        "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]},
                    }
                ],
            },
            "podAffinity": {
                REQUIRED: [
                    {
                        "labelSelector": {"matchLabels": {"app": "db"}},
                        "namespaces": ["data"],
                        "namespaceSelector": {
                            "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}]
                        },
                        "topologyKey": "topology.kubernetes.io/zone",
                        "matchLabelKeys": ["pod-template-hash"],
                        "mismatchLabelKeys": ["tenant"],
                    }
                ],
            },
            "podAntiAffinity": {
                PREFERRED: [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
                            "topologyKey": "kubernetes.io/hostname",
                        },
                    }
                ],
            },
        },
        "tolerations": [
            {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "dedicated", "value": "x", "effect": "NoExecute", "tolerationSeconds": 30},
        ],
        "topologySpreadConstraints": [
            {
                "maxSkew": 2,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "web"}},
                "minDomains": 3,
                "nodeAffinityPolicy": "Honor",
                "nodeTaintsPolicy": "Ignore",
                "matchLabelKeys": ["pod-template-hash"],
            }
        ],
        "schedulingGates": [{"name": "example.com/wait"}],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "data-0", "readOnly": True}},
            {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {"storageClassName": "fast"}}}},
            {"name": "disk", "gcePersistentDisk": {"pdName": "pd-1"}},
        ],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"},
                           {"name": "shared", "resourceClaimName": "shared-claim"}],
        "resources": {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"memory": "2Gi"}},
    },
    "status": {
        "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "web-1-gpu-x7k2q"}],
        "extendedResourceClaimStatus": {"resourceClaimName": "web-1-extended-resources-4vq8m", "requestMappings": [
            {"containerName": "app", "resourceName": "example.com/gpu", "requestName": "container-1-request-2"}]},
        "containerStatuses": [
            {"name": "app", "resources": {"requests": {"cpu": "2"}}, "allocatedResources": {"cpu": "1500m"},
             "ready": True},
            {"name": "other", "ready": True},
        ],
        "initContainerStatuses": [{"name": "init", "resources": {"limits": {"cpu": "1"}}}],
        "resources": {"requests": {"cpu": "3"}},
        "allocatedResources": {"cpu": "2"},
        "phase": "Running",
        "conditions": [
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": "preempted",
                "lastTransitionTime": "2024-01-02T00:00:00Z",
            }
        ],
        "nominatedNodeName": "node-2",
        "startTime": "1970-01-01T00:00:01.000001Z",
        "hostIP": "ignored",
    },
}

EXPECTED_POD = Pod(
    name="web-1",
    namespace="team-a",
    uid="uid-1",
    labels={"app": "web"},
    annotations={"note": "x"},
    owner_references=(OwnerReference("ReplicaSet", "web", "rs-1", "apps/v1", controller=True),),
    node_name="node-1",
    scheduler_name="batch",
    priority=1000,
    preemption_policy="Never",
    containers=(
        Container(
            "app",
            image="nginx:1.25",
            requests={"cpu": q("250m"), "memory": q("64Mi")},
            limits={"memory": q("128Mi")},
            ports=(ContainerPort(80, host_port=8080, protocol="UDP", host_ip="10.0.0.1", name="http"),),
            restart_policy_rules=(ContainerRestartRule("RestartAllContainers", "In", (42,)),),
        ),
    ),
    init_containers=(
        Container("sidecar", image="envoy", requests={"cpu": q("100m")}, restart_policy="Always"),
    ),
    overhead={"cpu": q("10m")},
    node_selector={"disk": "ssd"},
    affinity=Affinity(
        node_affinity=NodeAffinity(
            required=NodeSelector(
                (
                    NodeSelectorTerm(
                        (NodeSelectorRequirement("cores", "Gt", ("4",)),),
                        (NodeSelectorRequirement("metadata.name", "In", ("node-1",)),),
                    ),
                )
            ),
            preferred=(
                PreferredSchedulingTerm(10, NodeSelectorTerm((NodeSelectorRequirement("zone", "Exists"),))),
            ),
        ),
        pod_affinity=PodAffinity(
            required=(
                PodAffinityTerm(
                    topology_key="topology.kubernetes.io/zone",
                    label_selector=LabelSelector({"app": "db"}),
                    namespaces=("data",),
                    namespace_selector=LabelSelector({}, (Requirement("env", "In", ("prod",)),)),
                    match_label_keys=("pod-template-hash",),
                    mismatch_label_keys=("tenant",),
                ),
            )
        ),
        pod_anti_affinity=PodAffinity(
            preferred=(
                WeightedPodAffinityTerm(
                    100,
                    PodAffinityTerm(
                        "kubernetes.io/hostname",
                        LabelSelector({}, (Requirement("app", "Exists"),)),
                    ),
                ),
            )
        ),
    ),
    tolerations=(
        Toleration("gpu", "Exists", effect="NoSchedule"),
        Toleration("dedicated", "Equal", "x", "NoExecute", toleration_seconds=30),
    ),
    topology_spread_constraints=(
        TopologySpreadConstraint(
            2,
            "topology.kubernetes.io/zone",
            "ScheduleAnyway",
            LabelSelector({"app": "web"}),
            min_domains=3,
            node_affinity_policy="Honor",
            node_taints_policy="Ignore",
            match_label_keys=("pod-template-hash",),
        ),
    ),
    scheduling_gates=("example.com/wait",),
    host_network=True,
    volumes=(
        Volume(
            "data",
            claim_name="data-0",
            read_only=True,
            source_kind="persistentVolumeClaim",
            source={"claimName": "data-0", "readOnly": True},
        ),
        Volume(
            "eph",
            ephemeral=True,
            source_kind="ephemeral",
            source={"volumeClaimTemplate": {"spec": {"storageClassName": "fast"}}},
        ),
        Volume("disk", source_kind="gcePersistentDisk", source={"pdName": "pd-1"}),
    ),
    resource_claims=(PodResourceClaim("gpu", resource_claim_template_name="gpu-template"),
                     PodResourceClaim("shared", resource_claim_name="shared-claim")),
    phase="Running",
    conditions=(PodCondition("DisruptionTarget", "True", "PreemptionByScheduler", "preempted"),),
    nominated_node_name="node-2",
    creation_timestamp=1704164645.0,
    start_time=1.000001,
    deletion_timestamp=1704164646.5 - 3600,
    pod_level_requests={"cpu": q("1"), "memory": q("2Gi")},
    pod_level_limits={"memory": q("2Gi")},
    container_statuses=(ContainerStatus("app", {"cpu": q("2")}, {"cpu": q("1500m")}),),
    init_container_statuses=(ContainerStatus("init", {}),),
    resource_claim_statuses=(("gpu", "web-1-gpu-x7k2q"),),
    extended_resource_claim_status=PodExtendedResourceClaimStatus("web-1-extended-resources-4vq8m", (
        ContainerExtendedResourceRequest("app", "example.com/gpu", "container-1-request-2"),)),
    host_users=False,
    pod_level_status_requests={"cpu": q("3")},
    pod_level_allocated={"cpu": q("2")},
)


def test_every_pod_field_is_read() -> None:
    assert pod_from_dict(FULL_POD) == EXPECTED_POD


@pytest.mark.parametrize("field", [f.name for f in Pod.__attrs_attrs__])
def test_every_pod_field_differs_from_its_default(field: str) -> None:
    """Guards the full-pod test: each field it checks is really read, not left at its default."""
    assert getattr(EXPECTED_POD, field) != getattr(Pod("x"), field)


def test_reading_does_not_keep_references_to_the_input_maps() -> None:
    doc = copy.deepcopy(FULL_POD)
    pod = pod_from_dict(doc)
    doc["metadata"]["labels"]["app"] = "changed"
    doc["spec"]["nodeSelector"]["disk"] = "hdd"
    doc["spec"]["volumes"][2]["gcePersistentDisk"]["pdName"] = "changed"
    doc["spec"]["volumes"][1]["ephemeral"]["volumeClaimTemplate"]["spec"]["storageClassName"] = "changed"
    doc["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "9"
    doc["metadata"]["annotations"]["note"] = "changed"
    assert pod == EXPECTED_POD


FULL_NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "node-1", "uid": "n-1", "labels": {"zone": "a"}, "annotations": {"a": "b"}},
    "spec": {
        "taints": [
            {"key": "gpu", "value": "true", "effect": "NoSchedule"},
            {"key": "spot", "effect": "PreferNoSchedule", "timeAdded": "2024-01-01T00:00:00Z"},
        ],
        "unschedulable": True,
    },
    "status": {
        "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "2"},
        "allocatable": {"cpu": "7500m", "memory": "30Gi", "pods": "110", "nvidia.com/gpu": "2"},
        "images": [{"names": ["nginx@sha256:abc", "nginx:1.25"], "sizeBytes": 187_000_000}],
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "MemoryPressure", "status": "False"}],
        "declaredFeatures": ["RestartAllContainersOnContainerExits"],
    },
}


def test_every_node_field_is_read() -> None:
    assert node_from_dict(FULL_NODE) == Node(
        name="node-1",
        labels={"zone": "a"},
        annotations={"a": "b"},
        taints=(Taint("gpu", "NoSchedule", "true"), Taint("spot", "PreferNoSchedule")),
        unschedulable=True,
        allocatable={"cpu": q("7.5"), "memory": q("30Gi"), "pods": q("110"), "nvidia.com/gpu": q("2")},
        capacity={"cpu": q("8"), "memory": q("32Gi"), "pods": q("110"), "nvidia.com/gpu": q("2")},
        images=(ContainerImage(("nginx@sha256:abc", "nginx:1.25"), 187_000_000),),
        conditions={"Ready": "True", "MemoryPressure": "False"},
        uid="n-1",
        declared_features=("RestartAllContainersOnContainerExits",),
    )


def test_pdb_fields() -> None:
    pdb = pdb_from_dict(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "team-a"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
            "status": {
                "disruptionsAllowed": 1,
                "disruptedPods": {"web-3": "2024-01-01T00:00:00Z"},
                "currentHealthy": 3,
            },
        }
    )
    assert pdb == PodDisruptionBudget("web", "team-a", LabelSelector({"app": "web"}), 1, frozenset({"web-3"}))


def test_pdb_defaults() -> None:
    pdb = pdb_from_dict({"kind": "PodDisruptionBudget", "metadata": {"name": "web"}})
    assert pdb == PodDisruptionBudget("web", "default", None, 0, frozenset())


def test_pdb_empty_selector_is_not_nil() -> None:
    pdb = pdb_from_dict(
        {"kind": "PodDisruptionBudget", "metadata": {"name": "web"}, "spec": {"selector": {}}}
    )
    assert pdb.selector == LabelSelector()


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        pytest.param(
            {"kind": "Service", "spec": {"selector": {"app": "web"}}},
            LabelSelector({"app": "web"}),
            id="service",
        ),
        pytest.param(
            {"kind": "Service", "spec": {"type": "ExternalName"}}, None, id="service-without-selector"
        ),
        pytest.param({"kind": "Service", "spec": {"selector": {}}}, None, id="service-empty-selector"),
        pytest.param({"kind": "Service"}, None, id="service-without-spec"),
        pytest.param(
            {"kind": "ReplicationController", "spec": {"selector": {"app": "web"}}},
            LabelSelector({"app": "web"}),
            id="rc",
        ),
        pytest.param(
            {
                "kind": "ReplicationController",
                "spec": {"template": {"metadata": {"labels": {"app": "tmpl"}}}},
            },
            LabelSelector({"app": "tmpl"}),
            id="rc-defaults-to-template-labels",
        ),
        pytest.param(
            {
                "kind": "ReplicationController",
                "spec": {"selector": {"app": "web"}, "template": {"metadata": {"labels": {"x": "y"}}}},
            },
            LabelSelector({"app": "web"}),
            id="rc-explicit-selector-wins",
        ),
        pytest.param({"kind": "ReplicationController"}, None, id="rc-without-selector-or-template"),
        pytest.param(
            {
                "kind": "ReplicaSet",
                "spec": {
                    "selector": {
                        "matchLabels": {"app": "web"},
                        "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
                    }
                },
            },
            LabelSelector({"app": "web"}, (Requirement("tier", "NotIn", ("db",)),)),
            id="replicaset",
        ),
        pytest.param(
            {"kind": "StatefulSet", "spec": {"selector": {"matchLabels": {"app": "db"}}}},
            LabelSelector({"app": "db"}),
            id="statefulset",
        ),
        pytest.param(
            {"kind": "StatefulSet", "spec": {"selector": {}}}, LabelSelector(), id="statefulset-empty"
        ),
        pytest.param({"kind": "ReplicaSet", "spec": {}}, None, id="replicaset-nil"),
    ],
)
def test_owner_selectors(doc: dict[str, Any], expected: LabelSelector | None) -> None:
    owner = owner_selector_from_dict({**doc, "metadata": {"name": "o", "namespace": "ns"}})
    assert owner == OwnerSelector(doc["kind"], "o", "ns", expected)


def test_owner_selector_rejects_other_kinds() -> None:
    with pytest.raises(ManifestError) as info:
        owner_selector_from_dict({"kind": "Deployment", "metadata": {"name": "d"}})
    assert (info.value.field, info.value.value) == ("kind", "Deployment")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("1970-01-01T00:00:00Z", 0.0, id="epoch"),
        pytest.param("2024-01-02T03:04:05Z", 1704164645.0, id="utc"),
        pytest.param("2024-01-02T04:04:05+01:00", 1704164645.0, id="offset"),
        pytest.param("2024-01-02T03:04:05.25Z", 1704164645.25, id="fraction"),
        pytest.param("2024-01-02T03:04:05.123456789Z", 1704164645.123456, id="nanoseconds-truncated"),
        pytest.param("2024-01-02T03:04:05", 1704164645.0, id="no-zone-is-utc"),
    ],
)
def test_timestamps(text: str, expected: float) -> None:
    assert pod_from_dict(pod_doc(creationTimestamp=text)).creation_timestamp == expected


def test_missing_times_are_none() -> None:
    pod = pod_from_dict(pod_doc())
    assert (pod.creation_timestamp, pod.deletion_timestamp, pod.start_time) == (None, None, None)


def test_unknown_fields_are_ignored() -> None:
    doc = pod_doc({"dnsPolicy": "ClusterFirst", "someFutureField": {"x": [1]}}, generation=3)
    doc["extra"] = 1
    assert pod_from_dict(doc) == pod_from_dict(pod_doc())


def test_null_reads_as_absent() -> None:
    doc = pod_doc({"tolerations": None, "affinity": None, "priority": None}, labels=None)
    doc["status"] = None
    assert pod_from_dict(doc) == pod_from_dict(pod_doc())


def test_affinity_parts_absent_versus_empty() -> None:
    assert pod_from_dict(pod_doc({"affinity": {}})).affinity == Affinity()
    pod = pod_from_dict(pod_doc({"affinity": {"nodeAffinity": {}, "podAntiAffinity": {}}}))
    assert pod.affinity == Affinity(node_affinity=NodeAffinity(), pod_anti_affinity=PodAffinity())


def test_pod_affinity_term_without_selector_is_nil() -> None:
    term = {"topologyKey": "zone"}
    pod = pod_from_dict(pod_doc({"affinity": {"podAffinity": {REQUIRED: [term]}}}))
    assert pod.affinity is not None
    assert pod.affinity.pod_affinity == PodAffinity(required=(PodAffinityTerm("zone"),))


def test_gt_with_non_integer_value_is_accepted_and_matches_nothing() -> None:
    """The API server accepts it (only the value count is validated); the term then matches no node."""
    term = {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["many"]}]}
    pod = pod_from_dict(pod_doc({"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [term]}}}}))
    assert pod.affinity is not None
    assert pod.affinity.node_affinity is not None
    required = pod.affinity.node_affinity.required
    assert required is not None
    assert not required.matches("n", {"cores": "8"})


def test_label_selector_from_dict() -> None:
    assert label_selector_from_dict(None) is None
    assert label_selector_from_dict({"matchLabels": {"a": "b"}}) == LabelSelector({"a": "b"})
    with pytest.raises(ManifestError) as info:
        label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})
    assert info.value.field == "matchExpressions[0].operator"


# --- malformed input -----------------------------------------------------------------------------


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """An edit setting the dotted ``path`` (list indexes as ``[i]`` segments) of a document."""

    def edit(doc: dict[str, Any]) -> None:
        target: Any = doc
        parts = path.replace("[", ".[").split(".")
        for part in parts[:-1]:
            target = target[int(part[1:-1])] if part.startswith("[") else target.setdefault(part, {})
        last = parts[-1]
        if last.startswith("["):
            target[int(last[1:-1])] = value
        else:
            target[last] = value

    return edit


def _container_with(**fields: Any) -> dict[str, Any]:
    return {"name": "c", **fields}


BAD_PODS = [
    pytest.param(
        "spec.containers",
        [_container_with(resources={"requests": {"cpu": "abc"}})],
        "spec.containers[0].resources.requests.cpu",
        "abc",
        id="bad-cpu-quantity",
    ),
    pytest.param(
        "spec.initContainers",
        [{"name": "i"}, _container_with(resources={"limits": {"memory": "1Zi"}})],
        "spec.initContainers[1].resources.limits.memory",
        "1Zi",
        id="bad-init-limit",
    ),
    pytest.param(
        "spec.containers",
        [_container_with(resources={"requests": {"cpu": True}})],
        "spec.containers[0].resources.requests.cpu",
        True,
        id="boolean-quantity",
    ),
    pytest.param(
        "spec.containers",
        [_container_with(resources={"requests": ["cpu"]})],
        "spec.containers[0].resources.requests",
        ["cpu"],
        id="requests-list",
    ),
    pytest.param("spec.overhead", {"cpu": "1.2.3"}, "spec.overhead.cpu", "1.2.3", id="bad-overhead"),
    pytest.param("metadata.labels", ["app"], "metadata.labels", ["app"], id="labels-list"),
    pytest.param("metadata.labels", {"version": 1.0}, "metadata.labels.version", 1.0, id="label-float"),
    pytest.param("metadata.annotations", "x", "metadata.annotations", "x", id="annotations-string"),
    pytest.param("metadata.uid", 7, "metadata.uid", 7, id="uid-int"),
    pytest.param(
        "metadata.ownerReferences",
        [{"kind": "ReplicaSet", "controller": "yes"}],
        "metadata.ownerReferences[0].controller",
        "yes",
        id="controller-string",
    ),
    pytest.param(
        "metadata.creationTimestamp", "yesterday", "metadata.creationTimestamp", "yesterday", id="bad-time"
    ),
    pytest.param("status.startTime", 12345, "status.startTime", 12345, id="time-number"),
    pytest.param("spec.priority", "high", "spec.priority", "high", id="priority-string"),
    pytest.param("spec.priority", True, "spec.priority", True, id="priority-bool"),
    pytest.param("spec.priority", 1.5, "spec.priority", 1.5, id="priority-float"),
    pytest.param("spec.nodeName", ["a"], "spec.nodeName", ["a"], id="node-name-list"),
    pytest.param("spec.hostNetwork", "true", "spec.hostNetwork", "true", id="host-network-string"),
    pytest.param("spec.containers", {"name": "c"}, "spec.containers", {"name": "c"}, id="containers-map"),
    pytest.param("spec.containers", ["c"], "spec.containers[0]", "c", id="container-string"),
    pytest.param(
        "spec.containers",
        [_container_with(ports=[{"containerPort": "80"}])],
        "spec.containers[0].ports[0].containerPort",
        "80",
        id="port-string",
    ),
    pytest.param(
        "spec.containers",
        [_container_with(ports=[{"hostPort": 80}])],
        "spec.containers[0].ports[0].containerPort",
        None,
        id="port-missing",
    ),
    pytest.param("spec.nodeSelector", ["disk"], "spec.nodeSelector", ["disk"], id="node-selector-list"),
    pytest.param(
        "spec.tolerations",
        [{"key": "k", "operator": "In"}],
        "spec.tolerations[0].operator",
        "In",
        id="toleration-operator",
    ),
    pytest.param(
        "spec.tolerations",
        [{"key": "k", "effect": "NoWay"}],
        "spec.tolerations[0].effect",
        "NoWay",
        id="toleration-effect",
    ),
    pytest.param(
        "spec.tolerations",
        [{"key": "k", "tolerationSeconds": "30"}],
        "spec.tolerations[0].tolerationSeconds",
        "30",
        id="toleration-seconds",
    ),
    pytest.param(
        "spec.topologySpreadConstraints[0].maxSkew",
        0,
        "spec.topologySpreadConstraints[0].maxSkew",
        0,
        id="max-skew-zero",
    ),
    pytest.param(
        "spec.topologySpreadConstraints[0].maxSkew",
        -1,
        "spec.topologySpreadConstraints[0].maxSkew",
        -1,
        id="max-skew-negative",
    ),
    pytest.param(
        "spec.topologySpreadConstraints[0].maxSkew",
        "1",
        "spec.topologySpreadConstraints[0].maxSkew",
        "1",
        id="max-skew-string",
    ),
    pytest.param(
        "spec.topologySpreadConstraints[0].whenUnsatisfiable",
        "Maybe",
        "spec.topologySpreadConstraints[0].whenUnsatisfiable",
        "Maybe",
        id="when-unsatisfiable",
    ),
    pytest.param(
        "spec.topologySpreadConstraints[0].whenUnsatisfiable",
        None,
        "spec.topologySpreadConstraints[0].whenUnsatisfiable",
        None,
        id="when-unsatisfiable-missing",
    ),
    pytest.param(
        "spec.topologySpreadConstraints[0].topologyKey",
        "",
        "spec.topologySpreadConstraints[0].topologyKey",
        None,
        id="topology-key-empty",
    ),
    pytest.param(
        "spec.topologySpreadConstraints[0].minDomains",
        0,
        "spec.topologySpreadConstraints[0].minDomains",
        0,
        id="min-domains-zero",
    ),
    pytest.param(
        "spec.topologySpreadConstraints[0].nodeTaintsPolicy",
        "Sometimes",
        "spec.topologySpreadConstraints[0].nodeTaintsPolicy",
        "Sometimes",
        id="taints-policy",
    ),
    pytest.param(
        "spec.topologySpreadConstraints[0].labelSelector",
        {"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]},
        "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator",
        "Gt",
        id="label-selector-node-operator",
    ),
    pytest.param(
        "spec.topologySpreadConstraints[0].labelSelector",
        {"matchExpressions": [{"key": "app", "operator": "In"}]},
        "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values",
        [],
        id="label-selector-in-without-values",
    ),
    pytest.param(
        "spec.topologySpreadConstraints[0].labelSelector",
        {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]},
        "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values",
        ["x"],
        id="label-selector-exists-with-values",
    ),
    pytest.param(
        f"spec.affinity.podAffinity.{REQUIRED}",
        [{"labelSelector": {}}],
        f"spec.affinity.podAffinity.{REQUIRED}[0].topologyKey",
        None,
        id="affinity-missing-topology-key",
    ),
    pytest.param(
        f"spec.affinity.podAntiAffinity.{PREFERRED}",
        [{"weight": 0, "podAffinityTerm": {"topologyKey": "zone"}}],
        f"spec.affinity.podAntiAffinity.{PREFERRED}[0].weight",
        0,
        id="weight-zero",
    ),
    pytest.param(
        f"spec.affinity.nodeAffinity.{PREFERRED}",
        [{"weight": 101, "preference": {}}],
        f"spec.affinity.nodeAffinity.{PREFERRED}[0].weight",
        101,
        id="weight-too-big",
    ),
    pytest.param(
        f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms",
        [{"matchExpressions": [{"key": "zone", "operator": "Like", "values": ["a"]}]}],
        f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms[0].matchExpressions[0].operator",
        "Like",
        id="node-operator",
    ),
    pytest.param(
        f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms",
        [{}, {"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["1", "2"]}]}],
        f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms[1].matchExpressions[0].values",
        ["1", "2"],
        id="node-gt-two-values",
    ),
    pytest.param(
        f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms",
        [{"matchExpressions": [{"key": "zone", "operator": "DoesNotExist", "values": ["a"]}]}],
        f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms[0].matchExpressions[0].values",
        ["a"],
        id="node-doesnotexist-with-values",
    ),
    pytest.param(
        f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms",
        [{"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["x"]}]}],
        f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms[0].matchFields[0].key",
        "metadata.uid",
        id="match-fields-key",
    ),
    pytest.param(
        f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms",
        [{"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}],
        f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms[0].matchFields[0].operator",
        "Exists",
        id="match-fields-operator",
    ),
    pytest.param("spec.affinity", [], "spec.affinity", [], id="affinity-list"),
    pytest.param(
        "spec.volumes",
        [{"name": "v", "emptyDir": {}, "hostPath": {"path": "/"}}],
        "spec.volumes[0]",
        ["emptyDir", "hostPath"],
        id="two-volume-sources",
    ),
    pytest.param(
        "spec.volumes",
        [{"name": "v", "persistentVolumeClaim": {}}],
        "spec.volumes[0].persistentVolumeClaim.claimName",
        None,
        id="claim-without-name",
    ),
    pytest.param(
        "spec.volumes",
        [{"name": "v", "persistentVolumeClaim": {"claimName": "c", "readOnly": "no"}}],
        "spec.volumes[0].persistentVolumeClaim.readOnly",
        "no",
        id="claim-read-only-string",
    ),
    pytest.param(
        "spec.volumes",
        [{"name": "v", "hostPath": "/tmp"}],
        "spec.volumes[0].hostPath",
        "/tmp",
        id="volume-source-string",
    ),
    pytest.param(
        "spec.schedulingGates", [{"nam": "x"}], "spec.schedulingGates[0].name", None, id="gate-name"
    ),
    pytest.param("spec.schedulingGates", ["x"], "spec.schedulingGates[0]", "x", id="gate-string"),
    pytest.param("status.conditions", [{"type": 1}], "status.conditions[0].type", 1, id="condition-type"),
    pytest.param("spec", [], "spec", [], id="spec-list"),
]


@pytest.mark.parametrize(("path", "value", "field", "bad"), BAD_PODS)
def test_malformed_pod_names_object_field_and_value(path: str, value: Any, field: str, bad: Any) -> None:
    doc = pod_doc(
        {
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
            ]
        },
        namespace="team-a",
    )
    _set(path, value)(doc)
    with pytest.raises(ManifestError) as info:
        pod_from_dict(doc)
    assert (info.value.obj, info.value.field, info.value.value) == ("Pod team-a/web-1", field, bad)
    assert "Pod team-a/web-1" in str(info.value)
    assert field in str(info.value)


def test_bad_quantity_keeps_the_kubernetes_message() -> None:
    doc = pod_doc({"containers": [_container_with(resources={"requests": {"cpu": "abc"}})]})
    with pytest.raises(QuantityError, match=r"quantities must match the regular expression") as info:
        pod_from_dict(doc)
    assert isinstance(info.value, ManifestError)
    assert isinstance(info.value.__cause__, QuantityError)


@pytest.mark.parametrize(
    ("doc", "obj", "field", "bad"),
    [
        pytest.param({"kind": "Pod"}, "Pod", "metadata.name", None, id="pod-without-metadata"),
        pytest.param(
            {"kind": "Pod", "metadata": {"namespace": "x"}},
            "Pod",
            "metadata.name",
            None,
            id="pod-without-name",
        ),
        pytest.param(
            {"kind": "Pod", "metadata": {"name": ""}}, "Pod", "metadata.name", None, id="pod-empty-name"
        ),
        pytest.param({"kind": "Pod", "metadata": {"name": 5}}, "Pod", "metadata.name", 5, id="pod-name-int"),
        pytest.param({"kind": "Pod", "metadata": "web"}, "Pod", "metadata", "web", id="metadata-string"),
        pytest.param({"kind": "Node"}, "Node", "metadata.name", None, id="node-without-name"),
        pytest.param(
            {"kind": "Namespace", "metadata": {}},
            "Namespace",
            "metadata.name",
            None,
            id="namespace-without-name",
        ),
    ],
)
def test_missing_name(doc: dict[str, Any], obj: str, field: str, bad: Any) -> None:
    with pytest.raises(ManifestError) as info:
        object_from_dict(doc)
    assert (info.value.obj, info.value.field, info.value.value) == (obj, field, bad)


BAD_OTHERS = [
    pytest.param(
        node_doc(allocatable={"cpu": "1x"}),
        "Node node-1",
        "status.allocatable.cpu",
        "1x",
        id="node-allocatable",
    ),
    pytest.param(
        node_doc(capacity={"memory": -1.5j}),
        "Node node-1",
        "status.capacity.memory",
        -1.5j,
        id="node-capacity-complex",
    ),
    pytest.param(
        node_doc(images=[{"names": ["a"], "sizeBytes": "big"}]),
        "Node node-1",
        "status.images[0].sizeBytes",
        "big",
        id="node-image-size",
    ),
    pytest.param(
        node_doc(images=[{"names": "a"}]),
        "Node node-1",
        "status.images[0].names",
        "a",
        id="node-image-names-string",
    ),
    pytest.param(
        node_doc(conditions=[{"status": "True"}]),
        "Node node-1",
        "status.conditions[0].type",
        None,
        id="node-condition-type",
    ),
    pytest.param(
        {**node_doc(), "spec": {"taints": [{"key": "k", "effect": "NoWay"}]}},
        "Node node-1",
        "spec.taints[0].effect",
        "NoWay",
        id="taint-effect",
    ),
    pytest.param(
        {**node_doc(), "spec": {"taints": [{"key": "k"}]}},
        "Node node-1",
        "spec.taints[0].effect",
        None,
        id="taint-without-effect",
    ),
    pytest.param(
        {**node_doc(), "spec": {"taints": [{"effect": "NoSchedule"}]}},
        "Node node-1",
        "spec.taints[0].key",
        None,
        id="taint-without-key",
    ),
    pytest.param(
        {**node_doc(), "spec": {"unschedulable": "yes"}},
        "Node node-1",
        "spec.unschedulable",
        "yes",
        id="unschedulable-string",
    ),
    pytest.param(
        {"kind": "Namespace", "metadata": {"name": "a", "labels": {"x": ["y"]}}},
        "Namespace a",
        "metadata.labels.x",
        ["y"],
        id="namespace-label",
    ),
    pytest.param(
        {"kind": "PodDisruptionBudget", "metadata": {"name": "p"}, "status": {"disruptionsAllowed": "1"}},
        "PodDisruptionBudget default/p",
        "status.disruptionsAllowed",
        "1",
        id="pdb-allowed",
    ),
    pytest.param(
        {"kind": "PodDisruptionBudget", "metadata": {"name": "p"}, "status": {"disruptedPods": ["a"]}},
        "PodDisruptionBudget default/p",
        "status.disruptedPods",
        ["a"],
        id="pdb-disrupted-list",
    ),
    pytest.param(
        {
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "p"},
            "spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Nope"}]}},
        },
        "PodDisruptionBudget default/p",
        "spec.selector.matchExpressions[0].operator",
        "Nope",
        id="pdb-selector-operator",
    ),
    pytest.param(
        {"kind": "Service", "metadata": {"name": "s", "namespace": "x"}, "spec": {"selector": ["a"]}},
        "Service x/s",
        "spec.selector",
        ["a"],
        id="service-selector-list",
    ),
    pytest.param(
        {"kind": "ReplicaSet", "metadata": {"name": "r"}, "spec": {"selector": {"matchLabels": "a"}}},
        "ReplicaSet default/r",
        "spec.selector.matchLabels",
        "a",
        id="replicaset-match-labels",
    ),
]


@pytest.mark.parametrize(("doc", "obj", "field", "bad"), BAD_OTHERS)
def test_malformed_objects_name_object_field_and_value(
    doc: dict[str, Any], obj: str, field: str, bad: Any
) -> None:
    with pytest.raises(ManifestError) as info:
        object_from_dict(doc)
    assert (info.value.obj, info.value.field, info.value.value) == (obj, field, bad)


@pytest.mark.parametrize("reader", [pod_from_dict, node_from_dict, namespace_from_dict, pdb_from_dict])
def test_reader_rejects_another_kind(reader: Callable[[Any], object]) -> None:
    with pytest.raises(ManifestError) as info:
        reader({"kind": "ConfigMap", "metadata": {"name": "x"}})
    assert (info.value.field, info.value.value) == ("kind", "ConfigMap")


def test_readers_accept_objects_without_kind() -> None:
    """The scale/ sample files omit apiVersion/kind for nodes and bound pods."""
    assert node_from_dict({"metadata": {"name": "n"}}) == Node("n")
    assert pod_from_dict({"metadata": {"name": "p"}}) == Pod("p")


def test_manifest_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"metadata\.name"):
        pod_from_dict({"kind": "Pod"})


@pytest.mark.parametrize("reader", [pod_from_dict, node_from_dict, namespace_from_dict, pdb_from_dict])
def test_non_mapping_object_is_rejected(reader: Callable[[Any], object]) -> None:
    with pytest.raises(ManifestError, match="must be an object"):
        reader(["not", "an", "object"])


# --- documents -----------------------------------------------------------------------------------

NS = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}
POD = pod_doc()
PV = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}}  # a kind the model does not hold


def test_object_from_dict_dispatches_on_kind() -> None:
    assert isinstance(object_from_dict(POD), Pod)
    assert isinstance(object_from_dict(NODE), Node)
    assert isinstance(object_from_dict(NS), Namespace)
    assert isinstance(
        object_from_dict({"kind": "PodDisruptionBudget", "metadata": {"name": "p"}}), PodDisruptionBudget
    )
    for kind in ("Service", "ReplicaSet", "StatefulSet", "ReplicationController"):
        owner = object_from_dict({"kind": kind, "metadata": {"name": "o"}})
        assert isinstance(owner, OwnerSelector)
        assert owner.kind == kind


@pytest.mark.parametrize("kind", ["ConfigMap", "Secret", "Deployment", "SomethingNew"])
def test_other_kinds_are_ignored(kind: str) -> None:
    assert object_from_dict({"kind": kind, "metadata": {"name": "x"}, "spec": "anything"}) is None


@pytest.mark.parametrize("doc", [{"metadata": {"name": "x"}}, {"kind": "", "metadata": {}}, {"kind": 3}])
def test_object_without_kind_is_an_error(doc: dict[str, Any]) -> None:
    with pytest.raises(ManifestError) as info:
        object_from_dict(doc)
    assert info.value.field == "kind"


@pytest.mark.parametrize(
    ("doc", "expected_kinds"),
    [
        pytest.param(POD, ["Pod"], id="single-object"),
        pytest.param(PV, [], id="single-ignored-object"),
        pytest.param(None, [], id="empty-yaml-document"),
        pytest.param([], [], id="empty-array"),
        pytest.param([NS, NODE, PV, POD], ["Namespace", "Node", "Pod"], id="array"),
        pytest.param({"apiVersion": "v1", "kind": "List", "items": [NODE, POD]}, ["Node", "Pod"], id="list"),
        pytest.param({"kind": "PodList", "items": [POD, POD]}, ["Pod", "Pod"], id="pod-list"),
        pytest.param({"kind": "List"}, [], id="list-without-items"),
        pytest.param(
            {"kind": "List", "items": [{"kind": "NodeList", "items": [NODE]}, [NS, [POD]], PV]},
            ["Node", "Namespace", "Pod"],
            id="nested",
        ),
    ],
)
def test_objects_from_document(doc: Any, expected_kinds: list[str]) -> None:
    assert [type(o).__name__ for o in objects_from_document(doc)] == expected_kinds


def test_document_preserves_order_and_content() -> None:
    objects = objects_from_document({"kind": "List", "items": [FULL_POD, FULL_NODE]})
    assert objects == [EXPECTED_POD, node_from_dict(FULL_NODE)]


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param("a string", id="string"),
        pytest.param(42, id="number"),
        pytest.param([NODE, "x"], id="string-in-array"),
        pytest.param({"kind": "List", "items": {"a": NODE}}, id="items-map"),
    ],
)
def test_malformed_documents(doc: Any) -> None:
    with pytest.raises(ManifestError):
        objects_from_document(doc)


def test_error_inside_a_list_names_the_object() -> None:
    bad = pod_doc({"priority": "high"}, name="bad")
    with pytest.raises(ManifestError) as info:
        objects_from_document({"kind": "List", "items": [POD, bad]})
    assert (info.value.obj, info.value.field) == ("Pod default/bad", "spec.priority")


# --- writing -------------------------------------------------------------------------------------


def test_pod_to_dict_omits_defaults_and_empties() -> None:
    assert pod_to_dict(pod_from_dict(pod_doc())) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "default"},
        "spec": {"containers": [{"name": "c"}]},
        "status": {"phase": "Pending"},
    }


def test_pod_to_dict_writes_the_v1_shape() -> None:
    written = pod_to_dict(EXPECTED_POD)
    assert written["metadata"]["creationTimestamp"] == "2024-01-02T03:04:05Z"
    assert written["metadata"]["deletionTimestamp"] == "2024-01-02T02:04:06.500000Z"
    assert written["status"]["startTime"] == "1970-01-01T00:00:01.000001Z"
    assert written["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "250m", "memory": "64Mi"},
        "limits": {"memory": "128Mi"},
    }
    assert written["spec"]["containers"][0]["ports"] == [
        {"containerPort": 80, "hostPort": 8080, "protocol": "UDP", "hostIP": "10.0.0.1", "name": "http"}
    ]
    assert written["spec"]["tolerations"][1] == {
        "key": "dedicated",
        "value": "x",
        "effect": "NoExecute",
        "tolerationSeconds": 30,
    }
    assert written["spec"]["volumes"][0] == {
        "name": "data",
        "persistentVolumeClaim": {"claimName": "data-0", "readOnly": True},
    }
    assert written["spec"]["affinity"]["nodeAffinity"][REQUIRED]["nodeSelectorTerms"][0]["matchFields"] == [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}
    ]


def test_node_to_dict() -> None:
    assert node_to_dict(node_from_dict(FULL_NODE)) == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-1", "labels": {"zone": "a"}, "uid": "n-1", "annotations": {"a": "b"}},
        "spec": {
            "taints": [
                {"key": "gpu", "value": "true", "effect": "NoSchedule"},
                {"key": "spot", "effect": "PreferNoSchedule"},
            ],
            "unschedulable": True,
        },
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "2"},
            "allocatable": {"cpu": "7500m", "memory": "30Gi", "pods": "110", "nvidia.com/gpu": "2"},
            "images": [{"names": ["nginx@sha256:abc", "nginx:1.25"], "sizeBytes": 187_000_000}],
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "MemoryPressure", "status": "False"},
            ],
            "declaredFeatures": ["RestartAllContainersOnContainerExits"],
        },
    }


def test_hand_built_claim_volume_is_written_as_a_claim() -> None:
    pod = Pod("p", volumes=(Volume("v", claim_name="c", read_only=True), Volume("e", ephemeral=True)))
    volumes = pod_to_dict(pod)["spec"]["volumes"]
    assert volumes == [
        {"name": "v", "persistentVolumeClaim": {"claimName": "c", "readOnly": True}},
        {"name": "e", "ephemeral": {}},
    ]


def test_map_selector_owner_with_expressions_cannot_be_written() -> None:
    owner = OwnerSelector("Service", "s", selector=LabelSelector({}, (Requirement("a", "Exists"),)))
    with pytest.raises(ManifestError) as info:
        owner_selector_to_dict(owner)
    assert (info.value.obj, info.value.field) == ("Service default/s", "spec.selector")


def test_unknown_owner_kind_cannot_be_written() -> None:
    with pytest.raises(ManifestError):
        owner_selector_to_dict(OwnerSelector("Deployment", "d"))


def test_label_selector_to_dict() -> None:
    selector = LabelSelector({"a": "b"}, (Requirement("c", "Exists"), Requirement("d", "In", ("x", "y"))))
    assert label_selector_to_dict(selector) == {
        "matchLabels": {"a": "b"},
        "matchExpressions": [
            {"key": "c", "operator": "Exists"},
            {"key": "d", "operator": "In", "values": ["x", "y"]},
        ],
    }
    assert label_selector_to_dict(LabelSelector()) == {}


# --- round trips ---------------------------------------------------------------------------------

names = st.text(alphabet="abcxyz0-", min_size=1, max_size=6).filter(lambda s: s[0] != "-")
keys = st.sampled_from(["app", "tier", "zone", "example.com/pool", "kubernetes.io/hostname"])
label_maps = st.dictionaries(keys, names, max_size=3)
free_text = st.text(max_size=8)
quantities = st.sampled_from(
    ["0", "100m", "1", "1.5", "250m", "2Gi", "1536Mi", "500M", "1e3", "0.5", "3k", "1n", "12345678901"]
).map(parse_quantity)
resource_lists = st.dictionaries(
    st.sampled_from(["cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu", "hugepages-2Mi"]),
    quantities,
    max_size=3,
)
times = st.none() | st.integers(-(10**15), 4 * 10**15).map(lambda us: us / 10**6)
effects = st.sampled_from(["NoSchedule", "PreferNoSchedule", "NoExecute"])

label_requirements = st.one_of(
    st.builds(
        Requirement,
        keys,
        st.sampled_from(["In", "NotIn"]),
        st.lists(names, min_size=1, max_size=3).map(tuple),
    ),
    st.builds(Requirement, keys, st.sampled_from(["Exists", "DoesNotExist"])),
)
label_selectors = st.builds(LabelSelector, label_maps, st.lists(label_requirements, max_size=2).map(tuple))
optional_selectors = st.none() | label_selectors

node_expressions = st.one_of(
    st.builds(
        NodeSelectorRequirement,
        keys,
        st.sampled_from(["In", "NotIn"]),
        st.lists(names, min_size=1, max_size=2).map(tuple),
    ),
    st.builds(NodeSelectorRequirement, keys, st.sampled_from(["Exists", "DoesNotExist"])),
    st.builds(
        NodeSelectorRequirement,
        keys,
        st.sampled_from(["Gt", "Lt"]),
        st.tuples(st.integers(-5, 50).map(str) | names),
    ),
)
node_fields = st.builds(
    NodeSelectorRequirement, st.just("metadata.name"), st.sampled_from(["In", "NotIn"]), st.tuples(names)
)
node_terms = st.builds(
    NodeSelectorTerm,
    st.lists(node_expressions, max_size=2).map(tuple),
    st.lists(node_fields, max_size=1).map(tuple),
)
node_affinities = st.builds(
    NodeAffinity,
    st.none() | st.builds(NodeSelector, st.lists(node_terms, max_size=2).map(tuple)),
    st.lists(st.builds(PreferredSchedulingTerm, st.integers(1, 100), node_terms), max_size=2).map(tuple),
)
pod_affinity_terms = st.builds(
    PodAffinityTerm,
    keys,
    optional_selectors,
    st.lists(names, max_size=2).map(tuple),
    optional_selectors,
    st.lists(keys, max_size=2).map(tuple),
    st.lists(keys, max_size=2).map(tuple),
)
pod_affinities = st.builds(
    PodAffinity,
    st.lists(pod_affinity_terms, max_size=2).map(tuple),
    st.lists(st.builds(WeightedPodAffinityTerm, st.integers(1, 100), pod_affinity_terms), max_size=2).map(
        tuple
    ),
)
affinities = st.builds(
    Affinity, st.none() | node_affinities, st.none() | pod_affinities, st.none() | pod_affinities
)
tolerations = st.builds(
    Toleration,
    st.just("") | keys,
    st.sampled_from(["Equal", "Exists"]),
    st.just("") | names,
    st.just("") | effects,
    st.none() | st.integers(0, 3600),
)
spread_constraints = st.builds(
    TopologySpreadConstraint,
    st.integers(1, 5),
    keys,
    st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]),
    optional_selectors,
    st.none() | st.integers(1, 5),
    st.none() | st.sampled_from(["Honor", "Ignore"]),
    st.none() | st.sampled_from(["Honor", "Ignore"]),
    st.lists(keys, max_size=2).map(tuple),
)
owner_references = st.builds(
    OwnerReference,
    st.sampled_from(["ReplicaSet", "StatefulSet", "Job"]),
    names,
    st.just("") | names,
    st.sampled_from(["", "apps/v1", "batch/v1"]),
    st.booleans(),
)
conditions = st.builds(
    PodCondition,
    st.sampled_from(["Ready", "DisruptionTarget"]),
    st.sampled_from(["True", "False"]),
    free_text,
    free_text,
)


@st.composite
def volumes(draw: st.DrawFn) -> Volume:
    name = draw(names)
    kind = draw(st.sampled_from(["claim", "claim-read-only", "ephemeral", "gcePersistentDisk", "emptyDir"]))
    if kind.startswith("claim"):
        claim = draw(names)
        source: dict[str, object] = {"claimName": claim}
        read_only = kind == "claim-read-only"
        if read_only or draw(st.booleans()):
            source["readOnly"] = read_only
        return Volume(
            name, claim_name=claim, read_only=read_only, source_kind="persistentVolumeClaim", source=source
        )
    if kind == "ephemeral":
        template = {"volumeClaimTemplate": {"spec": {"storageClassName": draw(names)}}}
        return Volume(name, ephemeral=True, source_kind="ephemeral", source=template)
    if kind == "emptyDir":
        return Volume(name, source_kind="emptyDir", source={})
    return Volume(name, source_kind=kind, source={"pdName": draw(names), "fsType": "ext4"})


container_amounts = st.dictionaries(
    st.sampled_from(["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "hugepages-2Mi"]), quantities, max_size=3)


def admissible(requests: dict[str, Quantity], limits: dict[str, Quantity]) -> tuple[dict[str, Quantity],
                                                                                   dict[str, Quantity]]:
    """Container resources the API server admits: extended resources and hugepages whole (pages), limited,
    with request = limit; other requests at most their limit; hugepages beside cpu or memory."""
    pages = {name: parse_quantity(f"{2 * (1 + q.value() % 4)}Mi") for name, q in {**requests, **limits}.items()
             if name == "hugepages-2Mi"}
    whole = {name: parse_quantity(str(q.value() % 8)) for name, q in {**requests, **limits}.items()
             if name == "nvidia.com/gpu"}
    fixed = {**pages, **whole}
    limits = {**limits, **fixed}
    requests = {name: min(q, limits[name]) if name in limits else q for name, q in requests.items()
                if name not in fixed}
    if pages and not {"cpu", "memory"} & {*requests, *limits}:
        requests["cpu"] = parse_quantity("100m")
    return {**limits, **requests}, limits


@st.composite
def containers(draw: st.DrawFn, host_network: bool) -> Container:
    """A container as read and admitted: every limited resource is also requested (API-server default),
    within the API server's rules (:func:`admissible`)."""
    requests, limits = admissible(draw(container_amounts), draw(container_amounts))
    ports = []
    for port in draw(
        st.lists(
            st.builds(
                ContainerPort,
                st.integers(1, 65535),
                st.integers(0, 65535),
                st.sampled_from(["TCP", "UDP", "SCTP"]),
                st.sampled_from(["", "127.0.0.1"]),
                st.just("") | names,
            ),
            max_size=2,
        )
    ):
        if host_network and not port.host_port:
            port = ContainerPort(
                port.container_port, port.container_port, port.protocol, port.host_ip, port.name
            )
        ports.append(port)
    return Container(
        name=draw(names),
        image=draw(st.sampled_from(["", "nginx", "registry.k8s.io/pause:3.9"])),
        requests=requests,
        limits=limits,
        ports=tuple(ports),
        restart_policy=draw(st.sampled_from([None, "Always"])),
    )


@st.composite
def pods(draw: st.DrawFn) -> Pod:
    """A pod as read (defaults applied), covering every field."""
    host_network = draw(st.booleans())
    return Pod(
        name=draw(names),
        namespace=draw(names),
        uid=draw(st.just("") | names),
        labels=draw(label_maps),
        annotations=draw(st.dictionaries(names, free_text, max_size=2)),
        owner_references=tuple(draw(st.lists(owner_references, max_size=2))),
        node_name=draw(st.just("") | names),
        scheduler_name=draw(st.sampled_from(["default-scheduler", "batch"])),
        priority=draw(st.none() | st.integers(-(2**31), 2**31 - 1)),
        preemption_policy=draw(st.sampled_from([None, "Never", "PreemptLowerPriority"])),
        containers=tuple(draw(st.lists(containers(host_network), max_size=2))),
        init_containers=tuple(draw(st.lists(containers(host_network), max_size=2))),
        overhead=draw(st.none() | resource_lists),
        node_selector=draw(st.none() | label_maps),
        affinity=draw(st.none() | affinities),
        tolerations=tuple(draw(st.lists(tolerations, max_size=2))),
        topology_spread_constraints=tuple(draw(st.lists(spread_constraints, max_size=2))),
        scheduling_gates=tuple(draw(st.lists(names, max_size=2))),
        host_network=host_network,
        volumes=tuple(draw(st.lists(volumes(), max_size=3))),
        phase=draw(st.sampled_from(["Pending", "Running", "Succeeded", "Failed"])),
        conditions=tuple(draw(st.lists(conditions, max_size=2))),
        nominated_node_name=draw(st.just("") | names),
        creation_timestamp=draw(times),
        start_time=draw(times),
        deletion_timestamp=draw(times),
    )


nodes = st.builds(
    Node,
    names,
    label_maps,
    st.dictionaries(names, free_text, max_size=2),
    st.lists(st.builds(Taint, keys, effects, st.just("") | names), max_size=3).map(tuple),
    st.booleans(),
    resource_lists,
    resource_lists,
    st.lists(
        st.builds(ContainerImage, st.lists(names, max_size=2).map(tuple), st.integers(0, 10**10)), max_size=2
    ).map(tuple),
    st.dictionaries(
        st.sampled_from(["Ready", "DiskPressure"]), st.sampled_from(["True", "False", "Unknown"])
    ),
    st.just("") | names,
)
namespaces = st.builds(
    lambda name, labels: Namespace(name, {**labels, "kubernetes.io/metadata.name": name}), names, label_maps
)
pdbs = st.builds(
    PodDisruptionBudget,
    names,
    names,
    optional_selectors,
    st.integers(0, 10),
    st.frozensets(names, max_size=3),
)
owners = st.one_of(
    st.builds(
        OwnerSelector,
        st.sampled_from(["Service", "ReplicationController"]),
        names,
        names,
        st.none() | st.builds(LabelSelector, st.dictionaries(keys, names, min_size=1, max_size=3)),
    ),
    st.builds(
        OwnerSelector, st.sampled_from(["ReplicaSet", "StatefulSet"]), names, names, optional_selectors
    ),
)


def _through_json(doc: dict[str, Any]) -> dict[str, Any]:
    """The document as it would come back from a file: only JSON types survive."""
    result: dict[str, Any] = json.loads(json.dumps(doc))
    return result


@settings(max_examples=200)
@given(pods())
def test_pod_round_trip(pod: Pod) -> None:
    assert pod_from_dict(_through_json(pod_to_dict(pod))) == pod


@given(nodes)
def test_node_round_trip(node: Node) -> None:
    assert node_from_dict(_through_json(node_to_dict(node))) == node


@given(namespaces)
def test_namespace_round_trip(namespace: Namespace) -> None:
    assert namespace_from_dict(_through_json(namespace_to_dict(namespace))) == namespace


@given(pdbs)
def test_pdb_round_trip(pdb: PodDisruptionBudget) -> None:
    assert pdb_from_dict(_through_json(pdb_to_dict(pdb))) == pdb


@given(owners)
def test_owner_selector_round_trip(owner: OwnerSelector) -> None:
    assert owner_selector_from_dict(_through_json(owner_selector_to_dict(owner))) == owner


@given(st.one_of(pods(), nodes, namespaces, pdbs, owners))
def test_object_round_trip_through_dispatch(obj: Any) -> None:
    assert objects_from_document([_through_json(object_to_dict(obj))]) == [obj]


@given(st.integers(-62_135_596_800 * 10**6, 253_370_764_800 * 10**6))
@example(236_115_422_575_581_347)  # seconds * 10**6 in floats would be 16 µs off here
def test_times_round_trip_from_year_1_to_9998(micros: int) -> None:
    """Lossless even where a float no longer holds every microsecond (far from 1970)."""
    seconds = micros / 10**6
    assert pod_from_dict(pod_to_dict(Pod("p", start_time=seconds))).start_time == seconds


@given(st.floats(-62_135_596_800, 253_370_764_800))
def test_any_float_time_is_written_to_the_nearest_microsecond(seconds: float) -> None:
    text = pod_to_dict(Pod("p", start_time=seconds))["status"]["startTime"]
    read = pod_from_dict(pod_to_dict(Pod("p", start_time=seconds))).start_time
    assert read is not None
    assert abs(read - seconds) <= 0.5e-6 + abs(seconds) * 2**-52, text


def test_full_pod_round_trip() -> None:
    assert pod_from_dict(pod_to_dict(EXPECTED_POD)) == EXPECTED_POD


def test_writing_is_stable() -> None:
    written = pod_to_dict(EXPECTED_POD)
    assert pod_to_dict(pod_from_dict(written)) == written


# --- the conformance sample ----------------------------------------------------------------------


def _sample_objects() -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(SAMPLES.glob("*.json")):
        scenario = json.loads(path.read_text())["scenario"]
        for key in ("nodes", "pods", "namespaces", "objects"):
            found.extend((f"{path.stem}:{key}[{i}]", obj) for i, obj in enumerate(scenario.get(key, [])))
        if "pod" in scenario:
            found.append((f"{path.stem}:pod", scenario["pod"]))
    return found


@pytest.mark.skipif(not SAMPLES.exists(), reason="conformance sample not available")
def test_every_sample_object_loads_and_round_trips() -> None:
    objects = _sample_objects()
    assert len(objects) > 1000
    kinds = set()
    for where, doc in objects:
        obj = object_from_dict(admitted(doc) if doc["kind"] == "Pod" else doc)  # the oracle's pods, admitted
        if doc["kind"] in ("Node", "Pod", "Namespace", "PodDisruptionBudget"):
            assert obj is not None, where
        if obj is not None:
            kinds.add(type(obj).__name__)
            assert object_from_dict(_through_json(object_to_dict(obj))) == obj, where
    assert kinds == {"Node", "Pod", "Namespace", "PodDisruptionBudget", "PersistentVolume", "PersistentVolumeClaim",
                     "StorageClass", "CSINode"}


@pytest.mark.skipif(not SAMPLES.exists(), reason="conformance sample not available")
def test_sample_host_network_pod_is_defaulted() -> None:
    scenario = json.loads((SAMPLES / "gap-hostnetwork-pending-defaulted.json").read_text())["scenario"]
    pod = pod_from_dict(scenario["pod"])
    assert pod.host_network
    assert [(p.container_port, p.host_port, p.protocol) for c in pod.containers for p in c.ports] == [
        (8080, 8080, "TCP")
    ]
