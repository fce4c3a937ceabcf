"""`--diff-base REF`: lint the same paths as they were at a git revision and compare.

The blueprint files under the given paths are read at REF with `git show REF:./path`
(folders listed with `git ls-tree`) into a temporary folder with the same relative
layout, loaded and linted like the working tree. Findings are matched by fingerprint
(rule, document, spec path, value), never by line, so moved lines are not "new".
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from archform.lint.engine import LintResult
from archform.lint.finding import Finding
from archform.spec.errors import SpecError, UsageError
from archform.spec.loader import YAML_SUFFIXES


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        raise UsageError("--diff-base needs git on PATH") from None


def files_at(ref: str, paths: Sequence[Path], cwd: Path) -> dict[str, bytes]:
    """{relative path: content at REF} for the blueprint files under `paths`."""
    check = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd)
    if check.returncode != 0:
        raise UsageError(
            f"--diff-base: {ref!r} is not a git revision here",
            "fetch it first (e.g. git fetch origin main) or check the name",
        )
    top = _git(["rev-parse", "--show-toplevel"], cwd)
    if top.returncode != 0:
        raise UsageError("--diff-base: not inside a git repository", "run it in the checkout")
    root = Path(top.stdout.decode("utf-8", "surrogateescape").strip()).resolve()
    here = cwd.resolve()
    out: dict[str, bytes] = {}
    for path in paths:
        absolute = (here / path).resolve()
        try:
            rel = absolute.relative_to(root).as_posix()
        except ValueError:
            raise UsageError(
                f"--diff-base: {path} is outside the git repository at {root}"
            ) from None
        # -z and --full-tree: names relative to the repository root, as git stores them (no
        # quoting of non-ASCII bytes), whatever the path given (absolute or relative)
        listing = _git(
            ["ls-tree", "-r", "-z", "--name-only", "--full-tree", ref, "--", rel or "."], root
        )
        names = [n for n in listing.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
        for name in names:
            if absolute.suffix in YAML_SUFFIXES and name != rel:
                continue
            if Path(name).suffix not in YAML_SUFFIXES:
                continue
            shown = _git(["show", f"{ref}:{name}"], root)
            if shown.returncode == 0:
                out[name] = shown.stdout
    return out


def lint_at(
    ref: str,
    paths: Sequence[Path],
    run: Callable[[list[Path]], LintResult],
    cwd: Path | None = None,
) -> tuple[LintResult | None, dict[str, str]]:
    """Lint the paths at REF; None when no blueprint existed there. Also maps tmp -> real."""
    cwd = cwd or Path.cwd()
    files = files_at(ref, paths, cwd)
    if not files:
        return None, {}
    with tempfile.TemporaryDirectory(prefix="archform-base-") as tmp:
        root = Path(tmp)
        names: dict[str, str] = {}
        for name, data in sorted(files.items()):
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            names[str(target)] = name
        try:
            result = run(sorted(root / n for n in files))
        except SpecError:
            return None, names
    return result, names


def compare(
    head: LintResult, base: LintResult | None, names: dict[str, str]
) -> tuple[LintResult, tuple[Finding, ...]]:
    """(head restricted to new findings, base findings that are gone)."""
    import dataclasses

    if base is None:
        return head, ()
    before = {f.fingerprint for f in base.findings if not f.suppressed}
    after = {f.fingerprint for f in head.findings if not f.suppressed}
    new = tuple(f for f in head.findings if f.fingerprint not in before)
    fixed = tuple(
        dataclasses.replace(f, file=names.get(f.file, f.file))
        for f in base.findings
        if not f.suppressed and f.fingerprint not in after
    )
    return dataclasses.replace(head, findings=new), fixed
