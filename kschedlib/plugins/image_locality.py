"""ImageLocality: prefer nodes that already hold the pod's container images.

Each image present on the node contributes its size scaled by the share of
nodes holding it (so widely spread images count less, avoiding piling pods
onto the few nodes with a rare image); the sum is clamped to
[23 MiB, 1000 MiB * containers] and mapped onto 0..100 (kube's ``image_locality.go``: ``calculatePriority``).

From v1.36 (``image_volume_locality``) the images of image volumes (``spec.volumes[].image.reference``)
count too; the clamp still counts containers only.

Kube has no PreScore for this plugin, so none is added (it would change which
plugins a cycle reports).  The pod's normalized image names are instead cached
for the last pod scored: Score runs for every node of one pod in a row.

A node that holds no image scores 0 for every pod.  While no node of the snapshot holds one
(:class:`_ImageHolders` counts them from the snapshot's change log), every pod gets the same memo
key, so pods that differ only in their images share their reused scores.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import ClassVar, Final, final

from kschedlib.framework.cycle_state import CycleState
from kschedlib.framework.extension_points import MAX_NODE_SCORE, ScorePlugin
from kschedlib.framework.handle import Handle
from kschedlib.framework.memo import NodeLocalScore
from kschedlib.framework.node_info import ImageState, NodeInfo
from kschedlib.framework.snapshot import NodeCursor, Snapshot
from kschedlib.model.objects import Pod

__all__ = ["ImageLocality"]

MB: Final = 1024 * 1024
MIN_THRESHOLD: Final = 23 * MB
MAX_CONTAINER_THRESHOLD: Final = 1000 * MB


def normalized_image_name(name: str) -> str:
    """Append ``:latest`` when the image has no tag (no ':' after the last '/')."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def pod_image_names(pod: Pod, image_volumes: bool = False) -> tuple[str, ...]:
    """Normalized images of every init and regular container, in spec order (duplicates kept), then
    with ``image_volumes`` those of the image volumes."""
    names = tuple(normalized_image_name(c.image) for c in (*pod.init_containers, *pod.containers))
    if not image_volumes:
        return names
    return names + tuple(normalized_image_name(str(v.source.get("reference") or ""))
                         for v in pod.volumes if v.source_kind == "image")


def scaled_image_score(state: ImageState, total_num_nodes: int) -> int:
    """The image size times the fraction of nodes holding it, float64 and truncated as in kube."""
    spread = float(state.num_nodes) / float(total_num_nodes)
    return int(float(state.size) * spread)


def sum_image_scores(
    image_states: Mapping[str, ImageState], names: Sequence[str], total_num_nodes: int
) -> int:
    """Sum of :func:`scaled_image_score` over the pod's images present on the node.

    With no nodes in the snapshot (impossible while scoring one of them) nothing counts.
    """
    if total_num_nodes <= 0:
        return 0
    total = 0
    for name in names:
        state = image_states.get(name)
        if state is not None:
            total += scaled_image_score(state, total_num_nodes)
    return total


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Clamp ``sum_scores`` to [23 MiB, 1000 MiB * containers] and scale it onto 0..100.

    The lower bound is applied first, as in kube: a pod without containers scores 0.
    """
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    numerator = MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD)
    denominator = max_threshold - MIN_THRESHOLD
    quotient = abs(numerator) // abs(denominator)  # Go truncates toward zero
    return quotient if (numerator < 0) == (denominator < 0) else -quotient


_NO_IMAGES: Final = ("no node holds an image",)
"""The memo key of every pod while no node holds an image: each NodeInfo then scores 0."""


@final
class _ImageHolders:
    """How many nodes of the last snapshot seen hold some image, recounted only where nodes changed."""

    __slots__ = ("count", "cursor", "infos")

    def __init__(self) -> None:
        self.count = 0
        self.cursor = NodeCursor()
        self.infos: list[NodeInfo] = []

    def sync(self, snapshot: Snapshot) -> int:
        """The number of ``snapshot``'s nodes that hold an image."""
        nodes = snapshot._nodes  # read within this call only
        changed = self.cursor.changes(snapshot, len(self.infos))
        if changed is None:
            self.infos = list(nodes)
            self.count = sum(1 for info in nodes if info.image_states)
            return self.count
        infos = self.infos
        for position in changed:
            info, old = nodes[position], infos[position]
            if info is not old:
                self.count += bool(info.image_states) - bool(old.image_states)
                infos[position] = info
        return self.count


@final
class ImageLocality(ScorePlugin, NodeLocalScore):
    """Scores nodes by how much of the pod's image data they already hold."""

    name: ClassVar[str] = "ImageLocality"
    __slots__ = ("_handle", "_holders", "_image_volumes", "_last")

    def __init__(self, args: object, handle: Handle) -> None:
        """``args`` is ignored: ImageLocality has none."""
        self._handle = handle
        self._image_volumes = handle.switches.image_volume_locality
        self._last: tuple[Pod, tuple[str, ...], int] | None = None
        self._holders = _ImageHolders()

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """The image-locality score in [0, 100] (no normalization)."""
        if not node_info.image_states:
            return 0  # nothing held: the sum is below the 23 MiB threshold, which scores 0
        last = self._last
        if last is None or last[0] is not pod:
            # One tuple assigned at once: safe if nodes are scored from several threads.
            last = (pod, pod_image_names(pod, self._image_volumes), len(pod.init_containers) + len(pod.containers))
            self._last = last
        total = sum_image_scores(node_info.image_states, last[1], self._handle.snapshot.num_nodes)
        return calculate_priority(total, last[2])

    def score_key(self, state: CycleState, pod: Pod) -> Hashable:
        """The score depends on the pod's images and the cluster size (image spread is in the NodeInfo);
        on nothing while no node holds an image (every NodeInfo of such a snapshot scores 0)."""
        snapshot = self._handle.snapshot
        if not self._holders.sync(snapshot):
            return _NO_IMAGES
        return (pod_image_names(pod, self._image_volumes), len(pod.init_containers) + len(pod.containers),
                snapshot.num_nodes)
