"""`archform lint` end to end: exit codes, selection, formats, config, rules commands."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from support import bundled_blueprints, run_cli
from support.lint_cases import BAD


def test_bundled_blueprints_have_no_errors_or_warnings() -> None:
    # Pinned date: INF011 judges Kubernetes versions by the calendar, and this test must
    # not start failing on the day a bundled version nears its end of support
    # (tests/lint/test_kubernetes_lifecycle.py checks the versions themselves).
    proc = run_cli(
        [
            "lint",
            *map(str, bundled_blueprints()),
            "--format",
            "json",
            "--fail-on",
            "warning",
            "--today",
            "2026-12-01",
        ]
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(proc.stdout)["summary"]
    assert summary["error"] == 0 and summary["warning"] == 0


def test_exit_codes(bad_file: Path, tmp_path: Path) -> None:
    assert run_cli(["lint", str(bad_file)]).returncode == 1
    assert run_cli(["lint", str(bad_file), "--exit-zero"]).returncode == 0
    assert run_cli(["lint", str(bad_file), "--select", "STO005"]).returncode == 0
    assert run_cli(["lint", str(bad_file), "--select", "SCH"]).returncode == 0
    broken = tmp_path / "broken.yaml"
    broken.write_text("version: 1\nkind: TrainingCluster\nname: x\n")
    proc = run_cli(["lint", str(broken)])
    assert proc.returncode == 2 and "broken.yaml:" in proc.stderr
    assert run_cli(["lint", str(bad_file), "--format", "yaml"]).returncode == 2
    proc = run_cli(["lint", str(bad_file), "--select", "TRX"])
    assert proc.returncode == 2 and "no rule matches 'TRX'" in proc.stderr


def test_fail_on_thresholds(tmp_path: Path) -> None:
    path = tmp_path / "warn.yaml"
    path.write_text(
        BAD.replace('["0.0.0.0/0"]', "[10.0.0.0/8]")
        .replace("regions: [us-east-1, us-west-2]", "region: us-east-1")
        .replace("zones: [us-east-1a, us-west-2a]", "zones: [us-east-1a]")
        .replace("  health_checks: [nhc, dcgm]\n", "  health_checks: []\n")
    )
    assert run_cli(["lint", str(path)]).returncode == 0
    assert run_cli(["lint", str(path), "--fail-on", "warning"]).returncode == 1
    assert run_cli(["lint", str(path), "--fail-on", "info"]).returncode == 1
    assert run_cli(["lint", str(path), "--fail-on", "fatal"]).returncode == 2


def test_select_and_ignore_by_prefix(bad_file: Path) -> None:
    def rules(*args: str) -> list[str]:
        proc = run_cli(["lint", str(bad_file), "--format", "json", *args])
        return sorted(f["rule"] for f in json.loads(proc.stdout)["findings"])

    assert rules() == ["SEC001", "TRN001", "TRN002"]
    assert rules("--select", "TRN") == ["TRN001", "TRN002"]
    assert rules("--select", "TRN001,SEC") == ["SEC001", "TRN001"]
    assert rules("--select", "trn001", "--select", "SEC001") == ["SEC001", "TRN001"]
    assert rules("--ignore", "TRN") == ["SEC001"]
    assert rules("--select", "TRN", "--ignore", "TRN002") == ["TRN001"]


def test_text_output_has_caret_and_hint(bad_file: Path) -> None:
    proc = run_cli(["lint", str(bad_file)])
    lines = proc.stdout.splitlines()
    head = f"{bad_file}:6:3: TRN001 [error] training cluster spans 2 regions"
    index = next(i for i, line in enumerate(lines) if line.startswith(head))
    assert lines[index + 2] == " 6 |   regions: [us-east-1, us-west-2]"
    assert lines[index + 3] == "   |   ^^^^^^^"
    assert lines[index + 4].startswith("  hint: keep every node in one region")
    assert "\x1b[" not in proc.stdout
    assert lines[-1].startswith("Found 3 finding(s): 3 error(s), 0 warning(s)")


def test_json_shape(bad_file: Path) -> None:
    data = json.loads(run_cli(["lint", str(bad_file), "--format", "json"]).stdout)
    assert data["version"] == 1
    assert data["summary"] == {"error": 3, "warning": 0, "info": 0, "suppressed": 0}
    first = data["findings"][0]
    assert {
        k: first[k]
        for k in ("rule", "name", "severity", "file", "line", "column", "path", "suppressed")
    } == {
        "rule": "TRN001",
        "name": "cross-region-training",
        "severity": "error",
        "file": str(bad_file),
        "line": 6,
        "column": 3,
        "path": "placement.regions",
        "suppressed": False,
    }
    assert "us-east-1, us-west-2" in first["message"] and "threshold" in first["message"]


def test_output_file(bad_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "reports" / "lint.json"
    proc = run_cli(["lint", str(bad_file), "--format", "json", "--output", str(out)])
    assert proc.returncode == 1 and proc.stdout == ""
    assert json.loads(out.read_text())["summary"]["error"] == 3


def test_github_annotations_are_capped(tmp_path: Path) -> None:
    # SEC001 reports one finding per list and address family: 12 documents make 12.
    many = "---\n".join(BAD.replace("name: demo", f"name: demo{i}") for i in range(12))
    path = tmp_path / "many.yaml"
    path.write_text(many)
    out = run_cli(["lint", str(path), "--format", "github", "--select", "SEC001"]).stdout
    lines = out.splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 10
    assert errors[0].startswith(f"::error file={path},line=")
    assert ",title=SEC001 ssh-open-to-world::SSH is open" in errors[0]
    notices = [line for line in lines if line.startswith("::notice")]
    assert len(notices) == 1 and "2 more error(s) not annotated" in notices[0]


def test_junit_one_testcase_per_file_and_rule(bad_file: Path) -> None:
    out = run_cli(["lint", str(bad_file), "--format", "junit", "--select", "TRN,SEC"]).stdout
    root = ET.fromstring(out)
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == 14  # the TRN and SEC rules (SEC004, TRN009 and TRN010 included)
    failed = sorted(c.get("name", "") for c in cases if c.find("failure") is not None)
    assert failed == [
        "SEC001 ssh-open-to-world",
        "TRN001 cross-region-training",
        "TRN002 multi-zone-training",
    ]
    assert root.get("failures") == "3"


def test_config_file_nearest_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.archform]\nignore = ["SEC"]\n')
    sub = tmp_path / "team"
    sub.mkdir()
    (sub / "bp.yaml").write_text(BAD)
    (tmp_path / "bp.yaml").write_text(BAD)

    def rules(path: Path, cwd: Path = tmp_path) -> list[str]:
        proc = run_cli(["lint", str(path), "--format", "json"], cwd=cwd)
        assert proc.returncode in (0, 1), proc.stderr
        return sorted(f["rule"] for f in json.loads(proc.stdout)["findings"])

    assert rules(tmp_path / "bp.yaml") == ["TRN001", "TRN002"]
    (sub / ".archform.toml").write_text('select = ["SEC"]\n')
    assert rules(sub / "bp.yaml") == ["SEC001"]
    assert rules(tmp_path / "bp.yaml") == ["TRN001", "TRN002"]


def test_config_rule_options_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "bp.yaml"
    path.write_text(
        BAD.replace("  nodes: 4\n", "  nodes: 100\n").replace(
            "  health_checks: [nhc, dcgm]\n", "  health_checks: [nhc]\n"
        )
    )
    cfg = tmp_path / "lint.toml"
    cfg.write_text('[tool.archform]\nselect = ["SCH004"]\n')
    proc = run_cli(["lint", str(path), "--config", str(cfg), "--format", "json", "--exit-zero"])
    assert [f["rule"] for f in json.loads(proc.stdout)["findings"]] == ["SCH004"]
    cfg.write_text(
        '[tool.archform]\nselect = ["SCH004"]\n[tool.archform.rules.SCH004]\nmax_nodes = 128\n'
    )
    proc = run_cli(["lint", str(path), "--config", str(cfg), "--format", "json"])
    assert json.loads(proc.stdout)["findings"] == []
    cfg.write_text('[tool.archform]\nselekt = ["SCH"]\n')
    proc = run_cli(["lint", str(path), "--config", str(cfg)])
    assert proc.returncode == 2 and "unknown key 'selekt'" in proc.stderr
    assert "did you mean 'select'" in proc.stderr
    cfg.write_text("[tool.archform.rules.SCH004]\nmax_node = 3\n")
    proc = run_cli(["lint", str(path), "--config", str(cfg)])
    assert proc.returncode == 2 and "options of SCH004: max_nodes" in proc.stderr
    cfg.write_text('[tool.archform]\nfail-on = "warning"\nselect = ["SCH004"]\n')
    assert run_cli(["lint", str(path), "--config", str(cfg)]).returncode == 1


def test_rules_and_rule_commands() -> None:
    table = run_cli(["rules"])
    assert table.returncode == 0
    assert "TRN001  cross-region-training" in table.stdout
    data = json.loads(run_cli(["rules", "--format", "json"]).stdout)
    assert len(data) == 52  # 47 + issue 22: TRN009, TRN010, INF012, INF013; issue 25: LNT003
    net008 = next(r for r in data if r["code"] == "NET008")
    assert net008["options"]["exposed_fraction_threshold"] == 0.3
    doc = run_cli(["rule", "trn001"])
    assert doc.stdout.startswith("# TRN001 cross-region-training (error, since 0.1.0)")
    assert "## Why is this bad?" in doc.stdout and "```yaml" in doc.stdout
    missing = run_cli(["rule", "TRN099"])
    assert missing.returncode == 2 and "did you mean" in missing.stderr
