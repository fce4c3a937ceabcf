"""The served model release of a fleet: the one source of truth for which version it serves.

``archform promote`` writes ``release.json`` into the fleet's generated folder once a version
is verified in the registry and approved. ``archform generate`` reads it back (so the
regenerated Deployments, replication Jobs and manifests serve that version) and the
generated Pulumi program refuses to run when the release it was generated for is not the
one in ``release.json`` (so a stale ``pulumi up`` cannot revert a promotion). Without the
file, a fleet serves the version its blueprint names: the last path segment of
``model.source``.

Both `promote` (writer) and `render` (reader) use this module; it lives in `spec` because
those two layers may not import each other.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from archform.spec.errors import UsageError

SCHEMA = "archform.release/v1"
RELEASE_FILE = "release.json"
_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_CHECKSUM = re.compile(r"^(sha256:[0-9a-f]{64})?$")


@dataclass(frozen=True, slots=True)
class Release:
    """One model version a fleet serves.

    `source` is the registry location of exactly this version (trailing slash);
    `checksum` is the manifest's set checksum (``sha256:<hex>``), empty when not known
    (a fleet serving what its blueprint names before any promotion).
    """

    model: str
    version: str
    source: str
    checksum: str = ""
    source_run: str = ""

    def to_json(self) -> bytes:
        """Canonical bytes (sorted keys, trailing newline)."""
        doc = {
            "schema": SCHEMA,
            "model": self.model,
            "version": self.version,
            "source": self.source,
            "checksum": self.checksum,
            "source_run": self.source_run,
        }
        return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")


def split_source(source: str) -> tuple[str, str]:
    """(base, version) of a versioned weights URI: ``s3://b/m/v3/`` -> (``s3://b/m/``, ``v3``)."""
    scheme, sep, rest = source.partition("://")
    parts = [p for p in rest.split("/") if p]
    if not sep or len(parts) < 2:
        raise ValueError(f"{source!r} has no version folder")
    return f"{scheme}://{'/'.join(parts[:-1])}/", parts[-1]


def load_release(path: Path) -> Release | None:
    """The release in `path`, or None when the file does not exist."""
    hint = f"{RELEASE_FILE} is written by `archform promote`; delete it to serve the blueprint's"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror})", hint) from None
    try:
        doc = json.loads(raw)
        if doc.get("schema") != SCHEMA:
            raise ValueError(f"schema is not {SCHEMA!r}")
        release = Release(
            model=str(doc["model"]),
            version=str(doc["version"]),
            source=str(doc["source"]),
            checksum=str(doc.get("checksum", "")),
            source_run=str(doc.get("source_run", "")),
        )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{path}: not a valid release file ({exc})", hint) from None
    if not _VERSION.match(release.version):
        raise UsageError(f"{path}: version {release.version!r} is not valid", hint)
    if not _CHECKSUM.match(release.checksum):
        raise UsageError(f"{path}: checksum {release.checksum!r} is not sha256:<hex>", hint)
    try:
        _, version = split_source(release.source)
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}", hint) from None
    if version != release.version:
        raise UsageError(
            f"{path}: source {release.source!r} is not the folder of version {release.version!r}",
            hint,
        )
    return release
