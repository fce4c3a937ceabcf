"""The fleet's local copy of its served release: ``release.json`` in its generated folder.

The registry's release pointer is the truth (`archform.spec.release`); promote writes this
copy after the pointer, so `archform generate` in the same folder renders the fleet's
Deployments and stage Jobs for that version. The file is replaced atomically.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from archform.promote import store
from archform.spec import UsageError
from archform.spec.atomic import write_atomic
from archform.spec.models.inference import InferenceFleet
from archform.spec.release import Release, load_release, pointer_uri


def check_fleet(release_file: Path) -> Release | None:
    """The fleet's current release (None: the blueprint's version); the folder must exist."""
    if not release_file.parent.is_dir():
        raise UsageError(
            f"{release_file.parent}: the fleet's generated folder was not found",
            "generate the Platform together with its fleet (archform generate FILE -o DIR)",
        )
    return load_release(release_file)


def write_release(release_file: Path, release: Release) -> bool:
    """Record `release` as served; False when it already was."""
    data = release.to_json()
    if release_file.exists() and release_file.read_bytes() == data:
        return False
    write_atomic(release_file, data)
    return True


@dataclass(frozen=True, slots=True)
class RegistryRelease:
    """What the registry records for one fleet (`release` None: nothing recorded)."""

    fleet: str
    uri: str
    release: Release | None


def registry_release(fleet: InferenceFleet, endpoint_url: str | None) -> RegistryRelease | None:
    """The release the registry records for `fleet`; None when its registry holds no pointer.

    Only S3 registries hold pointers (promote speaks the S3 API). The bucket is read in the
    region of `model.source`, as the fleet's program does.
    """
    if not fleet.model.source.startswith("s3://"):
        return None
    uri = pointer_uri(fleet.model.source, fleet.name)
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    region = fleet.model.source_region or fleet.placement.all_regions[0]
    registry = store.connect(bucket, region, endpoint_url)
    with store.registry_errors(bucket, endpoint_url):
        pointer = store.read_pointer(registry, key)
    return RegistryRelease(fleet.name, uri, pointer.release)
