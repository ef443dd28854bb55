"""Record what kube-apiserver answers for the DRA objects of ``data/admission_v136.yaml`` (run by hand).

Start etcd and kube-apiserver v1.36.3 as ``../shared/envtest/README.md`` says (loopback only), then::

    .venv/bin/python -m tests.dra.record_admission --server https://127.0.0.1:PORT --token admin-token

Each object is created with ``?dryRun=All`` (nothing is stored); a 422's causes become the case's
``errors`` (field and message, in the API server's order), a 201 an empty list and, for requests, the
defaulted ``stored`` spec.  The file is rewritten in place.
"""

from __future__ import annotations

import argparse
import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parent / "data" / "admission_v136.yaml"
PLURALS = {"ResourceClaim": "resourceclaims", "ResourceClaimTemplate": "resourceclaimtemplates",
           "ResourceSlice": "resourceslices", "DeviceClass": "deviceclasses"}
HEADER = """\
# DRA objects and what kube-apiserver v1.36.3 (resource.k8s.io/v1, default feature gates) answered when
# each was created (dry run): `errors` are the 422's causes in its order, `[]` means accepted (`stored` is
# then the spec it kept, defaults filled in).  Recorded by tests/dra/record_admission.py; replayed by
# tests/dra/test_admission.py against kschedlib's own admission checks.
"""


def create(server: str, token: str, obj: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    kind = obj["kind"]
    scope = "" if kind in ("ResourceSlice", "DeviceClass") else "namespaces/default/"
    url = f"{server}/apis/resource.k8s.io/v1/{scope}{PLURALS[kind]}?dryRun=All"
    request = urllib.request.Request(url, data=json.dumps(obj).encode(), method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    context = ssl._create_unverified_context()  # the test server's self-signed certificate, on loopback
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def record(server: str, token: str) -> None:
    cases = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    for case in cases:
        status, body = create(server, token, case["object"])
        if status == 422:
            causes = body.get("details", {}).get("causes", [])
            case["errors"] = [{"field": c["field"], "message": c["message"]} for c in causes]
            case.pop("stored", None)
        elif status == 201:
            case["errors"] = []
            if case["object"]["kind"] == "ResourceClaim":
                case["stored"] = body["spec"]
        else:
            raise SystemExit(f"{case['id']}: unexpected status {status}: {body.get('message')}")
    DATA.write_text(HEADER + yaml.safe_dump(cases, sort_keys=False, allow_unicode=True, width=120),
                    encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="https://127.0.0.1:PORT of a test API server")
    parser.add_argument("--token", required=True)
    args = parser.parse_args()
    record(args.server, args.token)


if __name__ == "__main__":
    main()
