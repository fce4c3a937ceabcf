"""Issue 24: a full disk or a closed pipe is one line and exit 2 (quiet on EPIPE), never exit 3.

The full disk is real: /dev/full (every write fails with ENOSPC) for standard output, and a
file-size limit (RLIMIT_FSIZE, which the kernel enforces with EFBIG; Python ignores SIGXFSZ)
for files written with -o / --output. Before the fix every command ended in `internal error`.
"""

from __future__ import annotations

import io
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from archform.cli._app import COMMANDS, build
from archform.cli._core import run
from support import BLUEPRINTS, ROOT

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a Unix tool killed by SIGPIPE reports
SMOKE = BLUEPRINTS / "onprem-cpu-smoke.yaml"


def _run_into(
    stdout: io.TextIOWrapper, argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    err = io.StringIO()
    monkeypatch.setattr(sys, "argv", ["archform", *argv])
    monkeypatch.setattr(sys, "stdout", stdout)
    monkeypatch.setattr(sys, "stderr", err)
    with pytest.raises(SystemExit) as done:
        run(build(argv))
    code = done.value.code
    return (code if isinstance(code, int) else 0), err.getvalue()


ARGVS = [
    ["--version"],
    *([name, "--help"] for name in COMMANDS),
    ["rules"],
    ["rule", "NET001"],
    ["schema"],
    ["init", "--list"],
    ["init", "--preset", "onprem-cpu-smoke"],
    ["validate", str(SMOKE)],
    ["lint", str(SMOKE)],
    ["lint", str(SMOKE), "--format", "sarif"],
    ["diagram", str(SMOKE)],
    ["images"],
]


@pytest.mark.parametrize("argv", ARGVS, ids=" ".join)
def test_stdout_on_a_full_disk_is_one_line_and_exit_2(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with open("/dev/full", "w", encoding="utf-8") as full:  # noqa: PTH123
        code, err = _run_into(full, argv, monkeypatch)
    assert code == EXIT_USAGE, err
    assert err.splitlines() == [
        "error: cannot write standard output: No space left on device "
        "(hint: free space on the device or write the output to a file with -o)"
    ]


@pytest.mark.parametrize("argv", [["rules"], ["schema"], ["lint", "--help"]], ids=" ".join)
def test_a_closed_pipe_ends_quietly(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader went away (`archform rules | head -0`)
    with os.fdopen(write, "w", encoding="utf-8") as pipe:
        code, err = _run_into(pipe, argv, monkeypatch)
    assert code == EXIT_BROKEN_PIPE
    assert err == ""


def _limited(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _run_limited(args: list[str], cwd: Path, limit: int = 64) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), NO_COLOR="1")
    env.pop("ARCHFORM_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "archform", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: _limited(limit),
        check=False,
    )


def _one_line_naming(result: subprocess.CompletedProcess[str], path: Path) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "(hint: " in lines[0], lines
    assert "internal error" not in result.stderr


def test_init_on_a_full_disk_leaves_no_temp_file_and_the_old_file_whole(tmp_path: Path) -> None:
    out = tmp_path / "cluster.yaml"
    out.write_text("previous\n")
    result = _run_limited(["init", "-p", "onprem-cpu-smoke", "-o", str(out), "--force"], tmp_path)
    _one_line_naming(result, out)
    assert [p.name for p in tmp_path.iterdir()] == ["cluster.yaml"]
    assert out.read_text() == "previous\n"


def test_lint_output_on_a_full_disk_keeps_the_previous_report(tmp_path: Path) -> None:
    out = tmp_path / "report.sarif"
    out.write_text("previous report\n")
    result = _run_limited(
        ["lint", str(SMOKE), "--format", "sarif", "--output", str(out), "--exit-zero"], tmp_path
    )
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.splitlines()) == 1 and str(out) in result.stderr
    assert out.read_text() == "previous report\n"  # not truncated
    assert [p.name for p in tmp_path.iterdir()] == ["report.sarif"]


def test_output_through_a_link_to_a_device_writes_into_it(tmp_path: Path) -> None:
    """-o naming a link to a device writes into the device (ENOSPC here), never renames over it.

    The link lives in tmp_path: were the rename to come back, it would replace the link, not
    the machine's /dev/full (which is what the old code did to `-o /dev/full` as root).
    """
    link = tmp_path / "out.yaml"
    link.symlink_to("/dev/full")
    result = _run_limited(
        ["init", "-p", "onprem-cpu-smoke", "-o", str(link), "--force"], tmp_path, 1 << 30
    )
    _one_line_naming(result, Path("/dev/full"))
    assert link.is_symlink() and Path("/dev/full").is_char_device()
    assert [p.name for p in tmp_path.iterdir()] == ["out.yaml"]
