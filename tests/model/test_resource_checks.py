"""Resource requirements are refused as a real kube-apiserver v1.36.3 refuses them, in its words
(cases and answers recorded in ``tests/data/apiserver/resource-requirements.json``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kschedlib import ManifestError, load_cluster
from kschedlib.model.convert import pod_from_dict

CASES: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "apiserver" / "resource-requirements.json").read_text())


def api_errors(message: str) -> list[str]:
    """The errors of one refusal (``Pod "x" is invalid: [a, b]``), each ``field: Type: detail``."""
    body = message.split(" is invalid: ", 1)[1]
    if not body.startswith("["):
        return [body]
    return [part.strip() for part in re.split(r", (?=spec\.)", body[1:-1])]


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case["status"] != 201])
def test_refused_with_one_of_the_api_servers_errors(name: str) -> None:
    case = CASES[name]
    with pytest.raises(ManifestError) as caught:
        pod_from_dict(case["pod"])
    assert caught.value.obj == f"Pod default/{name}"
    assert f"{caught.value.field}: {caught.value.message}" in api_errors(case["message"])


@pytest.mark.parametrize("name", [n for n, case in CASES.items() if case["status"] == 201])
def test_admitted_as_the_api_server_admits(name: str) -> None:
    case = CASES[name]
    container = pod_from_dict(case["pod"]).containers[0]
    admitted = case["resources"]
    assert {k: str(v) for k, v in container.requests.items()} == admitted.get("requests", {})
    assert {k: str(v) for k, v in container.limits.items()} == admitted.get("limits", {})


def test_the_tutorial_gpu_pod_without_a_limit_names_the_fix() -> None:
    """Regression: a pod asking for a GPU with no limit loaded (and was scheduled); the API server refuses it."""
    resources: dict[str, Any] = {"requests": {"cpu": "2", "nvidia.com/gpu": "1"}}
    trainer = {"kind": "Pod", "metadata": {"name": "trainer"},
               "spec": {"containers": [{"name": "main", "resources": resources}]}}
    with pytest.raises(ManifestError, match=re.escape(
            "Pod default/trainer, field spec.containers[0].resources.limits: Required value: "
            "Limit must be set for non overcommitable resources")):
        load_cluster([trainer])
    resources["limits"] = {"nvidia.com/gpu": "1"}
    assert str(load_cluster([trainer]).pods[0].containers[0].requests["nvidia.com/gpu"]) == "1"
