"""The deploy plan, dry runs and the missing-Pulumi-CLI stop: no network, no changes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import support
from archform.deploy import build_plan
from archform.deploy.engine import preflight
from archform.spec import UsageError, load_paths

SMOKE = support.BLUEPRINTS / "onprem-cpu-smoke.yaml"
PLATFORM = support.BLUEPRINTS / "platform-two-tier.yaml"


def _no_pulumi_path(tmp_path: Path) -> str:
    empty = tmp_path / "bin"
    empty.mkdir(exist_ok=True)
    return f"{empty}{os.pathsep}/usr/bin{os.pathsep}/bin"


def test_dry_run_prints_phases_and_hosts_and_touches_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = support.run_cli(["deploy", str(SMOKE), "-o", str(out), "--dry-run"])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "phases: generate -> ansible -> acceptance" in lines
    assert "     ansible/site.yml on localhost" in lines
    assert "     ansible/validate.yml on localhost" in lines
    check = lines.index("     check that every Slurm node is up (slurmd, sinfo)")
    assert lines[check + 1] == "     ansible/validate.yml on localhost"
    assert not any("pulumi" in line for line in lines), "on-prem has no Pulumi phase"
    assert not out.exists()


def test_dry_run_of_a_platform_lists_the_registry_stack_first(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = support.run_cli(
        ["deploy", str(PLATFORM), "-o", str(out), "--dry-run", "--stack", "staging"],
        env={"PATH": _no_pulumi_path(tmp_path)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "phases: generate -> pulumi -> ansible -> acceptance" in proc.stdout
    assert "pulumi up sivaro/pulumi (stack staging, registry of sivaro)" in proc.stdout
    assert "sivaro-train/ansible/site.yml on controller + 8 compute node(s)" in proc.stdout
    # the fleet waits for a promoted release (tests/platform/test_platform_first_deploy.py)
    assert "phases: generate -> pulumi -> ansible -> acceptance -> serve" in proc.stdout
    assert (
        "pulumi up sivaro-serve/pulumi (stack staging, fleet of sivaro-serve); infrastructure "
        "only while s3://sivaro-models holds no release" in proc.stdout
    )
    assert "stop at `archform promote sivaro/promote/promote.json ...`" in proc.stdout
    assert not out.exists()


def test_missing_pulumi_cli_stops_before_doing_anything(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = support.run_cli(
        ["deploy", str(PLATFORM), "-o", str(out)], env={"PATH": _no_pulumi_path(tmp_path)}
    )
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1, proc.stderr
    assert "Pulumi CLI" in err[0] and "curl -fsSL https://get.pulumi.com | sh" in err[0]
    assert "(hint:" in err[0] and "Nothing was done" in err[0]
    assert proc.stdout == ""
    assert not out.exists(), "nothing may be generated when a needed tool is missing"


def test_preflight_accepts_a_pulumi_on_path_and_onprem_never_needs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = load_paths([PLATFORM])
    plan = build_plan(loaded, list(loaded.documents), tmp_path / "out")
    monkeypatch.setenv("PATH", _no_pulumi_path(tmp_path))
    with pytest.raises(UsageError, match="Pulumi CLI"):
        preflight(plan, ("generate", "pulumi"))
    preflight(plan, ("generate",))  # --from past the pulumi phase: not needed
    fake = tmp_path / "bin" / "pulumi"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    preflight(plan, ("generate", "pulumi"))

    smoke = load_paths([SMOKE])
    onprem = build_plan(smoke, list(smoke.documents), tmp_path / "smoke")
    assert "pulumi" not in onprem.phases and onprem.pulumi == ()
    fake.unlink()
    preflight(onprem, onprem.phases)  # ansible-playbook is found beside this Python


def test_pulumi_projects_run_registry_then_training_then_fleet(tmp_path: Path) -> None:
    loaded = load_paths([PLATFORM])
    docs = list(loaded.documents)
    assert [d.kind for d in docs] == ["TrainingCluster", "InferenceFleet", "Platform"]
    plan = build_plan(loaded, docs, tmp_path / "out")
    assert [(p.role, p.path) for p in plan.pulumi] == [
        ("registry", "sivaro/pulumi"),
        ("training", "sivaro-train/pulumi"),
        ("fleet", "sivaro-serve/pulumi"),
    ]
    assert plan.pulumi[0].defaults == (("aws:region", "us-east-1"),)
    outputs = {p.role: p.outputs_file for p in plan.pulumi}
    assert outputs == {
        "registry": None,
        "training": "sivaro-train/ansible/pulumi-outputs.json",
        "fleet": None,
    }
    assert plan.ansible[0].inventory == "inventory/archform_inventory.py"
    assert plan.ansible[0].cloud


def test_plan_digest_follows_the_blueprint(tmp_path: Path) -> None:
    loaded = load_paths([SMOKE])
    first = build_plan(loaded, list(loaded.documents), tmp_path / "out")
    edited = tmp_path / "smoke.yaml"
    edited.write_text(SMOKE.read_text().replace("max_time_hours: 1", "max_time_hours: 2"))
    changed = load_paths([edited])
    second = build_plan(changed, list(changed.documents), tmp_path / "out")
    again = build_plan(load_paths([SMOKE]), list(loaded.documents), tmp_path / "out")
    assert first.digest != second.digest
    assert first.digest == again.digest
