"""What a Kubernetes object can be read as: one union over every kind the model holds.

Its own module because it names the DRA and storage kinds, whose models are imported on first use
(:mod:`kschedlib.model._kinds`); :mod:`kschedlib.model.convert` offers it lazily.
"""

from __future__ import annotations

from typing import TypeAlias

from kschedlib.model._convert_dra import DraObject
from kschedlib.model._convert_scheduling import SchedulingObject
from kschedlib.model._convert_storage import StorageObject
from kschedlib.model.objects import Namespace, Node, OwnerSelector, Pod, PodDisruptionBudget

__all__ = ["KubeObject"]

KubeObject: TypeAlias = (Node | Pod | Namespace | PodDisruptionBudget | OwnerSelector | StorageObject
                         | SchedulingObject | DraObject)
"""What a Kubernetes object can be read as."""
