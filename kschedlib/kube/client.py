"""The connection to an API server: the ``kubernetes`` package's configuration loaders for who we are and where
(kubeconfig contexts, client certificates, tokens, exec credential plugins, the in-cluster service account),
urllib3 (which that package ships on) for the requests themselves, raw JSON both ways.

Responses are never turned into the package's typed models: listing 5,000 pods into kschedlib's model takes
about half the time and memory that way (``docs/how-to/run-as-a-second-scheduler.md`` has the figures).  Every
request but a watch waits on a token bucket of ``qps``/``burst``, as client-go's rate limiter does, and answers of
429 or 5xx with ``Retry-After`` are retried after the time they ask, up to ten times, as client-go retries them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, final
from urllib.parse import urlencode

from kschedlib.errors import ConfigError, ExtraNotInstalledError, KubeApiError

__all__ = ["KubeApiError", "KubeClient", "RateLimiter", "connect"]

MAX_RETRIES: Final = 10
"""client-go's limit on retries of answers that carry Retry-After."""
DEFAULT_QPS: Final = 50.0
DEFAULT_BURST: Final = 100
"""KubeSchedulerConfiguration v1's clientConnection defaults."""
USER_AGENT: Final = "kschedlib"
SERVICE_ACCOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
"""Where a pod finds its service account's token and the cluster's CA (with ``KUBERNETES_SERVICE_HOST``/``_PORT``)."""


@final
class RateLimiter:
    """A token bucket: ``burst`` requests at once, then ``qps`` per second (client-go's default limiter).

    ``qps <= 0`` means no limit, as ``clientConnection.qps: -1`` does for kube-scheduler.
    """

    __slots__ = ("_burst", "_clock", "_lock", "_qps", "_sleep", "_stamp", "_tokens")

    def __init__(self, qps: float, burst: int, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if qps > 0 and burst < 1:
            raise ConfigError("must be at least 1 when qps is positive", field="clientConnection.burst", value=burst)
        self._qps = qps
        self._burst = float(burst)
        self._tokens = float(burst)
        self._clock = clock
        self._sleep = sleep
        self._stamp = clock()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Wait for a token."""
        if self._qps <= 0:
            return
        with self._lock:
            now = self._clock()
            self._tokens = min(self._burst, self._tokens + (now - self._stamp) * self._qps)
            self._stamp = now
            self._tokens -= 1.0
            wait = -self._tokens / self._qps if self._tokens < 0 else 0.0
        if wait > 0:
            self._sleep(wait)


def _import_kubernetes() -> Any:
    try:
        import kubernetes
    except ImportError as exc:
        raise ExtraNotInstalledError("talking to a Kubernetes API server", "kube", "kubernetes") from exc
    return kubernetes


def _configuration(kubeconfig: str | None, context: str | None) -> Any:
    """Where and who: ``kubeconfig`` (``""`` for the default loading rules: ``$KUBECONFIG``, then
    ``~/.kube/config``), or the in-cluster service account when no kubeconfig is given at all."""
    kubernetes = _import_kubernetes()
    configuration = kubernetes.client.Configuration()
    try:
        if kubeconfig is None and context is None:
            loader = kubernetes.config.incluster_config.InClusterConfigLoader(
                token_filename=str(SERVICE_ACCOUNT / "token"), cert_filename=str(SERVICE_ACCOUNT / "ca.crt"),
                try_refresh_token=True)
            loader.load_and_set(configuration)
        else:
            where = kubeconfig or os.environ.get("KUBECONFIG") or os.path.expanduser("~/.kube/config")
            kubernetes.config.load_kube_config(config_file=where, context=context,
                                               client_configuration=configuration, persist_config=False)
    except Exception as exc:  # any way a kubeconfig cannot be read (missing, YAML, bad fields) is a config error
        field = "kubeconfig" if kubeconfig is not None or context is not None else "in-cluster config"
        raise ConfigError(str(exc), field=field, value=kubeconfig if kubeconfig else context) from exc
    return configuration


@final
class KubeClient:
    """Requests to one API server, rate limited; thread-safe (bindings, events and watches share it)."""

    def __init__(self, configuration: Any, *, qps: float = DEFAULT_QPS, burst: int = DEFAULT_BURST,
                 user_agent: str = USER_AGENT, pool_size: int = 32) -> None:
        kubernetes = _import_kubernetes()
        configuration.connection_pool_maxsize = pool_size
        self._configuration = configuration
        self._pool = kubernetes.client.rest.RESTClientObject(configuration).pool_manager
        self.host: str = configuration.host.rstrip("/")
        if not configuration.verify_ssl:
            _quiet_unverified(self.host)
        self.limiter = RateLimiter(qps, burst)
        self.user_agent = user_agent
        self.requests = 0
        """Requests sent (retries included), for tests and logs."""
        self.throttled = 0
        """Answers of 429 Too Many Requests received (each retried after its Retry-After)."""

    def with_limits(self, qps: float, burst: int) -> KubeClient:
        """Another client on the same configuration with its own rate limiter (kube-scheduler gives its events one)."""
        return KubeClient(self._configuration, qps=qps, burst=burst, user_agent=self.user_agent)

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": self.user_agent}
        if content_type is not None:
            headers["Content-Type"] = content_type
        for setting in self._configuration.auth_settings().values():  # refreshes exec and service-account tokens
            if setting.get("in") == "header" and setting.get("value"):
                headers[setting["key"]] = setting["value"]
        if self._configuration.username and self._configuration.password:
            headers["Authorization"] = self._configuration.get_basic_auth_token()
        return headers

    def _url(self, path: str, query: Mapping[str, object] | None) -> str:
        if not query:
            return self.host + path
        return self.host + path + "?" + urlencode({k: _query_value(v) for k, v in query.items() if v is not None})

    def _send(self, method: str, path: str, query: Mapping[str, object] | None, body: bytes | None,
              content_type: str | None, timeout: Any, stream: bool) -> Any:
        """One request, with the retries Retry-After asks for; the urllib3 response (unread when ``stream``)."""
        import urllib3

        url = self._url(path, query)
        for attempt in range(MAX_RETRIES + 1):
            if not stream:  # client-go does not rate-limit watches: a watch is one long request, not a call
                self.limiter.acquire()
            self.requests += 1
            try:
                response = self._pool.request(method, url, body=body, headers=self._headers(content_type),
                                              timeout=timeout, preload_content=False, retries=False)
            except urllib3.exceptions.HTTPError as exc:
                raise KubeApiError(0, type(exc).__name__, str(exc), method=method, path=path) from exc
            if response.status < 400:
                return response
            error = _error(response, method, path)
            self.throttled += error.status == 429
            if error.retry_after is None or attempt == MAX_RETRIES:
                raise error
            time.sleep(min(error.retry_after, 10.0))
        raise AssertionError("unreachable")  # pragma: no cover

    def request(self, method: str, path: str, *, query: Mapping[str, object] | None = None,
                body: object = None, content_type: str = "application/json",
                timeout: float = 30.0) -> dict[str, Any]:
        """One call; the decoded JSON answer (``{}`` when there is none). Raises :class:`KubeApiError`."""
        import urllib3

        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        response = self._send(method, path, query, data, content_type if data is not None else None, timeout, False)
        try:
            raw = response.read()
            decoded: dict[str, Any] = json.loads(raw) if raw else {}
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as exc:  # cut mid-answer: a lost connection
            raise KubeApiError(0, type(exc).__name__, str(exc), method=method, path=path) from exc
        finally:
            response.release_conn()
        return decoded

    def stream(self, path: str, query: Mapping[str, object], *, read_timeout: float) -> Stream:
        """A long-running GET (a watch): its JSON lines, one object each."""
        import urllib3

        response = self._send("GET", path, query, None, None, urllib3.Timeout(connect=10.0, read=read_timeout), True)
        return Stream(response)


@final
class Stream:
    """The lines of a watch response; :meth:`close` from another thread ends a blocked read."""

    __slots__ = ("_response",)

    def __init__(self, response: Any) -> None:
        self._response = response

    def __iter__(self) -> Iterator[dict[str, Any]]:
        import urllib3

        pending = b""
        try:
            for chunk in self._response.stream(64 * 1024, decode_content=True):
                pending += chunk
                while b"\n" in pending:
                    line, pending = pending.split(b"\n", 1)
                    if line.strip():
                        yield json.loads(line)
        except (urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
            raise KubeApiError(0, type(exc).__name__, str(exc), method="WATCH") from exc
        if pending.strip():
            yield json.loads(pending)

    def close(self) -> None:
        with contextlib.suppress(AttributeError, ValueError, RuntimeError, OSError):  # already ended, or old urllib3
            self._response.shutdown()
        with contextlib.suppress(OSError):
            self._response.release_conn()


def _quiet_unverified(host: str) -> None:
    """No warning per request to an API server whose kubeconfig says ``insecure-skip-tls-verify`` (urllib3 warns on
    every one): the user chose it, and kubectl and kube-scheduler say nothing either.  Only this server's host."""
    import urllib3

    name = urllib3.util.parse_url(host).host or ""
    warnings.filterwarnings("ignore", message=f"Unverified HTTPS request is being made to host '{re.escape(name)}'",
                            category=urllib3.exceptions.InsecureRequestWarning)


def _query_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _error(response: Any, method: str, path: str) -> KubeApiError:
    """The API server's Status answer as an error (its status alone when the body is cut off)."""
    import urllib3

    try:
        raw = response.read()
    except (urllib3.exceptions.HTTPError, OSError):
        raw = b""
    finally:
        response.release_conn()
    try:
        status: Mapping[str, Any] = json.loads(raw) if raw else {}
    except ValueError:
        status = {}
    retry_after = response.headers.get("Retry-After")
    retry = None
    if retry_after is not None and (response.status == 429 or response.status >= 500):
        try:
            retry = max(float(retry_after), 0.0)
        except ValueError:
            retry = 1.0
    message = str(status.get("message") or raw.decode(errors="replace").strip() or response.reason)
    return KubeApiError(response.status, str(status.get("reason") or response.reason), message,
                        method=method, path=path, retry_after=retry)


def connect(kubeconfig: str | None = None, context: str | None = None, *, qps: float = DEFAULT_QPS,
            burst: int = DEFAULT_BURST, user_agent: str = USER_AGENT) -> KubeClient:
    """A client for the cluster ``kubeconfig``/``context`` name (``kubeconfig=""``: ``$KUBECONFIG`` or
    ``~/.kube/config``), or, with neither, for the cluster this process runs in (its service account).

    Needs the ``kube`` extra; a configuration that cannot be read raises :class:`~kschedlib.errors.ConfigError`.
    """
    return KubeClient(_configuration(kubeconfig, context), qps=qps, burst=burst, user_agent=user_agent)
