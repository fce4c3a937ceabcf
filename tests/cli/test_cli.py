from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest
from ruamel.yaml import YAML

from support import BLUEPRINTS, ROOT, bundled_blueprints, run_cli

SCHEMA_SNAPSHOT = ROOT / "tests" / "snapshots" / "schema.json"


def test_validate_all_bundled_blueprints_exits_zero() -> None:
    result = run_cli(["validate", *map(str, bundled_blueprints())])
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("ok: ") >= 10


def test_version() -> None:
    result = run_cli(["--version"])
    assert result.returncode == 0
    assert result.stdout.startswith("archform ")


def test_help_does_not_import_pulumi_or_ansible() -> None:
    code = (
        "import sys\n"
        "sys.argv = ['archform', '--help']\n"
        "from archform.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pulumi', 'pulumi_aws', 'ansible', 'ansible_runner', 'kubernetes_validate', 'jinja2'))\n"
        "print('HEAVY', heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src")},
    )
    assert "HEAVY []" in result.stdout, result.stdout + result.stderr
    assert "validate" in result.stdout


def test_missing_file_is_a_one_line_error() -> None:
    result = run_cli(["validate", "no-such.yaml"])
    assert result.returncode == 2
    assert result.stderr.startswith("no-such.yaml:1:1: error: file not found")
    assert "Traceback" not in result.stderr


def test_unknown_option_is_usage_error() -> None:
    result = run_cli(["validate", "--frobnicate"])
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "hint" in result.stderr


def test_schema_snapshot_is_current_and_validates_every_blueprint(update_goldens: bool) -> None:
    result = run_cli(["schema"])
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    if update_goldens:
        SCHEMA_SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SCHEMA_SNAPSHOT.write_text(result.stdout)
    assert SCHEMA_SNAPSHOT.read_text() == result.stdout, "schema changed: pytest --update-goldens"
    validator = jsonschema.Draft202012Validator(schema)
    yaml = YAML(typ="safe")
    count = 0
    for path in bundled_blueprints():
        for doc in yaml.load_all(path.read_text()):
            # YAML dates become strings, as editors see them
            data = json.loads(json.dumps(doc, default=str))
            errors = sorted(validator.iter_errors(data), key=str)
            assert not errors, f"{path.name}: {errors[0].message}"
            count += 1
    assert count >= 10


def test_schema_rejects_what_the_loader_rejects() -> None:
    schema = json.loads(run_cli(["schema"]).stdout)
    validator = jsonschema.Draft202012Validator(schema)
    bad = {
        "version": 1,
        "kind": "TrainingCluster",
        "name": "Bad_Name",
        "placement": {},
        "compute": {"nodes": 1},
    }
    assert list(validator.iter_errors(bad))
    typo = {
        "version": 1,
        "kind": "Platform",
        "name": "p",
        "training": "a",
        "inference": "b",
        "registry": {"provider": "aws", "region": "us-east-1", "bucket": "bkt"},
        "promotionz": {},
    }
    assert any("promotionz" in e.message for e in validator.iter_errors(typo))


@pytest.mark.parametrize("preset", [p.stem for p in sorted(BLUEPRINTS.glob("*.yaml"))])
def test_init_writes_each_preset_that_validates(tmp_path, preset: str) -> None:
    out = tmp_path / f"{preset}.yaml"
    result = run_cli(["init", "--preset", preset, "-o", str(out)])
    assert result.returncode == 0, result.stderr
    assert out.read_text() == (BLUEPRINTS / f"{preset}.yaml").read_text()
    again = run_cli(["init", "--preset", preset, "-o", str(out)])
    assert again.returncode == 2 and "--force" in again.stderr
    assert run_cli(["validate", str(out)]).returncode == 0


def test_init_unknown_preset_suggests() -> None:
    result = run_cli(["init", "--preset", "aws-p5-efa"])
    assert result.returncode == 2
    assert "did you mean 'aws-p5-efa-fsx'" in result.stderr
