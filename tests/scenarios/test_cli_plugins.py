"""``--plugins MODULE`` on the commands that schedule: a plugin in a ``.py`` file (or a module with
``register(registry)``) answers ``explain``, ``simulate`` and the planning commands as it does in ``run``."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import cli
from tests.whatif.manifests import node, pod, write_files

PLUGIN_FILE = Path(__file__).parents[1] / "kube" / "plugins_for_run.py"  # defines AvoidMaintenance
REGISTERING = textwrap.dedent('''
    from tests.kube.plugins_for_run import AvoidMaintenance


    def register(registry):
        registry.register("AvoidMaintenance", AvoidMaintenance)
''')

CONFIG = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
          "profiles": [{"schedulerName": "default-scheduler",
                        "plugins": {"filter": {"enabled": [{"name": "AvoidMaintenance"}]}}}]}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    busy = node("busy", cpu="8")
    busy["metadata"]["labels"]["maintenance"] = "true"
    cluster = {"kind": "List", "items": [busy, node("quiet", cpu="2"), pod("web", cpu="1")]}
    (tmp_path / "registering.py").write_text(REGISTERING)
    (tmp_path / "empty.py").write_text("VALUE = 1\n")
    (tmp_path / "broken.py").write_text("def broken(:\n")
    (tmp_path / "raising.py").write_text("raise RuntimeError('no licence server')\n")
    paths = write_files(tmp_path, {"cluster": cluster, "config": CONFIG})
    return {**paths, "plugin": str(PLUGIN_FILE), "registering": str(tmp_path / "registering.py"),
            "empty": str(tmp_path / "empty.py"), "broken": str(tmp_path / "broken.py"),
            "raising": str(tmp_path / "raising.py")}


@pytest.mark.parametrize("module", ["plugin", "registering"])
def test_explain_and_simulate_run_a_plugin_from_a_file(files: dict[str, str], module: str) -> None:
    code, out, err = cli("explain", files["cluster"], "--pod", "web", "--config", files["config"],
                         "--plugins", files[module], "--format", "json")
    assert code == 0, err
    answer = json.loads(out)
    assert answer["selected"] == "quiet"  # the roomier node is under maintenance
    assert answer["filtered"]["busy"]["plugin"] == "AvoidMaintenance"
    assert answer["filtered"]["busy"]["reasons"] == ["node(s) were under maintenance"]
    code, out, err = cli("simulate", files["cluster"], "--config", files["config"], "--plugins", files[module],
                         "--format", "json")
    assert code == 0, err
    assert json.loads(out)["placements"] == {"default/web": "quiet"}


def test_planning_commands_take_the_plugin(files: dict[str, str]) -> None:
    code, out, err = cli("drain", files["cluster"], "--node", "quiet", "--config", files["config"],
                         "--plugins", files["plugin"], "--format", "json")
    assert code == 0, err
    assert json.loads(out)["pending"] == {"default/web": None}  # nowhere left but the node under maintenance


def test_without_the_module_the_config_names_an_unknown_plugin(files: dict[str, str]) -> None:
    code, _, err = cli("explain", files["cluster"], "--pod", "web", "--config", files["config"])
    assert code == 2
    assert "AvoidMaintenance" in err


@pytest.mark.parametrize(("module", "words"), [
    ("empty", "defines no plugin class and no register(registry) function"),
    ("missing", "no such file"),
    ("dotted", "cannot be imported"),
    ("broken", "cannot be loaded: SyntaxError"),
    ("raising", "cannot be loaded: RuntimeError: no licence server"),
])
def test_a_module_that_gives_no_plugins_is_refused_naming_it(files: dict[str, str], module: str, words: str) -> None:
    ref = {"missing": "/nonexistent/plugins.py", "dotted": "no_such_package.plugins"}.get(module, files.get(module, ""))
    code, _, err = cli("simulate", files["cluster"], "--config", files["config"], "--plugins", ref)
    assert code == 2
    assert "--plugins" in err
    assert ref in err
    assert words in err


def test_a_module_that_fails_to_load_leaves_nothing_behind(files: dict[str, str]) -> None:
    before = set(sys.modules)
    assert cli("explain", files["cluster"], "--pod", "web", "--plugins", files["raising"])[0] == 2
    assert not {name for name in set(sys.modules) - before if name.startswith("kschedlib_plugins_")}
