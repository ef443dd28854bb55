"""Hypothesis' entry point: ``st.from_type(Pod)`` (and friends) use :mod:`kschedlib.testing.strategies`.

pyproject.toml declares the hook under ``[project.entry-points.hypothesis]``; Hypothesis calls it once,
when it is imported. The hook imports only the model types (strategies
are built lazily, on the first ``from_type``), and ``HYPOTHESIS_NO_PLUGINS=1`` turns it off.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _lazy(name: str, **kwargs: Any) -> Callable[[type[Any]], Any]:
    """A ``register_type_strategy`` callback building ``strategies.<name>(**kwargs)`` on first use."""

    def build(_: type[Any]) -> Any:
        from kschedlib.testing import strategies

        return getattr(strategies, name)(**kwargs)

    return build


def _hypothesis_setup_hook() -> None:
    """Register a strategy for every model type :mod:`kschedlib.testing.strategies` can generate."""
    from hypothesis import strategies as st

    from kschedlib.model import labels, objects, quantity
    from kschedlib.simulation.cluster import Cluster

    registrations: dict[type[Any], Callable[[type[Any]], Any]] = {
        quantity.Quantity: _lazy("quantities", max_value="1Ti"),
        labels.LabelSelector: _lazy("label_selectors"),
        labels.NodeSelector: _lazy("node_selectors"),
        labels.NodeSelectorTerm: _lazy("node_selector_terms"),
        objects.Taint: _lazy("taints"),
        objects.Toleration: _lazy("tolerations"),
        objects.NodeAffinity: _lazy("node_affinities"),
        objects.PodAffinityTerm: _lazy("pod_affinity_terms"),
        objects.PodAffinity: _lazy("pod_affinities"),
        objects.Affinity: _lazy("affinities"),
        objects.TopologySpreadConstraint: _lazy("topology_spread_constraints"),
        objects.Container: _lazy("containers"),
        objects.Pod: _lazy("pods"),
        objects.Node: _lazy("nodes"),
        objects.Namespace: _lazy("namespaces"),
        Cluster: _lazy("clusters"),
    }
    for model_type, build in registrations.items():
        st.register_type_strategy(model_type, build)
