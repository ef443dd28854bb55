"""Property-test plugins the way kschedlib tests itself: strategies, fakes and a plugin contract kit.

This is the one part of kschedlib that needs Hypothesis (``pip install 'kschedlib[testing]'``):

* :mod:`kschedlib.testing.strategies`: Hypothesis strategies for quantities, labels, selectors, taints,
  affinities, spread constraints, containers, pods, nodes, namespaces, whole clusters and scheduling
  :class:`Scenario`\\ s; also registered for ``st.from_type`` through Hypothesis' entry point;
* :class:`FakeHandle` and :class:`FakeClock`: a Handle over a cluster and a clock that moves when told;
* the contract kit: :func:`check_plugin` runs every contract on generated scenarios and fails with the
  shrunk scenario as Kubernetes YAML; the ``check_*`` functions check one contract on one scenario,
  inside your own ``@given`` tests.
"""

from kschedlib.clock import FakeClock
from kschedlib.testing import strategies
from kschedlib.testing._clusters import Scenario
from kschedlib.testing._manifests import to_yaml
from kschedlib.testing.contracts import (
    ALL_CHECKS,
    CONTRACTS,
    Check,
    ContractViolation,
    check_add_remove_inverse,
    check_contracts,
    check_determinism,
    check_memo_keys,
    check_no_mutation,
    check_plugin,
    check_reserve_unreserve,
    check_score_range,
    check_state_clone,
)
from kschedlib.testing.fakes import FakeHandle, snapshot_of

__all__ = [
    "ALL_CHECKS",
    "CONTRACTS",
    "Check",
    "ContractViolation",
    "FakeClock",
    "FakeHandle",
    "Scenario",
    "check_add_remove_inverse",
    "check_contracts",
    "check_determinism",
    "check_memo_keys",
    "check_no_mutation",
    "check_plugin",
    "check_reserve_unreserve",
    "check_score_range",
    "check_state_clone",
    "snapshot_of",
    "strategies",
    "to_yaml",
]

# Defined in private modules; reprs, pickles and tracebacks name them here.
for _public in (ContractViolation, Scenario, to_yaml):
    _public.__module__ = __name__
del _public
