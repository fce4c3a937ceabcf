"""The rule docs site: docs/rules/ is current with the rule docstrings and mkdocs builds it.

CI runs this file (it is part of the suite): a rule whose docstring changed without
`archform rules --write-docs docs/rules` fails `test_checked_in_pages_are_current`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from archform.cli.rules import write_rule_docs
from archform.lint.docs import GENERATED, rule_pages
from archform.lint.rule import load_rules
from support import REQUIRE_TOOLS, ROOT

DOCS = ROOT / "docs" / "rules"
FIX = "run `archform rules --write-docs docs/rules` and commit docs/rules/"


def stale_pages(folder: Path) -> list[str]:
    """Pages in FOLDER that differ from what the rules generate, are missing, or are extra."""
    want = rule_pages(load_rules())
    have = {p.name: p.read_text("utf-8") for p in folder.glob("*.md")}
    return sorted(
        name
        for name in want.keys() | have.keys()
        if want.get(name) != have.get(name) and (name in want or have[name].startswith(GENERATED))
    )


def test_checked_in_pages_are_current() -> None:
    assert stale_pages(DOCS) == [], FIX


def test_a_stale_page_is_detected(tmp_path: Path) -> None:
    shutil.copytree(DOCS, tmp_path / "rules")
    page = tmp_path / "rules" / "TRN001.md"
    page.write_text(page.read_text("utf-8").replace("## Why is this bad?", "## Why?"), "utf-8")
    (tmp_path / "rules" / "INF003.md").unlink()
    (tmp_path / "rules" / "XYZ999.md").write_text(GENERATED + "\n# gone\n", "utf-8")
    assert stale_pages(tmp_path / "rules") == ["INF003.md", "TRN001.md", "XYZ999.md"]


def test_every_rule_has_a_page_and_an_index_entry() -> None:
    index = (DOCS / "index.md").read_text("utf-8")
    for rule in load_rules():
        page = (DOCS / f"{rule.code}.md").read_text("utf-8")
        assert f"# {rule.code} {rule.name}" in page
        assert "## References" in page
        assert f"[{rule.code}]({rule.code}.md)" in index


def test_write_docs_writes_and_prunes(tmp_path: Path) -> None:
    out = tmp_path / "rules"
    out.mkdir()
    (out / "OLD001.md").write_text(GENERATED + "\n# a rule that was removed\n", "utf-8")
    (out / "notes.md").write_text("# hand-written, kept\n", "utf-8")
    message = write_rule_docs(out)
    assert "removed 1" in message
    assert stale_pages(out) == []
    assert (out / "notes.md").is_file()
    assert not (out / "OLD001.md").exists()


def _mkdocs(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        if REQUIRE_TOOLS:
            pytest.fail("ARCHFORM_REQUIRE_TOOLS=1 but mkdocs is not installed (dev extra)")
        pytest.skip("mkdocs is not installed (pip install -e '.[dev]')")
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_mkdocs_builds_strict(tmp_path: Path) -> None:
    run = _mkdocs(ROOT / "mkdocs.yml", tmp_path / "site")
    assert run.returncode == 0, run.stderr
    for rule in load_rules():
        html = (tmp_path / "site" / "rules" / rule.code / "index.html").read_text("utf-8")
        assert rule.name in html
    index = (tmp_path / "site" / "rules" / "index.html").read_text("utf-8")
    assert 'href="TRN001/"' in index or 'href="../TRN001/"' in index or "TRN001/" in index


def test_mkdocs_strict_fails_on_a_broken_link(tmp_path: Path) -> None:
    """The build test can fail: a page linking to a rule that has no page breaks --strict."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    page = tmp_path / "docs" / "rules" / "TRN001.md"
    page.write_text(page.read_text("utf-8") + "\nSee [TRN999](TRN999.md).\n", "utf-8")
    run = _mkdocs(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert run.returncode != 0
    assert "TRN999.md" in run.stderr
