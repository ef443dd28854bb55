"""Resource arithmetic and the three request computations of reference §1.4."""

from __future__ import annotations

import weakref

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kschedlib.model.objects import Container, Pod
from kschedlib.model.quantity import Quantity, parse_quantity
from kschedlib.model.resources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    Resources,
    _PerPod,
    is_extended_resource,
    is_scalar_resource,
    pod_non_zero_requests,
    pod_requests,
    pod_scoring_requests,
)

G = 10**9
MI = 1024 * 1024


def rl(**amounts: str) -> dict[str, Quantity]:
    """A resource list; ``_`` in a keyword becomes ``-`` and ``__`` becomes ``/``."""
    return {k.replace("__", "/").replace("_", "-"): parse_quantity(v) for k, v in amounts.items()}


def ctr(name: str = "c", *, sidecar: bool = False, **requests: str) -> Container:
    return Container(name, requests=rl(**requests), restart_policy="Always" if sidecar else None)


def pod(
    containers: list[Container], init: list[Container] | None = None, overhead: dict[str, str] | None = None
) -> Pod:
    return Pod(
        "p",
        containers=tuple(containers),
        init_containers=tuple(init or ()),
        overhead=None if overhead is None else rl(**overhead),
    )


# --- worked examples of §1.4 ---------------------------------------------------------------------


def test_init_containers_count_by_their_maximum() -> None:
    """IC1{2, 1G}, IC2{2, 3G}; C1{2, 1G}, C2{1, 1G} => {cpu 3, memory 3G}."""
    p = pod(
        [ctr("c1", cpu="2", memory="1G"), ctr("c2", cpu="1", memory="1G")],
        [ctr("ic1", cpu="2", memory="1G"), ctr("ic2", cpu="2", memory="3G")],
    )
    requests = pod_requests(p)
    assert (requests.milli_cpu, requests.memory) == (3000, 3 * G)


def test_sidecar_divergence_between_the_three_computations() -> None:
    """A sidecar without requests and one container with 500m: (a) 500m, (c) 600m, (b) 500m."""
    p = pod([ctr(cpu="500m")], [ctr("sidecar", sidecar=True)])
    assert pod_requests(p).milli_cpu == 500
    assert pod_scoring_requests(p).milli_cpu == 600
    assert pod_non_zero_requests(p)[0] == 500


def test_sidecar_requests_add_to_containers_and_to_later_init_containers() -> None:
    p = pod(
        [ctr(cpu="1")],
        [ctr("side", sidecar=True, cpu="500m"), ctr("init", cpu="2")],
    )
    # containers 1 + sidecar 0.5 = 1.5; the later init container runs beside the sidecar: 2 + 0.5 = 2.5
    assert pod_requests(p).milli_cpu == 2500


def test_init_container_before_a_sidecar_does_not_see_it() -> None:
    p = pod([ctr(cpu="1")], [ctr("init", cpu="2"), ctr("side", sidecar=True, cpu="500m")])
    # init alone 2; containers + sidecar 1.5 => max 2
    assert pod_requests(p).milli_cpu == 2000


def test_max_is_taken_per_resource() -> None:
    p = pod([ctr(cpu="4", memory="1Gi")], [ctr("init", cpu="1", memory="2Gi")])
    requests = pod_requests(p)
    assert (requests.milli_cpu, requests.memory) == (4000, 2 * 1024 * MI)


# --- overhead ------------------------------------------------------------------------------------


def test_overhead_is_added_after_the_init_maximum() -> None:
    p = pod([ctr(cpu="1")], [ctr("init", cpu="3")], overhead={"cpu": "250m", "memory": "120Mi"})
    requests = pod_requests(p)
    assert (requests.milli_cpu, requests.memory) == (3250, 120 * MI)


def test_overhead_in_non_zero_requests_only_for_present_keys() -> None:
    p = pod([ctr()], overhead={"cpu": "250m"})
    assert pod_non_zero_requests(p) == (DEFAULT_MILLI_CPU_REQUEST + 250, DEFAULT_MEMORY_REQUEST)


def test_overhead_in_scoring_requests() -> None:
    p = pod([ctr()], overhead={"cpu": "250m", "memory": "1Mi"})
    requests = pod_scoring_requests(p)
    assert (requests.milli_cpu, requests.memory) == (350, DEFAULT_MEMORY_REQUEST + MI)


# --- non-zero defaults ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requests", "expected"),
    [
        pytest.param({}, (100, 200 * MI), id="both-missing"),
        pytest.param({"cpu": "0", "memory": "0"}, (0, 0), id="explicit-zero-kept"),
        pytest.param({"cpu": "250m"}, (250, 200 * MI), id="memory-missing"),
        pytest.param({"memory": "1Gi"}, (100, 1024 * MI), id="cpu-missing"),
    ],
)
def test_non_zero_defaults(requests: dict[str, str], expected: tuple[int, int]) -> None:
    container = Container("c", requests={name: parse_quantity(v) for name, v in requests.items()})
    assert pod_non_zero_requests(pod([container])) == expected


def test_non_zero_defaults_apply_per_container() -> None:
    assert pod_non_zero_requests(pod([ctr("a"), ctr("b", cpu="1")])) == (1100, 400 * MI)


def test_non_zero_init_containers_use_their_effective_requests() -> None:
    p = pod([ctr(cpu="100m", memory="10Mi")], [ctr("init", cpu="2")])
    assert pod_non_zero_requests(p) == (2000, 200 * MI)


def test_non_zero_sidecars_are_not_added_to_the_regular_sum() -> None:
    p = pod([ctr(cpu="1", memory="1Gi")], [ctr("side", sidecar=True, cpu="500m", memory="1Mi")])
    assert pod_non_zero_requests(p) == (1000, 1024 * MI)


def test_scoring_requests_default_init_containers_too() -> None:
    p = pod([ctr(cpu="50m", memory="1Mi")], [ctr("init")])
    requests = pod_scoring_requests(p)
    assert (requests.milli_cpu, requests.memory) == (100, DEFAULT_MEMORY_REQUEST)


def test_scoring_requests_keep_explicit_zero() -> None:
    requests = pod_scoring_requests(pod([ctr(cpu="0", memory="0")]))
    assert (requests.milli_cpu, requests.memory) == (0, 0)


def test_effective_requests_do_not_default() -> None:
    assert pod_requests(pod([ctr()])).is_zero()


# --- scalar resources ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "nvidia.com/gpu",
        "example.com/foo",
        "hugepages-2Mi",
        "hugepages-1Gi",
        "attachable-volumes-aws-ebs",
        "kubernetes.io/batch-cpu",
        "example.kubernetes.io/thing",
    ],
)
def test_scalar_resources_are_counted(name: str) -> None:
    container = Container("c", requests={name: parse_quantity("3")})
    requests = pod_requests(Pod("p", containers=(container, container)))
    assert requests.scalar == {name: 6}
    assert requests.get(name) == 6


@pytest.mark.parametrize("name", ["foo", "storage", "requests.example.com/foo", "bad name/x"])
def test_other_resources_are_ignored(name: str) -> None:
    requests = Resources.from_resource_list({name: parse_quantity("3")})
    assert requests == Resources()


def test_from_resource_list_units() -> None:
    r = Resources.from_resource_list(rl(cpu="1.5", memory="1Ki", ephemeral_storage="2k", pods="110"))
    assert (r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pod_number) == (1500, 1024, 2000, 110)
    assert r.to_dict() == {"cpu": 1500, "memory": 1024, "ephemeral-storage": 2000, "pods": 110}


def test_cpu_below_a_millicore_rounds_up() -> None:
    assert Resources.from_resource_list(rl(cpu="0.1m")).milli_cpu == 1


# --- exact sums ----------------------------------------------------------------------------------


def test_fractional_quantities_are_summed_before_rounding() -> None:
    """Two containers of memory "0.5" request 1 byte, not 2 (Kubernetes sums Quantities exactly)."""
    p = pod([ctr("a", memory="0.5"), ctr("b", memory="0.5")])
    assert pod_requests(p).memory == 1


def test_single_fraction_rounds_up() -> None:
    assert pod_requests(pod([ctr(memory="0.5")])).memory == 1
    assert pod_requests(pod([ctr(memory="1.5")])).memory == 2


def test_fractional_millicores_are_summed_before_rounding() -> None:
    p = pod([ctr("a", cpu="0.5m"), ctr("b", cpu="0.5m")])
    assert pod_requests(p).milli_cpu == 1


@given(st.lists(st.integers(0, 10**12), min_size=1, max_size=6))
def test_sum_of_requests_is_the_ceiling_of_the_exact_sum(nanos: list[int]) -> None:
    containers = [ctr(f"c{i}", memory=f"{n}n") for i, n in enumerate(nanos)]
    assert pod_requests(pod(containers)).memory == -(-sum(nanos) // G)


# --- Resources arithmetic ------------------------------------------------------------------------


def test_add_subtract_and_get() -> None:
    a = Resources(1000, 2048, 10, 1, {"nvidia.com/gpu": 1})
    b = Resources(500, 1024, 0, 1, {"nvidia.com/gpu": 2, "example.com/foo": 1})
    total = a.add(b)
    assert total == Resources(1500, 3072, 10, 2, {"nvidia.com/gpu": 3, "example.com/foo": 1})
    assert total.subtract(b) == Resources(1000, 2048, 10, 1, {"nvidia.com/gpu": 1, "example.com/foo": 0})
    assert (total.get("cpu"), total.get("memory"), total.get("ephemeral-storage"), total.get("pods")) == (
        1500,
        3072,
        10,
        2,
    )
    assert total.get("missing.com/x") == 0


def test_is_zero_ignores_pod_count_but_not_scalars() -> None:
    assert Resources(allowed_pod_number=3).is_zero()
    assert not Resources(scalar={"nvidia.com/gpu": 1}).is_zero()
    assert Resources(scalar={"nvidia.com/gpu": 0}).is_zero()


# --- resource names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("nvidia.com/gpu", True, id="gpu"),
        pytest.param("example.com/foo", True, id="example"),
        pytest.param("a.b/c_d.e-f", True, id="name-punctuation"),
        pytest.param("example.com/Foo", True, id="uppercase-name"),
        pytest.param("cpu", False, id="native-no-slash"),
        pytest.param("hugepages-2Mi", False, id="hugepages-is-native"),
        pytest.param("kubernetes.io/foo", False, id="kubernetes-io-prefix"),
        pytest.param("node.kubernetes.io/foo", False, id="kubernetes-io-subdomain"),
        pytest.param("requests.example.com/foo", False, id="requests-prefix"),
        pytest.param("Example.com/foo", False, id="uppercase-prefix"),
        pytest.param("example.com/", False, id="empty-name"),
        pytest.param("a/b/c", False, id="two-slashes"),
        pytest.param("-bad.com/x", False, id="prefix-starts-with-dash"),
        pytest.param("example.com/-x", False, id="name-starts-with-dash"),
        pytest.param("example.com/" + "x" * 63, True, id="name-63-chars"),
        pytest.param("example.com/" + "x" * 64, False, id="name-64-chars"),
    ],
)
def test_is_extended_resource(name: str, expected: bool) -> None:
    assert is_extended_resource(name) is expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("nvidia.com/gpu", True),
        ("hugepages-2Mi", True),
        ("attachable-volumes-csi-x", True),
        ("kubernetes.io/foo", True),
        ("cpu", False),
        ("memory", False),
        ("pods", False),
        ("storage", False),
    ],
)
def test_is_scalar_resource(name: str, expected: bool) -> None:
    assert is_scalar_resource(name) is expected


def test_per_pod_results_equal_the_computation_and_stay_bounded() -> None:
    calls: list[Pod] = []

    def compute(pod: Pod) -> Resources:
        calls.append(pod)
        return pod_requests(pod)

    remembered = _PerPod(compute, limit=8)
    pods = [Pod(f"p{i}", containers=(Container("c", requests={"cpu": parse_quantity(f"{i}m")}),)) for i in range(20)]
    for pod in pods + pods[-3:]:
        assert remembered(pod) == pod_requests(pod)
        assert remembered(pod) is remembered(pod)
    assert len(calls) == len(pods)  # the last three were remembered
    assert len(remembered) <= 8


def test_per_pod_results_do_not_keep_pods_alive() -> None:
    """A pod that was replaced (bound, updated) leaves the memo with its last reference: no id is reused
    for a stale entry, and no pending pod outlives its bound copy because of a cache."""
    remembered = _PerPod(pod_requests)
    pods = [Pod(f"p{i}", containers=(Container("c", requests={"cpu": parse_quantity(f"{i + 1}m")}),)) for i in range(5)]
    gone = weakref.ref(pods[0])
    for pod in pods:
        remembered(pod)
    assert len(remembered) == 5
    del pod
    pods.pop(0)
    assert gone() is None
    assert len(remembered) == 4
    replacement = Pod("p0", containers=(Container("c", requests={"cpu": parse_quantity("7m")}),))
    assert remembered(replacement) == pod_requests(replacement)
    pods.clear()
    assert len(remembered) == 1
