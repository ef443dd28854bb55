"""What-if cycles change nothing: the engine's rule, not each plugin's care.

While :meth:`Scheduler.explain` runs a scheduling cycle for a pod that is not (or not here) being
scheduled, its plugins may write as in a real cycle: DynamicResources' PostFilter deletes or
deallocates a claim, Coscheduling's PreFilter writes its PodGroup's status and its PostFilter rejects
the gang's pods waiting in Permit, a preemption's PostFilter rejects its victims waiting there.
:class:`Isolated` gives the cycle copies of everything the engine holds that a plugin may write --
the device state, PodGroups and quotas, storage objects, the waiting pods, the nominations -- saves
the random generator's state and the state of plugins that keep their own
(:class:`~kschedlib.framework.KeepsState`), and puts the live ones back afterwards, whatever happens.
The API server a live scheduler writes to (``store.api``) is out of reach meanwhile: a what-if writes
nothing to the cluster.
The holders (the handles) keep their references: the store's parts are swapped, the waiting pods'
and nominations' contents exchanged.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any, final

from kschedlib._internal.nominator import Nominator
from kschedlib._internal.scheduling_store import SchedulingStore
from kschedlib._internal.store import ObjectStore, StorageStore
from kschedlib._internal.waiting import WaitingPods
from kschedlib.dra._store import DraStore
from kschedlib.framework.cluster_api import ClusterApi
from kschedlib.framework.plugin_state import KeepsState

__all__ = ["Isolated"]


@final
class Isolated:
    """Run the body on copies of what plugins may write, the state of the ``keeping`` plugins saved; the
    live state is back after it (a class, not a generator: explain pays for it on every call).

    Of the object store only what the handle lets plugins write is copied -- the device state, the
    PodGroups and quotas, the storage objects: pods, namespaces and budgets are read-only to plugins
    (the engine undoes its own writes), and copying every pod would cost a what-if cycle as much again
    on a big cluster.
    """

    __slots__ = ("_api", "_keeping", "_live", "_nominator", "_rng", "_saved", "_store", "_waiting")

    def __init__(self, store: ObjectStore, waiting: WaitingPods, nominator: Nominator, rng: random.Random,
                 keeping: Iterable[KeepsState]) -> None:
        self._store, self._waiting, self._nominator, self._rng = store, waiting, nominator, rng
        self._keeping = keeping
        self._saved: list[tuple[KeepsState, object]] = []
        self._live: tuple[DraStore, SchedulingStore, StorageStore, WaitingPods, Nominator, Any] | None = None
        self._api: ClusterApi | None = None

    def __enter__(self) -> None:
        store = self._store
        self._saved = [(plugin, plugin.save_state()) for plugin in self._keeping]
        waiting, nominator = self._waiting.copy(), self._nominator.copy()
        self._live = (store.dra, store.scheduling, store.storage, waiting, nominator, self._rng.getstate())
        store.dra, store.scheduling, store.storage = store.dra.copy(), store.scheduling.copy(store.pods), \
            store.storage.copy()
        self._waiting.exchange(waiting)  # the copies' contents in, the live ones kept in the copies
        self._nominator.exchange(nominator)
        self._api, store.api = store.api, None

    def __exit__(self, *exc_info: object) -> None:
        assert self._live is not None
        store = self._store
        store.dra, store.scheduling, store.storage, waiting, nominator, rng_state = self._live
        store.api = self._api
        self._waiting.exchange(waiting)
        self._nominator.exchange(nominator)
        self._rng.setstate(rng_state)
        for plugin, state in self._saved:
            plugin.restore_state(state)
        self._live = None
