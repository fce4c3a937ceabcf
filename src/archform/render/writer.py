"""Write a generated tree atomically, with a manifest that protects user edits.

The new tree is built in a temporary sibling folder and swapped in with renames, so an
interrupted run leaves the previous output as it was. `.archform-manifest.json` records
the hash of every generated file: a re-run refuses to replace a file whose bytes no longer
match (the user edited it) unless forced. Files the user added are carried over.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

MANIFEST = ".archform-manifest.json"
_BACKUP_SUFFIX = ".archform-previous"


@dataclass(frozen=True, slots=True)
class GeneratedFile:
    """One output file: a relative POSIX path, its bytes, and its mode."""

    path: str
    content: bytes
    mode: int = 0o644

    @classmethod
    def text(cls, path: str, content: str, mode: int = 0o644) -> GeneratedFile:
        """A UTF-8 text file."""
        return cls(path, content.encode("utf-8"), mode)


@dataclass(slots=True)
class WriteReport:
    """What a write did."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept_user_files: list[str] = field(default_factory=list)


class EditedFilesError(Exception):
    """Generated files were edited by hand; refusing to overwrite them."""

    def __init__(self, out_dir: Path, paths: list[str]) -> None:
        self.out_dir = out_dir
        self.paths = paths
        shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
        super().__init__(f"{out_dir}: generated files were edited since the last run: {shown}")


class NotGeneratedDirError(Exception):
    """The output folder exists, is not empty, and was not written by archform."""


def sha256(data: bytes) -> str:
    """Hex SHA-256 of bytes."""
    return hashlib.sha256(data).hexdigest()


def _safe_rel(path: str) -> PurePosixPath:
    rel = PurePosixPath(path)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts or path != str(rel):
        raise ValueError(f"generated path {path!r} must be relative and normalised")
    return rel


def read_manifest(out_dir: Path) -> dict[str, str] | None:
    """Relative path -> sha256 of the last generation, or None when absent/unreadable."""
    try:
        data = json.loads((out_dir / MANIFEST).read_text("utf-8"))
        files = data["files"]
        return {str(k): str(v) for k, v in files.items()}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def edited_files(out_dir: Path) -> list[str]:
    """Generated files whose bytes differ from the manifest (or were deleted)."""
    manifest = read_manifest(out_dir) or {}
    edited: list[str] = []
    for rel, digest in sorted(manifest.items()):
        target = out_dir / rel
        if target.is_file() and sha256(target.read_bytes()) != digest:
            edited.append(rel)
    return edited


def _recover(out_dir: Path) -> None:
    backup = out_dir.with_name(out_dir.name + _BACKUP_SUFFIX)
    if backup.exists() and not out_dir.exists():
        backup.rename(out_dir)
    elif backup.exists():
        shutil.rmtree(backup)


def write_tree(
    out_dir: Path, files: Iterable[GeneratedFile], *, force: bool = False, generator: str = ""
) -> WriteReport:
    """Replace `out_dir` with `files` atomically; protect edited files unless `force`."""
    out_dir = out_dir.resolve()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    _recover(out_dir)
    new = {str(_safe_rel(f.path)): f for f in sorted(files, key=lambda f: f.path)}
    if len(new) != len(list(new)):
        raise ValueError("duplicate generated paths")
    old_manifest: dict[str, str] = {}
    user_files: list[str] = []
    if out_dir.exists():
        manifest = read_manifest(out_dir)
        existing = sorted(
            str(p.relative_to(out_dir).as_posix()) for p in out_dir.rglob("*") if p.is_file()
        )
        if manifest is None:
            if existing and not force:
                raise NotGeneratedDirError(
                    f"{out_dir} is not empty and holds no {MANIFEST}; "
                    "choose an empty folder or pass --force"
                )
            manifest = {}
        old_manifest = manifest
        edited = [rel for rel in edited_files(out_dir) if not force]
        if edited:
            raise EditedFilesError(out_dir, edited)
        user_files = [
            rel
            for rel in existing
            if rel not in old_manifest and rel != MANIFEST and rel not in new
        ]
    report = WriteReport()
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.archform-tmp-", dir=out_dir.parent))
    try:
        for rel, gen in new.items():
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(gen.content)
            target.chmod(gen.mode)
            digest = sha256(gen.content)
            (report.unchanged if old_manifest.get(rel) == digest else report.written).append(rel)
        for rel in user_files:
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(out_dir / rel, target)
            report.kept_user_files.append(rel)
        report.removed = sorted(set(old_manifest) - set(new))
        manifest_doc = {
            "version": 1,
            "generator": generator,
            "files": {rel: sha256(gen.content) for rel, gen in new.items()},
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest_doc, indent=2, sort_keys=True) + "\n")
        tmp.chmod(0o755)
        _fsync_tree(tmp)
        _swap(tmp, out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return report


def _swap(tmp: Path, out_dir: Path) -> None:
    backup = out_dir.with_name(out_dir.name + _BACKUP_SUFFIX)
    if out_dir.exists():
        out_dir.rename(backup)
    tmp.rename(out_dir)
    if backup.exists():
        shutil.rmtree(backup)


def _fsync_tree(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            with path.open("rb") as handle, contextlib.suppress(OSError):
                os.fsync(handle.fileno())
