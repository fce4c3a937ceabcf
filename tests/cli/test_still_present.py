"""Issue 24, the items an audit found still present: each is one located line, exit 2."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from archform.cli._app import build
from support import BLUEPRINTS

LOCATED = re.compile(
    r"^(?P<file>[^\n]+):(?P<line>\d+):(?P<col>\d+): error: [^\n]+\(hint: [^\n]+\)$"
)
FLEET = BLUEPRINTS / "inference-h100-single-region.yaml"
SMOKE = BLUEPRINTS / "onprem-cpu-smoke.yaml"


def _validate(path: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(build(["validate"]), ["validate", str(path)])
    return result.exit_code, result.output.splitlines()


def _variant(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    text = source.read_text()
    assert old in text, old
    out = tmp_path / "bp.yaml"
    out.write_text(text.replace(old, new, 1))
    return out


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln)


def test_a_cpu_instance_type_as_the_gpu_pool_is_refused_at_its_line(tmp_path: Path) -> None:
    text = FLEET.read_text()
    itype = re.search(r"instance_type: (\S+)", text)
    assert itype
    bp = _variant(tmp_path, FLEET, f"instance_type: {itype[1]}", "instance_type: m6i.xlarge")
    code, lines = _validate(bp)
    assert code == 2 and len(lines) == 1, lines
    hit = LOCATED.match(lines[0])
    assert hit and int(hit["line"]) == _line_of(bp, "m6i.xlarge"), lines
    assert "m6i.xlarge is a CPU instance type" in lines[0]


def test_no_partitions_is_refused_at_its_line(tmp_path: Path) -> None:
    bp = _variant(
        tmp_path,
        SMOKE,
        "  partitions:\n    - {name: debug, default: true, max_time_hours: 1, exclusive: false}\n",
        "  partitions: []\n",
    )
    code, lines = _validate(bp)
    assert code == 2 and len(lines) == 1, lines
    hit = LOCATED.match(lines[0])
    assert hit and int(hit["line"]) == _line_of(bp, "partitions: []"), lines
    assert "at least one partition" in lines[0]


def test_init_help_names_only_options_that_exist() -> None:
    import typer.main

    command = typer.main.get_command(build(["init"])).commands["init"]  # type: ignore[attr-defined]
    declared = {
        opt for param in command.get_params(command.make_context("init", [])) for opt in param.opts
    }
    text = CliRunner().invoke(build(["init"]), ["init", "--help"]).output
    mentioned = set(re.findall(r"--[a-z][a-z-]+", text))
    assert "--list" in mentioned and mentioned <= declared, mentioned - declared


def test_diagram_takes_its_format_from_the_file_name(tmp_path: Path) -> None:
    runner = CliRunner()
    app = build(["diagram"])
    svg = tmp_path / "arch.svg"
    result = runner.invoke(app, ["diagram", str(SMOKE), "-o", str(svg)])
    assert result.exit_code == 0, result.output
    assert b"<svg" in svg.read_bytes()[:400]  # not Mermaid text
    mmd = tmp_path / "arch.mmd"
    assert runner.invoke(app, ["diagram", str(SMOKE), "-o", str(mmd)]).exit_code == 0
    assert mmd.read_text().startswith(("flowchart", "graph", "%%"))
    clash = runner.invoke(
        app, ["diagram", str(SMOKE), "-o", str(tmp_path / "x.svg"), "-f", "mermaid"]
    )
    assert clash.exit_code == 2 and "would write mermaid into" in clash.output
    assert not (tmp_path / "x.svg").exists()


def test_deploy_dry_run_refuses_the_root_folder_and_a_bad_stack(tmp_path: Path) -> None:
    runner = CliRunner()
    app = build(["deploy"])
    for extra, says in (
        (["-o", "/"], "refusing to generate into /"),
        (["--stack", "a b"], "is not a Pulumi stack name"),
        (["--stack", "x" * 101], "is not a Pulumi stack name"),
        (["--stack", ".."], "is not a Pulumi stack name"),
    ):
        result = runner.invoke(app, ["deploy", str(SMOKE), "--dry-run", *extra])
        assert result.exit_code == 2 and says in result.output, (extra, result.output)
    ok = runner.invoke(app, ["deploy", str(SMOKE), "--dry-run", "-o", str(tmp_path / "d")])
    assert ok.exit_code == 0, ok.output


def test_a_model_source_with_empty_key_segments_is_refused_at_its_line(tmp_path: Path) -> None:
    """Issue 24: `s3://bucket//model///v1` was accepted though S3 keys are literal."""
    text = FLEET.read_text()
    source = re.search(r"source: (s3://\S+)", text)
    assert source
    doubled = source[1].replace("/", "//", 3).replace("s3:////", "s3://")
    assert "//" in doubled.removeprefix("s3://")
    bp = _variant(tmp_path, FLEET, source[1], doubled)
    code, lines = _validate(bp)
    assert code == 2 and len(lines) == 1, lines
    hit = LOCATED.match(lines[0])
    assert hit and int(hit["line"]) == _line_of(bp, doubled), lines
    assert "empty path segment" in lines[0]
