"""Building an engine's parts from a configuration: profiles, their handles, extenders and the queue.

kube-scheduler's ``scheduler.New``: each profile gets a framework handle and a runtime over the
shared store, nominator, clock, random generator and waiting pods; the extenders are ordered; the
queue is wired to the first profile's QueueSort, every profile's event registrations and the
version's queueing switches.  Nothing here handles an event: :mod:`kschedlib._internal.engine` does.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib._internal.admission import event_registrations
from kschedlib._internal.cache import Cache
from kschedlib._internal.extenders import check_ignored_resources, order_extenders, with_ignored_resources
from kschedlib._internal.handle import FrameworkHandle
from kschedlib._internal.nominator import Nominator
from kschedlib._internal.profile import build_profile
from kschedlib._internal.queue import SchedulingQueue
from kschedlib._internal.runtime import ProfileRuntime
from kschedlib._internal.store import ObjectStore
from kschedlib._internal.waiting import WaitingPods
from kschedlib.clock import Clock
from kschedlib.errors import ConfigError
from kschedlib.framework.config import PluginSet, SchedulerConfig
from kschedlib.framework.extender import Extender
from kschedlib.framework.registry import Registry
from kschedlib.framework.status import Status
from kschedlib.model.objects import Pod
from kschedlib.versions import KubeSettings

__all__ = ["Parts", "assemble"]


@final
@attrs.frozen(slots=True, repr=False)
class Parts(FieldsRepr):
    """Everything an engine is made of, built and checked, before any event arrives."""

    rng: random.Random
    cache: Cache
    store: ObjectStore
    nominator: Nominator
    waiting: WaitingPods
    extenders: tuple[Extender, ...]
    profiles: dict[str, ProfileRuntime]
    handles: dict[str, FrameworkHandle]
    queue: SchedulingQueue


def assemble(
    config: SchedulerConfig,
    kube: KubeSettings,
    *,
    clock: Clock,
    seed: int,
    registry: Registry,
    defaults: Mapping[str, PluginSet],
    extenders: Sequence[Extender],
    assumed_ttl: float,
    retry_unschedulable: bool,
    pre_enqueue: Callable[[Pod], Status],
    store: ObjectStore | None = None,
    nominator: Nominator | None = None,
) -> Parts:
    """Build the parts for ``config`` under ``kube``; a bad profile raises :class:`ConfigError`, nothing built.

    ``extenders`` are in-process extenders added to the config's HTTP ones; ``pre_enqueue`` is the
    queue's gate (the engine's: asynchronous preemption holds a preemptor before the profiles' plugins).
    ``store`` and ``nominator`` are given by a fork, which shares nothing else.
    """
    switches = kube.switches
    configured, ignored = _http_extenders(config.extenders, verbatim_errors=switches.extender_error_verbatim)
    ordered = order_extenders((*configured, *extenders))
    rng = random.Random(seed)
    store = store if store is not None else ObjectStore()
    nominator = nominator if nominator is not None else Nominator()
    waiting = WaitingPods()
    profiles: dict[str, ProfileRuntime] = {}
    handles: dict[str, FrameworkHandle] = {}
    for index, profile in enumerate(config.profiles):
        handle = FrameworkHandle(store, nominator, clock, rng, waiting, switches=switches)
        built = build_profile(with_ignored_resources(profile, ignored), registry, handle, dict(defaults),
                              where=f"profiles[{index}]")
        if ignored:
            check_ignored_resources(profile, built.plugin_args, f"profiles[{index}]")
        runtime = ProfileRuntime(built, ordered, switches)
        handle.bind_runtime(runtime)
        profiles[profile.scheduler_name] = runtime
        handles[profile.scheduler_name] = handle
    _check_queue_sort(profiles, short_message=switches.short_queue_sort_message)
    first = next(iter(profiles.values()))
    queue = SchedulingQueue(
        first.less, pre_enqueue, clock.now,
        registrations=event_registrations(profiles, narrow=switches.narrow_queueing_hints),
        initial_backoff=config.pod_initial_backoff_seconds,
        max_backoff=config.pod_max_backoff_seconds,
        hints=switches.queueing_hints,
        narrow=switches.narrow_queueing_hints,
        pop_from_backoff=switches.pop_from_backoff_queue,
        generated_claims=switches.dynamic_resources,
        sort_key=first.sort_key,
    )
    queue.retry_failed = retry_unschedulable
    return Parts(rng, Cache(assumed_ttl), store, nominator, waiting, ordered, profiles, handles, queue)


def _check_queue_sort(profiles: Mapping[str, ProfileRuntime], *, short_message: bool) -> None:
    """Every profile must sort the queue alike: one queue serves them all (kube's ``validateProfiles``)."""
    names = set()
    for runtime in profiles.values():
        sort = runtime.profile.points["queueSort"][0]
        names.add((sort, repr(runtime.profile.plugin_args.get(sort))))
    if len(names) > 1:
        message = "must be the same for all profiles"
        if not short_message:
            message = "queueSort " + message
        raise ConfigError(message, field="profiles", value=sorted(name for name, _ in names))


def _http_extenders(
    raw: Sequence[Mapping[str, Any]], *, verbatim_errors: bool
) -> tuple[tuple[Extender, ...], tuple[str, ...]]:
    """The config's HTTP extenders and ignored resource names; the HTTP client (``http.client``, ``ssl``)
    is imported only by a config that has extenders, not by every Scheduler."""
    if not raw:
        return (), ()
    from kschedlib._internal.http_extender import build_extenders

    return build_extenders(raw, verbatim_errors=verbatim_errors)
