"""ExtenderService: a profile's Filter and Score plugins answering the extender protocol (no HTTP here).

The service keeps a cluster state: the nodes it was sent (without
``nodeCacheCapable``), plus the nodes and bound pods of a cluster file, plus the
pods bound through its ``bind`` verb.  ``handle(verb, body)`` returns an HTTP
status and a JSON-able reply; bad input is a 4xx with ``{"error": ...}``,
never an exception.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, final

import attrs

from kschedlib._internal import extender_wire as wire
from kschedlib._internal.documents import load_config
from kschedlib._internal.runtime import ProfileRuntime
from kschedlib.errors import KschedError
from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.node_info import NodeInfo
from kschedlib.framework.registry import Registry
from kschedlib.framework.status import Code, Status
from kschedlib.model.convert import node_from_dict, pod_from_dict
from kschedlib.model.objects import Node, Pod
from kschedlib.scheduler import Scheduler
from kschedlib.simulation.cluster import Cluster, load_cluster

__all__ = ["BadRequest", "ExtenderService", "ScoreScale"]

ScoreScale = Literal["raw", "extender"]
ExtenderBinder = Callable[[Pod, str], None]
_SEEN_PODS: Final = 10_000
_PARSED_NODES: Final = 100_000
_MAX_EXTENDER_PRIORITY: Final = 10


class BadRequest(KschedError, ValueError):
    """A request the service cannot act on (answered with ``status``, 400 by default)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _reply_error(status: int, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": message}


@final
class ExtenderService:
    """Filter and prioritize (and optionally bind) with one profile of a KubeSchedulerConfiguration.

    The config's own ``extenders`` are ignored (the service is the extender);
    ``registry`` supplies out-of-tree plugins, as for :class:`~kschedlib.Scheduler`.

    ``scores="raw"`` answers each node's weighted plugin total (what the profile
    itself would add up: decisions equal the profile's when this extender is the
    only scorer); ``"extender"`` rescales it to the protocol's 0..10.
    """

    __slots__ = ("_lock", "_parsed", "_profile", "_runtime", "_scheduler", "_seen", "binder", "scores")

    def __init__(
        self,
        config: Any = None,
        *,
        cluster: Cluster | str | Mapping[str, Any] | Sequence[Any] | None = None,
        profile: str | None = None,
        scores: ScoreScale = "raw",
        binder: ExtenderBinder | None = None,
        registry: Registry | None = None,
    ) -> None:
        settings = load_config(config)
        scheduler = Scheduler(attrs.evolve(settings, extenders=()), seed=0, registry=registry)
        name = profile if profile is not None else scheduler.profiles[0]
        if name not in scheduler.profiles:
            raise KschedError(f'profile not found for scheduler name "{name}"')
        if cluster is not None:
            loaded = load_cluster(cluster)
            scheduler.add_objects([o for o in loaded.objects if not isinstance(o, Pod) or o.node_name])
        self._scheduler = scheduler
        self._profile = name
        self._runtime: ProfileRuntime = scheduler.engine.profiles[name]
        self._lock = threading.Lock()
        self._seen: OrderedDict[tuple[str, str], Pod] = OrderedDict()
        self._parsed: dict[str, tuple[Mapping[str, Any], Node]] = {}
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
        """The scheduler holding the service's cluster state."""
        return self._scheduler

    def handle(self, verb: str, body: bytes) -> tuple[int, Any]:
        """The HTTP status and JSON reply for a POST of ``body`` to ``.../<verb>``."""
        if verb not in self.verbs:
            return _reply_error(404, f'unknown verb "{verb}"; this extender serves {", ".join(self.verbs)}')
        try:
            args = wire.object_value(wire.decode_body(body), verb)
            if args is None:
                raise BadRequest("the request body is null")
            with self._lock:
                if verb == "filter":
                    return 200, self._filter(args)
                if verb == "prioritize":
                    return 200, self._prioritize(args)
                return 200, self._bind(args)
        except BadRequest as exc:
            return _reply_error(exc.status, str(exc))
        except (KschedError, ValueError) as exc:
            return _reply_error(400, str(exc))
        except Exception as exc:  # a plugin bug must not take the server down
            return _reply_error(500, f"{type(exc).__name__}: {exc}")

    # --- requests -----------------------------------------------------------------------------

    def _pod(self, args: Mapping[str, Any]) -> Pod:
        raw = wire.object_value(wire.field(args, "Pod"), "Pod")
        if raw is None:
            raise BadRequest("the request has no Pod")
        pod = pod_from_dict(raw)
        self._seen[(pod.namespace, pod.name)] = pod
        self._seen.move_to_end((pod.namespace, pod.name))
        if len(self._seen) > _SEEN_PODS:
            self._seen.popitem(last=False)
        return pod

    def _nodes(self, args: Mapping[str, Any]) -> tuple[list[NodeInfo], dict[str, Any] | None]:
        """The requested nodes (snapshot NodeInfos, request order) and, for echoing, their raw objects."""
        names = wire.str_list_field(args, "NodeNames")
        node_list = wire.object_value(wire.field(args, "Nodes"), "Nodes")
        raw_by_name: dict[str, Any] | None = None
        if node_list is not None:
            items = wire.list_value(wire.field(node_list, "items"), "Nodes.items")
            raw_by_name = {}
            nodes: list[Node] = []
            for item in items:
                node = self._parse_node(wire.object_value(item, "Node") or {})
                raw_by_name[node.name] = item
                nodes.append(node)
            self._learn(nodes)
            names = [node.name for node in nodes]
        elif names is None:
            raise BadRequest("the request has neither Nodes nor NodeNames")
        snapshot = self._scheduler.snapshot()
        self._scheduler.engine.handles[self._profile].set_snapshot(snapshot)
        infos = []
        for name in names:
            info = snapshot.find(name)
            if info is None:
                raise BadRequest(f'node "{name}" is not in the extender\'s cluster state '
                                 "(nodeCacheCapable needs a cluster file)")
            infos.append(info)
        return infos, raw_by_name

    def _parse_node(self, raw: Mapping[str, Any]) -> Node:
        """The Node of a v1 dict, reused while a node's dict is unchanged (kube sends the same ones again)."""
        name = (raw.get("metadata") or {}).get("name") if isinstance(raw.get("metadata"), dict) else None
        known = self._parsed.get(name) if isinstance(name, str) else None
        if known is not None and known[0] == raw:
            return known[1]
        node = node_from_dict(raw)
        if len(self._parsed) >= _PARSED_NODES:
            self._parsed.clear()
        self._parsed[node.name] = (raw, node)
        return node

    def _learn(self, nodes: Sequence[Node]) -> None:
        cache = self._scheduler.engine.cache
        for node in nodes:
            known = cache.node(node.name)
            if known is None or (known.node is not node and known.node != node):
                self._scheduler.add_node(node)

    def _filter(self, args: Mapping[str, Any]) -> dict[str, Any]:
        pod = self._pod(args)
        nodes, raw = self._nodes(args)
        runtime = self._runtime
        state = CycleState()
        pre = runtime.run_pre_filter(state, pod)
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        passed: list[NodeInfo] = []
        if pre.status.code is Code.ERROR:
            return _filter_reply(raw, [], {}, {}, pre.status.message())
        allowed = pre.result.node_names if pre.result is not None else None
        check = runtime.filter_runner(state, pod)
        rejected = pre.status.is_rejected  # then every node carries PreFilter's status
        for info in nodes:
            if not rejected and allowed is not None and info.name not in allowed:
                continue  # as in kube-scheduler: excluded by PreFilter, with no status
            status = pre.status if rejected else check(state, pod, info)
            if status.code is Code.ERROR:
                return _filter_reply(raw, [], {}, {}, status.message())
            _sort(status, info, passed, failed, unresolvable)
        return _filter_reply(raw, passed, failed, unresolvable, "")

    def _prioritize(self, args: Mapping[str, Any]) -> list[dict[str, Any]]:
        pod = self._pod(args)
        nodes, _ = self._nodes(args)
        runtime = self._runtime
        state = CycleState()
        runtime.run_pre_filter(state, pod)
        if not runtime.score:
            return [{"Host": info.name, "Score": 0} for info in nodes]
        status = runtime.run_pre_score(state, pod, nodes)
        table = runtime.run_score(state, pod, nodes, detail=False) if status.is_success else status
        if isinstance(table, Status):
            raise RuntimeError(table.message())
        totals = table.totals
        if self.scores == "extender":
            active = [name for name, _ in runtime.score if name not in state.skip_score_plugins]
            top = 100 * sum(runtime.weights[name] for name in active) or 1
            totals = [total * _MAX_EXTENDER_PRIORITY // top for total in totals]
        return [{"Host": info.name, "Score": total} for info, total in zip(nodes, totals, strict=True)]

    def _bind(self, args: Mapping[str, Any]) -> dict[str, Any]:
        assert self.binder is not None
        namespace, name = wire.str_field(args, "PodNamespace"), wire.str_field(args, "PodName")
        node = wire.str_field(args, "Node")
        if not name or not node:
            raise BadRequest("a binding needs PodName and Node")
        pod = self._seen.get((namespace, name)) or Pod(name, namespace=namespace or "default",
                                                       uid=wire.str_field(args, "PodUID"))
        try:
            self.binder(pod, node)
        except Exception as exc:
            return {"Error": str(exc) or type(exc).__name__}
        if self._scheduler.engine.cache.node(node) is not None:
            self._scheduler.add_pod(attrs.evolve(pod, node_name=node))
        return {"Error": ""}


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
