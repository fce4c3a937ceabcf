"""Issue 13, item 1: every user-caused failure exits 2 with one located line, never exit 3.

Each case is one a hostile or careless user hit; before the fix each ended in the
`internal error ... this is a bug` path (exit 3), hung, or silently accepted bad input.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import BLUEPRINTS, ROOT, run_cli

ONPREM = BLUEPRINTS / "onprem-h100-ib-lustre.yaml"
FLEET = BLUEPRINTS / "inference-h100-single-region.yaml"
PLATFORM = BLUEPRINTS / "platform-two-tier.yaml"
ONE_LINE = re.compile(r"^[^\n]+:\d+:\d+: error: [^\n]+\(hint: [^\n]+\)$")


def variant(tmp_path: Path, source: Path, old: str, new: str, name: str = "bp.yaml") -> Path:
    text = source.read_text()
    assert old in text, f"{old!r} not in {source.name}"
    out = tmp_path / name
    out.write_text(text.replace(old, new, 1))
    return out


def line_of(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln)


def assert_located(result: subprocess.CompletedProcess[str], path: Path, line: int) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"{path}:{line}:"), first
    assert ONE_LINE.match(first), first
    return first


def test_impossible_date_in_a_suppression_is_located(tmp_path: Path) -> None:
    bp = variant(tmp_path, FLEET, "expires: 2027-06-30", "expires: 2027-02-30")
    first = assert_located(run_cli(["validate", str(bp)]), bp, line_of(bp, "2027-02-30"))
    assert "'2027-02-30' is not a real date" in first


def test_description_that_looks_like_an_impossible_date_is_located(tmp_path: Path) -> None:
    bp = variant(
        tmp_path,
        ONPREM,
        "description: 32 x 8 H100 with NDR400 InfiniBand and Lustre",
        "description: 2027-02-30",
    )
    first = assert_located(run_cli(["validate", str(bp)]), bp, line_of(bp, "description:"))
    assert "quote the value if it is text" in first


def test_integer_over_4300_digits_is_located(tmp_path: Path) -> None:
    bp = variant(tmp_path, ONPREM, "nodes: 32", "nodes: " + "9" * 5000)
    first = assert_located(run_cli(["validate", str(bp)]), bp, line_of(bp, "nodes: 999"))
    assert "5,000 characters" in first


@pytest.mark.parametrize("value", [".inf", "1e999", "-.inf", ".nan"])
@pytest.mark.parametrize(
    "command", [["validate"], ["lint"], ["estimate"], ["generate", "-o", "OUT"], ["diff", "OLD"]]
)
def test_non_finite_counts_fail_every_command_with_the_range(
    tmp_path: Path, value: str, command: list[str]
) -> None:
    source = FLEET if command[0] == "estimate" else ONPREM
    old, field = (
        ("min_nodes_per_region: 2", "min_nodes_per_region")
        if source == FLEET
        else (
            "nodes: 32",
            "compute.nodes",
        )
    )
    bp = variant(tmp_path, source, old, f"{old.split(':')[0]}: {value}")
    args = [
        str(tmp_path / "out") if a == "OUT" else str(source) if a == "OLD" else a for a in command
    ]
    result = run_cli([*args, str(bp)])
    first = assert_located(result, bp, line_of(bp, value))
    assert field in first
    assert re.search(r"hint: .*\bfrom \d+ to [\d,]+", first), first
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("old", "new", "range_words"),
    [
        ("memory_gib: 2048", "memory_gib: 1e300", "from 1 to 65,536"),
        ("capacity_tib: 1000", "capacity_tib: 1e300", "greater than 0 and at most 1,000,000"),
        ("capacity_tib: 1000", "capacity_tib: .nan", "greater than 0 and at most 1,000,000"),
        ("kw_per_rack: 41", "kw_per_rack: -.inf", "greater than 0 and at most 500"),
    ],
)
def test_absurd_magnitudes_name_the_field_range(
    tmp_path: Path, old: str, new: str, range_words: str
) -> None:
    bp = variant(tmp_path, ONPREM, old, new)
    first = assert_located(run_cli(["validate", str(bp)]), bp, line_of(bp, new))
    assert range_words in first, first


def test_model_params_count_has_an_upper_bound(tmp_path: Path) -> None:
    bp = variant(tmp_path, PLATFORM, "model_params: 13e9", 'model_params: "1e999"')
    first = assert_located(run_cli(["validate", str(bp)]), bp, line_of(bp, "1e999"))
    assert "at most 1e+18" in first


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("nodes: 32", "nodes: true", "expected an integer, got True"),
        ("nodes: 32", 'nodes: "32"', "expected an integer, got '32'"),
        ("gpudirect_rdma: true", "gpudirect_rdma: 1", "expected true or false, got 1"),
        ("accounting: true", 'accounting: "yes"', "expected true or false, got 'yes'"),
    ],
)
def test_booleans_and_integers_are_strict(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    bp = variant(tmp_path, ONPREM, old, new)
    first = assert_located(run_cli(["validate", str(bp)]), bp, line_of(bp, new))
    assert expected in first, first


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--tokens-per-gpu", "nan"),
        ("--tokens-per-gpu", "inf"),
        ("--tokens-per-gpu", "-1"),
        ("--overhead-gib", "1e300"),
        ("--overhead-gib", "-5"),
        ("--overhead-gib", "nan"),
        ("--utilization", "nan"),
    ],
)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_estimate_options_are_range_checked(option: str, value: str, fmt: str) -> None:
    result = run_cli(["estimate", str(FLEET), "--format", fmt, option, value])
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""  # no Infinity/NaN printed into JSON
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {option} ") and "out of range" in line
    assert "hint: use a finite number from" in line


def test_validate_dev_zero_is_refused_up_front() -> None:
    start = time.monotonic()
    result = run_cli(["validate", "/dev/zero"], timeout=30)
    assert time.monotonic() - start < 20
    assert result.returncode == 2
    assert result.stderr.startswith("/dev/zero:1:1: error: is a character device")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    result = run_cli(["validate", str(fifo)], timeout=30)  # nobody writes: a read would hang
    assert result.returncode == 2
    assert result.stderr.startswith(f"{fifo}:1:1: error: is a FIFO (named pipe)")


def test_files_over_the_size_cap_are_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as handle:
        handle.truncate(16 * 1024 * 1024 + 1)  # sparse: cheap to make
    result = run_cli(["validate", str(big)])
    assert result.returncode == 2
    assert "blueprints are limited to 16 MiB" in result.stderr


def test_ctrl_c_during_start_up_prints_one_line_and_exits_130() -> None:
    """SIGINT while `main` imports typer, pydantic and every command (the console script's
    first step). The child says when it calls `main`; the signal lands during those imports."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    code = (
        "import sys\n"
        "from archform.cli import main\n"
        "sys.argv = ['archform', 'lint', sys.argv[1]]\n"
        "print('calling main', flush=True)\n"
        "main()\n"
    )
    for _ in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-c", code, str(ONPREM)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline() == "calling main\n"
        time.sleep(0.03)  # into main's imports (about 150 ms here), past the print
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert "Traceback" not in err, err
        assert proc.returncode == 130, (proc.returncode, out, err)
        assert err.splitlines() == ["interrupted"], err


def test_deploy_with_a_state_file_of_the_wrong_shape(tmp_path: Path) -> None:
    out = tmp_path / "out"
    state = out / ".archform-deploy" / "state.json"
    state.parent.mkdir(parents=True)
    for shape in ('["done"]', '{"phases": ["generate"]}', '{"phases": {"generate": 1}}', "3"):
        state.write_text(shape)
        result = run_cli(["deploy", str(ONPREM), "-o", str(out), "--dry-run"])
        assert result.returncode == 2, (shape, result.stderr)
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"error: {state}: deploy state has the wrong shape"), line


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_diff_git_on_a_non_utf8_committed_file(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    bp = repo / "cluster.yaml"
    text = ONPREM.read_bytes()
    bp.write_bytes(text.replace(b"owner: ml-infra", b"owner: ml-infra\n# caf\xe9 latin-1"))
    _git(repo, "add", "cluster.yaml")
    _git(repo, "commit", "-qm", "latin-1")
    bp.write_bytes(text)
    result = run_cli(["diff", "--git", "HEAD", "cluster.yaml"], cwd=repo)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.splitlines()
    bad_line = text.decode().splitlines().index("owner: ml-infra") + 2
    assert line.startswith(f"HEAD:cluster.yaml:{bad_line}:6: error: file is not valid UTF-8")
