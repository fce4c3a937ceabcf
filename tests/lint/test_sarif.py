"""SARIF validates against the vendored 2.1.0 schema; fingerprints survive line moves."""

from __future__ import annotations

import json
from pathlib import Path

from support import require_module, run_cli
from support.lint_cases import BAD

SCHEMA = Path(__file__).parent / "sarif-schema-2.1.0.json"


def _sarif(path: Path) -> dict[str, object]:
    proc = run_cli(["lint", str(path), "--format", "sarif", "--exit-zero"])
    assert proc.returncode == 0, proc.stderr
    data: dict[str, object] = json.loads(proc.stdout)
    return data


def test_sarif_validates_against_schema(bad_file: Path) -> None:
    require_module("jsonschema")
    import jsonschema

    data = _sarif(bad_file)
    schema = json.loads(SCHEMA.read_text("utf-8"))
    jsonschema.Draft4Validator(schema).validate(data)
    run = data["runs"][0]  # type: ignore[index]
    rules = run["tool"]["driver"]["rules"]
    assert len(rules) == 52  # 47 + issue 22: TRN009, TRN010, INF012, INF013; issue 25: LNT003
    for rule in rules:
        assert {
            "id",
            "name",
            "shortDescription",
            "fullDescription",
            "help",
            "helpUri",
            "defaultConfiguration",
        } <= set(rule)
        assert rule["help"]["markdown"].count("## ") == 5
    results = run["results"]
    assert {r["ruleId"] for r in results} == {"TRN001", "TRN002", "SEC001"}
    first = next(r for r in results if r["ruleId"] == "TRN001")
    assert first["level"] == "error"
    region = first["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 6, "startColumn": 3, "endLine": 6, "endColumn": 10}
    assert first["locations"][0]["logicalLocations"][0]["name"] == "placement.regions"
    assert rules[first["ruleIndex"]]["id"] == "TRN001"


def test_schema_rejects_a_broken_log(bad_file: Path) -> None:
    """The validation above can fail: a result without a message is rejected."""
    require_module("jsonschema")
    import jsonschema

    data = _sarif(bad_file)
    del data["runs"][0]["results"][0]["message"]  # type: ignore[index]
    schema = json.loads(SCHEMA.read_text("utf-8"))
    assert not jsonschema.Draft4Validator(schema).is_valid(data)


def test_fingerprints_survive_blank_lines_above(tmp_path: Path) -> None:
    first = tmp_path / "a" / "bp.yaml"
    moved = tmp_path / "b" / "bp.yaml"
    first.parent.mkdir()
    moved.parent.mkdir()
    first.write_text(BAD)
    moved.write_text(
        "# a comment\n\n\n" + BAD.replace("kind: TrainingCluster\n", "kind: TrainingCluster\n\n\n")
    )

    def prints(path: Path) -> dict[str, tuple[str, int]]:
        results = _sarif(path)["runs"][0]["results"]  # type: ignore[index]
        return {
            r["partialFingerprints"]["archform/v1"]: (
                r["ruleId"],
                r["locations"][0]["physicalLocation"]["region"]["startLine"],
            )
            for r in results
        }

    a, b = prints(first), prints(moved)
    assert set(a) == set(b) and len(a) == 3
    assert all(b[k][1] == a[k][1] + 5 for k in a), "lines moved, fingerprints did not"


def test_fingerprint_changes_with_the_value(tmp_path: Path) -> None:
    one = tmp_path / "one.yaml"
    two = tmp_path / "two.yaml"
    one.write_text(BAD)
    two.write_text(BAD.replace("us-west-2]", "eu-west-1]").replace("us-west-2a]", "eu-west-1a]"))

    def fp(path: Path) -> dict[str, str]:
        results = _sarif(path)["runs"][0]["results"]  # type: ignore[index]
        return {r["ruleId"]: r["partialFingerprints"]["archform/v1"] for r in results}

    assert fp(one)["TRN001"] != fp(two)["TRN001"]
    assert fp(one)["SEC001"] == fp(two)["SEC001"]
