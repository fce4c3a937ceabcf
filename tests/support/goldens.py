"""Golden storage: each distinct generated file is stored once.

Layout under tests/goldens/:

- ``manifests/<key>.txt``: one per golden tree (``key`` is e.g. ``ansible/aws-p5-efa-fsx``). Its
  first line names the test that produces the tree; each further line maps a generated path to
  the stored file that holds its bytes: ``roles/slurm/tasks/main.yml -> ansible/roles/...``.
- ``files/<name>``: the stored bytes. No two stored files are identical. A file is named after
  the first generated path that holds it: ``<tree key>/<path>`` when one tree holds it (e.g.
  ``pulumi/aws-p5-efa-fsx/pulumi/Pulumi.yaml``), ``<area>/shared/<path>`` when several trees do
  (e.g. ``ansible/shared/ansible/roles/...``); a name already taken gets ``<stem>~2<suffix>``...

Names are sticky: when the goldens are regenerated, each content keeps the stored name most of
its paths referred to before. So a template change that changes a file shared by six trees the
same way rewrites one stored file and no manifest: the diff a reviewer reads is that change.

Regenerating (``pytest --update-goldens``) stages each tree a golden test produces; at the end of
the session (on the pytest-xdist controller, after every worker) :func:`consolidate` rewrites the
manifests of the staged trees, keeps the others, writes the stored files the manifests now need
and deletes the ones none needs. :func:`audit` lists what makes the storage stale.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = ROOT / "tests" / "goldens"
MANIFESTS = "manifests"
FILES = "files"
ARROW = " -> "
HEADER = "# test: "
SHARED = "shared"
STAGING_ENV = "ARCHFORM_GOLDEN_STAGING"


@dataclass(frozen=True)
class Manifest:
    """One golden tree: the test that produces it and {generated path: stored name}."""

    nodeid: str
    entries: Mapping[str, str]

    def text(self) -> str:
        lines = [HEADER + self.nodeid]
        lines += [f"{path}{ARROW}{self.entries[path]}" for path in sorted(self.entries)]
        return "\n".join(lines) + "\n"


class ManifestError(ValueError):
    """A manifest line that does not parse."""


def parse_manifest(text: str, origin: str) -> Manifest:
    lines = text.splitlines()
    if not lines or not lines[0].startswith(HEADER):
        raise ManifestError(f"{origin}:1: expected '{HEADER}<pytest node id>'")
    entries: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        path, sep, name = line.partition(ARROW)
        if not sep or not path or not name:
            raise ManifestError(f"{origin}:{number}: expected '<generated path>{ARROW}<stored>'")
        if path in entries:
            raise ManifestError(f"{origin}:{number}: {path} listed twice")
        entries[path] = name
    return Manifest(lines[0][len(HEADER) :], entries)


def manifest_path(key: str, root: Path = GOLDENS) -> Path:
    return root / MANIFESTS / f"{key}.txt"


def load_manifests(root: Path = GOLDENS) -> dict[str, Manifest]:
    """Every manifest, by key."""
    base = root / MANIFESTS
    found: dict[str, Manifest] = {}
    for path in sorted(base.rglob("*.txt")):
        key = path.relative_to(base).as_posix()[: -len(".txt")]
        found[key] = parse_manifest(path.read_text(), path.relative_to(root.parents[1]).as_posix())
    return found


def stored_files(root: Path = GOLDENS) -> dict[str, bytes]:
    """Every stored file, by name."""
    base = root / FILES
    return {
        p.relative_to(base).as_posix(): p.read_bytes()
        for p in sorted(base.rglob("*"))
        if p.is_file()
    }


def expected_tree(key: str, root: Path = GOLDENS) -> dict[str, bytes] | None:
    """{generated path: golden bytes} of one tree; None when it has no manifest."""
    path = manifest_path(key, root)
    if not path.exists():
        return None
    manifest = parse_manifest(path.read_text(), path.relative_to(root.parents[1]).as_posix())
    files = root / FILES
    tree: dict[str, bytes] = {}
    for rel, name in manifest.entries.items():
        stored = files / name
        if not stored.is_file():
            raise ManifestError(
                f"{path.relative_to(root.parents[1])}: {rel} refers to missing {FILES}/{name}"
            )
        tree[rel] = stored.read_bytes()
    return tree


# -- regenerating ------------------------------------------------------------------------------


def current_nodeid() -> str:
    """The running test's node id (pytest sets PYTEST_CURRENT_TEST to '<id> (<phase>)')."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    return current.rsplit(" (", 1)[0]


def stage(key: str, tree: Mapping[str, bytes], nodeid: str) -> None:
    """Record one produced tree for the end-of-session :func:`consolidate`."""
    staging = os.environ.get(STAGING_ENV)
    if not staging:
        raise RuntimeError("--update-goldens without a staging folder (tests/conftest.py sets it)")
    name = hashlib.sha256(key.encode()).hexdigest()[:16] + ".pickle"
    with (Path(staging) / name).open("wb") as handle:
        pickle.dump((key, nodeid, dict(tree)), handle)


def read_staged(staging: Path) -> dict[str, tuple[str, dict[str, bytes]]]:
    """{key: (node id, tree)} of everything staged this session."""
    staged: dict[str, tuple[str, dict[str, bytes]]] = {}
    for path in sorted(staging.glob("*.pickle")):
        with path.open("rb") as handle:
            key, nodeid, tree = pickle.load(handle)  # written by stage() in this session
        staged[key] = (nodeid, tree)
    return staged


def variant_name(base: str, n: int) -> str:
    """``ansible/roles/x/main.yml`` -> ``ansible/roles/x/main~2.yml`` (n >= 2)."""
    if n == 1:
        return base
    path = PurePosixPath(base)
    return str(path.with_name(f"{path.stem}~{n}{path.suffix}"))


def plan(
    old: Mapping[str, Manifest],
    old_files: Mapping[str, bytes],
    staged: Mapping[str, tuple[str, Mapping[str, bytes]]],
    drop: Iterable[str] = (),
) -> tuple[dict[str, Manifest], dict[str, bytes]]:
    """New manifests and stored files: the staged trees replace theirs, the rest stay.

    Each distinct content is stored once. A content keeps the old name most of its
    (tree, path) entries referred to; a content no old name fits is named after its first entry:
    ``<tree key>/<path>`` when one tree holds it, ``<area>/shared/<path>`` when several do (or the
    first free variant ``~2``, ``~3``... of that name).
    """
    dropped = set(drop)
    trees: dict[str, tuple[str, dict[str, bytes | None]]] = {}
    for key, manifest in old.items():
        if key in staged or key in dropped:
            continue
        trees[key] = (manifest.nodeid, {p: old_files.get(n) for p, n in manifest.entries.items()})
    for key, (nodeid, tree) in staged.items():
        trees[key] = (nodeid, dict(tree))

    reserved: dict[tuple[str, str], str] = {}  # entries whose stored file is gone: kept as is
    votes: dict[bytes, Counter[str]] = {}
    first: dict[bytes, tuple[str, str]] = {}
    users: dict[bytes, set[str]] = {}
    for key in sorted(trees):
        for rel in sorted(trees[key][1]):
            content = trees[key][1][rel]
            previous = old[key].entries.get(rel) if key in old else None
            if content is None:
                assert previous is not None
                reserved[(key, rel)] = previous
                continue
            votes.setdefault(content, Counter())
            first.setdefault(content, (key, rel))
            users.setdefault(content, set()).add(key)
            if previous is not None:
                votes[content][previous] += 1

    taken: set[str] = set(reserved.values())
    names: dict[bytes, str] = {}
    candidates = sorted(
        (
            (-count, name, hashlib.sha256(c).hexdigest(), c)
            for c, v in votes.items()
            for name, count in v.items()
        ),
    )
    for _, name, _, content in candidates:
        if content in names or name in taken:
            continue
        names[content] = name
        taken.add(name)
    for content in sorted(votes, key=lambda c: first[c]):
        if content in names:
            continue
        key, rel = first[content]
        base = (
            f"{key}/{rel}" if len(users[content]) == 1 else f"{key.split('/', 1)[0]}/{SHARED}/{rel}"
        )
        n = 1
        while variant_name(base, n) in taken:
            n += 1
        names[content] = variant_name(base, n)
        taken.add(names[content])

    manifests: dict[str, Manifest] = {}
    for key, (nodeid, tree) in trees.items():
        entries = {
            rel: reserved[(key, rel)] if content is None else names[content]
            for rel, content in tree.items()
        }
        manifests[key] = Manifest(nodeid, entries)
    return manifests, {name: content for content, name in names.items()}


def collectable(nodeids: Iterable[str], root: Path = ROOT) -> set[str] | None:
    """Which of these pytest node ids still collect; None when collection itself fails."""
    wanted = sorted(set(nodeids))
    if not wanted:
        return set()
    files = sorted({n.split("::", 1)[0] for n in wanted if (root / n.split("::", 1)[0]).is_file()})
    if not files:
        return set()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *files],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if result.returncode not in (0, 5):
        return None
    seen = set(result.stdout.splitlines())
    return {n for n in wanted if n in seen}


def write(
    manifests: Mapping[str, Manifest], files: Mapping[str, bytes], root: Path = GOLDENS
) -> None:
    """Make tests/goldens hold exactly these manifests and stored files (touching only changes)."""
    for sub, wanted in (
        (MANIFESTS, {f"{k}.txt": m.text().encode() for k, m in manifests.items()}),
        (FILES, dict(files)),
    ):
        base = root / sub
        for name, data in wanted.items():
            target = base / name
            if target.is_file() and target.read_bytes() == data:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        if base.exists():
            for path in sorted(base.rglob("*"), reverse=True):
                rel = path.relative_to(base).as_posix()
                if path.is_file() and rel not in wanted:
                    path.unlink()
                elif path.is_dir() and not any(path.iterdir()):
                    path.rmdir()


def consolidate(staging: Path, root: Path = GOLDENS) -> list[str]:
    """End of an --update-goldens session: fold the staged trees into the storage.

    A manifest nothing staged this session is kept, unless the test it names no longer exists
    (a removed blueprint): that one is dropped. Returns what was dropped.
    """
    staged = read_staged(staging)
    if not staged:
        return []
    old = load_manifests(root)
    others = {k: m.nodeid for k, m in old.items() if k not in staged}
    alive = collectable(others.values(), root.parents[1])
    drop = [] if alive is None else sorted(k for k, n in others.items() if n not in alive)
    manifests, files = plan(old, stored_files(root), staged, drop)
    write(manifests, files, root)
    return drop


# -- staleness ---------------------------------------------------------------------------------


def audit(root: Path = GOLDENS, *, check_tests: bool = True) -> list[str]:
    """What makes the golden storage stale: each problem one line, empty when none."""
    problems: list[str] = []
    try:
        manifests = load_manifests(root)
    except ManifestError as exc:
        return [str(exc)]
    files = stored_files(root)
    base = root.relative_to(root.parents[1]).as_posix()
    referenced: set[str] = set()
    for key, manifest in sorted(manifests.items()):
        for rel, name in sorted(manifest.entries.items()):
            referenced.add(name)
            if name not in files:
                problems.append(
                    f"{base}/{MANIFESTS}/{key}.txt: {rel} -> {name}: no such stored file"
                )
    for name in sorted(set(files) - referenced):
        problems.append(f"{base}/{FILES}/{name}: no manifest refers to it")
    by_content: dict[bytes, list[str]] = {}
    for name, data in files.items():
        by_content.setdefault(data, []).append(name)
    for names in sorted(v for v in by_content.values() if len(v) > 1):
        problems.append(f"{base}/{FILES}: identical stored files {', '.join(sorted(names))}")
    for stray in sorted(root.iterdir()) if root.exists() else []:
        if stray.name not in (MANIFESTS, FILES):
            problems.append(
                f"{base}/{stray.name}: not part of the golden storage ({MANIFESTS}/, {FILES}/)"
            )
    if check_tests and manifests:
        alive = collectable((m.nodeid for m in manifests.values()), root.parents[1])
        if alive is None:
            problems.append("pytest --collect-only failed on the golden tests")
        else:
            for key, manifest in sorted(manifests.items()):
                if manifest.nodeid not in alive:
                    problems.append(
                        f"{base}/{MANIFESTS}/{key}.txt: its test {manifest.nodeid} no longer exists"
                    )
    return problems
