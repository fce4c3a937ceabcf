"""`archform init --list`, which `init --help` names, lists every bundled blueprint."""

from __future__ import annotations

from support import BLUEPRINTS, run_cli


def test_init_list_names_every_preset_with_its_kind_and_summary() -> None:
    result = run_cli(["init", "--list"])
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()}
    assert set(rows) == {p.stem for p in BLUEPRINTS.glob("*.yaml")}
    aws = rows["aws-p5-efa-fsx"].split(None, 2)
    assert aws[1] == "TrainingCluster"
    assert aws[2].startswith("AWS: 16 x p5.48xlarge") and aws[2].endswith("for the dataset.")
    assert rows["platform-two-tier"].split()[1] == "TrainingCluster+InferenceFleet+Platform"
    assert "--list" in run_cli(["init", "--help"]).stdout


def test_init_without_preset_or_list_is_a_usage_error() -> None:
    result = run_cli(["init"])
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "archform init --list" in result.stderr
