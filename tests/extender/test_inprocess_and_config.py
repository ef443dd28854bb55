"""CallableExtender in the cycle, the extenders config section, and the protocol's small print."""

from __future__ import annotations

import pytest

from kschedlib import ConfigError, Scheduler, Status
from kschedlib._internal.extender_config import parse_duration
from kschedlib._internal.http_extender import go_errorf
from kschedlib.extender import CallableExtender, ExtenderVictims, parse_extenders
from kschedlib.framework import NodeInfo
from kschedlib.model import Pod
from tests.extender.support import config, explained, nodes, pod, run_once
from tests.helpers import make_pod

pytestmark = pytest.mark.usefixtures("kube_v130")  # checks kube-scheduler v1.30.6's behaviour


def _no_odd(pod: Pod, node_info: NodeInfo) -> str | None:
    return "odd" if node_info.name.endswith(("1", "3")) else None


def test_callable_extender_filters_scores_and_binds() -> None:
    bound: list[tuple[str, str]] = []
    extender = CallableExtender("ext", filter=_no_odd, prioritize=lambda p, n: int(n.name[-1]), weight=2,
                                bind=lambda p, node: bound.append((p.key, node)))
    out = explained(None, [*nodes(4), pod()], extenders=[extender]).to_dict()
    assert out["feasible"] == ["n-0", "n-2"]
    assert out["filtered"]["n-3"] == {"plugin": "", "code": "Unschedulable", "reasons": ["odd"]}
    assert out["scores"]["n-2"]["extender_entries"] == [{"name": "ext", "score": 40}]
    assert out["best"] == ["n-2"]
    result, _ = run_once(None, [*nodes(4), pod()], extenders=[extender])
    assert result.node_name == "n-2"
    assert bound == [("default/p", "n-2")]


def test_unresolvable_extender_rejection_keeps_the_node_from_preemption() -> None:
    low = [make_pod(f"low-{i}", requests={"cpu": "4"}, node_name=f"n-{i}", priority=0) for i in range(2)]
    hp = make_pod("p", requests={"cpu": "4"}, priority=10)
    deny = CallableExtender("deny", filter=lambda p, n: Status.unresolvable("never here") if n.name == "n-0" else None)
    out = explained(None, [*nodes(2), *low, hp], extenders=[deny]).to_dict()
    assert out["postfilter"]["nominatedNode"] == "n-1"


def test_extenders_removing_nodes_record_the_extender_pseudo_plugin() -> None:
    result, scheduler = run_once(None, [*nodes(2), pod()],
                                 extenders=[CallableExtender("no", filter=lambda p, n: "no")])
    assert not result.scheduled
    assert result.message == "0/2 nodes are available: 2 no. preemption: 0/2 nodes are available: " \
                             "2 No preemption victims found for incoming pod."
    assert scheduler.pending()["default/p"][1].unschedulable_plugins == {"Extender"}


def test_preemption_extender_can_change_victims() -> None:
    low = [make_pod(f"low-{i}", requests={"cpu": "2"}, node_name=f"n-{i}", priority=i, start_time=1e9)
           for i in range(2)]
    hp = make_pod("p", requests={"cpu": "4"}, priority=10)

    def keep_n1(pod: Pod, victims: object) -> dict[str, ExtenderVictims]:
        assert isinstance(victims, dict)
        return {name: v for name, v in victims.items() if name == "n-1"}

    ext = CallableExtender("pick", preempt=keep_n1)
    out = explained(None, [*nodes(2, cpu="4"), *low, hp], extenders=[ext]).to_dict()
    assert out["postfilter"]["nominatedNode"] == "n-1"
    assert out["postfilter"]["victims"] == ["default/low-1"]


def test_failing_in_process_extender() -> None:
    def boom(pod: Pod, node_info: NodeInfo) -> None:
        raise RuntimeError("boom")

    fatal, _ = run_once(None, [*nodes(2), pod()], extenders=[CallableExtender("x", filter=boom)])
    skipped, _ = run_once(None, [*nodes(2), pod()], extenders=[CallableExtender("x", filter=boom, ignorable=True)])
    assert fatal.message == "boom"
    assert skipped.scheduled


@pytest.mark.parametrize(("extenders", "field", "message"), [
    ([{"urlPrefix": "http://a", "prioritizeVerb": "p"}], "extenders[0].weight", "positive weight"),
    ([{"urlPrefix": "http://a", "bindVerb": "b"}, {"urlPrefix": "http://b", "bindVerb": "b"}], "extenders",
     "only one extender can implement bind"),
    ([{"urlPrefix": "http://a", "managedResources": [{"name": "cpu"}]}], "extenders[0].managedResources[0].name",
     "invalid extended resource name"),
    ([{"urlPrefix": "http://a", "managedResources": [{"name": "a.com/x"}]},
      {"urlPrefix": "http://b", "managedResources": [{"name": "a.com/x"}]}],
     "extenders[1].managedResources[0].name", "duplicate"),
    ([{"urlPrefix": "http://a", "httpTimeout": "5"}], "extenders[0].httpTimeout", "invalid duration"),
    ([{"urlPrefix": "http://a", "urlprefix": "x"}], "extenders[0]", "unknown field"),
    ([{"urlPrefix": "ftp://a"}], "extenders[0].urlPrefix", "http"),
    ([{"urlPrefix": "http://a", "tlsConfig": {"caData": "%%%"}}], "extenders[0].tlsConfig.caData", "base64"),
])
def test_config_validation(extenders: list[dict[str, object]], field: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        Scheduler(config(*extenders))
    assert caught.value.field == field


def test_ignored_resources_need_node_resources_fit() -> None:
    cfg = config({"urlPrefix": "http://a", "managedResources": [{"name": "a.com/x", "ignoredByScheduler": True}]},
                 profiles=[{"plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}}}])
    with pytest.raises(ConfigError, match="can't find NodeResourcesFitArgs in plugin config"):
        Scheduler(cfg)


def test_config_defaults() -> None:
    (entry,) = parse_extenders([{"urlPrefix": "https://x:8443/ext", "httpTimeout": "0s"}])
    assert entry.http_timeout == 5.0
    assert entry.weight == 0
    assert not entry.node_cache_capable


@pytest.mark.parametrize(("text", "seconds"), [("5s", 5.0), ("1m30s", 90.0), ("250ms", 0.25), ("0", 0.0),
                                               ("1.5h", 5400.0), ("2us", 2e-6)])
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(("text", "printed"), [("plain", "plain"), ("100%%", "100%"), ("50% of", "50%!o(MISSING)f"),
                                               ("%d nodes", "%!d(MISSING) nodes"), ("end %", "end %!(NOVERB)")])
def test_go_errorf(text: str, printed: str) -> None:
    assert go_errorf(text) == printed
