"""A scheduler that has lived through many changes answers as one built afresh from the same cluster.

The loop carries state from cycle to cycle (filter and score columns, per-domain verdicts, spread and
affinity tallies, image memo keys, node-name runs): every one must follow nodes added, removed and relabelled
into other zones, and pods bound and deleted.  Nodes hold no images here: a NodeInfo's image summaries
count the nodes holding each image when that node last changed (kube-scheduler's cache does the same), so
an image's count legitimately differs between a long-lived cache and a new one.  After each change the next
pod's explain (feasible nodes, every node's status and per-plugin scores, the best nodes) is compared
with that of a scheduler that starts from the cluster as it now is.
"""

from __future__ import annotations

import random
from typing import Any

import attrs
import pytest

import kschedlib
from kschedlib.model import (
    Affinity,
    LabelSelector,
    Node,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from tests.helpers import make_node, make_pod, rebuilt

_IMAGES = ("web:1", "api:2")


def _pod(name: str, app: str, rng: random.Random) -> Pod:
    apps = LabelSelector(match_labels={"app": app})
    spread = TopologySpreadConstraint(max_skew=1, topology_key="topology.kubernetes.io/zone",
                                      when_unsatisfiable="DoNotSchedule", label_selector=apps)
    apart = PodAffinity(preferred=(WeightedPodAffinityTerm(
        100, PodAffinityTerm(topology_key="kubernetes.io/hostname", label_selector=apps)),))
    pod = make_pod(name, requests={"cpu": rng.choice(["100m", "500m", "1"]), "memory": "128Mi"},
                   labels={"app": app}, image=rng.choice(_IMAGES))
    return attrs.evolve(pod, topology_spread_constraints=(spread,), affinity=Affinity(pod_anti_affinity=apart))


def _node(number: int, zone: int, image: str | None) -> Node:
    return make_node(f"n{number}", labels={"topology.kubernetes.io/zone": f"z{zone}",
                                           "kubernetes.io/hostname": f"n{number}"},
                     allocatable={"cpu": "4", "memory": "16Gi", "pods": "20"},
                     images=[([image], 300 * 1024 * 1024)] if image else [])



def _answer(scheduler: kschedlib.Scheduler, pod: Pod) -> dict[str, Any]:
    found = scheduler.explain(pod).to_dict()
    return {key: found[key] for key in ("feasible", "filtered", "scores", "best", "message", "postfilter")}


@pytest.mark.parametrize("seed", range(6))
def test_long_running_scheduler_answers_as_a_fresh_one(seed: int) -> None:
    rng = random.Random(seed)
    long = kschedlib.Scheduler(seed=0, clock=kschedlib.FakeClock())
    zones: dict[int, int] = {}
    made = 0
    for _ in range(rng.randint(3, 10)):
        zones[made] = rng.randint(0, 3)
        long.add_node(_node(made, zones[made], None))
        made += 1
    pods = 0
    for _ in range(50):
        roll = rng.random()
        if roll < 0.1 and len(zones) > 1:
            gone = rng.choice(list(zones))
            del zones[gone]
            long.remove_node(f"n{gone}")
        elif roll < 0.2:
            zones[made] = rng.randint(0, 3)
            long.add_node(_node(made, zones[made], None))
            made += 1
        elif roll < 0.35:
            moved = rng.choice(list(zones))
            zones[moved] = rng.randint(0, 5)
            long.update_node(_node(moved, zones[moved], None))
        elif roll < 0.45:
            bound = [pod for pod in long.pods().values() if pod.node_name]
            if bound:
                long.remove_pod(rng.choice(bound))
        else:
            for _ in range(rng.randint(1, 3)):
                long.add_pod(_pod(f"p{pods}", f"app{rng.randint(0, 2)}", rng))
                pods += 1
            while long.schedule_one() is not None:
                pass
        probe = _pod("probe", f"app{rng.randint(0, 2)}", rng)
        assert _answer(long, probe) == _answer(rebuilt(long), probe)
