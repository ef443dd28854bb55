"""A real control plane for tests: etcd and kube-apiserver (v1.36.3), found as controller-runtime's envtest finds
them, through ``KUBEBUILDER_ASSETS``; kube-scheduler beside them for side-by-side runs.

Loopback only, free ports, every process stopped by its PID. No kubelet and no controllers run: nodes and pods
are API objects, a binding sets ``spec.nodeName``. The benchmark (``benchmarks/kube_run.py``) uses it too.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

ASSETS_VARIABLE: Final = "KUBEBUILDER_ASSETS"
BINARIES: Final = ("etcd", "kube-apiserver")
ADMIN_TOKEN: Final = "admin-token"
SCHEDULER_TOKEN: Final = "scheduler-token"
SCHEDULER_USER: Final = "system:kube-scheduler"


def assets() -> Path | None:
    """The directory holding the binaries, or ``None`` when ``KUBEBUILDER_ASSETS`` is unset or incomplete."""
    where = os.environ.get(ASSETS_VARIABLE)
    if not where:
        return None
    path = Path(where)
    return path if all((path / name).is_file() for name in BINARIES) else None


def missing_reason() -> str:
    """Why the control plane cannot start here (one line), for ``pytest.skip``."""
    where = os.environ.get(ASSETS_VARIABLE)
    if not where:
        return f"{ASSETS_VARIABLE} is not set (python3 ../shared/envtest/install.py DIR unpacks the binaries)"
    return f"{ASSETS_VARIABLE}={where} lacks {' or '.join(BINARIES)}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _make_keys(where: Path) -> None:
    """The service-account signing key, and a CA with one client certificate (CN = the scheduler's user)."""
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=where)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=where)
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
             "-subj", "/CN=envtest-client-ca", cwd=where)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key", "-out", "client.csr",
             "-subj", f"/CN={SCHEDULER_USER}", cwd=where)
    _openssl("x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "client.crt", "-days", "2", cwd=where)


AUDIT_POLICY: Final = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: None
  verbs: [get, list, watch]
- level: Request
  namespaces: [{namespaces}]
  resources:
  - group: resource.k8s.io
    resources: [resourceclaims, resourceclaims/status]
  - group: ""
    resources: [persistentvolumes, persistentvolumeclaims, pods/status, pods/binding]
- level: None
"""
"""Writes of claims, volumes, pod statuses and bindings in the audited namespaces (and cluster-scoped volumes)."""


class ControlPlane:
    """etcd plus kube-apiserver in ``workdir``; :meth:`restart_apiserver` keeps etcd (and so every object).

    ``audited`` namespaces have their writes of claims, volumes, pod statuses and bindings in the API server's
    audit log (:meth:`audit`), so tests can compare a scheduler's requests with kube-scheduler's."""

    def __init__(self, workdir: Path, bin_dir: Path, *, apiserver_flags: Sequence[str] = (),
                 audited: Sequence[str] = ()) -> None:
        self.workdir = workdir
        self.bin_dir = bin_dir
        self.apiserver_flags = tuple(apiserver_flags)
        if audited:
            policy = workdir / "audit-policy.yaml"
            policy.write_text(AUDIT_POLICY.replace("{namespaces}", ", ".join(['""', *(f'"{n}"' for n in audited)])))
            self.apiserver_flags += ("--audit-policy-file", str(policy), "--audit-log-path",
                                     str(workdir / "audit.log"))
        self.etcd_port = free_port()
        self.port = free_port()
        self._etcd: subprocess.Popen[bytes] | None = None
        self._apiserver: subprocess.Popen[bytes] | None = None
        self.kubeconfig = workdir / "admin.kubeconfig"

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    def start(self) -> None:
        _make_keys(self.workdir)
        (self.workdir / "tokens.csv").write_text(
            f"{ADMIN_TOKEN},admin,admin,system:masters\n{SCHEDULER_TOKEN},{SCHEDULER_USER},scheduler\n")
        self._start_etcd()
        self.start_apiserver()
        self.write_kubeconfig(self.kubeconfig, token=ADMIN_TOKEN)

    def _log(self, name: str) -> Any:
        return (self.workdir / f"{name}.log").open("ab")

    def _start_etcd(self) -> None:
        peer = free_port()
        with self._log("etcd") as log:
            self._etcd = subprocess.Popen(
                [str(self.bin_dir / "etcd"), "--data-dir", str(self.workdir / "etcd"),
                 "--listen-client-urls", self.etcd_url, "--advertise-client-urls", self.etcd_url,
                 "--listen-peer-urls", f"http://127.0.0.1:{peer}", "--log-level", "error"],
                stdout=log, stderr=subprocess.STDOUT)

    def start_apiserver(self) -> None:
        """Start (or start again) kube-apiserver on the same port and etcd; returns once ``/readyz`` says ok."""
        w = self.workdir
        with self._log("apiserver") as log:
            self._apiserver = subprocess.Popen(
                [str(self.bin_dir / "kube-apiserver"), "--etcd-servers", self.etcd_url,
                 "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", str(self.port),
                 "--cert-dir", str(w / "certs"), "--service-account-issuer", "https://kubernetes.default.svc",
                 "--service-account-key-file", str(w / "sa.pub"),
                 "--service-account-signing-key-file", str(w / "sa.key"),
                 "--token-auth-file", str(w / "tokens.csv"), "--client-ca-file", str(w / "ca.crt"),
                 "--authorization-mode", "RBAC", "--service-cluster-ip-range", "10.0.0.0/24",
                 "--allow-privileged=true", "--disable-admission-plugins", "ServiceAccount,TaintNodesByCondition",
                 "--v", "0", *self.apiserver_flags],
                stdout=log, stderr=subprocess.STDOUT)
        self.wait_ready()

    def wait_ready(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        context = ssl._create_unverified_context()
        while time.monotonic() < deadline:
            if self._apiserver is not None and self._apiserver.poll() is not None:
                raise RuntimeError(f"kube-apiserver exited: see {self.workdir / 'apiserver.log'}")
            request = urllib.request.Request(f"{self.url}/readyz",
                                             headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
            try:
                with urllib.request.urlopen(request, context=context, timeout=2) as response:
                    if response.read() == b"ok":
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.25)
        raise RuntimeError(f"kube-apiserver not ready after {timeout} s: see {self.workdir / 'apiserver.log'}")

    def stop_apiserver(self) -> None:
        _stop(self._apiserver)
        self._apiserver = None

    def restart_apiserver(self) -> None:
        self.stop_apiserver()
        self.start_apiserver()

    def stop(self) -> None:
        self.stop_apiserver()
        _stop(self._etcd)
        self._etcd = None

    def audit(self) -> list[dict[str, Any]]:
        """The audit log's events so far, oldest first (empty when nothing is audited)."""
        path = self.workdir / "audit.log"
        if not path.is_file():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def compact_etcd(self) -> int:
        """Compact etcd at its current revision (what the API server does every 5 minutes); returns the revision."""
        revision = int(self._etcd_call("/v3/kv/range", {"key": base64.b64encode(b"/").decode()})["header"]["revision"])
        self._etcd_call("/v3/kv/compaction", {"revision": str(revision), "physical": True})
        return revision

    def _etcd_call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(self.etcd_url + path, data=json.dumps(body).encode(), method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer

    def write_kubeconfig(self, path: Path, *, token: str | None = None, client_cert: bool = False,
                         exec_token: str | None = None, context: str = "envtest") -> Path:
        """A kubeconfig for this API server: a bearer token, the client certificate, or an exec plugin that
        prints an ExecCredential with ``exec_token``."""
        user: dict[str, Any] = {}
        if token is not None:
            user["token"] = token
        if client_cert:
            user["client-certificate"] = str(self.workdir / "client.crt")
            user["client-key"] = str(self.workdir / "client.key")
        if exec_token is not None:
            credential = json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                                     "status": {"token": exec_token}})
            user["exec"] = {"apiVersion": "client.authentication.k8s.io/v1", "command": "/bin/sh",
                            "args": ["-c", f"echo '{credential}'"], "interactiveMode": "Never"}
        config = {
            "apiVersion": "v1", "kind": "Config", "current-context": context,
            "clusters": [{"name": "envtest", "cluster": {
                "server": self.url, "certificate-authority": str(self.workdir / "certs" / "apiserver.crt")}}],
            "users": [{"name": f"{context}-user", "user": user}],
            "contexts": [{"name": context, "context": {"cluster": "envtest", "user": f"{context}-user"}}],
        }
        path.write_text(json.dumps(config, indent=1))
        return path


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=20)


@contextmanager
def control_plane(*, apiserver_flags: Sequence[str] = (), keep: bool = False,
                  audited: Sequence[str] = ()) -> Iterator[ControlPlane]:
    """A started control plane, stopped (and its directory removed unless ``keep``) on exit."""
    bin_dir = assets()
    if bin_dir is None:
        raise RuntimeError(missing_reason())
    workdir = Path(tempfile.mkdtemp(prefix="kschedlib-envtest-"))
    plane = ControlPlane(workdir, bin_dir, apiserver_flags=apiserver_flags, audited=audited)
    try:
        plane.start()
        yield plane
    finally:
        plane.stop()
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
