"""HTTPExtender: the client of kube-scheduler's HTTP extender protocol (kube's ``HTTPExtender``), on the stdlib.

Every call is one ``POST <urlPrefix>/<verb>`` with a JSON body, answered with
JSON.  Errors carry kube-scheduler's wording where it is the extender's or the
HTTP status's (``failed filter with extender at URL http://.../filter, code
500``) and name the URL for transport and decoding failures.  Each call has a
deadline of ``httpTimeout`` for the whole exchange and a cap on the reply size.
"""

from __future__ import annotations

import http.client
import os
import socket
import ssl
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, final
from urllib.parse import urlsplit

from kschedlib._internal import extender_wire as wire
from kschedlib._internal.extender_config import ExtenderConfig, TLSConfig, ignored_resources, parse_extenders
from kschedlib.errors import ManifestError
from kschedlib.framework.extender import (
    Extender,
    ExtenderError,
    ExtenderFilterResult,
    ExtenderVictims,
    pod_uses_resources,
)
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.snapshot import Snapshot
from kschedlib.model.convert import node_from_dict
from kschedlib.model.objects import Pod

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "HTTPExtender", "build_extenders", "go_errorf"]

DEFAULT_MAX_RESPONSE_BYTES: Final = 64 * 1024 * 1024
_CHUNK: Final = 65536
_FLAGS: Final = "+-# 0"


def go_errorf(text: str) -> str:
    """What Go's ``fmt.Errorf(text)`` prints: ``text`` read as a format string without operands.

    kube-scheduler passes an extender's ``Error`` field as the format, so ``50% of``
    becomes ``50%!o(MISSING)f`` and ``100%%`` becomes ``100%``.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        i += 1
        if char != "%":
            out.append(char)
            continue
        while i < n and text[i] in _FLAGS:
            i += 1
        while i < n and (text[i].isdigit() or text[i] == "."):
            i += 1
        if i >= n:
            out.append("%!(NOVERB)")
            break
        verb = text[i]
        i += 1
        out.append("%" if verb == "%" else f"%!{verb}(MISSING)")
    return "".join(out)


def _write_temp(data: bytes) -> str:
    handle, path = tempfile.mkstemp(suffix=".pem")
    with os.fdopen(handle, "wb") as file:
        file.write(data)
    return path


def _ssl_context(config: ExtenderConfig) -> ssl.SSLContext:
    """kube's transport: verification against the configured CA; none when HTTPS has no CA or is insecure."""
    tls = config.tls_config or TLSConfig()
    context = ssl.create_default_context()
    has_ca = bool(tls.ca_file or tls.ca_data)
    if tls.insecure or (config.enable_https and not has_ca):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif tls.ca_data:
        context.load_verify_locations(cadata=tls.ca_data.decode("ascii", "replace"))
    elif tls.ca_file:
        context.load_verify_locations(cafile=tls.ca_file)
    cert = tls.cert_data or (tls.cert_file.encode() if tls.cert_file else b"")
    if cert:
        temporary = [_write_temp(tls.cert_data)] if tls.cert_data else []
        if tls.key_data:
            temporary.append(_write_temp(tls.key_data))
        try:
            certfile = temporary[0] if tls.cert_data else tls.cert_file
            keyfile = temporary[-1] if tls.key_data else (tls.key_file or None)
            context.load_cert_chain(certfile, keyfile)
        finally:
            for path in temporary:
                os.unlink(path)
    return context


@final
class HTTPExtender(Extender):
    """An extender reached over HTTP(S), configured like kube-scheduler's ``extenders[]`` entries."""

    __slots__ = ("_context", "_errorf", "_host", "_managed", "_port", "_prefix", "_tls", "config",
                 "max_response_bytes")

    def __init__(self, config: ExtenderConfig, *, max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 verbatim_errors: bool = False) -> None:
        """``verbatim_errors``: report a reply's ``Error`` as sent (kube-scheduler v1.33+), not through
        ``fmt.Errorf`` as v1.30 does (:func:`go_errorf`)."""
        self.config = config
        self._errorf: Callable[[str], str] = str if verbatim_errors else go_errorf
        self.max_response_bytes = max_response_bytes
        self._prefix = config.url_prefix.rstrip("/")
        parts = urlsplit(self._prefix)
        self._tls = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._tls else 80)
        self._managed = frozenset(r.name for r in config.managed_resources)
        self._context = _ssl_context(config) if self._tls else None

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> HTTPExtender:
        """An extender from one ``extenders[]`` entry of a KubeSchedulerConfiguration (JSON names)."""
        return cls(ExtenderConfig.from_dict(raw))

    def __repr__(self) -> str:
        return f"HTTPExtender({self.config.url_prefix!r})"

    # --- what it does ---------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.config.url_prefix

    @property
    def weight(self) -> int:
        return self.config.weight

    @property
    def is_ignorable(self) -> bool:
        return self.config.ignorable

    @property
    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    @property
    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    @property
    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    @property
    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    def is_interested(self, pod: Pod) -> bool:
        return not self._managed or pod_uses_resources(pod, self._managed)

    # --- the verbs ------------------------------------------------------------------------------

    def _args(self, pod: Pod, nodes: Sequence[NodeInfo]) -> dict[str, Any]:
        if self.config.node_cache_capable:
            return {"Pod": wire.pod_wire(pod), "Nodes": None, "NodeNames": [info.name for info in nodes]}
        items = [wire.node_wire(info.node) for info in nodes if info.node is not None]
        return {"Pod": wire.pod_wire(pod), "Nodes": {"metadata": {}, "items": items}, "NodeNames": None}

    def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> ExtenderFilterResult:
        verb = self.config.filter_verb
        if not verb:
            return ExtenderFilterResult(tuple(nodes))
        reply = self._object(verb, self._args(pod, nodes))
        error = wire.str_field(reply, "Error")
        if error:
            raise ExtenderError(self._errorf(error))
        try:
            return self._filter_result(verb, reply, nodes)
        except (wire.WireError, ManifestError) as exc:
            raise self._decode_error(verb, exc) from exc

    def _filter_result(self, verb: str, reply: Mapping[str, Any], nodes: Sequence[NodeInfo]) -> ExtenderFilterResult:
        failed = wire.map_field(reply, "FailedNodes")
        unresolvable = wire.map_field(reply, "FailedAndUnresolvableNodes")
        names = wire.str_list_field(reply, "NodeNames")
        node_list = wire.object_value(wire.field(reply, "Nodes"), "Nodes")
        if self.config.node_cache_capable and names is not None:
            by_name = {info.name: info for info in nodes}
            passed = []
            for name in names:
                if name not in by_name:
                    raise ExtenderError(f'extender "{self.name}" claims a filtered node "{name}" which is not '
                                        "found in the input node list")
                passed.append(by_name[name])
            return ExtenderFilterResult(tuple(passed), failed, unresolvable)
        if node_list is None:
            return ExtenderFilterResult((), failed, unresolvable)
        items = wire.list_value(wire.field(node_list, "items"), "Nodes.items")
        parsed = tuple(NodeInfo.of(node_from_dict(item if isinstance(item, dict) else {})) for item in items)
        return ExtenderFilterResult(parsed, failed, unresolvable)

    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> list[tuple[str, int]]:
        verb = self.config.prioritize_verb
        if not verb:
            return [(info.name, 0) for info in nodes]
        reply = self._call(verb, self._args(pod, nodes))
        try:
            entries = wire.list_value(reply, "HostPriorityList")
            out = []
            for entry in entries:
                item = wire.object_value(entry, "HostPriority") or {}
                out.append((wire.str_field(item, "Host"), wire.int_field(item, "Score")))
        except wire.WireError as exc:
            raise self._decode_error(verb, exc) from exc
        return out

    def bind(self, pod: Pod, node_name: str) -> None:
        verb = self.config.bind_verb
        if not verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod.uid, "Node": node_name}
        error = wire.str_field(self._object(verb, args), "Error")
        if error:
            raise ExtenderError(self._errorf(error))

    def process_preemption(
        self, pod: Pod, victims: Mapping[str, ExtenderVictims], snapshot: Snapshot
    ) -> dict[str, ExtenderVictims]:
        verb = self.config.preempt_verb
        if not verb:
            raise ExtenderError(f"preempt verb is not defined for extender {self.name} but run into ProcessPreemption")
        args: dict[str, Any] = {"Pod": wire.pod_wire(pod), "NodeNameToVictims": None, "NodeNameToMetaVictims": None}
        if self.config.node_cache_capable:
            args["NodeNameToMetaVictims"] = {
                node: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in victims.items()}
        else:
            args["NodeNameToVictims"] = {
                node: {"Pods": [wire.pod_wire(p) for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in victims.items()}
        reply = self._object(verb, args)
        try:
            meta = wire.object_value(wire.field(reply, "NodeNameToMetaVictims"), "NodeNameToMetaVictims") or {}
            return {node: self._victims(node, value, snapshot) for node, value in meta.items()}
        except wire.WireError as exc:
            raise self._decode_error(verb, exc) from exc

    def _victims(self, node: str, value: Any, snapshot: Snapshot) -> ExtenderVictims:
        info = snapshot.find(node)
        if info is None:
            raise ExtenderError(f'nodeinfo not found for node name "{node}"')
        meta = wire.object_value(value, "MetaVictims") or {}
        by_uid = {p.pod.uid: p.pod for p in info.pods}
        pods = []
        for entry in wire.list_value(wire.field(meta, "Pods"), "MetaVictims.Pods"):
            uid = wire.str_field(wire.object_value(entry, "MetaPod") or {}, "UID")
            if uid not in by_uid:
                raise ExtenderError(f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) on node: "
                                    f"{node}, but the pod is not found on that node")
            pods.append(by_uid[uid])
        return ExtenderVictims(tuple(pods), wire.int_field(meta, "NumPDBViolations"))

    # --- transport ------------------------------------------------------------------------------

    def _url(self, verb: str) -> str:
        return f"{self._prefix}/{verb}"

    def _decode_error(self, verb: str, exc: Exception) -> ExtenderError:
        return ExtenderError(f"decoding the reply of {verb} from extender at URL {self._url(verb)}: {exc}")

    def _object(self, verb: str, args: object) -> Mapping[str, Any]:
        reply = self._call(verb, args)
        try:
            return wire.object_value(reply, verb) or {}
        except wire.WireError as exc:
            raise self._decode_error(verb, exc) from exc

    def _call(self, verb: str, args: object) -> Any:
        """POST ``args`` to ``<urlPrefix>/<verb>`` and decode the JSON reply (within ``httpTimeout``)."""
        url = self._url(verb)
        body = self._exchange(verb, url, wire.encode(args))
        try:
            return wire.decode_body(body)
        except wire.WireError as exc:
            raise self._decode_error(verb, exc) from exc

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._context is not None:
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout, context=self._context)
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def _exchange(self, verb: str, url: str, payload: bytes) -> bytes:
        timeout = self.config.http_timeout
        deadline = time.monotonic() + timeout
        path = urlsplit(url).path or "/"
        connection = self._connection(timeout)
        try:
            connection.request("POST", path, payload, {"Content-Type": "application/json"})
            self._set_timeout(connection, deadline)
            response = connection.getresponse()
            if response.status != 200:
                raise ExtenderError(f"failed {verb} with extender at URL {url}, code {response.status}")
            return self._read(response, connection.sock, deadline, url)
        except TimeoutError as exc:
            raise ExtenderError(f'Post "{url}": context deadline exceeded '
                                "(Client.Timeout exceeded while awaiting headers)") from exc
        except ConnectionRefusedError as exc:
            raise ExtenderError(f'Post "{url}": dial tcp {self._host}:{self._port}: connect: '
                                "connection refused") from exc
        except (OSError, http.client.HTTPException) as exc:
            raise ExtenderError(f'Post "{url}": {exc or type(exc).__name__}') from exc
        finally:
            connection.close()

    @staticmethod
    def _set_timeout(connection: http.client.HTTPConnection, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        if connection.sock is not None:
            connection.sock.settimeout(remaining)

    def _read(self, response: http.client.HTTPResponse, sock: socket.socket | None, deadline: float,
              url: str) -> bytes:
        length = response.getheader("Content-Length")
        if length is not None and length.isdigit() and int(length) > self.max_response_bytes:
            raise ExtenderError(f"reply of extender at URL {url} is {length} bytes, over the limit of "
                                f"{self.max_response_bytes}")
        chunks: list[bytes] = []
        size = 0
        while True:
            if sock is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                sock.settimeout(remaining)
            chunk = response.read(_CHUNK)
            if not chunk:
                return b"".join(chunks)
            size += len(chunk)
            if size > self.max_response_bytes:
                raise ExtenderError(f"reply of extender at URL {url} exceeds the limit of "
                                    f"{self.max_response_bytes} bytes")
            chunks.append(chunk)


def build_extenders(
    raw: Sequence[Mapping[str, Any]], *, verbatim_errors: bool = False
) -> tuple[tuple[HTTPExtender, ...], tuple[str, ...]]:
    """HTTP extenders for a config's ``extenders`` section (validated), and its ``ignoredByScheduler`` names."""
    configs = parse_extenders(raw)
    extenders = tuple(HTTPExtender(config, verbatim_errors=verbatim_errors) for config in configs)
    return extenders, ignored_resources(configs)
