"""Scheduler extenders: kube-scheduler's HTTP extender protocol, both ways, and in-process extenders.

Calling extenders: list them in a KubeSchedulerConfiguration's ``extenders``
section (each becomes an :class:`HTTPExtender`) or pass :class:`Extender`
objects to :class:`kschedlib.Scheduler` (``extenders=[...]``), e.g. a
:class:`CallableExtender` made of Python functions.  The scheduling cycle runs
them where kube-scheduler v1.30 does: filters after the Filter plugins,
prioritize scores added as ``score x weight x 10``, bind before the Bind
plugins, and preemption consulting those that support it.

Serving extenders: :class:`ExtenderServer` (``python -m kschedlib
serve-extender``) answers the protocol with a profile's Filter and Score
plugins, so a real kube-scheduler can use Python plugins through its
``extenders`` configuration.
"""

from kschedlib._internal.extender_config import ExtenderConfig, ManagedResource, TLSConfig, parse_extenders
from kschedlib._internal.http_extender import HTTPExtender, build_extenders
from kschedlib.extender.inprocess import CallableExtender
from kschedlib.extender.limits import ExtenderLimits
from kschedlib.extender.server import ExtenderServer
from kschedlib.extender.service import ExtenderService
from kschedlib.framework.extender import (
    MAX_EXTENDER_PRIORITY,
    Extender,
    ExtenderError,
    ExtenderFilterResult,
    ExtenderVictims,
)

__all__ = [
    "MAX_EXTENDER_PRIORITY",
    "CallableExtender",
    "Extender",
    "ExtenderConfig",
    "ExtenderError",
    "ExtenderFilterResult",
    "ExtenderLimits",
    "ExtenderServer",
    "ExtenderService",
    "ExtenderVictims",
    "HTTPExtender",
    "ManagedResource",
    "TLSConfig",
    "build_extenders",
    "parse_extenders",
]

# The client is defined beside the runtime that calls it; reprs, pickles and tracebacks name it here.
for _public in (ExtenderConfig, HTTPExtender, ManagedResource, TLSConfig, build_extenders, parse_extenders):
    _public.__module__ = __name__
del _public
