"""Every broken blueprint: exit 2, file:line:col of the culprit first on stderr, no traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support import ROOT, run_cli

BROKEN = ROOT / "tests" / "spec" / "broken"
SIDE = dict(
    line.split() for line in (BROKEN / "expectations.txt").read_text().splitlines() if line.strip()
)


def expected_position(path: Path) -> str:
    if path.name in SIDE:
        return SIDE[path.name]
    first = path.read_bytes().split(b"\n", 1)[0].decode("utf-8")
    match = re.match(r"# error-at: (\d+:\d+)", first)
    assert match, f"{path.name}: first line must be '# error-at: LINE:COL'"
    return match.group(1)


CORPUS = sorted(BROKEN.glob("*.yaml"))


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 40


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_broken_blueprint_is_located(path: Path) -> None:
    result = run_cli(["validate", str(path.relative_to(ROOT))], cwd=ROOT)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    first = result.stderr.splitlines()[0]
    rel = path.relative_to(ROOT).as_posix()
    assert first.startswith(f"{rel}:{expected_position(path)}: error: "), first
    assert "(hint: " in first or "hint" in first, f"no hint: {first}"


def test_oversized_file_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    filler = "# " + "x" * 98 + "\n"
    big.write_text("version: 1\n" + filler * 170_000)
    result = run_cli(["validate", str(big)])
    assert result.returncode == 2
    assert result.stderr.startswith(f"{big}:1:1: error: file is 17.") and "16 MiB" in result.stderr


def test_all_errors_of_a_file_are_listed(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(
        "version: 1\nkind: InferenceFleet\nname: f\n"
        "placement: {provider: aws, regions: [us-east-1]}\n"
        "model: {name: m, params: 8B, source: 's3://b/m/'}\n"
        "server: {image: 'vllm/vllm-openai:v1'}\n"
        "gpu_pool: {instance_type: g5.12xlarge,\n"
        "  min_nodes_per_region: two, max_nodes_per_region: -1}\n"
    )
    result = run_cli(["validate", str(path)])
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and all(line.startswith(f"{path}:8:") for line in lines)
