"""The client reaches a real API server as each kind of user a kubeconfig or a pod can be, and keeps its limits."""

from __future__ import annotations

import builtins
import http.server
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from kschedlib.errors import ConfigError, ExtraNotInstalledError, KubeApiError
from kschedlib.kube import RateLimiter, connect
from kschedlib.kube import client as client_module
from tests.kube.envtest import ADMIN_TOKEN, SCHEDULER_TOKEN, SCHEDULER_USER, ControlPlane

WHO_AM_I = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


def user_of(kubeconfig: Path, context: str | None = None) -> str:
    answer = connect(str(kubeconfig), context).request("POST", WHO_AM_I, body=REVIEW)
    return str(answer["status"]["userInfo"]["username"])


@pytest.mark.parametrize(("how", "user"), [
    ("token", "admin"),
    ("client-certificate", SCHEDULER_USER),
    ("exec-plugin", SCHEDULER_USER),
])
def test_kubeconfig_users(plane: ControlPlane, tmp_path: Path, how: str, user: str) -> None:
    choices: dict[str, dict[str, Any]] = {"token": {"token": ADMIN_TOKEN}, "client-certificate": {"client_cert": True},
                                          "exec-plugin": {"exec_token": SCHEDULER_TOKEN}}
    options = choices[how]
    kubeconfig = plane.write_kubeconfig(tmp_path / "config", **options)
    assert user_of(kubeconfig) == user


def test_the_context_named_is_used(plane: ControlPlane, tmp_path: Path) -> None:
    admin = json.loads(plane.write_kubeconfig(tmp_path / "a", token=ADMIN_TOKEN, context="admin").read_text())
    sched = json.loads(plane.write_kubeconfig(tmp_path / "s", client_cert=True, context="sched").read_text())
    admin["users"] += sched["users"]
    admin["contexts"] += sched["contexts"]
    both = tmp_path / "both"
    both.write_text(json.dumps(admin))
    assert user_of(both) == "admin"  # the current context
    assert user_of(both, "sched") == SCHEDULER_USER
    with pytest.raises(ConfigError, match="nope"):
        connect(str(both), "nope")


def test_a_kubeconfig_that_skips_verification_warns_of_nothing(plane: ControlPlane, tmp_path: Path,
                                                               recwarn: pytest.WarningsRecorder) -> None:
    config = json.loads(plane.write_kubeconfig(tmp_path / "c", token=ADMIN_TOKEN).read_text())
    config["clusters"][0]["cluster"] = {"server": plane.url, "insecure-skip-tls-verify": True}
    insecure = tmp_path / "insecure"
    insecure.write_text(json.dumps(config))
    client = connect(str(insecure))
    for _ in range(3):  # urllib3 warns on every request; kubectl and kube-scheduler say nothing
        assert client.request("GET", "/version")["major"] == "1"
    assert not recwarn.list


def test_in_cluster_service_account(plane: ControlPlane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "token").write_text(SCHEDULER_TOKEN)
    (tmp_path / "ca.crt").write_bytes((plane.workdir / "certs" / "apiserver.crt").read_bytes())
    monkeypatch.setattr(client_module, "SERVICE_ACCOUNT", tmp_path)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(plane.port))
    answer = connect().request("POST", WHO_AM_I, body=REVIEW)
    assert answer["status"]["userInfo"]["username"] == SCHEDULER_USER


def test_no_in_cluster_config_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match="in-cluster config"):
        connect()


def test_refusals_carry_the_api_servers_status(plane: ControlPlane) -> None:
    client = connect(str(plane.kubeconfig))
    with pytest.raises(KubeApiError) as refused:
        client.request("GET", "/api/v1/namespaces/default/pods/no-such-pod")
    assert (refused.value.status, refused.value.reason) == (404, "NotFound")
    assert refused.value.message == 'pods "no-such-pod" not found'


def test_without_the_extra_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_kubernetes(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "kubernetes":
            raise ImportError("No module named 'kubernetes'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_kubernetes)
    with pytest.raises(ExtraNotInstalledError, match=r"pip install 'kschedlib\[kube\]'"):
        connect("")


def test_the_rate_limiter_lets_a_burst_through_then_paces() -> None:
    now = [0.0]
    waits: list[float] = []
    limiter = RateLimiter(qps=50, burst=5, clock=lambda: now[0], sleep=waits.append)
    for _ in range(5):
        limiter.acquire()
    assert waits == []
    for _ in range(3):
        limiter.acquire()
    assert waits == pytest.approx([0.02, 0.04, 0.06])  # each waits for its token at 50 per second
    now[0] = 10.0  # a quiet spell refills the bucket up to the burst, no more
    for _ in range(5):
        limiter.acquire()
    assert len(waits) == 3
    limiter.acquire()
    assert waits[-1] == pytest.approx(0.02)


def test_watches_take_no_token(plane: ControlPlane) -> None:
    """As client-go: a watch is one long request, not a call to pace (the first ones must not eat the burst)."""
    client = connect(str(plane.kubeconfig))
    now = [0.0]
    waits: list[float] = []
    client.limiter = RateLimiter(qps=1, burst=1, clock=lambda: now[0], sleep=waits.append)
    client.request("GET", "/api/v1/namespaces")
    stream = client.stream("/api/v1/namespaces", {"watch": True, "timeoutSeconds": 1}, read_timeout=10)
    stream.close()
    assert waits == []
    client.request("GET", "/api/v1/namespaces")
    assert waits == [1.0]


def test_no_limit_with_a_qps_of_zero_or_less() -> None:
    waits: list[float] = []
    limiter = RateLimiter(qps=-1, burst=0, clock=lambda: 0.0, sleep=waits.append)
    for _ in range(1000):
        limiter.acquire()
    assert waits == []


def test_a_burst_below_one_is_refused() -> None:
    with pytest.raises(ConfigError, match="burst"):
        RateLimiter(qps=10, burst=0)


class _CutOff(http.server.BaseHTTPRequestHandler):
    """Answers 200 (or 500) with a body shorter than its Content-Length, then hangs up; or 200 with no JSON."""

    def do_GET(self) -> None:
        status, body, length = {"/cut": (200, b'{"kind":', 100), "/cut-error": (500, b'{"kind":', 100),
                                "/html": (200, b"<html>", 6)}[self.path]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(length))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize("path", ["/cut", "/cut-error", "/html"])
def test_an_answer_cut_off_or_unreadable_is_a_lost_connection(tmp_path: Path, path: str) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CutOff)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        where = tmp_path / "kubeconfig"
        where.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "c",
            "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
        with pytest.raises(KubeApiError) as raised:
            connect(str(where), qps=0, burst=0).request("GET", path, timeout=5)
        assert raised.value.status == (500 if path == "/cut-error" else 0)  # retried like a lost connection
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
