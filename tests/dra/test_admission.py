"""DRA objects kube-apiserver v1.36 refuses are refused at load, with its field paths and words.

``data/admission_v136.yaml`` holds what the real kube-apiserver v1.36.3 answered for each object
(``record_admission.py``); kschedlib's checks must list the same errors, refuse the same objects,
and keep the defaults the API server fills in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedlib import load_cluster
from kschedlib.errors import ManifestError
from kschedlib.model import _dra_checks as checks
from kschedlib.model._convert_dra import resource_slice_from_dict
from kschedlib.model._field_errors import FieldError
from kschedlib.model.convert import object_from_dict
from kschedlib.model.dra import ResourceClaim

DATA = Path(__file__).resolve().parent / "data" / "admission_v136.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(DATA.read_text(encoding="utf-8"))
ERRORS: dict[str, Callable[[Mapping[str, Any]], list[FieldError]]] = {
    "ResourceClaim": checks.resource_claim_errors,
    "ResourceClaimTemplate": checks.resource_claim_template_errors,
    "ResourceSlice": checks.resource_slice_errors,
    "DeviceClass": checks.device_class_errors,
}
CEL_SYNTAX = pytest.mark.xfail(strict=True, reason="kschedlib's CEL parser words syntax errors its own way "
                                                   "(cel-go lists the tokens ANTLR expected, and puts an empty "
                                                   "input at column 0)")


def _param(case: dict[str, Any]) -> Any:
    syntax = any("Syntax error" in error["message"] for error in case["errors"])
    return pytest.param(case, id=case["id"], marks=[CEL_SYNTAX] if syntax else [])


def _sorted(errors: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted(errors)  # kube lists a map's entries in Go's random order


@pytest.mark.parametrize("case", [_param(case) for case in CASES])
def test_the_api_servers_errors_and_no_others(case: dict[str, Any]) -> None:
    obj = case["object"]
    got = [(error.field, error.text) for error in ERRORS[obj["kind"]](obj)]
    assert _sorted(got) == _sorted([(e["field"], e["message"]) for e in case["errors"]])


@pytest.mark.parametrize("case", [_param(case) for case in CASES if case["errors"]])
def test_a_refused_object_is_not_loaded_and_the_error_names_its_field(case: dict[str, Any]) -> None:
    obj = case["object"]
    with pytest.raises(ManifestError) as refused:
        load_cluster([obj])
    first = refused.value
    assert (first.field, first.message.split("; ")[0]) in {(e["field"], e["message"]) for e in case["errors"]}
    kind, name = obj["kind"], obj["metadata"]["name"]
    assert first.obj == (f"{kind} default/{name}" if kind.startswith("ResourceClaim") else f"{kind} {name}")


@pytest.mark.parametrize("case", [pytest.param(c, id=c["id"]) for c in CASES if not c["errors"]])
def test_an_accepted_object_loads_with_the_api_servers_defaults(case: dict[str, Any]) -> None:
    loaded = object_from_dict(case["object"])
    stored = case.get("stored")
    if stored is None:
        return
    assert isinstance(loaded, ResourceClaim)
    for request, kept in zip(loaded.requests, stored["devices"]["requests"] or [], strict=True):
        exact = request.exactly
        assert exact is not None
        assert (exact.allocation_mode, exact.count) == (kept["exactly"]["allocationMode"],
                                                        kept["exactly"].get("count", 0))


def test_a_count_of_zero_is_the_api_servers_default_of_one_not_an_allocation_of_nothing() -> None:
    (case,) = [c for c in CASES if c["id"] == "claim-count-zero-defaults-to-one"]
    claim = object_from_dict(case["object"])
    assert isinstance(claim, ResourceClaim)
    assert claim.requests[0].exactly is not None
    assert claim.requests[0].exactly.count == 1


def test_several_errors_come_in_the_api_servers_order_after_the_first() -> None:
    (case,) = [c for c in CASES if c["id"] == "claim-many-errors"]
    with pytest.raises(ManifestError) as refused:
        object_from_dict(case["object"])
    expected = [f"{e['field']}: {e['message']}" for e in case["errors"]]
    first = case["errors"][0]
    assert str(refused.value) == (f"ResourceClaim default/c, field {first['field']}: {first['message']}; "
                                  + "; ".join(expected[1:]))


def test_a_stored_object_can_still_be_read_without_admission() -> None:
    (case,) = [c for c in CASES if c["id"] == "slice-devices-duplicate"]
    stored = resource_slice_from_dict(case["object"], admission=False)
    assert [device.name for device in stored.devices] == ["d", "d"]
