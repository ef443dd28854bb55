"""The DRA objects of ``tests/dra/data/admission_v136.yaml`` sent to the real kube-apiserver v1.36.3 (dry
run): it still answers what was recorded, which is what kschedlib's own admission checks answer."""

from __future__ import annotations

from typing import Any

import pytest

from tests.dra.record_admission import create
from tests.dra.test_admission import CASES, ERRORS
from tests.kube.envtest import ADMIN_TOKEN, ControlPlane


def _errors(status: int, body: dict[str, Any]) -> list[tuple[str, str]]:
    if status == 201:
        return []
    assert status == 422, body.get("message")
    return [(cause["field"], cause["message"]) for cause in body["details"]["causes"]]


@pytest.mark.parametrize("case", [pytest.param(case, id=case["id"]) for case in CASES])
def test_the_api_server_answers_as_recorded(plane: ControlPlane, case: dict[str, Any]) -> None:
    status, body = create(plane.url, ADMIN_TOKEN, case["object"])
    assert sorted(_errors(status, body)) == sorted((e["field"], e["message"]) for e in case["errors"])


def test_kschedlib_refuses_what_the_api_server_refuses(plane: ControlPlane) -> None:
    """Beyond the recorded messages: the same objects refused (CEL syntax errors are worded apart)."""
    for case in CASES:
        obj = case["object"]
        status, _ = create(plane.url, ADMIN_TOKEN, obj)
        assert (status == 422) == bool(ERRORS[obj["kind"]](obj)), case["id"]
