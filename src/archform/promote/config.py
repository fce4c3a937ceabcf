"""The promotion config (`promote/promote.json`, written by the Platform target)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archform.spec import SpecError, UsageError
from archform.spec.files import read_regular

SCHEMA = "archform.promote/v2"
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")  # fullmatch
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # fullmatch


@dataclass(frozen=True, slots=True)
class PromoteConfig:
    """Where the registry is, what model it holds, and where the fleet records its release."""

    path: Path
    bucket: str
    region: str
    model: str
    approval: str
    fleet: str
    release_file: Path

    def version_prefix(self, version: str) -> str:
        """Object key prefix of one model version."""
        return f"{self.model}/{version}/"

    def version_uri(self, version: str) -> str:
        """s3:// URI of one model version (with a trailing slash, like the fleet's)."""
        return f"s3://{self.bucket}/{self.version_prefix(version)}"


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
        if _get(data, "registry", "provider") != "aws":
            raise UsageError(
                f"{path}: promotion to a {_get(data, 'registry', 'provider')} registry is not "
                "supported yet",
                "the registry must be on aws (S3 or an S3-compatible store)",
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
        )
    except KeyError as exc:
        raise UsageError(f"{path}: missing key {exc.args[0]!r}", hint) from None
    if not _BUCKET.fullmatch(bucket):
        raise UsageError(f"{path}: {bucket!r} is not an S3 bucket name", hint)
    if not _NAME.fullmatch(model):
        raise UsageError(f"{path}: model name {model!r} cannot be an object key segment", hint)
    if approval not in {"manual", "automatic"}:
        raise UsageError(f"{path}: approval must be manual or automatic, not {approval!r}", hint)
    return config
