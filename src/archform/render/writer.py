"""Write a generated tree atomically, with a manifest that protects user edits.

The new tree is built in a temporary sibling folder and swapped in with renames, so an
interrupted run leaves the previous output as it was. When the folder itself cannot be
renamed (a mount point, a read-only parent: EBUSY, EXDEV, EACCES), the new files are built
in a temporary folder inside it and each is renamed over its old version: every file is
still replaced atomically, and the manifest is written last. `.archform-manifest.json`
records the hash of every generated file: a re-run refuses to replace a file whose bytes no
longer match (the user edited it) unless forced. What the user added is carried over as it
is: files, symlinks (as symlinks, never as copies of their targets) and empty folders.
Concurrent runs are serialised by an advisory lock; see outdir.py.
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

from archform.render.outdir import (
    LOCK_NAME,
    TMP_MARK,
    OutputDirError,
    cannot_rename,
    check_target,
    clean_stale,
    locked,
    os_error,
)
from archform.spec.atomic import masked

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


__all__ = [
    "MANIFEST",
    "EditedFilesError",
    "GeneratedFile",
    "NotGeneratedDirError",
    "OutputDirError",
    "WriteReport",
    "edited_files",
    "read_manifest",
    "write_tree",
]


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
        if target.is_file() and not target.is_symlink() and sha256(target.read_bytes()) != digest:
            edited.append(rel)
    return edited


def _recover(out_dir: Path) -> None:
    backup = out_dir.with_name(out_dir.name + _BACKUP_SUFFIX)
    if backup.exists() and not out_dir.exists():
        backup.rename(out_dir)
    elif backup.exists():
        shutil.rmtree(backup)


@dataclass(slots=True)
class _Existing:
    """What the user keeps from the current tree (relative POSIX paths)."""

    files: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)


def _survey(out_dir: Path, new: set[str], old: set[str]) -> tuple[_Existing, bool]:
    """User files, symlinks and folders to carry over; and whether anything is there at all."""
    keep = _Existing()
    generated_dirs = {str(p) for rel in old | new for p in PurePosixPath(rel).parents}
    anything = False
    for dirpath, dirnames, filenames in os.walk(out_dir):
        base = Path(dirpath)
        top = base == out_dir
        for name in list(dirnames):
            rel = (base / name).relative_to(out_dir).as_posix()
            if top and name.startswith(TMP_MARK):
                dirnames.remove(name)
                continue
            anything = True
            if (base / name).is_symlink():
                dirnames.remove(name)
                if rel not in new:
                    keep.links.append(rel)
            elif rel not in generated_dirs:
                keep.dirs.append(rel)
        for name in filenames:
            rel = (base / name).relative_to(out_dir).as_posix()
            if top and name in (MANIFEST, LOCK_NAME):
                continue
            anything = True
            if rel in new or rel in old:
                continue
            (keep.links if (base / name).is_symlink() else keep.files).append(rel)
    return keep, anything


def write_tree(
    out_dir: Path, files: Iterable[GeneratedFile], *, force: bool = False, generator: str = ""
) -> WriteReport:
    """Replace `out_dir` with `files` atomically; protect edited files unless `force`."""
    target = check_target(out_dir)
    new = {str(_safe_rel(f.path)): f for f in sorted(files, key=lambda f: f.path)}
    try:
        with locked(target):
            clean_stale(target)
            _recover(target)
            return _write_locked(target, new, force, generator)
    except OSError as exc:
        raise os_error(out_dir, exc) from None


def _write_locked(
    out_dir: Path, new: dict[str, GeneratedFile], force: bool, generator: str
) -> WriteReport:
    old_manifest: dict[str, str] = {}
    keep = _Existing()
    if out_dir.exists():
        manifest = read_manifest(out_dir)
        keep, anything = _survey(out_dir, set(new), set(manifest or {}))
        if manifest is None:
            if anything and not force:
                raise NotGeneratedDirError(
                    f"{out_dir} is not empty and holds no {MANIFEST}; "
                    "choose an empty folder or pass --force"
                )
            manifest = {}
        old_manifest = manifest
        edited = [rel for rel in edited_files(out_dir) if not force]
        if edited:
            raise EditedFilesError(out_dir, edited)
    report = WriteReport()
    for rel, gen in new.items():
        digest = sha256(gen.content)
        (report.unchanged if old_manifest.get(rel) == digest else report.written).append(rel)
    report.kept_user_files = sorted(keep.files + keep.links)
    report.removed = sorted(set(old_manifest) - set(new))
    manifest_doc = {
        "version": 1,
        "generator": generator,
        "files": {rel: sha256(gen.content) for rel, gen in new.items()},
    }
    manifest_text = json.dumps(manifest_doc, indent=2, sort_keys=True) + "\n"
    if out_dir.exists() and (os.path.ismount(out_dir) or not os.access(out_dir.parent, os.W_OK)):
        _write_in_place(out_dir, new, report.removed, manifest_text)
        return report
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}{TMP_MARK}", dir=out_dir.parent))
    try:
        _fill(tmp, new)
        (tmp / MANIFEST).write_text(manifest_text)
        _fsync_files(tmp, [*new, MANIFEST])
        _carry_over(out_dir, tmp, keep)
        tmp.chmod(masked(0o755))
        try:
            _swap(tmp, out_dir)
        except OSError as exc:
            if not (out_dir.exists() and cannot_rename(exc)):
                raise
            shutil.rmtree(tmp, ignore_errors=True)
            _write_in_place(out_dir, new, report.removed, manifest_text)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return report


def _fill(root: Path, new: dict[str, GeneratedFile]) -> None:
    for rel, gen in new.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(gen.content)
        target.chmod(masked(gen.mode))


def _carry_over(out_dir: Path, tmp: Path, keep: _Existing) -> None:
    for rel in keep.dirs:
        (tmp / rel).mkdir(parents=True, exist_ok=True)
    for rel in keep.files:
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        try:  # the same file (inode), not a copy: fast, and already durable
            (tmp / rel).hardlink_to(out_dir / rel)
        except OSError:
            shutil.copy2(out_dir / rel, tmp / rel, follow_symlinks=False)
            _fsync_file(tmp / rel)
    for rel in keep.links:
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).symlink_to((out_dir / rel).readlink())


def _write_in_place(
    out_dir: Path, new: dict[str, GeneratedFile], removed: list[str], manifest_text: str
) -> None:
    """Per-file swap inside `out_dir` (it cannot be renamed): each file replaced atomically."""
    tmp = Path(tempfile.mkdtemp(prefix=TMP_MARK, dir=out_dir))
    try:
        _fill(tmp, new)
        (tmp / MANIFEST).write_text(manifest_text)
        _fsync_files(tmp, [*new, MANIFEST])
        for rel in new:
            dest = out_dir / rel
            if dest.is_dir() and not dest.is_symlink():
                raise OutputDirError(
                    f"{out_dir}: {rel} is a folder, but archform generates a file there",
                    "move that folder away",
                )
            dest.parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).replace(dest)
        for rel in removed:
            gone = out_dir / rel
            if gone.is_file() or gone.is_symlink():
                gone.unlink()
            for parent in PurePosixPath(rel).parents:
                if str(parent) == ".":
                    break
                with contextlib.suppress(OSError):
                    (out_dir / parent).rmdir()  # only when empty
        (tmp / MANIFEST).replace(out_dir / MANIFEST)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _swap(tmp: Path, out_dir: Path) -> None:
    backup = out_dir.with_name(out_dir.name + _BACKUP_SUFFIX)
    if out_dir.exists():
        out_dir.rename(backup)
    try:
        tmp.rename(out_dir)
    except OSError:
        if backup.exists() and not out_dir.exists():
            backup.rename(out_dir)
        raise
    if backup.exists():
        shutil.rmtree(backup)


def _fsync_files(root: Path, rels: list[str]) -> None:
    for rel in rels:
        _fsync_file(root / rel)


def _fsync_file(path: Path) -> None:
    with path.open("rb") as handle, contextlib.suppress(OSError):
        os.fsync(handle.fileno())
