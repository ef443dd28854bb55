"""An embedding host: kschedlib decides where pods go, the host binds them, evicts and keeps time.

The host here stands for a batch or GPU-cluster scheduler with its own record of
what runs where (``Ledger``, in place of an API server or a database).  It

* feeds nodes and pods to a ``kschedlib.Scheduler`` as they appear,
* binds through its own Bind plugin, ``LedgerBinder``, which writes to the ledger
  (the in-tree ``DefaultBinder`` is disabled),
* evicts the victims that preemption names, and tells the scheduler they are gone,
* drives time with a ``FakeClock``, jumping to ``next_wakeup()`` when pods back off.

Run it with ``python examples/host_scheduler_loop.py``.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Final

import kschedlib
from kschedlib.framework import BindPlugin, CycleState, Status
from kschedlib.model import Container, Node, Pod, parse_quantity


@dataclasses.dataclass
class Ledger:
    """The host's own record of placements."""

    placements: dict[str, str] = dataclasses.field(default_factory=dict)

    def bind(self, pod: str, node: str) -> None:
        self.placements[pod] = node

    def evict(self, pod: str) -> None:
        del self.placements[pod]


class LedgerBinder(BindPlugin):
    """Binds by writing to the ledger; a failure here would un-reserve the pod and retry it with backoff."""

    name: ClassVar[str] = "LedgerBinder"

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        self.ledger.bind(pod.key, node_name)
        return Status.success()


CONFIG: Final = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{
        "schedulerName": "default-scheduler",
        "plugins": {"bind": {"disabled": [{"name": "DefaultBinder"}], "enabled": [{"name": "LedgerBinder"}]}},
    }],
}


def make_node(name: str, cpu: str) -> Node:
    allocatable = {"cpu": parse_quantity(cpu), "memory": parse_quantity("16Gi"), "pods": parse_quantity("110")}
    return Node(name, labels={"kubernetes.io/hostname": name}, allocatable=allocatable, capacity=allocatable)


def make_pod(name: str, cpu: str, priority: int = 0, preemption_policy: str | None = None) -> Pod:
    requests = {"cpu": parse_quantity(cpu), "memory": parse_quantity("1Gi")}
    return Pod(name, namespace="jobs", priority=priority, preemption_policy=preemption_policy,
               containers=(Container("main", requests=requests),))


class Host:
    """Owns the scheduler, the clock and the ledger; reacts to every decision."""

    def __init__(self) -> None:
        self.clock = kschedlib.FakeClock()
        self.ledger = Ledger()
        registry = kschedlib.in_tree_registry()
        # A factory is any callable (args, handle) -> plugin: a closure hands the plugin the ledger.
        registry.register(LedgerBinder.name, lambda args, handle: LedgerBinder(self.ledger))
        self.scheduler = kschedlib.Scheduler(CONFIG, registry=registry, clock=self.clock, seed=0)

    def say(self, text: str) -> None:
        print(f"[t={self.clock.now():4.1f}] {text}")

    def handle(self, result: kschedlib.ScheduleResult) -> None:
        if result.scheduled:
            self.say(f"{result.pod.key} -> {result.node_name} (attempt {result.attempts})")
            return
        if result.waiting:
            self.say(f"{result.pod.key} waits on {result.node_name}")
            return
        self.say(f"{result.pod.key} unschedulable: {result.message}")
        if result.nominated_node_name:
            self.say(f"{result.pod.key} nominated to {result.nominated_node_name}")
        for victim in sorted(result.victims):
            self.ledger.evict(victim)
            self.scheduler.remove_pod(victim)
            self.say(f"evicted {victim}")

    def run_until(self, deadline: float | None) -> None:
        """Schedule everything that can be scheduled before ``deadline`` (``None``: until nothing is due)."""
        while True:
            for finished in self.scheduler.tick():  # Permit waits or async bindings that ended
                self.handle(finished)
            result = self.scheduler.schedule_one()
            if result is not None:
                self.handle(result)
                continue
            wakeup = self.scheduler.next_wakeup()  # a backoff expiry or a Permit timeout
            if wakeup is None or (deadline is not None and wakeup > deadline):
                return
            self.clock.set(wakeup)

    def arrive(self, when: float, text: str, *objects: Node | Pod) -> None:
        """At ``when``, new nodes join and new pods are submitted."""
        self.run_until(when)
        self.clock.set(when)
        self.say(text)
        for obj in objects:
            if isinstance(obj, Node):
                self.scheduler.add_node(obj)
            else:
                self.scheduler.add_pod(obj)


def main() -> None:
    host = Host()
    host.arrive(0, "node-1 (4 CPU) and node-2 (6 CPU) join", make_node("node-1", "4"), make_node("node-2", "6"))
    host.arrive(0, "three 2-CPU batch pods arrive", *(make_pod(f"batch-{i}", "2") for i in range(3)))
    host.arrive(5, "a 4-CPU job (priority 100, preemptionPolicy Never) arrives",
                make_pod("big-job", "4", priority=100, preemption_policy="Never"))
    host.arrive(10, "node-3 (4 CPU) joins", make_node("node-3", "4"))
    host.arrive(20, "an urgent 5-CPU pod (priority 1000) arrives", make_pod("urgent", "5", priority=1000))
    host.run_until(None)

    print("ledger:")
    for pod, node in sorted(host.ledger.placements.items()):
        print(f"  {pod}: {node}")
    assert host.ledger.placements == host.scheduler.bound_pods()


if __name__ == "__main__":
    main()
