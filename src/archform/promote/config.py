"""The promotion config (`promote/promote.json`, written by the Platform target)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archform.promote.checkpoint import CheckpointExpect
from archform.spec import SpecError, UsageError
from archform.spec.checkpoints import checkpoint_formats
from archform.spec.files import read_regular
from archform.spec.provider import ProviderSpec, names_where, spec_of, spec_or_none
from archform.spec.release import pointer_key

# v3: the checkpoint the fleet loads (layout and model shape) and the release pointer in
# the registry; a v2 promote.json predates both and is refused (regenerate it).
SCHEMA = "archform.promote/v3"
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")  # fullmatch
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # fullmatch


@dataclass(frozen=True, slots=True)
class PromoteConfig:
    """Where the registry is, what model it holds, and where the fleet records its release.

    The registry's release pointer (`release_key`) is the fleet's served release;
    `release_file` is its copy in the fleet's generated folder, which generate reads.
    """

    path: Path
    bucket: str
    region: str
    model: str
    approval: str
    fleet: str
    release_file: Path
    checkpoint: CheckpointExpect

    @property
    def release_key(self) -> str:
        """Object key of the fleet's release pointer (spec.release.pointer_key)."""
        return pointer_key(self.model, self.fleet)

    @property
    def release_uri(self) -> str:
        """s3:// URI of the fleet's release pointer."""
        return f"s3://{self.bucket}/{self.release_key}"

    def version_prefix(self, version: str) -> str:
        """Object key prefix of one model version."""
        return f"{self.model}/{version}/"

    def version_uri(self, version: str) -> str:
        """s3:// URI of one model version (with a trailing slash, like the fleet's)."""
        return f"s3://{self.bucket}/{self.version_prefix(version)}"


def _promotes(spec: ProviderSpec) -> bool:
    return spec.promote_store is not None


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            raise KeyError(".".join(keys))
        data = data[key]
    return data


def load_config(path: Path) -> PromoteConfig:
    """Read and check a promote.json; manifest folders resolve relative to it."""
    hint = "use the promote.json that `archform generate` wrote for the Platform"
    try:
        # regular files of at most 1 MiB: a FIFO or /dev/zero is refused, never read
        data = json.loads(read_regular(path, str(path), 1024 * 1024).decode("utf-8"))
    except SpecError as exc:
        problem = exc.problems[0]
        raise UsageError(f"{path}: {problem.message}", hint) from None
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON ({exc})", hint) from None
    try:
        if _get(data, "schema") != SCHEMA:
            raise UsageError(f"{path}: schema is not {SCHEMA!r}", hint)
        spec = spec_or_none(_get(data, "registry", "provider"))
        if spec is None or spec.promote_store is None:
            stores = [f"{n} ({spec_of(n).promote_store})" for n in names_where(_promotes)]
            raise UsageError(
                f"{path}: promotion to a {_get(data, 'registry', 'provider')} registry is not "
                "supported yet",
                f"the registry must be on {' or '.join(stores)}",
            )
        bucket = str(_get(data, "registry", "bucket"))
        model = str(_get(data, "model"))
        approval = str(_get(data, "approval"))
        config = PromoteConfig(
            path=path,
            bucket=bucket,
            region=str(_get(data, "registry", "region")),
            model=model,
            approval=approval,
            fleet=str(_get(data, "fleet", "name")),
            release_file=(path.parent / str(_get(data, "fleet", "release_file"))).resolve(),
            checkpoint=_checkpoint(path, _get(data, "checkpoint"), hint),
        )
        recorded = str(_get(data, "fleet", "release_pointer"))
    except KeyError as exc:
        raise UsageError(f"{path}: missing key {exc.args[0]!r}", hint) from None
    if not _BUCKET.fullmatch(bucket):
        raise UsageError(f"{path}: {bucket!r} is not an S3 bucket name", hint)
    if not _NAME.fullmatch(model):
        raise UsageError(f"{path}: model name {model!r} cannot be an object key segment", hint)
    if approval not in {"manual", "automatic"}:
        raise UsageError(f"{path}: approval must be manual or automatic, not {approval!r}", hint)
    if not _NAME.fullmatch(config.fleet):
        raise UsageError(f"{path}: fleet name {config.fleet!r} cannot be an object key", hint)
    if recorded != config.release_uri:
        raise UsageError(
            f"{path}: fleet.release_pointer is {recorded!r}; the fleet's program reads "
            f"{config.release_uri!r}",
            hint,
        )
    return config


def _checkpoint(path: Path, data: Any, hint: str) -> CheckpointExpect:
    """The `checkpoint` block: the layout the fleet's server loads and the model's shape."""
    if not isinstance(data, dict):
        raise UsageError(f"{path}: checkpoint must be an object", hint)
    fmt = data.get("format")
    if fmt is not None and fmt not in checkpoint_formats():
        raise UsageError(f"{path}: unknown checkpoint format {fmt!r}", hint)
    shape: dict[str, int | None] = {}
    for field in ("layers", "kv_heads", "head_dim"):
        value = data.get(field)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise UsageError(f"{path}: checkpoint.{field} must be an integer or null", hint)
        shape[field] = value
    return CheckpointExpect(
        server=str(_get(data, "server")),
        format=None if fmt is None else str(fmt),
        layers=shape["layers"],
        kv_heads=shape["kv_heads"],
        head_dim=shape["head_dim"],
    )
