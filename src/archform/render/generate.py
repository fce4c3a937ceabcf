"""Generate the output tree for a blueprint set: every applicable target + resolved blueprint."""

from __future__ import annotations

from pathlib import Path

from archform import __version__
from archform.render.target import Releases
from archform.render.targets import targets
from archform.render.writer import GeneratedFile, WriteReport, write_tree
from archform.spec import BlueprintSet, Document, InferenceFleet
from archform.spec.release import RELEASE_FILE, Release, load_release
from archform.spec.resolve import resolved_yaml

RESOLVED = "resolved-blueprint.yaml"


def doc_prefix(doc: Document, chosen: list[Document]) -> str:
    """Folder of one document's output: the output root alone, else ``<name>/``."""
    return f"{doc.name}/" if len(chosen) > 1 else ""


def read_releases(
    out_dir: Path, blueprints: BlueprintSet, docs: list[Document] | None = None
) -> dict[str, Release]:
    """The served releases recorded in a generated folder (``release.json`` per fleet)."""
    chosen = docs if docs is not None else list(blueprints.documents)
    found: dict[str, Release] = {}
    for doc in chosen:
        if isinstance(doc.model, InferenceFleet):
            release = load_release(out_dir / doc_prefix(doc, chosen) / RELEASE_FILE)
            if release is not None:
                found[doc.name] = release
    return found


def build_files(
    blueprints: BlueprintSet,
    docs: list[Document] | None = None,
    releases: Releases | None = None,
) -> list[GeneratedFile]:
    """All generated files (in memory), sorted by path, deterministic.

    Targets return paths relative to the document's root (``ansible/site.yml``). With one
    document that root is the output folder; with several, each gets ``<name>/``.
    `releases` (fleet name -> served release) overrides the version a fleet's blueprint
    names; see `read_releases`.
    """
    chosen = docs if docs is not None else list(blueprints.documents)
    files: dict[str, GeneratedFile] = {}
    for doc in chosen:
        prefix = doc_prefix(doc, chosen)
        for target in targets():
            if not target.applies(doc):
                continue
            produced_files = (
                target.render_state(doc, blueprints, releases or {})
                if target.render_state is not None
                else target.render(doc, blueprints)
            )
            for produced in produced_files:
                gen = GeneratedFile(prefix + produced.path, produced.content, produced.mode)
                if gen.path in files and files[gen.path].content != gen.content:
                    raise ValueError(f"{target.name}: {gen.path} generated twice differently")
                files[gen.path] = gen
    files[RESOLVED] = GeneratedFile.text(RESOLVED, resolved_yaml(blueprints, chosen))
    return [files[p] for p in sorted(files)]


def generate(
    blueprints: BlueprintSet,
    out_dir: Path,
    *,
    force: bool = False,
    docs: list[Document] | None = None,
    releases: Releases | None = None,
) -> WriteReport:
    """Render and write atomically, serving the releases recorded in `out_dir`.

    `releases` (fleet name -> release, e.g. read from the registry) take precedence over
    the ``release.json`` copies in `out_dir`.
    """
    served = {**read_releases(out_dir, blueprints, docs), **(releases or {})}
    files = build_files(blueprints, docs, served)
    return write_tree(out_dir, files, force=force, generator=f"archform {__version__}")
