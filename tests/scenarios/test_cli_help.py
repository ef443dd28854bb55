"""The command line a person expects: usage, --version, help with examples, one --format vocabulary,
common mistakes answered with the fix, and a start that loads only what the command uses."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

import kschedlib
from kschedlib._cli.formats import DEFAULT_FORMAT, FORMATS, WRITERS
from kschedlib.cli import COMMANDS, _parser
from tests.helpers import cli
from tests.scenarios.test_cli import SMALL, write_json

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial" / "cluster.json"



def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = _parser()  # without argv: every command with its arguments
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_kschedlib_alone_prints_a_short_usage_with_examples() -> None:
    """Regression: it was an argparse error (status 2)."""
    code, out, err = cli()
    assert (code, err) == (0, "")
    assert out.startswith("usage: kschedlib")
    assert all(f"  {name} " in out for name in COMMANDS)
    assert "examples:" in out
    assert "kschedlib simulate cluster.json" in out
    assert len(out.splitlines()) < 30


def test_version() -> None:
    code, out, _ = cli("--version")
    assert code == 0
    assert out == f"kschedlib {kschedlib.__version__} (kube-scheduler 1.30-1.36, default 1.36)\n"


def test_the_top_level_help_reads_without_markup() -> None:
    code, out, _ = cli("--help")
    assert code == 0
    assert "``" not in out
    assert "exit status:" in out
    assert all(name in out for name in COMMANDS)


def test_the_top_level_exit_statuses_include_each_commands_own() -> None:
    """Regression: explain and sweep document status 1 for answers, which the top-level list called only
    an unexpected error."""
    _, out, _ = cli("--help")
    statuses = out[out.index("exit status:"):]
    for name in COMMANDS:
        _, own, _ = cli(name, "--help")
        if ", 1 when" in own:
            assert f"{name}: " in statuses, name


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_examples_and_documents_every_option(name: str) -> None:
    parser = subcommands()[name]
    assert parser.epilog is not None
    assert parser.epilog.startswith("examples:")
    assert f"kschedlib {name} " in parser.epilog
    undocumented = [action.dest for action in parser._actions if not action.help]
    assert undocumented == []
    code, out, _ = cli(name, "--help")
    assert code == 0
    assert "examples:" in out


def test_one_format_vocabulary_with_one_default() -> None:
    formats = {name: next((a for a in parser._actions if a.dest == "format"), None)
               for name, parser in subcommands().items()}
    offered = {name: action for name, action in formats.items() if action is not None}
    assert set(offered) == set(COMMANDS) - {"serve-extender", "report", "dump", "run"}  # they print no answer
    for name, action in offered.items():
        assert action.default == DEFAULT_FORMAT == "text", name
        shared = [choice for choice in action.choices or () if choice in FORMATS]
        assert shared == [f for f in FORMATS if f in WRITERS], name
    assert list(offered["sweep"].choices or ()) == [*shared, "jsonl"]


@pytest.mark.parametrize(("argv", "fragment"), [
    (["explain", "CLUSTER", "--pod", "default/web"], "node-a  selected"),
    (["simulate", "CLUSTER"], "scheduled 1 of 1 pods"),
    (["capacity", "CLUSTER", "--pod", "default/web"], "more replica(s) fit"),
], ids=["explain", "simulate", "capacity"])
@pytest.mark.parametrize("form", ["text", "json", "yaml", "csv"])
def test_every_format_on_every_command(tmp_path: Path, argv: list[str], fragment: str, form: str) -> None:
    cluster = str(write_json(tmp_path / "cluster.json", SMALL))
    code, out, err = cli(*[cluster if word == "CLUSTER" else word for word in argv], "--format", form)
    assert (code, err) == (0, "")
    if form == "text":
        assert fragment in out
    elif form == "json":
        assert isinstance(json.loads(out), dict)
    elif form == "csv":
        assert out.count("\n") >= 2
        assert "," in out.splitlines()[0]
    else:
        assert ":" in out.splitlines()[0]


@pytest.mark.parametrize(("argv", "header"), [
    (["simulate", "NODES"], "pod,node,state,attempts,reason"),
    (["capacity", "NODES", "--pod", "BIG"], "template,node,replicas"),
    (["drain", "NODES", "--node", "node-c"], "pod,from,to,message,flags"),
    (["nodes-needed", "NODES", "--node-template", "TEMPLATE"], "pod,node,new_node,reason"),
    (["compare", "NODES", "--config", "default", "--config", "CONFIG"], "pod,default,CONFIG"),
], ids=["simulate", "capacity", "drain", "nodes-needed", "compare"])
def test_a_csv_answer_without_rows_is_its_header(tmp_path: Path, argv: list[str], header: str) -> None:
    """Regression: it was an empty line, so a spreadsheet or script could not tell the columns."""
    files = {"NODES": write_json(tmp_path / "nodes.json", SMALL[:3]),
             "BIG": write_json(tmp_path / "big.json", [{**SMALL[3], "metadata": {"name": "big", "namespace": "default"},
                                                         "spec": {"containers": [{"name": "c", "resources": {
                                                             "requests": {"cpu": "64"}}}]}}]),
             "TEMPLATE": write_json(tmp_path / "template.json", [SMALL[0]]), "CONFIG": tmp_path / "config.json"}
    files["CONFIG"].write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                           "kind": "KubeSchedulerConfiguration"}))
    code, out, err = cli(*[str(files[word]) if word in files else word for word in argv], "--format", "csv")
    assert (code, err) == (0, "")
    assert out == header.replace("CONFIG", str(files["CONFIG"])) + "\n"


# --- common mistakes, answered with the fix ---------------------------------------------------


def _refusal(*argv: str) -> str:
    code, out, err = cli(*argv)
    assert (code, out) == (2, "")
    assert err.startswith("kschedlib: error: ")
    return err


def test_kubectl_table_output_instead_of_json(tmp_path: Path) -> None:
    table = tmp_path / "pods.txt"
    table.write_text("NAMESPACE   NAME    READY   STATUS    RESTARTS   AGE\n"
                     "default     web-1   1/1     Running   0          3d\n")
    err = _refusal("simulate", str(table))
    assert f"{table}: this is kubectl's table output, not objects: ask kubectl for JSON" in err
    assert f"-o json > {table}" in err


def test_a_config_given_as_the_cluster(tmp_path: Path) -> None:
    config = tmp_path / "sched.yaml"
    config.write_text('{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}')
    err = _refusal("simulate", str(config))
    assert f"{config}: holds a KubeSchedulerConfiguration (a scheduler configuration), not cluster objects: " \
           "give it with --config" in err


@pytest.mark.parametrize(("document", "what"), [
    ({"apiVersion": "v1", "kind": "List", "items": SMALL}, "a v1 List"), (SMALL, "a JSON array of them"),
    (SMALL[0], "a Node")], ids=["list", "array", "one-node"])
def test_a_cluster_given_as_the_config(tmp_path: Path, document: object, what: str) -> None:
    cluster = str(write_json(tmp_path / "cluster.json", SMALL))
    config = tmp_path / "objects.json"
    config.write_text(json.dumps(document))
    err = _refusal("explain", cluster, "--pod", "default/web", "--config", str(config))
    assert f"{config} holds cluster objects ({what}), not a KubeSchedulerConfiguration: give it as the " \
           "cluster" in err


@pytest.mark.parametrize(("pod", "hint"), [
    ("default/web1", "did you mean default/web?"),
    ("kube-system/web", "give one of the pods of this name: default/web"),
], ids=["typo", "wrong-namespace"])
def test_a_pod_name_not_found_names_the_close_ones(tmp_path: Path, pod: str, hint: str) -> None:
    cluster = str(write_json(tmp_path / "cluster.json", SMALL))
    assert hint in _refusal("explain", cluster, "--pod", pod)


def test_yaml_without_the_extra_says_how_to_install_it_from_this_checkout(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text("kind: List\nitems: []\n")
    monkeypatch.setitem(sys.modules, "yaml", None)  # as if PyYAML were not installed
    err = _refusal("simulate", str(path))
    assert "reading YAML needs PyYAML: pip install 'kschedlib[yaml]'" in err
    assert f"(from this checkout: pip install -e '.[yaml]' in {ROOT})" in err
    assert "or give JSON" in err


# --- start-up: load only what the command uses -------------------------------------------------

_LOADED = ("import runpy, sys\n"
           "sys.argv = ['kschedlib', *sys.argv[1:]]\n"
           "try:\n    runpy.run_module('kschedlib', run_name='__main__')\n"
           "except SystemExit:\n    pass\n"
           "print(' '.join(sorted(m for m in sys.modules if m.startswith('kschedlib'))), file=sys.stderr)\n")


def loaded(*argv: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", _LOADED, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=True)
    return set(done.stderr.split())


def test_help_loads_nothing_of_the_scheduler() -> None:
    modules = loaded("--help")
    assert not {m for m in modules if m.startswith(("kschedlib.scheduler", "kschedlib.plugins",
                                                   "kschedlib.framework", "kschedlib.model"))}
    assert len(modules) < 10, sorted(modules)


def test_explain_loads_neither_sweeps_nor_capacity_nor_servers() -> None:
    modules = loaded("explain", str(TUTORIAL), "--pod", "default/web-1")
    assert "kschedlib.scheduler" in modules
    assert not {m for m in modules if m.startswith(("kschedlib.sweeps", "kschedlib.capacity", "kschedlib.extender",
                                                   "kschedlib.prometheus", "kschedlib.testing", "kschedlib.report"))}
    assert "kschedlib.kube.scheduler" not in modules  # --kubeconfig's option, not the live scheduler
