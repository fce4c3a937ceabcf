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


def preset_summary(path: Path) -> tuple[str, str]:
    """(kinds, first sentence of the header comment) of a bundled blueprint.

    The header comment is the paragraph after the `$schema` modeline; every bundled blueprint
    opens with one, and its first sentence says what the blueprint builds. Kinds are those of
    every document in the file, in order ("TrainingCluster+InferenceFleet+Platform").
    """
    lines = path.read_text("utf-8").splitlines()
    kinds = [line.partition(":")[2].strip() for line in lines if line.startswith("kind:")]
    words: list[str] = []
    for line in lines:
        if not line.startswith("#"):
            if words:
                break
            continue
        text = line.lstrip("#").strip()
        if "yaml-language-server" in text:
            continue
        if not text:
            if words:
                break
            continue
        words.extend(text.split())
    prose = " ".join(words)
    end = prose.find(". ")
    return "+".join(dict.fromkeys(kinds)), prose if end < 0 else prose[: end + 1]
