"""Load blueprint files: YAML with positions -> catalog defaults -> typed models.

Every problem becomes a SpecProblem at file:line:col with a hint; nothing raises a
traceback for bad input.
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ValidationError

from archform.spec.buildable import check_buildable, overlap_pairs, overlap_text
from archform.spec.catalog import load_catalog
from archform.spec.defaults import cascades, fill_defaults
from archform.spec.document import BlueprintSet, Document
from archform.spec.errors import SpecError, SpecProblem, UsageError
from archform.spec.images import image_problems
from archform.spec.paths import format_path
from archform.spec.peers import in_peer_terms, translate
from archform.spec.places import place_problems
from archform.spec.release import split_source
from archform.spec.source import RawDocument, parse_documents, read_text
from archform.spec.validate import problems_from

if TYPE_CHECKING:
    from archform.spec.document import Model
    from archform.spec.models.platform import Platform

# Each kind's models are imported (and their validators built) only when a document of that
# kind is read: linting a TrainingCluster never builds the InferenceFleet models.
MODELS: dict[str, str] = {
    "TrainingCluster": "archform.spec.models.training",
    "InferenceFleet": "archform.spec.models.inference",
    "Platform": "archform.spec.models.platform",
}


def model_class(kind: str) -> type[BaseModel]:
    """The model class of a blueprint kind (one of MODELS), imported on first use."""
    cls: type[BaseModel] = getattr(importlib.import_module(MODELS[kind]), kind)
    return cls


YAML_SUFFIXES = (".yaml", ".yml")


def load_text(text: str, display: str = "<string>") -> BlueprintSet:
    """Load blueprint documents from a string (tests, stdin)."""
    from archform.spec.source import decode

    decode(text.encode("utf-8"), display)
    return _finish(_validate_all(parse_documents(text, display)), {display: text})


def load_paths(paths: Iterable[Path | str]) -> BlueprintSet:
    """Load files (and folders of *.yaml) together; references resolve across them."""
    documents: list[Document] = []
    texts: dict[str, str] = {}
    problems: list[SpecProblem] = []
    for path in expand_paths(paths):
        display = str(path)
        try:
            text = read_text(path, display)
            texts[display] = text
            documents.extend(_validate_all(parse_documents(text, display)))
        except SpecError as exc:
            problems.extend(exc.problems)
    if problems:
        raise SpecError(problems)
    return _finish(documents, texts)


def expand_paths(
    paths: Iterable[Path | str],
    on_skip: Callable[[str], None] | None = None,
    *,
    prune: Callable[[Path], bool] | None = None,
    allow_empty: bool = False,
) -> list[Path]:
    """Files as given; folders expanded to their *.yaml/*.yml files, sorted.

    Inside a folder, symlinks are not followed out of it: a linked file whose target lies
    outside the folder, and every linked folder, is skipped and named (never read, so
    nothing of its content can reach an error message or a CI log). Sub-folders for which
    `prune` is true are not entered. A folder without any YAML file is an error (nothing
    would be checked) unless `allow_empty`.
    """
    note = on_skip or _note
    out: list[Path] = []
    for item in paths:
        path = Path(item)
        if not path.is_dir():
            out.append(path)
            continue
        root = path.resolve()
        found: list[Path] = []
        for dirpath, dirnames, filenames in os.walk(path):
            base = Path(dirpath)
            if prune is not None:
                dirnames[:] = [d for d in dirnames if not prune(base / d)]
            for name in sorted(dirnames):
                if (base / name).is_symlink():
                    note(f"note: {base / name}: symlinked folder not followed")
            for name in filenames:
                candidate = base / name
                if candidate.suffix not in YAML_SUFFIXES:
                    continue
                if candidate.is_symlink():
                    target = candidate.resolve()
                    if not target.is_relative_to(root):
                        note(f"note: {candidate}: symlink to a file outside {path}, not read")
                        continue
                if candidate.is_file():
                    found.append(candidate)
        found = _unique(found)
        if not found and not allow_empty:
            raise UsageError(
                f"{path}: no blueprint files (*.yaml, *.yml) in this folder; nothing was checked",
                "pass the folder that holds the blueprints, or the files themselves",
            )
        out.extend(sorted(found))
    return out


def _unique(files: list[Path]) -> list[Path]:
    """One path per file: a symlink inside the folder to a file also found is read once."""
    seen: dict[Path, Path] = {}
    for path in sorted(files, key=lambda p: (p.is_symlink(), str(p))):
        seen.setdefault(path.resolve(), path)
    return list(seen.values())


def _note(line: str) -> None:
    sys.stderr.write(line + "\n")


def _validate_all(raws: list[RawDocument]) -> list[Document]:
    documents: list[Document] = []
    problems: list[SpecProblem] = []
    for raw in raws:
        try:
            mapped, peer = translate(raw)
        except SpecError as exc:
            problems.extend(exc.problems)
            continue
        try:
            document = validate_document(mapped)
            documents.append(document if peer is None else replace(document, peer=peer))
        except SpecError as exc:
            problems.extend(exc.problems if peer is None else in_peer_terms(exc.problems, peer))
    if problems:
        raise SpecError(problems)
    return documents


def validate_document(raw: RawDocument) -> Document:
    """Validate one raw document into its typed model."""
    data = raw.data
    if not isinstance(data, dict):
        pos = raw.source.start
        raise SpecError.at(
            raw.file,
            pos,
            f"a blueprint document must be a mapping, got {_kind_word(data)}",
            "start the document with `version: 1` and `kind: ...`",
        )
    kind = data.get("kind")
    if kind is None:
        raise SpecError.at(
            raw.file,
            raw.source.start,
            "missing required key 'kind'",
            "add kind: TrainingCluster, InferenceFleet or Platform",
        )
    if not isinstance(kind, str) or kind not in MODELS:
        close = difflib.get_close_matches(str(kind), list(MODELS), n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}?" if close else "use one of " + ", ".join(MODELS)
        raise SpecError.at(
            raw.file,
            raw.source.locate(("kind",), prefer="value"),
            f"kind: unknown blueprint kind {kind!r}",
            hint,
            "kind",
        )
    problems = fill_defaults(raw)
    model_cls = model_class(kind)
    try:
        model = model_cls.model_validate(data)
    except ValidationError as exc:
        problems.extend(cascades(problems, problems_from(exc, raw, model_cls)))
        model = None
    if model is not None and not problems:
        problems.extend(check_buildable(raw.file, raw.source, model))
        problems.extend(place_problems(raw.file, raw.source, model))
        problems.extend(image_problems(raw))
    if problems:
        problems.sort(key=lambda p: (p.secondary, p.line, p.column))
        raise SpecError(problems)
    assert model is not None
    return Document(raw.file, raw.index, cast("Model", model), raw.source, data)


def _finish(documents: list[Document], texts: dict[str, str]) -> BlueprintSet:
    problems: list[SpecProblem] = []
    seen: dict[str, Document] = {}
    for doc in documents:
        if doc.name in seen and (doc.peer is not None or seen[doc.name].peer is not None):
            continue  # a peer file's name is its file name, not written: two cluster.yaml are fine
        if doc.name in seen:
            first = seen[doc.name]
            pos = doc.locate(("name",), prefer="value")
            problems.append(
                SpecProblem(
                    doc.file,
                    pos.line,
                    pos.column,
                    f"name: {doc.name!r} is already used by {_a(first.kind)} "
                    f"({first.file}:{first.locate(('name',)).line})",
                    "every document needs a unique name",
                    "name",
                )
            )
        else:
            seen[doc.name] = doc
    order = {id(doc): i for i, doc in enumerate(documents)}
    for doc in documents:
        if doc.model.kind == "Platform":
            problems.extend(_check_platform(doc, doc.model, seen))
            problems.extend(_check_platform_networks(doc.model, seen, order))
    if problems:
        raise SpecError(problems)
    return BlueprintSet(tuple(documents), texts)


def _check_platform(
    doc: Document, model: Platform, names: dict[str, Document]
) -> list[SpecProblem]:
    out: list[SpecProblem] = []
    wanted = {"training": "TrainingCluster", "inference": "InferenceFleet"}
    for field, kind in wanted.items():
        target = getattr(model, field)
        found = names.get(target)
        pos = doc.locate((field,), prefer="value")
        if found is None:
            candidates = [n for n, d in names.items() if d.kind in (kind, "TrainingCluster")]
            close = difflib.get_close_matches(target, candidates, n=1, cutoff=0.5)
            hint = (
                f"did you mean {close[0]!r}?"
                if close
                else f"pass the file holding the {kind} too (archform validate a.yaml b.yaml)"
            )
            out.append(
                SpecProblem(
                    doc.file,
                    pos.line,
                    pos.column,
                    f"{field}: no document named {target!r} among the files given",
                    hint,
                    field,
                )
            )
        elif field == "training" and found.kind != "TrainingCluster":
            out.append(
                SpecProblem(
                    doc.file,
                    pos.line,
                    pos.column,
                    f"training: {target!r} is not a TrainingCluster but {_a(found.kind)}",
                    "name the TrainingCluster that produces the weights",
                    field,
                )
            )
        elif field == "inference" and found.kind == "Platform":
            out.append(
                SpecProblem(
                    doc.file,
                    pos.line,
                    pos.column,
                    f"inference: {target!r} is not an InferenceFleet but {_a(found.kind)}",
                    "name the InferenceFleet that serves the weights",
                    field,
                )
            )
        elif field == "inference" and found.model.kind == "InferenceFleet":
            out.extend(_check_registry_source(model, found))
    return out


def _check_platform_networks(
    model: Platform, names: dict[str, Document], order: dict[int, int]
) -> list[SpecProblem]:
    """No network one tier of a Platform creates may overlap one of the other tier's.

    The two tiers are one architecture, connected through the deployer's network, the
    registry and promotion (spec.networks: the routable ranges).
    """
    from archform.spec.networks import fleet_blocks, training_blocks

    train, fleet = names.get(model.training), names.get(model.inference)
    if train is None or fleet is None:
        return []
    if train.model.kind != "TrainingCluster" or fleet.model.kind != "InferenceFleet":
        return []  # reported by _check_platform
    owner: dict[int, Document] = {}
    a = [b for b in training_blocks(train.model, load_catalog()) if b.routable]
    b = [x for x in fleet_blocks(fleet.model) if x.routable and not x.external]
    owner.update({id(x): train for x in a})
    owner.update({id(x): fleet for x in b})

    def position(block: Any) -> tuple[int, ...]:
        doc = owner[id(block)]
        pos = doc.source.keys.get(tuple(block.field))
        return (0,) if pos is None else (1, order[id(doc)], pos.line, pos.column)

    out = []
    for first, second in overlap_pairs(a, b, position):
        first_doc, doc = owner[id(first)], owner[id(second)]
        written = first_doc.source.keys.get(tuple(first.field))
        at = f"{first_doc.file}:{written.line}" if written else "default"
        where = f"{at}, {first_doc.name}"
        message, hint = overlap_text(first, second, where)
        pos = doc.locate(second.field, prefer="value")
        path = format_path(second.field)
        out.append(
            SpecProblem(
                doc.file,
                pos.line,
                pos.column,
                f"{path}: platform {model.name}: {message}",
                hint,
                path,
            )
        )
    return out


def _check_registry_source(model: Platform, fleet_doc: Document) -> list[SpecProblem]:
    """The Platform's fleet must serve a version folder of the Platform's registry."""
    fleet = fleet_doc.model
    assert fleet.kind == "InferenceFleet"
    from archform.spec.provider import spec_of

    scheme = spec_of(model.registry.provider).registry_scheme
    if scheme is None:  # an unsupported registry provider is reported by spec.buildable
        return []
    registry = f"{scheme}://{model.registry.bucket}/{fleet.model.name}/"
    try:
        base, _ = split_source(fleet.model.source)
    except ValueError:  # no version folder: reported by spec.buildable
        return []
    if base == registry:
        return []
    pos = fleet_doc.locate(("model", "source"), prefer="value")
    return [
        SpecProblem(
            fleet_doc.file,
            pos.line,
            pos.column,
            f"model.source: platform {model.name} joins fleet {fleet.name}, which serves "
            f"{fleet.model.source!r}, not a version folder of the registry {registry}",
            f"set model.source to {registry}<version>/ (the version promoted last)",
            "model.source",
        )
    ]


def _kind_word(data: Any) -> str:
    if isinstance(data, list):
        return "a list"
    if isinstance(data, str):
        # never the text itself: a stray file (a key, a token) must not reach a CI log
        return f"plain text ({len(data):,} characters)"
    return type(data).__name__


def _a(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word
