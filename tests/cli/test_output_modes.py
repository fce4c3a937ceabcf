"""Every file archform writes gets the mode `open()` would give: 0666/0777 minus the umask.

`tempfile.mkstemp` creates 0600; an atomic write that renames such a file into place left
diagrams and `init` output readable by their owner only (issue 21).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from archform.render.writer import GeneratedFile, write_tree
from support import BLUEPRINTS, run_cli


@pytest.fixture(params=[0o022, 0o027], ids=["umask022", "umask027"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o7777


def test_diagram_file_gets_the_umask_mode_not_0600(tmp_path: Path, umask: int) -> None:
    out = tmp_path / "arch.mmd"
    result = run_cli(["diagram", str(BLUEPRINTS / "aws-p5-efa-fsx.yaml"), "-o", str(out)])
    assert result.returncode == 0, result.stderr
    assert _mode(out) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["arch.mmd"]  # no temporary file left


def test_init_file_gets_the_umask_mode(tmp_path: Path, umask: int) -> None:
    out = tmp_path / "cluster.yaml"
    result = run_cli(["init", "--preset", "onprem-cpu-smoke", "-o", str(out)])
    assert result.returncode == 0, result.stderr
    assert _mode(out) == 0o666 & ~umask


def test_generated_tree_respects_the_umask(tmp_path: Path, umask: int) -> None:
    out = tmp_path / "out"
    write_tree(
        out,
        [GeneratedFile.text("a.txt", "a\n"), GeneratedFile.text("run.sh", "#!/bin/sh\n", 0o755)],
    )
    assert _mode(out / "a.txt") == 0o644 & ~umask
    assert _mode(out / "run.sh") == 0o755 & ~umask
    assert _mode(out) == 0o755 & ~umask
