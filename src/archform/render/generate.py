"""Generate the output tree for a blueprint set: every applicable target + resolved blueprint."""

from __future__ import annotations

from pathlib import Path

from archform import __version__
from archform.render.target import targets
from archform.render.writer import GeneratedFile, WriteReport, write_tree
from archform.spec import BlueprintSet, Document
from archform.spec.resolve import resolved_yaml

RESOLVED = "resolved-blueprint.yaml"


def build_files(
    blueprints: BlueprintSet, docs: list[Document] | None = None
) -> list[GeneratedFile]:
    """All generated files (in memory), sorted by path, deterministic.

    Targets return paths relative to the document's root (``ansible/site.yml``). With one
    document that root is the output folder; with several, each gets ``<name>/``.
    """
    chosen = docs if docs is not None else list(blueprints.documents)
    files: dict[str, GeneratedFile] = {}
    for doc in chosen:
        prefix = f"{doc.name}/" if len(chosen) > 1 else ""
        for target in targets():
            if not target.applies(doc):
                continue
            for produced in target.render(doc, blueprints):
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
) -> WriteReport:
    """Render and write atomically."""
    files = build_files(blueprints, docs)
    return write_tree(out_dir, files, force=force, generator=f"archform {__version__}")
