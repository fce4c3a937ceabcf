"""Issue 13, item 2: output folders. Files, `/` and read-only places are refused with exit 2;
mount points are written per file; concurrent runs are serialised by a lock; a SIGKILLed
run's temp folder is cleaned; user symlinks and empty folders survive regeneration; text
reaches YAML as UTF-8; `generate -n PLATFORM` keeps promote.json inside the output."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from ruamel.yaml import YAML

from archform.render import writer
from archform.render.generate import build_files
from archform.render.outdir import lock_path
from archform.render.writer import MANIFEST, GeneratedFile, OutputDirError, write_tree
from archform.spec import load_paths
from support import BLUEPRINTS, ROOT, missing, run_cli

ONPREM = BLUEPRINTS / "onprem-h100-ib-lustre.yaml"
PLATFORM = BLUEPRINTS / "platform-two-tier.yaml"


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def assert_consistent(out: Path) -> None:
    """Every file the manifest lists has the recorded hash; no temp folder is left."""
    manifest = json.loads((out / MANIFEST).read_text())["files"]
    for rel, digest in manifest.items():
        assert writer.sha256((out / rel).read_bytes()) == digest, rel
    debris = [p.name for p in [*out.parent.iterdir(), *out.iterdir()] if "archform-tmp" in p.name]
    assert not debris, debris


def one_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    (line,) = result.stderr.splitlines()
    return line


def test_output_that_is_a_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    line = one_error(run_cli(["generate", str(ONPREM), "-o", str(target)]))
    assert line.startswith(f"error: {target}: exists and is not a folder; nothing was changed")
    assert target.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    # and the next run into a real folder is not stuck on anything the refusal left
    assert run_cli(["generate", str(ONPREM), "-o", str(tmp_path / "out")]).returncode == 0


def test_root_and_paths_below_a_file_are_refused(tmp_path: Path) -> None:
    assert "file-system root" in one_error(run_cli(["generate", str(ONPREM), "-o", "/"]))
    (tmp_path / "f").write_text("x")
    line = one_error(run_cli(["generate", str(ONPREM), "-o", str(tmp_path / "f" / "out")]))
    assert f"{tmp_path / 'f'} is not a folder" in line


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[list[Path]]:
    """Mount points made by a test, unmounted afterwards (root and mount(8) needed)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        missing("needs root and mount(8) to make a real mount point")
    made: list[Path] = []
    yield made
    for path in reversed(made):
        subprocess.run(["umount", str(path)], check=False, capture_output=True)


def _mount(mounts: list[Path], *args: str) -> None:
    result = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        missing(f"mount not permitted here: {result.stderr.strip()}")
    mounts.append(Path(args[-1]))


def test_read_only_output_location_exits_2(tmp_path: Path, mounts: list[Path]) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    _mount(mounts, "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro))
    for out in (ro / "out", ro):
        line = one_error(run_cli(["generate", str(ONPREM), "-o", str(out)]))
        assert line.startswith(f"error: {out}: cannot write the output: Read-only file system")
        assert "hint: the file system is mounted read-only" in line


def test_generate_into_a_mount_point_swaps_per_file(tmp_path: Path, mounts: list[Path]) -> None:
    out = tmp_path / "mnt"
    out.mkdir()
    _mount(mounts, "--bind", str(out), str(out))  # the folder itself cannot be renamed (EBUSY)
    with pytest.raises(OSError) as busy:
        out.rename(tmp_path / "elsewhere")
    assert busy.value.errno == errno.EBUSY
    assert run_cli(["generate", str(ONPREM), "-o", str(out)]).returncode == 0
    (out / "my-notes.md").write_text("kept\n")
    smaller = tmp_path / "bp.yaml"
    smaller.write_text(ONPREM.read_text().replace("nodes: 32", "nodes: 16"))
    result = run_cli(["generate", str(smaller), "-o", str(out)])
    assert result.returncode == 0, result.stderr
    assert (out / "my-notes.md").read_text() == "kept\n"
    assert "nodes: 16" in (out / "resolved-blueprint.yaml").read_text()
    assert_consistent(out)


def test_a_folder_that_cannot_be_renamed_is_written_file_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same as the mount point, without root: renaming the folder itself fails with EBUSY."""
    out = tmp_path / "out"
    write_tree(out, [GeneratedFile.text("a.txt", "1\n"), GeneratedFile.text("old.txt", "x\n")])
    inode = out.stat().st_ino
    real_rename = Path.rename

    def busy(self: Path, target: str | os.PathLike[str]) -> Path:
        if self == out:
            raise OSError(errno.EBUSY, "Device or resource busy", str(self))
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", busy)
    report = write_tree(out, [GeneratedFile.text("a.txt", "2\n"), GeneratedFile.text("b/c", "3")])
    assert report.removed == ["old.txt"]
    assert out.stat().st_ino == inode  # the same folder, its files replaced one by one
    assert tree(out).keys() == {MANIFEST, "a.txt", "b/c"}
    assert (out / "a.txt").read_text() == "2\n"
    assert_consistent(out)


def test_diagram_into_a_folder_exits_2(tmp_path: Path) -> None:
    line = one_error(run_cli(["diagram", str(PLATFORM), "-o", str(tmp_path)]))
    assert line.startswith(f"error: {tmp_path}: is a folder; -o takes a file name")


def test_a_second_run_waits_for_the_lock(tmp_path: Path) -> None:
    out = tmp_path / "out"
    path = lock_path(out)
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "archform", "generate", str(ONPREM), "-o", str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3.0)
    assert proc.poll() is None, "generate did not wait for the lock"
    assert not out.exists()
    os.close(fd)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    # issue 24: the run that waited says it replaced another run's output
    assert f"note: another archform run was writing {out}; this run waited" in err
    assert_consistent(out)
    assert not path.exists()  # the lock file is removed by its last holder


def test_the_lock_wait_times_out_with_one_line_and_exit_2(tmp_path: Path) -> None:
    """The documented 2 minutes is the default; the wait is injectable, so this takes 0.5 s."""
    from archform.render.outdir import LOCK_WAIT_ENV, LOCK_WAIT_SECONDS

    assert LOCK_WAIT_SECONDS == 120.0  # README: "waits up to 2 minutes, then exits 2"
    out = tmp_path / "out"
    path = lock_path(out)
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        started = time.monotonic()
        result = run_cli(
            ["generate", str(ONPREM), "-o", str(out)], env={LOCK_WAIT_ENV: "0.5"}, timeout=60
        )
        took = time.monotonic() - started
    finally:
        os.close(fd)
    line = one_error(result)
    assert "another archform run is writing this folder" in line
    assert "held for more than 0.5 s" in line, line
    assert took >= 0.5 and not out.exists()


@pytest.mark.parametrize("raw", ["soon", "nan", "-1", "1e9"])
def test_a_bad_lock_wait_setting_is_a_usage_error(
    raw: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from archform.render.outdir import LOCK_WAIT_ENV, OutputDirError, lock_wait

    monkeypatch.setenv(LOCK_WAIT_ENV, raw)
    with pytest.raises(OutputDirError, match=LOCK_WAIT_ENV):
        lock_wait()


def test_two_concurrent_generates_never_corrupt(tmp_path: Path) -> None:
    out = tmp_path / "out"
    variants = []
    for nodes in (16, 24):
        bp = tmp_path / f"n{nodes}.yaml"
        bp.write_text(ONPREM.read_text().replace("nodes: 32", f"nodes: {nodes}"))
        variants.append(bp)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    for _ in range(3):
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "archform", "generate", str(bp), "-o", str(out)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for bp in variants
        ]
        results = [(p.communicate(timeout=300)[1], p.returncode) for p in procs]
        results = [(code, err) for err, code in results]
        for code, err in results:
            assert code in (0, 2), err
            assert "Traceback" not in err and "internal error" not in err
        assert any(code == 0 for code, _ in results)
        assert_consistent(out)
        resolved = (out / "resolved-blueprint.yaml").read_text()
        assert "nodes: 16" in resolved or "nodes: 24" in resolved


def test_a_sigkilled_run_leaves_a_temp_folder_the_next_run_removes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli(["generate", str(ONPREM), "-o", str(out)]).returncode == 0
    user = out / "user-data"
    user.mkdir()
    for i in range(20_000):  # carried over one by one: the temp folder lives for a while
        (user / f"f{i:05d}.txt").write_text("x")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "archform", "generate", str(ONPREM), "-o", str(out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    stale: list[Path] = []
    while not stale and time.monotonic() < deadline and proc.poll() is None:
        stale = [p for p in tmp_path.iterdir() if ".archform-tmp-" in p.name]
        time.sleep(0.005)
    assert stale, "the run finished before its temp folder was seen"
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert all(p.exists() for p in stale), "nothing was left to clean"
    result = run_cli(["generate", str(ONPREM), "-o", str(out)])
    assert result.returncode == 0, result.stderr
    assert not any(p.exists() for p in stale)
    assert_consistent(out)
    assert len(list(user.iterdir())) == 20_000


def test_user_symlinks_and_empty_folders_survive_regeneration(tmp_path: Path) -> None:
    out = tmp_path / "out"
    outside = tmp_path / "secrets.env"
    outside.write_text("TOKEN=1\n")
    assert run_cli(["generate", str(ONPREM), "-o", str(out)]).returncode == 0
    (out / "empty" / "nested").mkdir(parents=True)
    (out / "env").symlink_to(outside)
    (out / "ansible" / "site-link.yml").symlink_to("site.yml")
    (out / "dirlink").symlink_to(tmp_path)
    (out / "dangling").symlink_to(tmp_path / "nowhere")
    smaller = tmp_path / "bp.yaml"
    smaller.write_text(ONPREM.read_text().replace("nodes: 32", "nodes: 16"))
    result = run_cli(["generate", str(smaller), "-o", str(out)])
    assert result.returncode == 0, result.stderr
    assert (out / "empty" / "nested").is_dir()
    for name, target in [
        ("env", str(outside)),
        ("ansible/site-link.yml", "site.yml"),
        ("dirlink", str(tmp_path)),
        ("dangling", str(tmp_path / "nowhere")),
    ]:
        assert (out / name).is_symlink(), f"{name} was replaced by a copy"
        assert str((out / name).readlink()) == target
    assert "nodes: 16" in (out / "resolved-blueprint.yaml").read_text()
    assert_consistent(out)


def test_emoji_in_a_description_is_utf8_in_every_generated_yaml(tmp_path: Path) -> None:
    text = "Tier 1 \U0001f680 f\u00fcr \u00dcmlaut"
    bp = tmp_path / "bp.yaml"
    bp.write_text(
        PLATFORM.read_text().replace(
            "description: Tier 1 - 8 x p5.48xlarge on EFA with FSx for Lustre",
            f'description: "{text}"',
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert run_cli(["generate", str(bp), "-o", str(out)]).returncode == 0
    carrying = []
    for path in sorted(out.rglob("*.y*ml")):
        raw = path.read_text(encoding="utf-8")
        assert "\\ud83d" not in raw, f"{path}: written as a surrogate pair"
        if text not in raw:
            continue
        carrying.append(path.relative_to(out).as_posix())
        for loaded in (list(yaml.safe_load_all(raw)), list(YAML(typ="safe").load_all(raw))):
            dumped = json.dumps(loaded, default=str, ensure_ascii=False)
            dumped.encode("utf-8")  # unpaired surrogates would raise here
            assert text in dumped
    # the resolved blueprint and the training tier's Pulumi.yaml both carry the description
    assert "resolved-blueprint.yaml" in carrying
    assert any(p.endswith("Pulumi.yaml") for p in carrying), carrying


def test_generate_n_platform_keeps_promote_paths_inside_the_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli(["generate", str(PLATFORM), "-n", "sivaro", "-o", str(out)])
    assert result.returncode == 0, result.stderr
    (config,) = out.rglob("promote.json")
    rel = json.loads(config.read_text())["fleet"]["release_file"]
    resolved = (config.parent / rel).resolve()
    assert resolved.is_relative_to(out.resolve()), rel
    assert resolved.parent.is_dir(), f"{rel}: the fleet promote writes into is not generated"


def test_write_tree_refuses_a_file_in_process(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_text("x")
    with pytest.raises(OutputDirError):
        write_tree(target, build_files(load_paths([ONPREM])))
    assert target.read_text() == "x"
