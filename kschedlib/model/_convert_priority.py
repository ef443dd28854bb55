"""Pod priority from ``priorityClassName``, as the API server's Priority admission plugin sets it.

Every pod that reaches kube-scheduler went through that plugin, so its ``spec.priority`` is set.
Pods rendered from manifests name a class but carry no number; they get the class's value here
(and its preemption policy when the pod sets none), from the PriorityClass objects read and the
two classes every API server creates.  A pod naming no class gets the global default class.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, final

import attrs

from kschedlib._fields_repr import FieldsRepr
from kschedlib.errors import ManifestError
from kschedlib.model._convert_base import open_object
from kschedlib.model.objects import Pod

__all__ = ["PriorityClass", "PriorityClasses", "priority_class_from_dict"]

PREEMPT_LOWER_PRIORITY: Final = "PreemptLowerPriority"


@final
@attrs.frozen(slots=True, repr=False)
class PriorityClass(FieldsRepr):
    """A scheduling.k8s.io/v1 PriorityClass: the number and policy it gives its pods."""

    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = PREEMPT_LOWER_PRIORITY


SYSTEM_PRIORITY_CLASSES: Final = (
    PriorityClass("system-node-critical", 2000001000),
    PriorityClass("system-cluster-critical", 2000000000),
)


def priority_class_from_dict(d: Mapping[str, Any]) -> PriorityClass:
    """A v1 PriorityClass (``value`` is required; the policy defaults to PreemptLowerPriority)."""
    r, _, name, _ = open_object(d, "PriorityClass", namespaced=False)
    value = r.optint(d, "value", "")
    if value is None:
        r.fail("value", "is required")
    return PriorityClass(name, value, r.getbool(d, "globalDefault", ""),
                         r.getstr(d, "preemptionPolicy", "") or PREEMPT_LOWER_PRIORITY)


@final
class PriorityClasses:
    """The classes known to one load: the system ones plus those read, by name."""

    __slots__ = ("_by_name", "_default")

    def __init__(self, classes: Iterable[PriorityClass] = ()) -> None:
        self._by_name = {c.name: c for c in SYSTEM_PRIORITY_CLASSES}
        self._by_name.update((c.name, c) for c in classes)
        defaults = [c for c in self._by_name.values() if c.global_default]
        # several global defaults (a race in the API server): the lowest value wins, as in kube
        self._default = min(defaults, key=lambda c: c.value) if defaults else None

    def resolve(self, pod: Pod, class_name: str) -> Pod:
        """``pod`` (read without ``spec.priority``) with the priority admission would have given it."""
        if class_name:
            found = self._by_name.get(class_name)
            if found is None:
                raise ManifestError(f"no PriorityClass with name {class_name} was found",
                                    obj=f"Pod {pod.key}", field="spec.priorityClassName", value=class_name)
        else:
            found = self._default
            if found is None:
                return pod  # no default class: priority 0, as kube-scheduler reads a missing one
        policy = pod.preemption_policy
        if policy is not None and policy != found.preemption_policy:
            raise ManifestError(
                f"the string value of PreemptionPolicy ({policy}) must not be provided in pod spec; priority "
                f"admission controller computed {found.preemption_policy} from the given PriorityClass name",
                obj=f"Pod {pod.key}", field="spec.preemptionPolicy", value=policy)
        return attrs.evolve(pod, priority=found.value, preemption_policy=found.preemption_policy)
