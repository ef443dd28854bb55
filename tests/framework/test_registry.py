"""Registry (reference §2.2): register, duplicates, unknown names, merge, entry points."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata
from typing import Any, ClassVar, cast

import pytest

import kschedlib
from kschedlib.errors import ConfigError, KschedError, RegistryError
from kschedlib.framework import CycleState, FilterPlugin, Handle, NodeInfo, PluginEntry, Registry, Status
from kschedlib.framework.registry import ENTRY_POINT_GROUP
from kschedlib.model import Pod
from kschedlib.testing import FakeHandle
from tests.helpers import make_node, make_pod


class Always(FilterPlugin):
    name: ClassVar[str] = "Always"

    def __init__(self, args: Any, handle: Handle) -> None:
        self.args = args

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.success()


def decode(raw: Mapping[str, Any] | None) -> int:
    if raw is None:
        return 7
    if not isinstance(raw.get("n"), int):
        raise ConfigError("must be an integer", field="n", value=raw.get("n"))
    return int(raw["n"])


def test_register_and_get() -> None:
    registry = Registry()
    registry.register("Always", Always)
    entry = registry.get("Always")
    assert entry == PluginEntry("Always", Always)
    assert "Always" in registry
    assert "Other" not in registry
    assert len(registry) == 1
    assert [e.name for e in registry] == ["Always"]


def test_duplicate_name_is_refused_with_kube_schedulers_message() -> None:
    registry = Registry()
    registry.register("Always", Always)
    with pytest.raises(RegistryError, match=r"^a plugin named Always already exists$") as caught:
        registry.register("Always", Always)
    assert isinstance(caught.value, KeyError)
    assert isinstance(caught.value, KschedError)


def test_unknown_name() -> None:
    registry = Registry()
    with pytest.raises(RegistryError, match=r"^no plugin named Foo exists$"):
        registry.get("Foo")
    with pytest.raises(RegistryError, match=r"^no plugin named Foo exists$"):
        registry.unregister("Foo")


def test_unregister() -> None:
    registry = Registry()
    registry.register("Always", Always)
    registry.unregister("Always")
    assert "Always" not in registry
    registry.register("Always", Always)  # the name is free again


def test_names_are_sorted() -> None:
    registry = Registry()
    for name in ("b", "C", "a"):
        registry.register(name, Always)
    assert registry.names() == ["C", "a", "b"]


def test_args_decoder_and_raw_pass_through() -> None:
    registry = Registry()
    registry.register("Typed", Always, args=decode)
    registry.register("Raw", Always)
    assert registry.get("Typed").args_from(None) == 7
    assert registry.get("Typed").args_from({"n": 3}) == 3
    assert registry.get("Raw").args_from({"n": 3}) == {"n": 3}
    assert registry.get("Raw").args_from(None) is None
    with pytest.raises(ConfigError, match="n: must be an integer"):
        registry.get("Typed").args_from({"n": "x"})


def test_factory_builds_the_plugin() -> None:
    registry = Registry()
    registry.register("Typed", Always, args=decode)
    entry = registry.get("Typed")
    plugin = entry.factory(entry.args_from({"n": 2}), cast(Handle, FakeHandle(kube_version="1.30")))
    assert isinstance(plugin, Always)
    assert plugin.args == 2
    assert plugin.filter(CycleState(), make_pod("p"), NodeInfo.of(make_node("n"))).is_success


def test_merge_makes_a_new_registry() -> None:
    left = Registry()
    left.register("A", Always)
    right = Registry()
    right.register("B", Always, args=decode)
    merged = left.merge(right)
    assert merged.names() == ["A", "B"]
    assert merged.get("B").decode_args is decode
    assert left.names() == ["A"]
    assert right.names() == ["B"]


def test_merge_refuses_a_shared_name() -> None:
    left = Registry()
    left.register("A", Always)
    right = Registry()
    right.register("A", Always)
    with pytest.raises(RegistryError, match="a plugin named A already exists"):
        left.merge(right)


def test_merge_with_the_in_tree_registry() -> None:
    custom = Registry()
    custom.register("Always", Always)
    merged = kschedlib.in_tree_registry().merge(custom)
    assert "Always" in merged
    assert "NodeResourcesFit" in merged
    clash = Registry()
    clash.register("NodeResourcesFit", Always)
    with pytest.raises(RegistryError, match="NodeResourcesFit"):
        kschedlib.in_tree_registry().merge(clash)


def test_copy_is_independent() -> None:
    registry = Registry()
    registry.register("A", Always)
    copy = registry.copy()
    copy.register("B", Always)
    assert registry.names() == ["A"]


def test_constructor_copies_its_mapping() -> None:
    entries = {"A": PluginEntry("A", Always)}
    registry = Registry(entries)
    registry.register("B", Always)
    assert set(entries) == {"A"}


def test_in_tree_registry_is_fresh_each_time() -> None:
    first = kschedlib.in_tree_registry()
    first.unregister("ImageLocality")
    assert "ImageLocality" in kschedlib.in_tree_registry()


IN_TREE = ["DefaultBinder", "ImageLocality", "InterPodAffinity", "NodeAffinity", "NodeName", "NodePorts",
           "NodeResourcesBalancedAllocation", "NodeResourcesFit", "NodeUnschedulable", "PodTopologySpread",
           "PrioritySort", "SchedulingGates", "TaintToleration"]


def test_in_tree_registry_holds_the_default_plugins() -> None:
    assert set(IN_TREE) <= set(kschedlib.in_tree_registry().names())


# --- entry points -----------------------------------------------------------------------------


class FakeEntryPoint:
    def __init__(self, name: str, target: object) -> None:
        self.name = name
        self._target = target
        self.loaded = 0

    def load(self) -> object:
        self.loaded += 1
        return self._target


def factory_with_decoder(args: Any, handle: Handle) -> Always:
    return Always(args, handle)


factory_with_decoder.decode_args = decode  # type: ignore[attr-defined]


def fake_entry_points(monkeypatch: pytest.MonkeyPatch, points: list[FakeEntryPoint]) -> list[str]:
    groups: list[str] = []

    def entry_points(*, group: str) -> list[FakeEntryPoint]:
        groups.append(group)
        return points if group == ENTRY_POINT_GROUP else []

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    return groups


def test_entry_points_add_third_party_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    point = FakeEntryPoint("ThirdParty", factory_with_decoder)
    groups = fake_entry_points(monkeypatch, [point, FakeEntryPoint("Plain", Always)])
    base = Registry()
    base.register("A", Always)
    merged = base.with_entry_points()
    assert groups == ["kschedlib.plugins"]
    assert point.loaded == 1
    assert merged.names() == ["A", "Plain", "ThirdParty"]
    assert merged.get("ThirdParty").decode_args is decode
    assert merged.get("ThirdParty").args_from(None) == 7
    assert merged.get("Plain").decode_args is None
    assert base.names() == ["A"]


def test_entry_points_of_another_group(monkeypatch: pytest.MonkeyPatch) -> None:
    groups = fake_entry_points(monkeypatch, [FakeEntryPoint("X", Always)])
    assert Registry().with_entry_points("my.group").names() == []
    assert groups == ["my.group"]


def test_entry_point_clashing_with_an_in_tree_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, [FakeEntryPoint("NodeResourcesFit", Always)])
    with pytest.raises(RegistryError, match="a plugin named NodeResourcesFit already exists"):
        kschedlib.in_tree_registry().with_entry_points()


def test_no_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, [])
    assert kschedlib.in_tree_registry().with_entry_points().names() == kschedlib.in_tree_registry().names()


class Refuse(FilterPlugin):
    """Refuses node n1: the plugin the entry-point tests publish."""

    name: ClassVar[str] = "Refuse"

    def __init__(self, args: Any, handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status.unschedulable("refused") if node_info.name == "n1" else Status.success()


def test_entry_point_plugin_runs_in_a_scheduler(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_entry_points(monkeypatch, [FakeEntryPoint("Refuse", Refuse)])
    registry = kschedlib.in_tree_registry().with_entry_points()
    config = {"profiles": [{"plugins": {"filter": {"enabled": [{"name": "Refuse"}]}}}]}
    cluster = [make_node("n1"), make_node("n2")]
    sched = kschedlib.Scheduler(config, registry=registry)
    sched.add_objects(cluster)
    sched.add_pod(make_pod("p"))
    result = sched.schedule_one()
    assert result is not None
    assert result.node_name == "n2"


def test_a_scheduler_looks_entry_points_up_only_for_a_plugin_that_is_not_in_tree(
        monkeypatch: pytest.MonkeyPatch) -> None:
    groups = fake_entry_points(monkeypatch, [FakeEntryPoint("Refuse", Refuse)])
    kschedlib.Scheduler()
    kschedlib.Scheduler({"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {}}]}]})
    assert groups == []
    sched = kschedlib.Scheduler({"profiles": [{"plugins": {"filter": {"enabled": [{"name": "Refuse"}]}}}]})
    assert groups == [ENTRY_POINT_GROUP]
    sched.add_objects([make_node("n1"), make_node("n2")])
    sched.add_pod(make_pod("p"))
    result = sched.schedule_one()
    assert result is not None
    assert result.node_name == "n2"


def test_default_registry_looks_entry_points_up_for_plugin_config_of_a_published_plugin(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from kschedlib.framework.config import SchedulerConfig
    from kschedlib.plugins import default_registry

    groups = fake_entry_points(monkeypatch, [FakeEntryPoint("ThirdParty", factory_with_decoder)])
    config = SchedulerConfig.from_dict({"profiles": [{"pluginConfig": [{"name": "ThirdParty", "args": {}}]}]})
    assert "ThirdParty" in default_registry(config)
    assert groups == [ENTRY_POINT_GROUP]
    assert "ThirdParty" not in default_registry(SchedulerConfig())


def test_batch_plugins_are_registered_without_importing_their_modules() -> None:
    import subprocess
    import sys

    code = ("import sys, kschedlib; r = kschedlib.in_tree_registry(); kschedlib.Scheduler(); "
            "assert 'Coscheduling' in r and 'CapacityScheduling' in r; "
            "print(sorted(m for m in sys.modules if m.startswith('kschedlib.plugins.batch.')))")
    assert subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout == "[]\n"
    entry = kschedlib.in_tree_registry().get("Coscheduling")
    plugin = entry.factory(entry.args_from({"permitWaitingTimeSeconds": 5}), FakeHandle())
    assert type(plugin).__name__ == "Coscheduling"
    with pytest.raises(ConfigError):
        entry.args_from({"permitWaitingTimeSeconds": "soon"})


def test_a_simulation_without_pod_groups_does_not_import_the_batch_plugins() -> None:
    import subprocess
    import sys

    code = ("import sys, kschedlib; node = {'kind': 'Node', 'metadata': {'name': 'n'}, "
            "'status': {'allocatable': {'cpu': '1', 'pods': '5'}}}; "
            "pod = {'kind': 'Pod', 'metadata': {'name': 'p'}, 'spec': {'containers': [{'name': 'c'}]}}; "
            "report = kschedlib.simulate([node, pod]); assert report.placements == {'default/p': 'n'}; "
            "assert report.pod_groups == {}; "
            "print(sorted(m for m in sys.modules if m.startswith('kschedlib.plugins.batch.')))")
    assert subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout == "[]\n"
