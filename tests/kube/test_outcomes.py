"""The binding pool of a live scheduler once it has shut down (no API server needed)."""

from __future__ import annotations

from typing import ClassVar

from kschedlib import Code, FakeClock, Scheduler
from kschedlib.framework import CycleState, Handle, PermitPlugin, Registry, Status, Wait
from kschedlib.kube._outcomes import WakingExecutor
from kschedlib.model import Pod
from kschedlib.plugins import in_tree_registry
from tests.helpers import make_node, make_pod


class Parked(PermitPlugin):
    """Every pod waits a minute in Permit."""

    name: ClassVar[str] = "Parked"
    handle: ClassVar[Handle | None] = None

    def __init__(self, args: object, handle: Handle) -> None:
        Parked.handle = handle

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Status | Wait:
        return Wait(60.0)


def test_a_permit_wait_allowed_after_the_pool_shut_down_fails_instead_of_raising() -> None:
    """The live scheduler's last tick (on stopping, after the pool shut down) may find a Permit wait allowed: its
    binding cannot start, and the tick must not raise (that skipped handing back the Lease and closing)."""
    wakes: list[None] = []
    pool = WakingExecutor(2, lambda: wakes.append(None))
    registry = Registry()
    registry.register(Parked.name, Parked)
    sched = Scheduler({"profiles": [{"plugins": {"permit": {"enabled": [{"name": "Parked"}]}}}]}, clock=FakeClock(),
                      registry=in_tree_registry().merge(registry), binding_executor=pool)
    sched.add_node(make_node("n1"))
    sched.add_pod(make_pod("w", requests={"cpu": "1"}))
    (parked,) = sched.run_until_idle()
    assert parked.waiting
    pool.shutdown(wait=True)
    assert Parked.handle is not None
    (waiting,) = Parked.handle.iterate_waiting_pods()
    waiting.allow("Parked")
    (binding,) = sched.tick()
    assert (binding.status.code, binding.message) == (Code.WAIT, "binding")
    assert wakes  # the loop is told, as for a binding that ended
    (failed,) = sched.tick()
    assert failed.status.code is Code.ERROR
    assert "default/w" in sched.pending()  # rolled back, not left assumed
