"""The serving engines archform generates fleets for: one record each, registered here.

`engine(kind)` is the one way shared code reaches an engine's facts; `BUNDLED` lists the
records archform ships. A new engine is one module holding one `Engine` record, added to
`BUNDLED` (or, in a test, passed to `register`).
"""

from __future__ import annotations

from archform.spec.engines import nim, sglang, tgi, triton, vllm
from archform.spec.engines.record import Engine

__all__ = ["BUNDLED", "Engine", "engine", "kinds", "register", "unregister"]

BUNDLED: tuple[Engine, ...] = (vllm.ENGINE, tgi.ENGINE, triton.ENGINE, nim.ENGINE, sglang.ENGINE)
DEFAULT_KIND = "vllm"

_REGISTRY: dict[str, Engine] = {e.kind: e for e in BUNDLED}


def kinds() -> tuple[str, ...]:
    """The registered engine kinds, bundled ones first, in registration order."""
    return tuple(_REGISTRY)


def engine(kind: str) -> Engine:
    """The record of `kind` (a blueprint's server.kind, checked against `kinds()`)."""
    found = _REGISTRY.get(kind)
    if found is None:
        raise KeyError(f"no serving engine {kind!r} (known: {', '.join(_REGISTRY)})")
    return found


def register(record: Engine) -> None:
    """Add an engine; refuses a kind that is already registered."""
    if record.kind in _REGISTRY:
        raise ValueError(f"serving engine {record.kind!r} is already registered")
    _REGISTRY[record.kind] = record


def unregister(kind: str) -> None:
    """Remove an engine added with `register` (bundled engines stay)."""
    if any(e.kind == kind for e in BUNDLED):
        raise ValueError(f"serving engine {kind!r} is bundled")
    _REGISTRY.pop(kind, None)
