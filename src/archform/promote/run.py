"""One promotion: check, hash, upload, verify, then (approved) point the fleet at the version.

Pointing the fleet at a version writes the release pointer in the registry (conditionally:
a promotion that raced another one is refused) and then its copy in the fleet's folder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from archform.promote import fleet, store
from archform.promote.checkpoint import CheckedCheckpoint, check_checkpoint
from archform.promote.config import PromoteConfig
from archform.promote.manifest import (
    MANIFEST_NAME,
    ModelManifest,
    build_manifest,
    check_names,
    checkpoint_files,
)
from archform.spec import UsageError
from archform.spec.release import Release


class PromoteError(Exception):
    """The store does not hold what was promoted (checksum mismatch, missing object)."""

    def __init__(self, message: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(message)


@dataclass(slots=True)
class PromoteResult:
    """What a promotion did."""

    manifest: ModelManifest
    uri: str
    uploaded: bool
    rolled: bool
    pointer_uri: str
    release_file: Path | None = None
    # The release the registry's pointer named before (None: none recorded yet).
    previous: Release | None = None
    changed: bool = False
    checked: CheckedCheckpoint | None = None


def promote(
    config: PromoteConfig,
    *,
    checkpoint: Path,
    version: str,
    run_id: str,
    approve: bool = False,
    created_at: str | None = None,
    endpoint_url: str | None = None,
    after_upload: Callable[[], None] | None = None,
    log: Callable[[str], None] = lambda line: None,
) -> PromoteResult:
    """Publish `checkpoint` as `version`; roll the fleet when approval allows it.

    A version is immutable: when it already exists with the same file checksums nothing
    is uploaded (so `--approve` can finish a manual promotion), with other contents the
    promotion is refused. `after_upload` runs between upload and verification.
    """
    check_names(version, run_id)
    # The serving engine must be able to load it: checked on the headers, before hashing.
    files = [rel for rel, _ in checkpoint_files(checkpoint)]
    checked = check_checkpoint(checkpoint, files, config.checkpoint, config.model)
    if checked is None:
        log(
            f"checkpoint layout not checked: archform has none on record for "
            f"{config.checkpoint.server}"
        )
    else:
        shape = ", ".join(f"{k} {v}" for k, v in sorted(checked.shape.items()))
        log(
            f"checked: {checked.weight_files} safetensors file(s), {checked.tensors} tensors, "
            f"{shape}"
        )
    local = build_manifest(
        checkpoint, model=config.model, version=version, run_id=run_id, created_at=created_at
    )
    # Every fleet check runs before anything is uploaded.
    fleet.check_fleet(config.release_file)
    registry = store.connect(config.bucket, config.region, endpoint_url)
    with store.registry_errors(config.bucket, endpoint_url):
        pointer = store.read_pointer(registry, config.release_key)
        result = _publish(
            config, checkpoint, version, local, registry, approve, after_upload, log, pointer
        )
    result.checked = checked
    return result


def _publish(
    config: PromoteConfig,
    checkpoint: Path,
    version: str,
    local: ModelManifest,
    registry: store.Store,
    approve: bool,
    after_upload: Callable[[], None] | None,
    log: Callable[[str], None],
    pointer: store.Pointer,
) -> PromoteResult:
    prefix = config.version_prefix(version)
    uri = config.version_uri(version)
    try:
        existing = store.read_manifest(registry, prefix)
    except store.CorruptManifestError as exc:
        raise UsageError(
            f"{exc}; refusing to publish over it",
            "inspect the version in the registry; choose a new --version",
        ) from None
    if existing is not None and existing.checksum != local.checksum:
        raise UsageError(
            f"{uri} already holds a different checkpoint ({existing.checksum}, run "
            f"{existing.source_run}); this one is {local.checksum}",
            "published versions are immutable: choose a new --version",
        )
    uploaded = existing is None
    manifest = existing if existing is not None else local
    if uploaded:
        log(f"uploading {len(local.files)} files ({_size(local)}) to {uri}")
        store.upload(registry, prefix, checkpoint, local)
    else:
        log(f"{uri} already holds this checkpoint ({local.checksum}); not uploading")
    if after_upload is not None:
        after_upload()
    log(f"verifying {len(manifest.files)} objects and {MANIFEST_NAME} by reading them back")
    problems = store.verify(registry, prefix, manifest)
    if problems:
        raise PromoteError(
            f"{uri}: the registry does not hold the checkpoint that was promoted "
            f"({len(problems)} problem(s)); the fleet was not changed",
            problems,
        )
    log(f"verified {manifest.checksum}")
    result = PromoteResult(
        manifest=manifest,
        uri=uri,
        uploaded=uploaded,
        rolled=False,
        pointer_uri=config.release_uri,
        previous=pointer.release,
    )
    if config.approval == "manual" and not approve:
        return result
    release = Release(
        model=config.model,
        version=version,
        source=uri,
        checksum=manifest.checksum,
        source_run=manifest.source_run,
    )
    if pointer.raw != release.to_json():
        try:
            store.write_pointer(registry, config.release_key, release, pointer)
        except store.PointerMovedError:
            raise UsageError(
                f"{config.release_uri}: changed while this promotion ran (another promotion?); "
                "the fleet's release was not changed",
                "check what it serves now, then run the command again",
            ) from None
        result.changed = True
    stored = store.read_pointer(registry, config.release_key)
    if stored.release != release:
        raise PromoteError(
            f"{config.release_uri}: reads {stored.release}, not the release just recorded",
            [f"{config.release_uri}: expected version {version} ({manifest.checksum})"],
        )
    fleet.write_release(config.release_file, release)
    result.release_file = config.release_file
    result.rolled = True
    return result


def _size(manifest: ModelManifest) -> str:
    total = float(sum(f.size for f in manifest.files))
    for unit in ("B", "KiB", "MiB", "GiB"):
        if total < 1024 or unit == "GiB":
            return f"{total:.0f} {unit}" if unit == "B" else f"{total:.1f} {unit}"
        total /= 1024
    return f"{total:.1f} TiB"
