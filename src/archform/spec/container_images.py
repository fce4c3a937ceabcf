"""Container image digests (spec/data/container_images.yaml), looked up by image:tag."""

from __future__ import annotations

from functools import cache
from typing import Any

from archform.spec.datafile import load_data


@cache
def _digests() -> dict[str, str]:
    data: dict[str, Any] = load_data("container_images.yaml")
    return {str(ref): str(row["digest"]) for ref, row in (data.get("images") or {}).items()}


def pinned(image: str) -> str:
    """`image` with its registry digest appended when the table has one (else unchanged)."""
    if "@sha256:" in image:
        return image
    digest = _digests().get(image)
    return f"{image}@{digest}" if digest else image


def has_digest(image: str) -> bool:
    """True when the reference names its bytes (…@sha256:…)."""
    return "@sha256:" in image
