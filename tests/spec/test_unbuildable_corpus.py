"""Blueprints that used to load, lint clean and then fail only in `archform generate`
(one, fleet-gcp-no-accelerator, even generated: with the T4 accelerator name for any n1-
machine, whatever its GPU).

Each is refused by `archform validate` now, at the culprit's file:line:col with a hint
(the first line of the file says where: `# error-at: LINE:COL`), and `lint` and
`generate` refuse it the same way: the three commands agree.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from archform.render.generate import build_files
from archform.spec import SpecError, load_paths
from support import ROOT, run_cli

CORPUS_DIR = ROOT / "tests" / "spec" / "unbuildable"
CORPUS = sorted(CORPUS_DIR.glob("*.yaml"))


def _expected(path: Path) -> str:
    match = re.match(r"# error-at: (\d+:\d+)", path.read_text("utf-8"))
    assert match, f"{path.name}: first line must be '# error-at: LINE:COL'"
    return match.group(1)


def test_corpus_covers_every_check() -> None:
    assert len(CORPUS) >= 17


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_refused_at_load_with_position(path: Path) -> None:
    rel = path.relative_to(ROOT).as_posix()
    with pytest.raises(SpecError) as info:
        load_paths([rel])
    problems = info.value.problems
    assert len(problems) == 1, [p.render() for p in problems]
    first = problems[0]
    assert f"{first.line}:{first.column}" == _expected(path), first.render()
    assert first.hint, first.render()


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_validate_lint_and_generate_agree(path: Path, tmp_path: Path) -> None:
    rel = path.relative_to(ROOT).as_posix()
    want = f"{rel}:{_expected(path)}: error: "
    for command in (
        ["validate", rel],
        ["lint", rel],
        ["generate", rel, "-o", str(tmp_path / "out")],
    ):
        result = run_cli(command, cwd=ROOT)
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert result.stderr.startswith(want), (command, result.stderr)
        assert "(hint: " in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_the_same_blueprints_generate_once_fixed(tmp_path: Path) -> None:
    """The checks are not over-eager: the issue's example at the limit generates."""
    text = (CORPUS_DIR / "azure-nodes-400.yaml").read_text("utf-8").replace("400", "100")
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(text, "utf-8")
    files = build_files(load_paths([fixed]))
    assert any(f.path == "pulumi/settings.py" for f in files)
