r"""The model manifest: what a published version contains, with checksums.

The set checksum is the SHA-256 of a `sha256sum`-style listing (``<hex>  <path>\n`` per
file, sorted by path), so anyone can recompute it with coreutils:
``(cd weights && find . -type f ! -name manifest.json | sed 's|^./||' | LC_ALL=C sort |
xargs sha256sum) | sha256sum``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from archform.spec import UsageError

SCHEMA = "archform.model-manifest/v1"
MANIFEST_NAME = "manifest.json"
# The sha256sum-style listing itself, stored beside the manifest: serving pods check every
# file with `sha256sum -c SHA256SUMS` and the listing's own SHA-256 against the release.
SUMS_NAME = "SHA256SUMS"
_CHUNK = 8 * 1024 * 1024
# Matched with fullmatch: `$` alone would accept a trailing newline ("v2\n").
VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]{0,255}")


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One file of a model version."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class ModelManifest:
    """A published model version."""

    model: str
    version: str
    source_run: str
    created_at: str
    files: tuple[FileEntry, ...]

    @property
    def checksum(self) -> str:
        """``sha256:<hex>`` of the sorted sha256sum-style listing of every file."""
        return "sha256:" + set_checksum(self.files)

    def to_json(self) -> bytes:
        """Canonical bytes (sorted keys, 2-space indent, trailing newline)."""
        doc: dict[str, Any] = {
            "schema": SCHEMA,
            "model": self.model,
            "version": self.version,
            "source_run": self.source_run,
            "created_at": self.created_at,
            "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files],
            "checksum": self.checksum,
        }
        return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, data: bytes) -> ModelManifest:
        """Parse a stored manifest; its checksum must match its file list."""
        doc = json.loads(data)
        if doc.get("schema") != SCHEMA:
            raise ValueError(f"not an {SCHEMA} manifest")
        manifest = cls(
            model=str(doc["model"]),
            version=str(doc["version"]),
            source_run=str(doc["source_run"]),
            created_at=str(doc["created_at"]),
            files=tuple(
                FileEntry(str(f["path"]), int(f["size"]), str(f["sha256"])) for f in doc["files"]
            ),
        )
        if manifest.checksum != doc.get("checksum"):
            raise ValueError("manifest checksum does not match its file list")
        return manifest


def listing(files: tuple[FileEntry, ...] | list[FileEntry]) -> bytes:
    """The sorted ``<sha256>  <path>`` listing (the bytes of ``SHA256SUMS``)."""
    text = "".join(f"{f.sha256}  {f.path}\n" for f in sorted(files, key=lambda f: f.path))
    return text.encode("utf-8")


def set_checksum(files: tuple[FileEntry, ...] | list[FileEntry]) -> str:
    """Hex SHA-256 of the sorted ``<sha256>  <path>`` listing."""
    return hashlib.sha256(listing(files)).hexdigest()


def hash_file(path: Path) -> tuple[int, str]:
    """(size, hex SHA-256), streamed."""
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def checkpoint_files(checkpoint: Path) -> list[tuple[str, Path]]:
    """(relative POSIX path, file) of every regular file, sorted by path."""
    if not checkpoint.is_dir():
        raise UsageError(
            f"{checkpoint}: checkpoint folder not found", "pass the folder the trainer wrote"
        )
    found: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(checkpoint):
        base = Path(dirpath)
        for name in sorted(dirnames + filenames):
            path = base / name
            if path.is_symlink():
                raise UsageError(
                    f"{path}: is a symlink (to {path.readlink()}); checkpoint entries must "
                    "be regular files and folders inside the checkpoint folder, symlinks are "
                    "never followed or uploaded",
                    "copy the target into the checkpoint folder, or remove the link",
                )
        for name in filenames:
            path = base / name
            if not path.is_file():
                raise UsageError(
                    f"{path}: is not a regular file; refusing to upload it", "remove it"
                )
            rel = path.relative_to(checkpoint).as_posix()
            if rel in (MANIFEST_NAME, SUMS_NAME):
                raise UsageError(
                    f"{path}: a checkpoint may not contain {rel}",
                    "that name is reserved for the registry's manifest",
                )
            if any(c in rel for c in "\n\r\\") or rel.startswith("/"):
                raise UsageError(f"{path}: file name cannot be an object key", "rename the file")
            found.append((rel, path))
    if not found:
        raise UsageError(f"{checkpoint}: the checkpoint folder holds no files", "")
    return sorted(found)


def check_names(version: str, run_id: str) -> None:
    """Refuse a version or run id that cannot be an object key segment or a label."""
    if not VERSION.fullmatch(version):
        raise UsageError(
            f"version {version!r} is not valid",
            "letters, digits, '.', '_' and '-', starting with a letter or digit (max 128)",
        )
    if not RUN_ID.fullmatch(run_id):
        raise UsageError(f"run id {run_id!r} is not valid", "letters, digits and ._:@+- (max 256)")


# ISO 8601 date and time with seconds and a timezone (Z or +hh:mm), as RFC 3339 profiles it
CREATED_AT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})")


def check_created_at(value: str) -> str:
    """`--created-at`: an ISO 8601 timestamp with a timezone (a usage error otherwise)."""
    hint = "an ISO 8601 time with a timezone, e.g. --created-at 2026-03-01T12:00:00Z"
    if not CREATED_AT.fullmatch(value):
        raise UsageError(f"--created-at {value!r} is not a timestamp", hint)
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"--created-at {value!r} is not a real date and time", hint) from None
    return value


def _newest(files: list[tuple[str, Path]]) -> str:
    """When the checkpoint was written: its newest file's mtime, UTC, to the second."""
    newest = max((path.stat().st_mtime for _, path in files), default=0.0)
    return datetime.fromtimestamp(int(newest), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def build_manifest(
    checkpoint: Path, *, model: str, version: str, run_id: str, created_at: str | None = None
) -> ModelManifest:
    """Hash every checkpoint file; same inputs give the same manifest bytes.

    Without `created_at` the time recorded is the newest checkpoint file's mtime (the same
    checkpoint gives the same bytes), never the run id.
    """
    check_names(version, run_id)
    if created_at is not None:
        check_created_at(created_at)
    entries = []
    files = checkpoint_files(checkpoint)
    for rel, path in files:
        size, digest = hash_file(path)
        entries.append(FileEntry(rel, size, digest))
    return ModelManifest(
        model=model,
        version=version,
        source_run=run_id,
        created_at=created_at if created_at is not None else _newest(files),
        files=tuple(entries),
    )
