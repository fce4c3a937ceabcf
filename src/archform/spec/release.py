"""The served model release of a fleet: the one source of truth for which version it serves.

The truth lives in the registry, beside the model: ``archform promote`` writes the release
to ``<model>/_releases/<fleet>.json`` in the registry bucket (`pointer_key`) once a version
is verified and approved, with a conditional write, so two promotions cannot overwrite each
other unseen. The generated fleet program reads that object at `pulumi preview`/`up` and
refuses to run when it was generated for another release, so a program regenerated in any
folder (a fresh CI checkout included) cannot roll the fleet back.

``release.json`` in the fleet's generated folder is the local copy `archform generate`
renders from: promote writes it beside the registry's, and ``archform generate
--from-registry`` fetches it. Without either, a fleet serves the version its blueprint
names: the last path segment of ``model.source``.

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
# Registry folder of the release pointers, beside the model's version folders. Versions
# start with a letter or digit (VERSION in promote.manifest), so no version can be named so.
POINTER_FOLDER = "_releases"
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_CHECKSUM = re.compile(r"(sha256:[0-9a-f]{64})?")


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


def pointer_key(model: str, fleet: str) -> str:
    """Object key of a fleet's release pointer inside the registry bucket."""
    return f"{model}/{POINTER_FOLDER}/{fleet}.json"


def pointer_uri(source: str, fleet: str) -> str:
    """URI of a fleet's release pointer, from its versioned ``model.source``.

    ``s3://registry/llama-8b/2026-03/`` -> ``s3://registry/llama-8b/_releases/<fleet>.json``.
    """
    base, _ = split_source(source)
    return f"{base}{POINTER_FOLDER}/{fleet}.json"


def load_release(path: Path) -> Release | None:
    """The release in `path`, or None when the file does not exist."""
    hint = f"{RELEASE_FILE} is written by `archform promote`; delete it to serve the blueprint's"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc.strerror})", hint) from None
    return parse_release(raw, str(path), hint)


def parse_release(raw: bytes, where: str, hint: str) -> Release:
    """A release document (``release.json`` or a registry pointer); `where` names it in errors."""
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
        raise UsageError(f"{where}: not a valid release file ({exc})", hint) from None
    if not _VERSION.fullmatch(release.version):
        raise UsageError(f"{where}: version {release.version!r} is not valid", hint)
    if not _CHECKSUM.fullmatch(release.checksum):
        raise UsageError(f"{where}: checksum {release.checksum!r} is not sha256:<hex>", hint)
    try:
        _, version = split_source(release.source)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}", hint) from None
    _, _, rest = release.source.partition("://")
    if "" in rest.removesuffix("/").split("/") or any(c.isspace() for c in release.source):
        # S3, GCS and Blob keys are literal: `s3://b//m/v1` names another object than `s3://b/m/v1`
        raise UsageError(
            f"{where}: source {release.source!r} has an empty or blank path segment", hint
        )
    if version != release.version:
        raise UsageError(
            f"{where}: source {release.source!r} is not the folder of version {release.version!r}",
            hint,
        )
    return release
