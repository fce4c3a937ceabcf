"""Read blueprint paths as they were at a git revision (`git show REF:path`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from archform.spec.errors import UsageError
from archform.spec.loader import YAML_SUFFIXES


def _git_bytes(args: list[str], cwd: Path) -> bytes:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False, timeout=60)
    except FileNotFoundError:
        raise UsageError("git is not installed", "install git or compare two folders") from None
    if proc.returncode != 0:
        stderr = proc.stderr.decode("utf-8", errors="replace")
        detail = " ".join(stderr.split()) or f"exit {proc.returncode}"
        raise UsageError(f"git {' '.join(args)}: {detail}", "check the revision and the paths")
    return bytes(proc.stdout)


def _git(args: list[str], cwd: Path) -> str:
    # File names git prints are bytes too; surrogateescape keeps odd ones round-trippable.
    return _git_bytes(args, cwd).decode("utf-8", errors="surrogateescape")


def materialize(ref: str, paths: list[Path], dest: Path, cwd: Path | None = None) -> list[Path]:
    """Write every blueprint under `paths` as of `ref` into `dest`; return the paths to load.

    Paths are taken relative to the repository that holds the current directory. A path
    that did not exist at `ref` contributes nothing, so its documents show up as added.
    """
    if ref.startswith("-"):
        raise UsageError(f"{ref!r} is not a git revision", "give a branch, tag or commit")
    cwd = (cwd or Path.cwd()).resolve()
    root = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip()).resolve()
    _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd)
    out: list[Path] = []
    for path in paths:
        absolute = (cwd / path).resolve()
        try:
            rel = absolute.relative_to(root).as_posix()
        except ValueError:
            raise UsageError(f"{path} is outside the git repository at {root}") from None
        # -z: names as git stores them, unquoted (core.quotePath would write "caf\303\251.yaml")
        listed = [
            name
            for name in _git(
                ["ls-tree", "-r", "-z", "--name-only", "--full-tree", ref, "--", rel or "."], root
            ).split("\0")
            if name
        ]
        files = [f for f in listed if f.endswith(YAML_SUFFIXES)]
        for name in sorted(files):
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            # Bytes as committed: the loader reports a non-UTF-8 file at its first bad byte.
            target.write_bytes(_git_bytes(["show", f"{ref}:{name}"], root))
            out.append(target)
    return out
