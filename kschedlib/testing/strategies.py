"""Hypothesis strategies for the model: from quantities and labels up to whole clusters.

Every strategy follows Hypothesis' API style: a plural noun, keyword-only options, sizes as
``min_size``/``max_size`` and ranges as ``min_value``/``max_value``, and arguments checked when the
strategy is built (a bad one raises :class:`hypothesis.errors.InvalidArgument` at once, not at
the first draw). Generated objects are valid as an API server would store them and "as read" by
:mod:`kschedlib.model.convert`, so writing one out and reading it back gives an equal object.
Shrinking removes optional parts first and moves amounts toward their lower bound in the coarsest
suffix, so counterexamples end up small and readable.

Defaults draw from small vocabularies (``DEFAULT_POD_LABELS``, ``DEFAULT_NODE_LABELS``,
``DEFAULT_TAINTS``, ``DEFAULT_ZONES``): selectors, affinities, tolerations and spread constraints
then meet the labels and taints they are about, and plugins see matches as well as misses.

Once kschedlib is installed, ``st.from_type(Pod)`` (and the other model types) uses these
strategies: they are registered through Hypothesis' ``hypothesis`` entry point.
"""

from kschedlib.testing._affinity import (
    DEFAULT_NAMESPACE_LABELS,
    DEFAULT_NAMESPACES,
    DEFAULT_TOPOLOGY_KEYS,
    SPREAD_FEATURES,
    affinities,
    node_affinities,
    pod_affinities,
    pod_affinity_terms,
    topology_spread_constraints,
)
from kschedlib.testing._basics import (
    DEFAULT_NODE_LABELS,
    DEFAULT_POD_LABELS,
    DEFAULT_REQUESTS,
    DEFAULT_TAINTS,
    DEFAULT_ZONES,
    QUANTITY_FORMATS,
    quantities,
    quantity_strings,
    resource_lists,
)
from kschedlib.testing._clusters import Scenario, clusters, fits_node, scenarios
from kschedlib.testing._labels import (
    label_keys,
    label_selectors,
    label_sets,
    label_values,
    node_selector_terms,
    node_selectors,
    taints,
    tolerations,
)
from kschedlib.testing._workloads import (
    CONTAINER_FEATURES,
    DEFAULT_ALLOCATABLE,
    DEFAULT_IMAGES,
    DEFAULT_NODE_FEATURES,
    DEFAULT_POD_FEATURES,
    NODE_FEATURES,
    POD_FEATURES,
    containers,
    namespaces,
    nodes,
    pods,
)

__all__ = [
    "CONTAINER_FEATURES",
    "DEFAULT_ALLOCATABLE",
    "DEFAULT_IMAGES",
    "DEFAULT_NAMESPACES",
    "DEFAULT_NAMESPACE_LABELS",
    "DEFAULT_NODE_FEATURES",
    "DEFAULT_NODE_LABELS",
    "DEFAULT_POD_FEATURES",
    "DEFAULT_POD_LABELS",
    "DEFAULT_REQUESTS",
    "DEFAULT_TAINTS",
    "DEFAULT_TOPOLOGY_KEYS",
    "DEFAULT_ZONES",
    "NODE_FEATURES",
    "POD_FEATURES",
    "QUANTITY_FORMATS",
    "SPREAD_FEATURES",
    "Scenario",
    "affinities",
    "clusters",
    "containers",
    "fits_node",
    "label_keys",
    "label_selectors",
    "label_sets",
    "label_values",
    "namespaces",
    "node_affinities",
    "node_selector_terms",
    "node_selectors",
    "nodes",
    "pod_affinities",
    "pod_affinity_terms",
    "pods",
    "quantities",
    "quantity_strings",
    "resource_lists",
    "scenarios",
    "taints",
    "tolerations",
    "topology_spread_constraints",
]
