"""What kube-apiserver v1.36 refuses of the DRA objects, in its words: its ``ValidateResourceClaim``,
``ValidateResourceClaimTemplate``, ``ValidateResourceSlice`` and ``ValidateDeviceClass`` checks.

Each ``*_errors`` function reads an object as it arrives (a dict, v1 or the older shapes), after the
API server's defaulting (a request's ``allocationMode`` is ``ExactCount`` and its ``count`` 1 unless
given; a toleration's ``operator`` is ``Equal``), and lists its field errors in kube's order.  A field
of the wrong type is left to the converter, which refuses it with its own message.  Not checked: the
estimated cost of a CEL selector (kube's ``too complex, exceeds cost limit``), annotation sizes,
``nodeAllocatableResourceMappings``.
"""

from kschedlib.model._dra_checks._claims import (
    device_class_errors,
    resource_claim_errors,
    resource_claim_template_errors,
)
from kschedlib.model._dra_checks._slices import resource_slice_errors

__all__ = ["device_class_errors", "resource_claim_errors", "resource_claim_template_errors",
           "resource_slice_errors"]
