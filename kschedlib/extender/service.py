"""ExtenderService: a profile's Filter and Score plugins answering the extender protocol (no HTTP here).

The service keeps a base cluster: the nodes and bound pods of a cluster file,
plus the pods bound through its ``bind`` verb (with their nodes).  A request's
nodes (sent without ``nodeCacheCapable``) live only as long as the request,
apart from a bounded LRU of parsed nodes (``ExtenderLimits.node_cache_size``).
``handle(verb, body)`` returns an HTTP status and a JSON-able reply; bad input
is a 4xx with ``{"error": ...}``, a request over the limits a 413/422, one not
answered within ``ExtenderLimits.work_timeout`` a 503, never an exception.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib._internal import extender_wire as wire
from kschedlib._internal.documents import load_config
from kschedlib.errors import BadRequestError, KschedError
from kschedlib.extender._state import NodeCache, Worker, Workers, request_snapshot
from kschedlib.extender.limits import DEFAULT_LIMITS, Deadline, ExtenderLimits, pod_terms
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.registry import Registry
from kschedlib.framework.snapshot import Snapshot
from kschedlib.framework.status import Code, Status
from kschedlib.model.convert import node_from_dict, pod_from_dict
from kschedlib.model.objects import Pod
from kschedlib.scheduler import Scheduler
from kschedlib.simulation.cluster import Cluster, load_cluster
from kschedlib.versions import resolve as resolve_kube

__all__ = ["BadRequestError", "ExtenderService", "ScoreScale", "json_bytes"]

ScoreScale = Literal["raw", "extender"]
ExtenderBinder = Callable[[Pod, str], None]
_SEEN_PODS: Final = 10_000
_MAX_EXTENDER_PRIORITY: Final = 10
_MALFORMED: Final = (KschedError, ValueError, TypeError, AttributeError, KeyError, RecursionError)
"""What converting a body of the wrong shape can raise: the client's fault, a 400."""


def _reply_error(status: int, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": message}


def json_bytes(payload: Any) -> bytes:
    """A reply as compact JSON bytes."""
    return json.dumps(payload, separators=(",", ":")).encode("utf-8")


@attrs.frozen(slots=True, repr=False)
class _Request(FieldsRepr):
    """A decoded filter or prioritize request: the pod, its nodes and, for echoing, their raw objects."""

    pod: Pod
    nodes: list[NodeInfo]
    snapshot: Snapshot
    raw: dict[str, Any] | None
    made: int = 0
    """NodeInfos made for this request (not reused from the base cluster or the LRU)."""


@final
class ExtenderService:
    """Filter and prioritize (and optionally bind) with one profile of a KubeSchedulerConfiguration.

    The config's own ``extenders`` are ignored (the service is the extender);
    ``registry`` supplies out-of-tree plugins, as for :class:`~kschedlib.Scheduler`.

    ``scores="raw"`` answers each node's weighted plugin total (what the profile
    itself would add up: decisions equal the profile's when this extender is the
    only scorer); ``"extender"`` rescales it to the protocol's 0..10.
    ``limits`` bounds each request's size and time and the state kept between them.
    ``kube_version`` and ``feature_gates`` choose the kube-scheduler behaviour (:mod:`kschedlib.versions`).
    Requests may be handled from several threads at once.
    """

    __slots__ = ("_base", "_base_lock", "_nodes_seen", "_profile", "_scheduler", "_seen", "_workers",
                 "binder", "limits", "scores")

    def __init__(
        self,
        config: Any = None,
        *,
        cluster: Cluster | str | Mapping[str, Any] | Sequence[Any] | None = None,
        profile: str | None = None,
        scores: ScoreScale = "raw",
        binder: ExtenderBinder | None = None,
        registry: Registry | None = None,
        limits: ExtenderLimits = DEFAULT_LIMITS,
        kube_version: str | None = None,
        feature_gates: Mapping[str, bool] | str | None = None,
    ) -> None:
        settings = attrs.evolve(load_config(config), extenders=())
        kube = resolve_kube(kube_version, feature_gates)
        scheduler = Scheduler(settings, seed=0, registry=registry, kube_version=kube.version,
                              feature_gates=kube.overrides)
        name = profile if profile is not None else scheduler.profiles[0]
        if name not in scheduler.profiles:
            raise KschedError(f'profile not found for scheduler name "{name}"')
        objects = [o for o in load_cluster(cluster).objects
                   if not isinstance(o, Pod) or o.node_name] if cluster is not None else []
        scheduler.add_objects(objects)

        def build() -> Worker:
            """Plugins of their own, seeing the cluster's other objects (claims, classes...) as the base does."""
            worker = Scheduler(settings, seed=0, registry=registry, kube_version=kube.version,
                               feature_gates=kube.overrides)
            worker.add_objects(objects)
            return Worker(worker)

        self._scheduler = scheduler
        self._profile = name
        self._base_lock = threading.Lock()
        self._base = scheduler.snapshot()
        self._workers = Workers(build, limits.workers, max_seen=limits.node_cache_size)
        self._seen: OrderedDict[tuple[str, str], Pod] = OrderedDict()
        self._nodes_seen = NodeCache(limits.node_cache_size)
        self.limits = limits
        self.scores = scores
        self.binder = binder

    @property
    def verbs(self) -> tuple[str, ...]:
        """The verbs served."""
        return ("filter", "prioritize", "bind") if self.binder is not None else ("filter", "prioritize")

    @property
    def profile(self) -> str:
        """The scheduler name of the profile served."""
        return self._profile

    @property
    def scheduler(self) -> Scheduler:
        """The scheduler holding the service's base cluster (the cluster file and bound pods)."""
        return self._scheduler

    @property
    def cached_nodes(self) -> int:
        """How many parsed request nodes are kept (at most ``limits.node_cache_size``)."""
        return len(self._nodes_seen)

    def handle(self, verb: str, body: bytes, *, received: float | None = None) -> tuple[int, Any]:
        """The HTTP status and JSON reply for a POST of ``body`` to ``.../<verb>``.

        ``received`` (``time.monotonic()``) is when the body was complete; ``work_timeout`` counts from it.
        """
        return self._handle(verb, body, received, encode=False)

    def handle_bytes(self, verb: str, body: bytes, *, received: float | None = None) -> tuple[int, bytes]:
        """:meth:`handle`, the reply encoded as JSON bytes while the request still holds its worker.

        A request takes a worker before its body is decoded and gives it back only once its reply is
        encoded, so at most ``limits.workers`` decoded requests (with the node objects a filter reply
        echoes) exist at once, however many bodies wait for a worker.
        """
        status, payload = self._handle(verb, body, received, encode=True)
        return status, payload if isinstance(payload, bytes) else json_bytes(payload)

    def _handle(self, verb: str, body: bytes, received: float | None, *, encode: bool) -> tuple[int, Any]:
        if verb not in self.verbs:
            return _reply_error(404, f'unknown verb "{verb}"; this extender serves {", ".join(self.verbs)}')
        deadline = Deadline(self.limits.work_timeout, received)
        worker = self._workers.acquire(deadline)
        if worker is None:
            return _reply_error(503, str(_late(deadline, "waiting for a free worker")))
        handed = False
        try:
            try:
                args = wire.object_value(wire.decode_body(body), verb)
                if args is None:
                    raise BadRequestError("the request body is null")
                if verb == "bind":
                    return 200, self._bind(args)
                request = self._request(args)
            except BadRequestError:
                raise
            except _MALFORMED as exc:
                raise BadRequestError(f"malformed request: {_describe(exc)}") from exc
            handed = True  # the computation gives the worker back
            return 200, self._compute(worker, verb, request, deadline, encode=encode)
        except BadRequestError as exc:
            return _reply_error(exc.status, str(exc))
        except Exception as exc:  # a plugin bug must not take the server down
            return _reply_error(500, f"{type(exc).__name__}: {exc}")
        finally:
            if not handed:
                self._workers.release(worker)

    # --- requests -----------------------------------------------------------------------------

    def _compute(self, worker: Worker, verb: str, request: _Request, deadline: Deadline, *, encode: bool) -> Any:
        """Run the request on its worker on a thread of its own; past the deadline, answer without waiting.

        Plugin code cannot be interrupted: a late computation finishes in the background (its loops stop
        at their next deadline check) and only then gives its worker back.  With ``encode`` the reply is
        JSON bytes, encoded before the worker is given back.
        """
        worker.seen += request.made
        outcome: list[Any] = []
        done = threading.Event()

        def run() -> None:
            try:
                if verb == "filter":
                    reply: Any = self._filter(worker, request, deadline)
                else:
                    reply = self._prioritize(worker, request, deadline)
                outcome.append(json_bytes(reply) if encode else reply)
            except Exception as exc:  # handed to the waiting thread
                outcome.append(exc)
            finally:
                self._workers.release(worker)
                done.set()

        threading.Thread(target=run, name="kschedlib-extender-work", daemon=True).start()
        if not done.wait(max(deadline.remaining(), 0.0)) or not outcome:
            raise _late(deadline, "running the plugins")
        if isinstance(outcome[0], Exception):
            raise outcome[0]
        return outcome[0]

    def _request(self, args: Mapping[str, Any]) -> _Request:
        raw_pod = wire.object_value(wire.field(args, "Pod"), "Pod")
        if raw_pod is None:
            raise BadRequestError("the request has no Pod")
        names = wire.str_list_field(args, "NodeNames")
        node_list = wire.object_value(wire.field(args, "Nodes"), "Nodes")
        items = wire.list_value(wire.field(node_list, "items"), "Nodes.items") if node_list is not None else None
        count = len(items) if items is not None else len(names) if names is not None else 0
        if count > self.limits.max_nodes:
            raise BadRequestError(f"the request names {count} nodes, over this extender's limit of "
                             f"{self.limits.max_nodes}", 413)
        pod = pod_from_dict(raw_pod)
        terms = pod_terms(pod)
        if terms > self.limits.max_terms:
            raise BadRequestError(f"pod {pod.key} has {terms} affinity terms and topology spread constraints, "
                             f"over this extender's limit of {self.limits.max_terms}", 422)
        self._remember(pod)
        base = self._base
        if items is not None:
            raw_by_name: dict[str, Any] = {}
            infos: list[NodeInfo] = []
            made = 0
            for item in items:
                info, new = self._node_info(wire.object_value(item, "Node") or {}, base)
                raw_by_name[info.name] = item
                infos.append(info)
                made += new
            snapshot, restated = request_snapshot(base, infos)
            if restated:  # the snapshot's versions carry the image spread
                infos = [snapshot.get(info.name) for info in infos]
            return _Request(pod, infos, snapshot, raw_by_name, made + restated)
        if names is None:
            raise BadRequestError("the request has neither Nodes nor NodeNames")
        found = []
        for name in names:
            known = base.find(name)
            if known is None:
                raise BadRequestError(f'node "{name}" is not in the extender\'s cluster state '
                                 "(nodeCacheCapable needs a cluster file)")
            found.append(known)
        return _Request(pod, found, base, None)

    def _remember(self, pod: Pod) -> None:
        """Keep the pod for a later ``bind`` (which names it only)."""
        with self._base_lock:
            self._seen[(pod.namespace, pod.name)] = pod
            self._seen.move_to_end((pod.namespace, pod.name))
            if len(self._seen) > _SEEN_PODS:
                self._seen.popitem(last=False)

    def _node_info(self, raw: Mapping[str, Any], base: Snapshot) -> tuple[NodeInfo, bool]:
        """The NodeInfo of a v1 Node dict (the base cluster's when unchanged, else from the LRU) and
        whether it was made anew."""
        metadata = raw.get("metadata")
        name = metadata.get("name") if isinstance(metadata, dict) else None
        known = base.find(name) if isinstance(name, str) else None
        cached = self._nodes_seen.get(name, raw) if isinstance(name, str) and known is None else None
        if cached is not None:
            return cached, False
        node = node_from_dict(raw)
        if known is not None:
            return (known, False) if known.node == node else (known.with_node(node), True)
        info = NodeInfo.of(node)
        self._nodes_seen.put(node.name, raw, info)
        return info, True

    def _filter(self, worker: Worker, request: _Request, deadline: Deadline) -> dict[str, Any]:
        raw = request.raw
        verdicts = worker.scheduler.filter_nodes(request.pod, request.snapshot, request.nodes, profile=self._profile,
                                                 progress=_on_time(deadline))
        if isinstance(verdicts, Status):
            return _filter_reply(raw, [], {}, {}, verdicts.message())
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        passed: list[NodeInfo] = []
        for info in request.nodes:
            status = verdicts.get(info.name)
            if status is not None:
                _sort(status, info, passed, failed, unresolvable)
        return _filter_reply(raw, passed, failed, unresolvable, "")

    def _prioritize(self, worker: Worker, request: _Request, deadline: Deadline) -> list[dict[str, Any]]:
        nodes = request.nodes
        scores = worker.scheduler.score_nodes(request.pod, request.snapshot, nodes, profile=self._profile,
                                              progress=_on_time(deadline))
        if isinstance(scores, Status):
            raise RuntimeError(scores.message())
        totals: Sequence[int] = scores.totals
        if self.scores == "extender" and scores.max_total:
            totals = [total * _MAX_EXTENDER_PRIORITY // scores.max_total for total in totals]
        return [{"Host": info.name, "Score": total} for info, total in zip(nodes, totals, strict=True)]

    def _bind(self, args: Mapping[str, Any]) -> dict[str, Any]:
        assert self.binder is not None
        namespace, name = wire.str_field(args, "PodNamespace"), wire.str_field(args, "PodName")
        node = wire.str_field(args, "Node")
        if not name or not node:
            raise BadRequestError("a binding needs PodName and Node")
        with self._base_lock:
            seen = self._seen.get((namespace, name))
        pod = seen or Pod(name, namespace=namespace or "default", uid=wire.str_field(args, "PodUID"))
        try:
            self.binder(pod, node)
        except Exception as exc:
            return {"Error": str(exc) or type(exc).__name__}
        with self._base_lock:
            scheduler = self._scheduler
            if not scheduler.has_node(node) and (learned := self._nodes_seen.find(node)) is not None:
                scheduler.add_node(learned)  # a bound pod's node joins the base cluster with it
            if scheduler.has_node(node):
                scheduler.add_pod(attrs.evolve(pod, node_name=node))
                self._base = scheduler.snapshot()
        return {"Error": ""}


def _on_time(deadline: Deadline) -> Callable[[str], None]:
    """Stop (a 503) at the next step once the work timeout has passed."""
    def check(stage: str) -> None:
        if deadline.passed():
            raise _late(deadline, stage)
    return check


def _late(deadline: Deadline, stage: str) -> BadRequestError:
    return BadRequestError(f"no answer within the work timeout of {deadline.seconds:g} s (while {stage}); "
                      "kube-scheduler would have given up on this call", 503)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    return str(exc) or type(exc).__name__


def _sort(status: Status, info: NodeInfo, passed: list[NodeInfo], failed: dict[str, str],
          unresolvable: dict[str, str]) -> None:
    if status.is_success:
        passed.append(info)
    elif status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        unresolvable[info.name] = status.message()
    else:
        failed[info.name] = status.message()


def _filter_reply(raw: dict[str, Any] | None, passed: Sequence[NodeInfo], failed: dict[str, str],
                  unresolvable: dict[str, str], error: str) -> dict[str, Any]:
    """Nodes echoed as received (without nodeCacheCapable) or names; ``Error`` with a literal ``%`` escaped."""
    reply: dict[str, Any] = {"Nodes": None, "NodeNames": None, "FailedNodes": failed,
                             "FailedAndUnresolvableNodes": unresolvable, "Error": error.replace("%", "%%")}
    if error:
        return reply
    if raw is not None:
        reply["Nodes"] = {"metadata": {}, "items": [raw[info.name] for info in passed]}
    else:
        reply["NodeNames"] = [info.name for info in passed]
    return reply
