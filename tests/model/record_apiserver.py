"""Record what a real kube-apiserver answers to the pods of ``tests/data/apiserver/*.json``.

    KUBEBUILDER_ASSETS=DIR python -m tests.model.record_apiserver tests/data/apiserver/resource-requirements.json

``DIR`` holds ``etcd`` and ``kube-apiserver`` (``python3 ../shared/envtest/install.py DEST`` unpacks
v1.36.3's there).  Each case's ``pod`` is created with ``dryRun=All`` on a fresh API server (started
here, on loopback, and stopped at the end); its ``status``, ``message`` (a refusal's text) and
``resources`` (the first container's, as admitted) are written back into the file.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ApiServer:
    """etcd and kube-apiserver on loopback, an admin token, and a client that skips TLS verification."""

    def __init__(self, assets: Path, state: Path) -> None:
        keys = [["openssl", "genrsa", "-out", str(state / "sa.key"), "2048"],
                ["openssl", "rsa", "-in", str(state / "sa.key"), "-pubout", "-out", str(state / "sa.pub")]]
        for command in keys:
            subprocess.run(command, check=True, capture_output=True)
        (state / "tokens.csv").write_text("admin-token,admin,admin,system:masters\n")
        client, peer, self.port = _free_port(), _free_port(), _free_port()
        self.etcd = subprocess.Popen(
            [str(assets / "etcd"), "--data-dir", str(state / "etcd"), "--listen-client-urls",
             f"http://127.0.0.1:{client}", "--advertise-client-urls", f"http://127.0.0.1:{client}",
             "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--log-level", "error"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.api = subprocess.Popen(
            [str(assets / "kube-apiserver"), "--etcd-servers", f"http://127.0.0.1:{client}",
             "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", str(self.port),
             "--cert-dir", str(state / "certs"), "--service-account-issuer", "https://kubernetes.default.svc",
             "--service-account-key-file", str(state / "sa.pub"),
             "--service-account-signing-key-file", str(state / "sa.key"), "--token-auth-file",
             str(state / "tokens.csv"), "--authorization-mode", "RBAC", "--service-cluster-ip-range", "10.0.0.0/24",
             "--disable-admission-plugins", "ServiceAccount,TaintNodesByCondition"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.tls = ssl.create_default_context()
        self.tls.check_hostname = False
        self.tls.verify_mode = ssl.CERT_NONE

    def call(self, method: str, path: str, body: object = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"https://127.0.0.1:{self.port}{path}", data=data, method=method,
                                         headers={"Authorization": "Bearer admin-token",
                                                  "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, context=self.tls, timeout=10) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def wait_ready(self, seconds: float = 90) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                if self.call("GET", "/api/v1/namespaces/default")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise TimeoutError("kube-apiserver did not become ready")

    def stop(self) -> None:
        for process in (self.api, self.etcd):
            process.terminate()
            process.wait(timeout=30)


def record(path: Path, assets: Path) -> None:
    cases: dict[str, dict[str, Any]] = json.loads(path.read_text())
    with tempfile.TemporaryDirectory() as state:
        server = ApiServer(assets, Path(state))
        try:
            server.wait_ready()
            for case in cases.values():
                status, body = server.call("POST", "/api/v1/namespaces/default/pods?dryRun=All", case["pod"])
                case["status"] = status
                case["message"] = body.get("message") if status >= 400 else None
                case["resources"] = None if status >= 400 else body["spec"]["containers"][0].get("resources")
        finally:
            server.stop()
    path.write_text(json.dumps(cases, indent=1) + "\n")


if __name__ == "__main__":
    record(Path(sys.argv[1]), Path(os.environ["KUBEBUILDER_ASSETS"]))
