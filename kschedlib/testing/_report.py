"""ContractViolation: what broke, where, and the (shrunk) scenario as Kubernetes YAML."""

from __future__ import annotations

import textwrap
from typing import Final

from kschedlib.testing._clusters import Scenario

__all__ = ["CONTRACTS", "ContractViolation"]

CONTRACTS: Final = {
    "no-mutation": "extension points leave the snapshot, its NodeInfos, the pod and the CycleState entries of "
                   "other plugins as they found them",
    "score-range": "Score gives integers within [0, 100] after NormalizeScore (raw scores too without it)",
    "deterministic": "the same scenario and seed give the same statuses, scores and PostFilter result",
    "state-clone": "a CycleState clone shares no mutable PreFilter state: AddPod/RemovePod on one copy leave "
                   "the other alone",
    "add-remove-inverse": "RemovePod undoes AddPod, and AddPod undoes RemovePod, as far as Filter can tell",
    "reserve-unreserve": "Unreserve undoes Reserve: the plugin, the cluster's storage objects and Filter's "
                         "verdicts are as before (and a repeated Unreserve changes nothing)",
    "memo-key": "a NodeLocalFilter's filter_key (a NodeLocalScore's score_key) is hashable, and pods with equal "
                "keys get equal verdicts (raw scores) on every node",
}
"""Contract name -> what it promises."""


class ContractViolation(AssertionError):
    """A plugin broke a contract on a scenario; the message shows the scenario as Kubernetes YAML.

    ``contract`` is a key of :data:`CONTRACTS`, ``plugin`` the plugin's name, ``detail`` what
    happened and ``scenario`` the input (under Hypothesis: the shrunk counterexample).
    """

    def __init__(self, contract: str, plugin: str, detail: str, scenario: Scenario) -> None:
        super().__init__(contract, plugin, detail)
        self.contract = contract
        self.plugin = plugin
        self.detail = detail
        self.scenario = scenario
        self._message: str | None = None

    def __reduce__(self) -> tuple[type[ContractViolation], tuple[str, str, str, Scenario]]:
        return type(self), (self.contract, self.plugin, self.detail, self.scenario)

    def __str__(self) -> str:
        """The contract, what broke it, then the scenario as YAML (rendered once, when first asked for:
        Hypothesis raises many violations while it shrinks and reads only the last)."""
        if self._message is None:
            promise = CONTRACTS.get(self.contract, self.contract)
            self._message = (
                f"plugin {self.plugin} breaks the contract {self.contract!r}: {promise}.\n"
                f"{textwrap.indent(self.detail, '  ')}\n\n"
                f"Counterexample ({self.scenario!r}):\n{self.scenario.to_yaml()}"
            )
        return self._message
