"""verify reuses results keyed by what a check reads and the tools it runs (verify.cache)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from archform.verify import Result
from archform.verify import cache as vc
from archform.verify.checks import ansible
from archform.verify.checks._projects import Project


@pytest.fixture(autouse=True)
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(vc.ENV, str(where))
    return where


def _tree(root: Path) -> Path:
    (root / "ansible" / "roles" / "slurm").mkdir(parents=True)
    (root / "ansible" / "site.yml").write_text("- hosts: all\n")
    (root / "ansible" / "roles" / "slurm" / "main.yml").write_text("- debug: {msg: hi}\n")
    return root


class Counter:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> list[Result]:
        self.calls += 1
        return [Result("demo", "ansible", "passed", f"run {self.calls}")]


def _run(folder: Path, compute: Counter, tools: tuple[str, ...] = ()) -> tuple[list[Result], bool]:
    with vc.enabled(True):
        return vc.cached("demo", folder, tools, compute)


def test_unchanged_inputs_are_a_hit(tmp_path: Path) -> None:
    tree, compute = _tree(tmp_path / "t"), Counter()
    first, hit1 = _run(tree, compute)
    second, hit2 = _run(tree, compute)
    assert (hit1, hit2, compute.calls) == (False, True, 1)
    assert second == first


def test_one_byte_change_is_a_miss(tmp_path: Path) -> None:
    tree, compute = _tree(tmp_path / "t"), Counter()
    _run(tree, compute)
    role = tree / "ansible" / "roles" / "slurm" / "main.yml"
    role.write_text(role.read_text().replace("hi", "ho"))
    _, hit = _run(tree, compute)
    assert (hit, compute.calls) == (False, 2)


def test_identical_tree_elsewhere_is_checked_once(tmp_path: Path) -> None:
    compute = Counter()
    _run(_tree(tmp_path / "a"), compute)
    _, hit = _run(_tree(tmp_path / "b"), compute)
    assert (hit, compute.calls) == (True, 1)


def test_tool_version_change_invalidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "fake-lint"
    tool.write_text("#!/bin/sh\necho 1.0\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    tree, compute = _tree(tmp_path / "t"), Counter()
    _run(tree, compute, ("fake-lint",))
    assert _run(tree, compute, ("fake-lint",))[1] is True
    tool.write_text("#!/bin/sh\necho 1.10\n")  # an upgrade: another executable
    _, hit = _run(tree, compute, ("fake-lint",))
    assert (hit, compute.calls) == (False, 2)


def test_corrupt_entry_is_ignored_and_replaced(tmp_path: Path, store: Path) -> None:
    tree, compute = _tree(tmp_path / "t"), Counter()
    _run(tree, compute)
    (entry,) = store.rglob("*.json")
    entry.write_text('{"format": 1, "results": [{"check": "demo"')
    results, hit = _run(tree, compute)
    assert (hit, compute.calls) == (False, 2)
    assert results[0].detail == "run 2"
    assert _run(tree, compute) == (results, True)


def test_nothing_is_reused_outside_an_enabled_run(tmp_path: Path, store: Path) -> None:
    tree, compute = _tree(tmp_path / "t"), Counter()
    vc.cached("demo", tree, (), compute)
    vc.cached("demo", tree, (), compute)
    assert compute.calls == 2 and not store.exists()


def test_a_check_that_raised_is_not_stored(tmp_path: Path, store: Path) -> None:
    tree = _tree(tmp_path / "t")
    with vc.enabled(True):
        vc.cached("demo", tree, (), lambda: [Result("demo", ".", "failed", "check raised X: y")])
    assert not list(store.rglob("*.json"))


def test_same_ansible_project_in_two_trees_runs_ansible_lint_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def fake(project: Project, collections: str) -> list[Result]:
        calls.append(project.label)
        return [Result("ansible", f"{project.label} (ansible-lint production)", "passed", "")]

    monkeypatch.setattr(ansible, "check_project", fake)
    a, b = _tree(tmp_path / "a" / "one"), _tree(tmp_path / "b" / "two")
    with vc.enabled(True):
        first = ansible._reused(Project(tmp_path / "a", a / "ansible", None), "/c")
        second = ansible._reused(Project(tmp_path / "b", b / "ansible", None), "/c")
    assert calls == ["one/ansible"]
    assert first[0].artifact == "one/ansible (ansible-lint production)"
    assert second[0].artifact == "two/ansible (ansible-lint production)"
