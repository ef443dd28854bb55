"""The scheduler cache (reference §12.2, §12.3): assumed pods, ghosts, incremental snapshots."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import attrs
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, precondition, rule

from kschedlib._internal.cache import Cache
from kschedlib.errors import CacheError
from kschedlib.framework import NodeInfo, PodInfo, Snapshot
from kschedlib.model import Affinity, LabelSelector, Namespace, Node, Pod, PodAffinity, PodAffinityTerm, Resources
from kschedlib.model.resources import pod_requests
from tests.helpers import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"


def zoned(name: str, zone: str = "", cpu: str = "4", images: tuple[tuple[tuple[str, ...], int], ...] = ()) -> Node:
    labels = {"kubernetes.io/hostname": name}
    if zone:
        labels[ZONE] = zone
    return make_node(name, labels=labels, allocatable={"cpu": cpu, "memory": "8Gi", "pods": "110"}, images=images)


def pod_on(name: str, node: str, cpu: str = "1", uid: str = "") -> PodInfo:
    return PodInfo.of(make_pod(name, node_name=node, requests={"cpu": cpu}, uid=uid or f"uid-{name}"))


def cpu_on(cache: Cache, node: str) -> int:
    info = cache.node(node)
    assert info is not None
    return info.requested.milli_cpu


def snapshot_names(snapshot: Snapshot) -> list[str]:
    return [info.name for info in snapshot]


# --- assume / forget / add / update / remove (§12.2) ------------------------------------------


def test_assume_counts_the_pod_immediately() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.assume_pod(pod_on("a", "n1", "1500m"))
    assert cpu_on(cache, "n1") == 1500
    assert cache.is_assumed("uid-a")
    assert cache.snapshot().get("n1").requested.milli_cpu == 1500


def test_assume_needs_a_node_name() -> None:
    cache = Cache()
    with pytest.raises(CacheError, match=r"uid-a\(default/a\)"):
        cache.assume_pod(pod_on("a", ""))


def test_assume_twice_is_refused_with_kube_schedulers_message() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.assume_pod(pod_on("a", "n1"))
    with pytest.raises(CacheError, match=r"^pod uid-a\(default/a\) is in the cache, so can't be assumed$"):
        cache.assume_pod(pod_on("a", "n1"))
    assert cpu_on(cache, "n1") == 1000


def test_assume_a_bound_pod_is_refused() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.add_pod(pod_on("a", "n1"))
    with pytest.raises(CacheError, match="is in the cache, so can't be assumed"):
        cache.assume_pod(pod_on("a", "n1"))


def test_forget_undoes_assume() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    info = pod_on("a", "n1")
    cache.assume_pod(info)
    cache.forget_pod(info.pod)
    assert cpu_on(cache, "n1") == 0
    assert cache.pod_state("uid-a") is None
    assert not cache.is_assumed("uid-a")


def test_forget_a_pod_that_was_not_assumed() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    with pytest.raises(CacheError, match=r"^pod uid-a\(default/a\) wasn't assumed so cannot be forgotten$"):
        cache.forget_pod(pod_on("a", "n1").pod)
    cache.add_pod(pod_on("a", "n1"))
    with pytest.raises(CacheError, match="wasn't assumed so cannot be forgotten"):
        cache.forget_pod(pod_on("a", "n1").pod)
    assert cpu_on(cache, "n1") == 1000


def test_forget_on_another_node() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.assume_pod(pod_on("a", "n1"))
    with pytest.raises(CacheError, match=r"was assumed on n1 but assigned to n2"):
        cache.forget_pod(pod_on("a", "n2").pod)
    assert cache.is_assumed("uid-a")
    assert cpu_on(cache, "n1") == 1000


def test_add_confirms_an_assumed_pod() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.assume_pod(pod_on("a", "n1"))
    cache.add_pod(pod_on("a", "n1"))
    assert not cache.is_assumed("uid-a")
    assert cpu_on(cache, "n1") == 1000
    with pytest.raises(CacheError, match="wasn't assumed"):
        cache.forget_pod(pod_on("a", "n1").pod)


def test_add_of_an_assumed_pod_bound_elsewhere_moves_it() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.add_node(zoned("n2"))
    cache.assume_pod(pod_on("a", "n1"))
    cache.add_pod(pod_on("a", "n2"))
    assert (cpu_on(cache, "n1"), cpu_on(cache, "n2")) == (0, 1000)
    assert not cache.is_assumed("uid-a")


def test_add_twice_is_refused() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.add_pod(pod_on("a", "n1"))
    with pytest.raises(CacheError, match="already in the cache"):
        cache.add_pod(pod_on("a", "n1"))
    assert cpu_on(cache, "n1") == 1000


def test_update_replaces_a_bound_pod() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.add_pod(pod_on("a", "n1", "1"))
    cache.update_pod(pod_on("a", "n1", "3"))
    assert cpu_on(cache, "n1") == 3000
    state = cache.pod_state("uid-a")
    assert state is not None
    assert state.pod_info.requests.milli_cpu == 3000
    info = cache.node("n1")
    assert info is not None
    assert len(info.pods) == 1


def test_update_of_an_assumed_pod_confirms_it() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.assume_pod(pod_on("a", "n1", "1"))
    cache.update_pod(pod_on("a", "n1", "2"))
    assert not cache.is_assumed("uid-a")
    assert cpu_on(cache, "n1") == 2000


def test_update_of_an_unknown_pod() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    with pytest.raises(CacheError, match=r"uid-a\(default/a\) is not in the cache, so can't be updated"):
        cache.update_pod(pod_on("a", "n1"))


@pytest.mark.parametrize("assumed", [False, True], ids=["bound", "assumed"])
def test_remove(assumed: bool) -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    info = pod_on("a", "n1")
    if assumed:
        cache.assume_pod(info)
    else:
        cache.add_pod(info)
    cache.remove_pod(info.pod)
    assert cpu_on(cache, "n1") == 0
    assert cache.pod_state("uid-a") is None


def test_remove_an_unknown_pod() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    with pytest.raises(CacheError, match="is not in the cache, so can't be removed"):
        cache.remove_pod(pod_on("a", "n1").pod)


def test_remove_uses_the_cached_node_of_the_pod() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.add_pod(pod_on("a", "n1"))
    cache.remove_pod(make_pod("a", uid="uid-a"))  # the deleted object may lack spec.nodeName
    assert cpu_on(cache, "n1") == 0


# --- ghosts -----------------------------------------------------------------------------------


def test_pods_may_arrive_before_their_node() -> None:
    cache = Cache()
    cache.add_pod(pod_on("a", "late"))
    assert snapshot_names(cache.snapshot()) == []
    assert cache.node_names() == []
    cache.add_node(zoned("late"))
    assert cache.snapshot().get("late").requested.milli_cpu == 1000


def test_removed_node_with_pods_becomes_a_ghost() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.add_node(zoned("n2"))
    cache.add_pod(pod_on("a", "n1"))
    cache.snapshot()
    cache.remove_node("n1")
    assert snapshot_names(cache.snapshot()) == ["n2"]
    ghost = cache.node("n1")
    assert ghost is not None
    assert ghost.node is None
    cache.remove_pod(pod_on("a", "n1").pod)
    assert cache.node("n1") is None


def test_re_added_node_keeps_its_pods() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.add_pod(pod_on("a", "n1"))
    cache.remove_node("n1")
    cache.add_node(zoned("n1"))
    assert cache.snapshot().get("n1").requested.milli_cpu == 1000


def test_removing_an_empty_node_deletes_it() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.remove_node("n1")
    assert cache.node("n1") is None


@pytest.mark.parametrize("setup", ["unknown", "ghost"])
def test_remove_a_node_the_cache_does_not_have(setup: str) -> None:
    cache = Cache()
    if setup == "ghost":
        cache.add_pod(pod_on("a", "n1"))
    with pytest.raises(CacheError, match="node n1 is not in the cache"):
        cache.remove_node("n1")


# --- assumed pod expiry -----------------------------------------------------------------------


def test_assumed_pods_never_expire_by_default() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    info = pod_on("a", "n1")
    cache.assume_pod(info)
    cache.finish_binding(info.pod, now=0.0)
    assert cache.expire_assumed(10**9) == []
    assert cache.is_assumed("uid-a")


def test_assumed_pods_expire_after_the_ttl_once_binding_finished() -> None:
    cache = Cache(assumed_ttl=30.0)
    cache.add_node(zoned("n1"))
    finished, unfinished = pod_on("a", "n1"), pod_on("b", "n1")
    cache.assume_pod(finished)
    cache.assume_pod(unfinished)
    cache.finish_binding(finished.pod, now=100.0)
    assert cache.expire_assumed(130.0) == []
    assert cache.expire_assumed(130.5) == [finished.pod]
    assert cache.pod_state("uid-a") is None
    assert cache.is_assumed("uid-b")
    assert cpu_on(cache, "n1") == 1000


def test_finish_binding_ignores_pods_that_are_not_assumed() -> None:
    cache = Cache(assumed_ttl=1.0)
    cache.add_node(zoned("n1"))
    cache.add_pod(pod_on("a", "n1"))
    cache.finish_binding(pod_on("a", "n1").pod, now=0.0)
    assert cache.expire_assumed(100.0) == []


# --- snapshots (§12.3) ------------------------------------------------------------------------


def test_snapshot_uses_the_zone_interleaved_order() -> None:
    cache = Cache()
    for name, zone in [("a1", "A"), ("a2", "A"), ("a3", "A"), ("b1", "B"), ("c1", "C"), ("c2", "C")]:
        cache.add_node(zoned(name, zone))
    assert snapshot_names(cache.snapshot()) == ["a1", "b1", "c1", "a2", "c2", "a3"]
    assert cache.node_names() == ["a1", "b1", "c1", "a2", "c2", "a3"]


def _requested(snapshot: Snapshot) -> list[int]:
    return [info.requested.milli_cpu for info in snapshot]


def test_a_snapshot_dropped_before_the_next_costs_no_copy_of_the_node_list() -> None:
    cache = Cache()
    for name in ("n1", "n2", "n3"):
        cache.add_node(zoned(name))
    live = cache.snapshot()._nodes  # the snapshot itself is dropped at once
    cache.assume_pod(pod_on("a", "n2", "500m"))
    after = cache.snapshot()
    assert after._nodes is live  # the same list, written in place
    assert [info.requested.milli_cpu for info in after._nodes] == [0, 500, 0]


def test_held_snapshots_never_change() -> None:
    cache = Cache()
    for name in ("n1", "n2", "n3"):
        cache.add_node(zoned(name))
    first, again = cache.snapshot(), cache.snapshot()  # handed out without a change between
    infos = cache.snapshot().node_infos  # a tuple taken from a snapshot since dropped
    cache.assume_pod(pod_on("a", "n2", "500m"))
    after = cache.snapshot()
    for held in (first, again):
        assert _requested(held) == [0, 0, 0]
        assert held.get("n2").requested.milli_cpu == 0
        assert type(held._nodes) is tuple
    assert [info.requested.milli_cpu for info in infos] == [0, 0, 0]
    assert _requested(after) == [0, 500, 0]
    assert after.node_infos[0] is first.node_infos[0]
    cache.assume_pod(pod_on("b", "n3", "250m"))
    assert _requested(after) == [0, 500, 0]
    assert _requested(cache.snapshot()) == [0, 500, 250]


def test_an_iterator_outlives_its_snapshot_unchanged() -> None:
    cache = Cache()
    for name in ("n1", "n2"):
        cache.add_node(zoned(name))
    walk = iter(cache.snapshot())
    cache.assume_pod(pod_on("a", "n1", "500m"))
    cache.snapshot()
    assert [info.requested.milli_cpu for info in walk] == [0, 0]


def test_zone_change_reorders_the_snapshot() -> None:
    cache = Cache()
    for name, zone in [("a1", "A"), ("a2", "A"), ("b1", "B")]:
        cache.add_node(zoned(name, zone))
    cache.snapshot()
    cache.update_node(zoned("a1", "B"))
    assert snapshot_names(cache.snapshot()) == ["a2", "b1", "a1"]


def test_unchanged_nodes_are_not_copied_again() -> None:
    cache = Cache()
    for name in ("n1", "n2", "n3"):
        cache.add_node(zoned(name))
    first = cache.snapshot()
    cache.add_pod(pod_on("a", "n2"))
    second = cache.snapshot()
    assert second.get("n1") is first.get("n1")
    assert second.get("n3") is first.get("n3")
    assert second.get("n2") is not first.get("n2")
    assert second.get("n2").requested.milli_cpu == 1000
    assert first.get("n2").requested.milli_cpu == 0  # an old snapshot never changes
    third = cache.snapshot()
    assert all(third.get(n) is second.get(n) for n in ("n1", "n2", "n3"))


def test_old_snapshots_are_immutable_across_node_changes() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.add_node(zoned("n2"))
    first = cache.snapshot()
    cache.remove_node("n1")
    cache.add_node(zoned("n3"))
    cache.update_node(zoned("n2", cpu="16"))
    second = cache.snapshot()
    assert snapshot_names(first) == ["n1", "n2"]
    assert first.get("n2").allocatable.milli_cpu == 4000
    assert snapshot_names(second) == ["n2", "n3"]
    assert second.get("n2").allocatable.milli_cpu == 16000


def test_snapshot_carries_namespaces() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    snapshot = cache.snapshot({"team": Namespace("team", {"tier": "gold"})})
    assert snapshot.namespace_labels("team") == {"tier": "gold"}


def test_image_states_count_the_nodes_holding_an_image() -> None:
    cache = Cache()
    cache.add_node(zoned("n1", images=((("img:1", "img@sha"), 500),)))
    cache.add_node(zoned("n2", images=((("img:1",), 500),)))
    cache.add_node(zoned("n3"))
    snapshot = cache.snapshot()
    states = snapshot.get("n2").image_states
    assert states["img:1"].num_nodes == 2
    assert states["img:1"].size == 500
    assert snapshot.get("n1").image_states["img@sha"].num_nodes == 1
    assert snapshot.get("n3").image_states == {}


def test_dump() -> None:
    cache = Cache()
    cache.add_node(zoned("n1"))
    cache.add_pod(pod_on("a", "n1"))
    cache.assume_pod(pod_on("b", "n1"))
    assert cache.dump() == {"nodes": {"n1": ["default/a", "default/b"]}, "assumed": ["default/b"]}


# --- the snapshot equals a from-scratch rebuild, after any sequence of events -----------------

NODE_NAMES = ["n1", "n2", "n3", "n4", "n5"]
ZONES = ["", "A", "B"]
ANTI = Affinity(pod_anti_affinity=PodAffinity(required=(PodAffinityTerm("kubernetes.io/hostname",
                                                                         LabelSelector({"app": "x"})),)))
IMAGES = ((("shared:1",), 100),)


def _normalized(resources: Resources) -> tuple[int, int, int, dict[str, int]]:
    return (resources.milli_cpu, resources.memory, resources.ephemeral_storage,
            {k: v for k, v in resources.scalar.items() if v})


def _sum_requests(pods: Iterable[Pod]) -> Resources:
    total = Resources()
    for pod in pods:
        total = total.add(pod_requests(pod))
    return total


@attrs.define
class ModelPod:
    pod: Pod
    assumed: bool


class CacheMachine(RuleBasedStateMachine):
    """Node and pod events against a model; after every step the snapshot equals a rebuild."""

    def __init__(self) -> None:
        super().__init__()
        self.cache = Cache()
        self.nodes: dict[str, Node] = {}
        self.zones: dict[str, list[str]] = {}
        self.zone_of: dict[str, str] = {}
        self.pods: dict[str, ModelPod] = {}
        self.counter = 0
        self.previous: Snapshot | None = None
        self.previous_infos: list[NodeInfo] = []
        self.changed: set[str] = set()

    pod_uids = Bundle("pod_uids")

    @initialize()
    def start(self) -> None:
        self.previous = self.cache.snapshot()

    # --- model helpers -------------------------------------------------------------------

    def _tree_remove(self, name: str) -> None:
        zone = self.zone_of.pop(name)
        self.zones[zone].remove(name)
        if not self.zones[zone]:
            del self.zones[zone]

    def _order(self) -> list[str]:
        out: list[str] = []
        depth = 0
        while len(out) < len(self.zone_of):
            out.extend(m[depth] for m in self.zones.values() if depth < len(m))
            depth += 1
        return out

    def _new_pod(self, node: str, cpu: str, anti: bool, port: bool) -> Pod:
        self.counter += 1
        name = f"p{self.counter}"
        return make_pod(name, node_name=node, requests={"cpu": cpu, "memory": "64Mi"}, uid=f"uid-{name}",
                        host_ports=[9000 + self.counter] if port else [], affinity=ANTI if anti else None)

    # --- node events ---------------------------------------------------------------------

    @rule(name=st.sampled_from(NODE_NAMES), zone=st.sampled_from(ZONES), cpu=st.sampled_from(["2", "4", "8"]),
          image=st.booleans())
    def add_or_update_node(self, name: str, zone: str, cpu: str, image: bool) -> None:
        node = zoned(name, zone, cpu, IMAGES if image else ())
        self.cache.add_node(node)
        if self.zone_of.get(name) != zone:
            if name in self.zone_of:
                self._tree_remove(name)
            self.zones.setdefault(zone, []).append(name)
            self.zone_of[name] = zone
        self.nodes[name] = node
        self.changed.add(name)

    @precondition(lambda self: self.nodes)
    @rule(data=st.data())
    def remove_node(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(self.nodes)))
        self.cache.remove_node(name)
        del self.nodes[name]
        self._tree_remove(name)

    @rule(name=st.sampled_from(NODE_NAMES))
    def remove_unknown_node_changes_nothing(self, name: str) -> None:
        if name in self.nodes:
            return
        with pytest.raises(CacheError):
            self.cache.remove_node(name)

    # --- pod events ----------------------------------------------------------------------

    @rule(target=pod_uids, node=st.sampled_from(NODE_NAMES), cpu=st.sampled_from(["100m", "1", "2500m"]),
          assumed=st.booleans(), anti=st.booleans(), port=st.booleans())
    def add_pod(self, node: str, cpu: str, assumed: bool, anti: bool, port: bool) -> str:
        pod = self._new_pod(node, cpu, anti, port)
        if assumed:
            self.cache.assume_pod(PodInfo.of(pod))
        else:
            self.cache.add_pod(PodInfo.of(pod))
        self.pods[pod.uid] = ModelPod(pod, assumed)
        self.changed.add(node)
        return pod.uid

    @rule(uid=pod_uids, node=st.sampled_from(NODE_NAMES))
    def confirm_assumed(self, uid: str, node: str) -> None:
        model = self.pods.get(uid)
        if model is None or not model.assumed:
            return
        bound = attrs.evolve(model.pod, node_name=node)
        self.cache.add_pod(PodInfo.of(bound))
        self.changed |= {model.pod.node_name, node}
        self.pods[uid] = ModelPod(bound, False)

    @rule(uid=pod_uids)
    def forget_assumed(self, uid: str) -> None:
        model = self.pods.get(uid)
        if model is None:
            return
        if not model.assumed:
            with pytest.raises(CacheError):
                self.cache.forget_pod(model.pod)
            return
        self.cache.forget_pod(model.pod)
        self.changed.add(model.pod.node_name)
        del self.pods[uid]

    @rule(uid=pod_uids, cpu=st.sampled_from(["0", "300m", "3"]), labels=st.sampled_from([{}, {"app": "x"}]))
    def update_pod(self, uid: str, cpu: str, labels: dict[str, str]) -> None:
        model = self.pods.get(uid)
        if model is None:
            with pytest.raises(CacheError):
                self.cache.update_pod(PodInfo.of(make_pod("gone", uid=uid, node_name="n1")))
            return
        container = attrs.evolve(model.pod.containers[0], requests={"cpu": make_pod(
            "x", requests={"cpu": cpu}).containers[0].requests["cpu"]})
        new = attrs.evolve(model.pod, containers=(container,), labels=labels)
        self.cache.update_pod(PodInfo.of(new))
        self.pods[uid] = ModelPod(new, False)
        self.changed.add(new.node_name)

    @rule(uid=pod_uids)
    def remove_pod(self, uid: str) -> None:
        model = self.pods.pop(uid, None)
        if model is None:
            with pytest.raises(CacheError):
                self.cache.remove_pod(make_pod("gone", uid=uid, node_name="n1"))
            return
        self.cache.remove_pod(model.pod)
        self.changed.add(model.pod.node_name)

    @rule(uid=pod_uids)
    def assume_a_known_pod_is_refused(self, uid: str) -> None:
        model = self.pods.get(uid)
        if model is None:
            return
        with pytest.raises(CacheError):
            self.cache.assume_pod(PodInfo.of(model.pod))

    # --- checks --------------------------------------------------------------------------

    @invariant()
    def snapshot_equals_a_rebuild(self) -> None:
        snapshot = self.cache.snapshot()
        order = self._order()
        assert snapshot_names(snapshot) == order
        assert self.cache.node_names() == order
        assert snapshot.num_nodes == len(self.nodes)
        holders = {name for name, node in self.nodes.items() if node.images}
        for name in order:
            info = snapshot.get(name)
            pods = [m.pod for m in self.pods.values() if m.pod.node_name == name]
            fresh = NodeInfo.of(self.nodes[name], tuple(PodInfo.of(p) for p in pods))
            assert info.node == self.nodes[name]
            assert info.allocatable == fresh.allocatable
            assert Counter(p.pod.uid for p in info.pods) == Counter(p.uid for p in pods)
            assert _normalized(info.requested) == _normalized(fresh.requested)
            assert info.non_zero_requested == fresh.non_zero_requested
            assert info.used_ports == fresh.used_ports
            assert Counter(p.pod.uid for p in info.pods_with_affinity) == \
                Counter(p.pod.uid for p in fresh.pods_with_affinity)
            assert Counter(p.pod.uid for p in info.pods_with_required_anti_affinity) == \
                Counter(p.pod.uid for p in fresh.pods_with_required_anti_affinity)
            assert set(info.image_states) == ({"shared:1"} if name in holders else set())
            if name in self.changed:  # a node copied now sees the current image spread
                for state in info.image_states.values():
                    assert state.num_nodes == len(holders)
        assert [i.name for i in snapshot.have_pods_with_required_anti_affinity] == \
            [n for n in order if any(m.pod.affinity is not None for m in self.pods.values() if m.pod.node_name == n)]
        if self.previous is not None:
            for name in order:
                old = self.previous.find(name)
                if name not in self.changed and old is not None:
                    assert snapshot.get(name) is old, f"{name} was copied although it did not change"
            assert list(self.previous._nodes) == self.previous_infos, "a snapshot still held changed"
        self.previous = snapshot
        self.previous_infos = list(snapshot._nodes)
        self.changed = set()

    @invariant()
    def requested_is_the_sum_of_the_pods_requests(self) -> None:
        for name in {m.pod.node_name for m in self.pods.values()} | set(self.nodes):
            info = self.cache.node(name)
            pods = [m.pod for m in self.pods.values() if m.pod.node_name == name]
            if info is None:
                assert not pods
                assert name not in self.nodes
                continue
            assert _normalized(info.requested) == _normalized(_sum_requests(pods))
            assert {s.pod_info.pod.uid for s in self.cache.pods() if s.pod_info.pod.node_name == name} == \
                {p.uid for p in pods}

    @invariant()
    def assumed_flags_match(self) -> None:
        for uid, model in self.pods.items():
            assert self.cache.is_assumed(uid) == model.assumed
        assert len(list(self.cache.pods())) == len(self.pods)


CacheMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestCacheMachine = CacheMachine.TestCase
