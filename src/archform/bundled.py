"""Where bundled data lives: inside the wheel, or in the source tree during development."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    bundled = _PACKAGE / "_bundled" / name
    if bundled.is_dir():
        return bundled
    source = _PACKAGE.parent.parent / name
    if source.is_dir():
        return source
    raise FileNotFoundError(f"archform's {name}/ folder is missing (broken installation?)")


def templates_dir() -> Path:
    """The Jinja templates folder."""
    return _find("templates")


def blueprints_dir() -> Path:
    """The curated reference blueprints folder."""
    return _find("blueprints")


def presets() -> dict[str, Path]:
    """Preset name (file stem) -> bundled blueprint path."""
    return {p.stem: p for p in sorted(blueprints_dir().glob("*.yaml"))}
