"""The structure behind `archform lint` start-up (the timings are in bench/lint_bench.py).

A lint of one blueprint imports only the lint command's CLI module, nothing of render, deploy,
verify, diff, promote or diagram, no jinja2/pulumi/ansible/rich, and builds the pydantic
validators of the blueprint kinds it reads only. Checked per bundled blueprint in a fresh
interpreter, by looking at sys.modules and at the models' build state after the run.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from archform.cli import _app
from archform.lint.rule import Rule, load_rules, rule_modules
from support import ROOT

BLUEPRINTS = sorted((ROOT / "blueprints").glob("*.yaml"))
KIND_MODULES = {
    "TrainingCluster": "archform.spec.models.training",
    "InferenceFleet": "archform.spec.models.inference",
    "Platform": "archform.spec.models.platform",
}
HEAVY_ROOTS = ("jinja2", "pulumi", "ansible", "ansible_runner", "kubernetes_validate", "rich")
OTHER_LAYERS = (
    "archform.render",
    "archform.deploy",
    "archform.verify",
    "archform.diff",
    "archform.promote",
    "archform.diagram",
)

PROBE = """
import json, runpy, sys
sys.argv = ["archform", "lint", sys.argv[1]]
code = None
try:
    runpy.run_module("archform", run_name="__main__")
except SystemExit as exc:
    code = exc.code
built = {}
for kind, module in %r.items():
    mod = sys.modules.get(module)
    built[kind] = bool(mod and getattr(mod, kind).__pydantic_complete__)
print("PROBE" + json.dumps({"code": code, "modules": sorted(sys.modules), "built": built}))
"""


def probe(path: Path) -> dict[str, object]:
    env = {"PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE % KIND_MODULES, str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    line = next((x for x in proc.stdout.splitlines() if x.startswith("PROBE")), None)
    assert line is not None, proc.stdout + proc.stderr
    result: dict[str, object] = json.loads(line[len("PROBE") :])
    return result


def kinds_in(path: Path) -> set[str]:
    text = path.read_text("utf-8")
    return {kind for kind in KIND_MODULES if f"\nkind: {kind}" in "\n" + text}


@pytest.mark.parametrize("path", BLUEPRINTS, ids=[p.name for p in BLUEPRINTS])
def test_lint_loads_only_what_the_blueprint_needs(path: Path) -> None:
    result = probe(path)
    assert result["code"] == 0
    modules = result["modules"]
    assert isinstance(modules, list)
    heavy = [m for m in modules if m.split(".")[0] in HEAVY_ROOTS]
    assert heavy == []
    layers = [m for m in modules if m.startswith(OTHER_LAYERS)]
    assert layers == []
    commands = {m.rsplit(".", 1)[1] for m in modules if m.startswith("archform.cli.")}
    assert commands & set(_app.COMMANDS.values()) == {"lint"}
    wanted = kinds_in(path)
    assert wanted, f"{path.name}: no kind found"
    built = result["built"]
    assert isinstance(built, dict)
    assert {kind for kind, done in built.items() if done} == wanted
    if "InferenceFleet" not in wanted:  # the fleet models and estimates load with a fleet only
        fleet_only = {
            "archform.spec.models.inference",
            "archform.estimate.inference",
            "archform.estimate.serving",
            "archform.spec.kubernetes",
        }
        assert fleet_only.isdisjoint(modules)


def test_the_probe_sees_a_built_validator() -> None:
    """The probe can fail: a Platform set builds all three kinds' validators."""
    result = probe(ROOT / "blueprints" / "platform-two-tier.yaml")
    assert result["built"] == dict.fromkeys(KIND_MODULES, True)


def test_every_command_is_in_the_lazy_table() -> None:
    full = {c.name for c in _app.build().registered_commands}
    assert full == set(_app.COMMANDS)
    modules = {
        p.stem
        for p in (ROOT / "src" / "archform" / "cli").glob("*.py")
        if "def register(" in p.read_text("utf-8")
    }
    assert modules == set(_app.COMMANDS.values())


def test_a_named_command_registers_only_itself() -> None:
    assert [c.name for c in _app.build(["lint", "x.yaml"]).registered_commands] == ["lint"]
    assert [c.name for c in _app.build(["rule", "TRN001"]).registered_commands] == [
        "rules",
        "rule",
    ]
    assert len(_app.build(["--help"]).registered_commands) == len(_app.COMMANDS)
    assert len(_app.build(["lnt"]).registered_commands) == len(_app.COMMANDS)


@pytest.mark.parametrize("rule", list(load_rules()), ids=lambda r: r.code)
def test_default_options_need_no_validation(rule: Rule) -> None:
    """The engine builds defaults with model_construct(); they equal validated defaults."""
    options = rule.options
    assert options.model_construct() == options()
    assert options.model_construct().model_dump() == options().model_dump()


def test_rule_listing_equals_walk_packages() -> None:
    import archform.lint.rules as package

    walked = sorted(m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + "."))
    assert rule_modules() == walked
    assert len([n for n in walked if n.count(".") == 4]) == len(load_rules())
