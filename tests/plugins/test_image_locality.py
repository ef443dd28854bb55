"""ImageLocality: image-name normalization, spread scaling, thresholds and the worked examples (§9.10)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kschedlib.framework import CycleState, ImageState, NodeInfo
from kschedlib.model import Container, Pod
from kschedlib.plugins.image_locality import (
    MAX_CONTAINER_THRESHOLD,
    MB,
    MIN_THRESHOLD,
    ImageLocality,
    calculate_priority,
    normalized_image_name,
    pod_image_names,
    scaled_image_score,
    sum_image_scores,
)
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, node_info


def pod_with(*images: str, init: Sequence[str] = ()) -> Pod:
    return Pod(
        "p",
        containers=tuple(Container(f"c{i}", image=image) for i, image in enumerate(images)),
        init_containers=tuple(Container(f"i{i}", image=image) for i, image in enumerate(init)),
    )


def cluster(total: int, states: Mapping[str, ImageState]) -> tuple[ImageLocality, NodeInfo]:
    """A plugin over ``total`` nodes, and the first node holding ``states``."""
    infos = [node_info(make_node(f"n{i}")) for i in range(total)]
    infos[0] = infos[0].with_image_states(states)
    return ImageLocality(None, FakeHandle(infos, kube_version="1.30")), infos[0]


def score(total: int, states: Mapping[str, ImageState], pod: Pod) -> int:
    plugin, info = cluster(total, states)
    return plugin.score(CycleState(), pod, info)


@pytest.mark.parametrize(
    ("image", "normalized"),
    [
        ("nginx", "nginx:latest"),
        ("nginx:1.25", "nginx:1.25"),
        ("library/nginx", "library/nginx:latest"),
        ("registry:5000/nginx", "registry:5000/nginx:latest"),
        ("registry:5000/nginx:1", "registry:5000/nginx:1"),
        ("nginx@sha256:abcd", "nginx@sha256:abcd"),
        ("", ":latest"),
    ],
    ids=["bare", "tagged", "path", "registry-port-untagged", "registry-port-tagged", "digest", "empty"],
)
def test_normalized_image_name(image: str, normalized: str) -> None:
    assert normalized_image_name(image) == normalized


def test_pod_image_names_init_first_duplicates_kept() -> None:
    assert pod_image_names(pod_with("a", "b:1", init=["a"])) == ("a:latest", "a:latest", "b:1")


def test_worked_example_12() -> None:
    """One container, a 300 MiB image on 5 of 10 nodes."""
    assert score(10, {"app:latest": ImageState(300 * MB, 5)}, pod_with("app")) == 12


def test_worked_example_49() -> None:
    """Two containers with 500 MiB images present on every node."""
    states = {"a:1": ImageState(500 * MB, 3), "b:1": ImageState(500 * MB, 3)}
    assert score(3, states, pod_with("a:1", "b:1")) == 49


CASES: list[tuple[str, Mapping[str, ImageState], Pod, int, int]] = [
    ("image-absent", {"other:latest": ImageState(900 * MB, 4)}, pod_with("app"), 4, 0),
    ("below-min-threshold", {"app:latest": ImageState(20 * MB, 1)}, pod_with("app"), 1, 0),
    ("above-max-threshold", {"app:latest": ImageState(2000 * MB, 1)}, pod_with("app"), 1, 100),
    ("tag-must-match", {"app:latest": ImageState(900 * MB, 1)}, pod_with("app:1"), 1, 0),
    (
        "init-container-counted",
        {"init:latest": ImageState(1000 * MB, 1)},
        pod_with("app", init=["init"]),
        1,
        49,
    ),
    ("duplicate-images-count-twice", {"app:latest": ImageState(600 * MB, 1)}, pod_with("app", "app"), 1, 59),
    ("spread-scales-down", {"app:latest": ImageState(1000 * MB, 1)}, pod_with("app"), 4, 23),
    ("no-containers", {}, pod_with(), 1, 0),
]


@pytest.mark.parametrize(
    ("states", "pod", "total", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_score(states: Mapping[str, ImageState], pod: Pod, total: int, expected: int) -> None:
    assert score(total, states, pod) == expected


def test_scaled_image_score_truncates_float_product() -> None:
    assert scaled_image_score(ImageState(100, 1), 3) == 33
    assert scaled_image_score(ImageState(1000, 2), 3) == 666
    assert scaled_image_score(ImageState(7, 3), 3) == 7


def test_sum_without_nodes_is_zero() -> None:
    assert sum_image_scores({"a:latest": ImageState(100 * MB, 1)}, ("a:latest",), 0) == 0


@pytest.mark.parametrize(
    ("total", "containers", "expected"),
    [
        (0, 1, 0),
        (MIN_THRESHOLD, 1, 0),
        (MAX_CONTAINER_THRESHOLD, 1, 100),
        (10**12, 2, 100),
        (MAX_CONTAINER_THRESHOLD, 2, 49),
        (0, 0, 0),
    ],
    ids=["zero", "at-min", "at-max", "over-max", "half-of-two", "no-containers"],
)
def test_calculate_priority(total: int, containers: int, expected: int) -> None:
    assert calculate_priority(total, containers) == expected


def test_cached_names_follow_the_pod() -> None:
    plugin, info = cluster(1, {"a:latest": ImageState(1000 * MB, 1)})
    state = CycleState()
    assert plugin.score(state, pod_with("a"), info) == 100
    assert plugin.score(state, pod_with("b"), info) == 0
    assert plugin.score(state, pod_with("a"), info) == 100


# --- properties -------------------------------------------------------------------------------

names = st.sampled_from(["a", "b:1", "c", "reg:5000/d", "e@sha256:00"])


@settings(max_examples=300, deadline=None)
@given(
    containers=st.lists(names, max_size=4),
    init=st.lists(names, max_size=2),
    present=st.dictionaries(
        names.map(normalized_image_name), st.tuples(st.integers(0, 5000 * MB), st.integers(1, 8)), max_size=5
    ),
    total=st.integers(1, 8),
)
def test_score_within_range_and_monotone_in_images(
    containers: list[str], init: list[str], present: dict[str, tuple[int, int]], total: int
) -> None:
    states = {name: ImageState(size, min(n, total)) for name, (size, n) in present.items()}
    pod = pod_with(*containers, init=init)
    value = score(total, states, pod)
    assert 0 <= value <= 100
    assert score(total, {}, pod) <= value


def test_pods_share_a_memo_key_while_no_node_holds_an_image() -> None:
    """No node with an image: every pod scores 0 on every node, so one key serves all; once a node
    holds an image (followed through the cache's change log), the pod's images are in the key again."""
    from kschedlib._internal.cache import Cache
    from kschedlib.framework import PodInfo
    from tests.helpers import make_pod

    cache = Cache()
    for i in range(3):
        cache.add_node(make_node(f"n{i}"))
    handle = FakeHandle(kube_version="1.30")
    plugin = ImageLocality(None, handle)
    web, db = pod_with("web:1"), pod_with("db:1")

    def keys() -> tuple[object, object]:
        handle.set_snapshot(cache.snapshot())
        return plugin.score_key(CycleState(), web), plugin.score_key(CycleState(), db)

    first, second = keys()
    assert first == second
    assert {plugin.score(CycleState(), pod, info) for pod in (web, db) for info in cache.snapshot().node_infos} == {0}
    cache.add_pod(PodInfo.of(make_pod("a", node_name="n1")))
    assert keys() == (first, second)
    cache.update_node(make_node("n2", images=[(["db:1"], 300 * MB)]))
    first, second = keys()
    assert first != second
    cache.update_node(make_node("n2"))
    first, second = keys()
    assert first == second
