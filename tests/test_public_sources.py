"""What users see cites public sources, never the project's internal reference notes.

Source, data files, templates, bundled blueprints, docs and README.md ship to users; the
domain notes the project was built from (shared/reference/*.md, the design documents, the
seed article) do not. A citation of those is a dead end for a user, so none may remain.
"""

from __future__ import annotations

import re
from pathlib import Path

from support import ROOT

SCANNED = ("src", "templates", "blueprints", "docs", "README.md")
SKIP_SUFFIXES = {".pyc", ".png", ".svg", ".gz", ".zip", ".whl", ".so"}

# Internal paths and document names that only exist in the project's private workspace.
INTERNAL = re.compile(
    r"/work/shared|\.\./shared|\bshared/(?:reference|design|seed)\b"
    r"|\bseed article\b"
    r"|\b(?:training-clusters|inference-fleets|validation-tooling|peer-generators"
    r"|peer-linters|style-anchors|rules-v1|blueprint-v1)\.md\b"
    r"|\brules-v1\b",
    re.IGNORECASE,
)


def internal_citations(paths: list[Path]) -> list[str]:
    """`path:line: text` for every line of the given files that cites an internal document."""
    hits: list[str] = []
    for path in paths:
        if path.suffix in SKIP_SUFFIXES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if INTERNAL.search(line):
                hits.append(f"{path}:{number}: {line.strip()}")
    return hits


def shipped_files() -> list[Path]:
    files: list[Path] = []
    for name in SCANNED:
        root = ROOT / name
        if root.is_file():
            files.append(root)
        else:
            files.extend(p for p in sorted(root.rglob("*")) if p.is_file())
    return files


def test_shipped_files_cite_no_internal_documents() -> None:
    files = shipped_files()
    assert len(files) > 100, "scan found too few files: wrong ROOT?"
    hits = internal_citations(files)
    assert not hits, "cite the public source (URL or paper) instead:\n" + "\n".join(hits)


def test_the_scan_catches_each_internal_citation_form(tmp_path: Path) -> None:
    bad = [
        "# see shared/reference/training-clusters.md s6",
        '"""Sources (reference/inference-fleets.md section 1)."""',
        "tdp_w: 700  # per training-clusters.md s6",
        "# the seed article's serving node",
        "See ../shared/design/style.md",
        "(mixed-precision Adam model states, rules-v1)",
        "checked in reference/validation-tooling.md section 3",
    ]
    good = [
        "# https://keda.sh/docs/2.16/reference/scaledobject-spec/#fallback",
        "# https://gateway-api.sigs.k8s.io/reference/spec/",
        'SCHEMA_ID = "https://archform.dev/schema/blueprint-v1.json"',
        "# shared storage (Lustre) for training data",
    ]
    for i, line in enumerate(bad):
        (tmp_path / f"bad{i}.py").write_text(f"x = 1\n{line}\n")
    for i, line in enumerate(good):
        (tmp_path / f"good{i}.yaml").write_text(f"{line}\n")
    hits = internal_citations(sorted(tmp_path.iterdir()))
    assert len(hits) == len(bad)
    assert all(":2: " in hit and "/bad" in hit for hit in hits)
