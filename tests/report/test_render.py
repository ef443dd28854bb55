"""render_html without a browser: the kinds it tells apart, what every page holds, its refusals."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kschedlib
from kschedlib import capacity
from kschedlib.errors import ReportError
from kschedlib.report import KINDS, detect_kind, render_html
from kschedlib.report._charts import heat_class
from kschedlib.report._fit_errors import parse_fit_error, rejections_of
from kschedlib.report._format import amount, percent, plural
from tests.report.results import GATED, TEMPLATE, URGENT, cluster, edge_results, node_names, pending_pods


class _Text(HTMLParser):
    """The text of a page (what a reader sees, tooltips and folded lists included) and its tags."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def parsed(page: str) -> _Text:
    reader = _Text()
    reader.feed(page)
    return reader


@pytest.mark.parametrize("kind", KINDS)
def test_the_kind_is_told_from_the_keys(kind: str, kind_results: dict[str, Any]) -> None:
    assert detect_kind(kind_results[kind]) == kind


@pytest.mark.parametrize("kind", KINDS)
def test_every_page_names_its_pods_and_nodes(kind: str, kind_results: dict[str, Any]) -> None:
    data = kind_results[kind]
    page = render_html(data)
    text = "\n".join(parsed(page).text)
    assert f"kschedlib {kind}" in text
    for name in pending_pods(kind, data) | node_names(kind, data):
        assert name in text, name


@pytest.mark.parametrize("kind", KINDS)
def test_a_page_fetches_nothing(kind: str, kind_results: dict[str, Any]) -> None:
    page = render_html(kind_results[kind])
    reader = parsed(page)
    policies = [a["content"] for tag, a in reader.tags if tag == "meta" and a.get("http-equiv")]
    assert policies
    assert "default-src 'none'" in str(policies[0])
    assert not [a for tag, a in reader.tags if "src" in a or (tag == "link")]
    assert set(re.findall(r"https?://[^\"' <]+", page)) <= {"http://www.w3.org/2000/svg"}


def test_the_kind_may_be_given(kind_results: dict[str, Any]) -> None:
    assert render_html(kind_results["drain"], kind="drain") == render_html(kind_results["drain"])


def test_result_objects_render_as_their_json() -> None:
    report = kschedlib.simulate(cluster())
    assert render_html(report) == render_html(report.to_dict())


def test_sweep_results_render_as_the_command_prints_them() -> None:
    scenarios = [kschedlib.Scenario(cluster(), params={"kube_version": "1.36"}, name="only")]
    results = list(kschedlib.sweep(scenarios, kschedlib.sweeps.Ask("simulate")))
    text = "\n".join(parsed(render_html(results)).text)
    assert "only" in text
    assert "kube_version" in text


def test_the_simulate_page_groups_pending_pods_by_reason(kind_results: dict[str, Any]) -> None:
    page = render_html(kind_results["simulate"])
    text = "\n".join(parsed(page).text)
    assert "default/big" in text
    assert "Insufficient cpu" in text
    assert "node-a, node-b, node-c" in text
    assert "default/held" in text
    assert "held by SchedulingGates" in text


def test_text_from_a_result_is_escaped(kind_results: dict[str, Any]) -> None:
    data = json.loads(json.dumps(kind_results["simulate"]))
    data["unschedulable"]["default/big"] = "0/4 nodes are available: 4 <script>alert(1)</script>."
    data["fit_errors"] = []
    page = render_html(data)
    assert "<script>alert" not in page
    assert "4 <script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_saved_result_without_config_still_renders(kind_results: dict[str, Any]) -> None:
    data = {k: v for k, v in kind_results["simulate"].items() if k not in ("config", "utilisation", "fit_errors")}
    assert "not recorded" in render_html(data)


REFUSED = [
    ("a-cluster-dump", {"apiVersion": "v1", "kind": "List", "items": []}, "<top level>", "Kubernetes List"),
    ("an-empty-object", {}, "<top level>", "not the output"),
    ("a-number", 3, "<top level>", "expected the JSON object"),
    ("an-empty-list", [], "<top level>", "scenario row"),
    ("rows-without-results", [{"index": 0, "scenario": "a"}], "<top level>", "scenario row"),
    ("two-kinds-at-once", {"replicas": 1, "stopped_by": None, "placements": {}, "templates": {},
                           "nodes_needed": 1, "template": "t", "not_helped": {}}, "<top level>", "not the output"),
]


@pytest.mark.parametrize(("data", "field", "words"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_what_is_not_a_result_is_refused(data: Any, field: str, words: str) -> None:
    with pytest.raises(ReportError, match=words) as caught:
        render_html(data)
    assert caught.value.field == field


def test_a_kind_that_does_not_match_names_the_missing_key(kind_results: dict[str, Any]) -> None:
    with pytest.raises(ReportError, match="not a result of explain: no feasible") as caught:
        render_html(kind_results["simulate"], kind="explain")
    assert caught.value.field == "feasible"
    with pytest.raises(ReportError, match="unknown kind"):
        render_html(kind_results["simulate"], kind="gantt")


def test_a_result_of_an_unexpected_shape_is_a_report_error(kind_results: dict[str, Any]) -> None:
    data = {k: v for k, v in kind_results["explain"].items() if k != "num_all_nodes"}
    with pytest.raises(ReportError, match="unexpected shape") as caught:
        render_html(data)
    assert caught.value.field == "num_all_nodes"


FIT_ERRORS = [
    ("counts", "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 Insufficient cpu. preemption: "
     "0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
     4, [(1, "node(s) had untolerated taint(s)"), (3, "Insufficient cpu")],
     "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."),
    ("dotted-resource", "0/2 nodes are available: 2 Insufficient nvidia.com/gpu.", 2,
     [(2, "Insufficient nvidia.com/gpu")], ""),
    ("prefilter", "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: not "
     "eligible due to preemptionPolicy=Never.", 3, [(None, "pod has unbound immediate PersistentVolumeClaims")],
     "preemption: not eligible due to preemptionPolicy=Never."),
    ("no-nodes", "no nodes available to schedule pods", None, [(None, "no nodes available to schedule pods")], ""),
]


@pytest.mark.parametrize(("message", "nodes", "reasons", "rest"), [c[1:] for c in FIT_ERRORS],
                         ids=[c[0] for c in FIT_ERRORS])
def test_fit_errors_are_taken_apart(message: str, nodes: int | None, reasons: list[Any], rest: str) -> None:
    parsed_error = parse_fit_error(message)
    assert (parsed_error.nodes, list(parsed_error.reasons), parsed_error.rest) == (nodes, reasons, rest)


REASON = st.text(st.characters(codec="ascii", categories=("L", "N", "Zs"), include_characters="()/{}:-'"),
                 min_size=1).map(str.strip).filter(lambda r: r and not r[0].isdigit() and ", " not in r)


@given(st.dictionaries(REASON, st.integers(1, 5000), min_size=1, max_size=6))
def test_a_fit_error_message_reads_back_as_its_histogram(histogram: dict[str, int]) -> None:
    items = sorted(f"{count} {reason}" for reason, count in histogram.items())
    total = sum(histogram.values())
    message = f"0/{total} nodes are available: {', '.join(items)}. preemption: not helpful."
    back = parse_fit_error(message)
    assert back.nodes == total
    assert back.rest == "preemption: not helpful."
    assert {reason: count for count, reason in back.reasons} == histogram


def test_explain_verdicts_become_rejections_most_nodes_first() -> None:
    filtered = {"a": {"plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu", "Insufficient memory"]},
                "b": {"plugin": "NodeResourcesFit", "reasons": ["Insufficient cpu"]},
                "c": {"plugin": "", "reasons": []}}
    assert rejections_of(filtered) == [
        {"plugin": "NodeResourcesFit", "reason": "Insufficient cpu", "nodes": ["a", "b"]},
        {"plugin": "", "reason": "", "nodes": ["c"]},
        {"plugin": "NodeResourcesFit", "reason": "Insufficient memory", "nodes": ["a"]}]


AMOUNTS = [("cpu", 800, "800m"), ("cpu", 2500, "2.5 CPU"), ("memory", 8 * 2**30, "8.0 GiB"),
           ("memory", 512 * 2**20, "512 MiB"), ("memory", 100, "100 B"), ("ephemeral-storage", 3 * 2**40, "3.0 TiB"),
           ("pods", 110, "110"), ("nvidia.com/gpu", 4, "4"), ("cpu", None, "-")]


@pytest.mark.parametrize(("resource", "value", "shown"), AMOUNTS, ids=[f"{r}-{v}" for r, v, _ in AMOUNTS])
def test_amounts_read_as_people_write_them(resource: str, value: int | None, shown: str) -> None:
    assert amount(resource, value) == shown


def test_percentages_plurals_and_heat() -> None:
    assert (percent(0.375), percent(None), plural(1, "pod"), plural(10_000, "pod"), plural(2, "copy", "copies")) == \
        ("38%", "-", "1 pod", "10,000 pods", "2 copies")
    assert [heat_class(r) for r in (None, 0.0, 0.1, 0.11, 0.5, 0.96, 1.0, 1.2)] == \
        ["hn", "h0", "h0", "h1", "h3", "h7", "h7", "hx"]


def test_import_kschedlib_loads_nothing_of_the_report() -> None:
    code = ("import sys, kschedlib, kschedlib.cli; "
            "print(sorted(m for m in sys.modules if m.startswith('kschedlib.report')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert set(json.loads(loaded.replace("'", '"'))) <= {"kschedlib.report", "kschedlib.report._detect",
                                                        "kschedlib.report.command"}  # no page builder
    assert "kschedlib.report" not in subprocess.run(
        [sys.executable, "-c", "import sys, kschedlib; print(list(sys.modules))"],
        capture_output=True, text=True, check=True).stdout


def test_the_gated_pod_is_in_the_simulate_result(kind_results: dict[str, Any]) -> None:
    metadata: Any = GATED["metadata"]
    assert f"default/{metadata['name']}" in kind_results["simulate"]["gated"]


def test_the_config_used_is_shown_with_its_document(kind_results: dict[str, Any]) -> None:
    text = "\n".join(parsed(render_html(kind_results["compare"])).text)
    assert "config default\ndefault" in text
    assert "config packing\ninline" in text
    assert "packing: the KubeSchedulerConfiguration" in text
    assert '"type": "MostAllocated"' in text
    simulate = "\n".join(parsed(render_html(kind_results["simulate"])).text)
    assert "kube-scheduler version\n1.36" in simulate
    assert "scheduler config\ndefault" in simulate
    assert "the KubeSchedulerConfiguration" not in simulate


@pytest.fixture(scope="module")
def edges() -> dict[str, Any]:
    return edge_results()


def _page_text(data: Any) -> str:
    return "\n".join(parsed(render_html(data)).text)


def test_preemption_and_inputs_not_used_have_their_sections(edges: dict[str, Any]) -> None:
    text = _page_text(edges["simulate"])
    assert "Preemption\npod\nwhat happened\nnode\ndefault/urgent\nnominated\nnode-c" in text
    assert "default/db-0\nevicted by preemption" in text
    assert "Inputs not used" in text
    assert "kinds\n1\nDeployment" in text


def test_explain_pages_of_a_gated_a_placed_and_a_preempting_pod(edges: dict[str, Any]) -> None:
    assert "default/held is not tried: SchedulingGates: waiting for scheduling gates: [example.com/quota]" in \
        _page_text(edges["explain"])
    fits = _page_text(edges["explain-fits"])
    assert "Rejections by plugin\nplugin\nreason\nnodes\nwhich\nTaintToleration" in fits
    assert "goes to node-" in fits
    assert "nominate node-c, evicting default/db-0" in _page_text(edges["explain-preempts"])


def test_capacity_and_drain_pages_show_what_came_first_and_what_broke(edges: dict[str, Any]) -> None:
    capacity_text = _page_text(edges["capacity"])
    assert "The limit (--max)." in capacity_text
    assert "The cluster's pending pods, placed first" in capacity_text
    drain_text = _page_text(edges["drain"])
    assert "PodDisruptionBudget violations\npod\nbudget\ndisruptions allowed\ndefault/log-a\ndefault/log\n0" in \
        drain_text


def test_explain_page_of_a_bound_pod_says_where_it_is_bound() -> None:
    """Regression: the page said only "goes to node-a", as for a pending pod."""
    text = _page_text(kschedlib.explain(cluster(), "default/log-a").to_dict())
    assert "bound to node-a; as written, it goes to node-a" in text
    assert "default/log-a is bound to node-a: kube-scheduler never schedules a bound pod again" in text


def test_capacity_page_names_the_victims_and_the_pending_pods_left_out() -> None:
    answer = capacity.max_replicas([*cluster(), URGENT], "default/urgent").to_dict()
    assert answer["preemption"] == {"node": "node-c", "victims": ["default/db-0"]}
    text = _page_text(answer)
    assert ("Preemption would help: \nthe next copy would fit on node-c by preempting lower-priority pods: \n"
            "default/db-0") in text
    assert "The cluster's pending pods, left out" in text
    assert "placed first" not in text
    assert "default/big, default/held, default/trainer, default/urgent, default/web-1, default/web-2" in text


def test_nodes_needed_page_lists_the_pods_left_out_as_fitting_today() -> None:
    answer = capacity.nodes_needed(cluster(), TEMPLATE, only_unschedulable=True, limit=5).to_dict()
    assert answer["fit_today"] == ["default/trainer", "default/web-1", "default/web-2"]
    text = _page_text(answer)
    assert "Left out: they fit on an existing node today" in text
    assert "default/trainer, default/web-1, default/web-2" in text


def test_a_failed_scenario_is_listed_with_its_error(edges: dict[str, Any]) -> None:
    text = _page_text(edges["sweep"])
    assert "2 scenarios, 1 failed" in text
    assert "Failed scenarios" in text
    assert "unsupported Kubernetes version" in text


def test_mid_sized_clusters_and_missing_sections_still_render(kind_results: dict[str, Any]) -> None:
    data = json.loads(json.dumps(kind_results["simulate"]))
    nodes = {f"node-{i:03d}": {"cpu": {"requested": i, "allocatable": 100, "ratio": i / 100}} for i in range(100)}
    state = {"nodes": nodes, "zones": {"z": {"cpu": {"requested": 1, "allocatable": 2, "ratio": 0.5}}},
             "total": {"cpu": {"requested": 1, "allocatable": 2, "ratio": 0.5}}}
    data.update(utilisation=state, fragmentation={"before": None, "after": None}, notes=["a note"])
    page = render_html(data)
    assert page.count('width="11" height="11"') == 100  # a rectangle with its tooltip per node
    assert "<title>node-042 cpu: 42% (42m of 100m)</title>" in page
    text = "\n".join(parsed(page).text)
    assert "No pod shapes to judge by." in text
    assert "a note" in text
    compare = dict(kind_results["compare"])
    compare["runs"] = {label: {k: v for k, v in run.items() if k != "utilisation"}
                       for label, run in compare["runs"].items()}
    assert "Utilisation after, side by side" not in _page_text(compare)


def test_nodes_added_by_the_answer_are_marked_new(kind_results: dict[str, Any]) -> None:
    text = _page_text(kind_results["nodes-needed"])
    assert re.search(r"\npool-1\n\d+% \([^)]* of 8 CPU\), new node\n", text)
    assert "\nnode-a\n20% (800m of 4 CPU), was 8%\n" in text  # a pending pod fits there first
    assert "\nnode-c\n50% (2 CPU of 4 CPU)\n" in text  # unchanged: no "was"
