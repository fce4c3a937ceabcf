"""The golden storage (support/goldens.py): each distinct file once, one-file diffs, no stale file.

The copy tests work in a throwaway copy of this checkout (a git repository of its own), change
what a maintainer would change, run the documented regenerate command there and read `git`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import support
from support import goldens

# A template every Ansible tree renders to the same bytes (checked below, not assumed).
SHARED_TEMPLATE = "templates/ansible/roles/munge/handlers/main.yml"
SHARED_OUTPUT = "ansible/roles/munge/handlers/main.yml"
REGENERATE = ["-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-m", "golden"]


def test_no_two_stored_golden_files_are_identical() -> None:
    files = goldens.stored_files()
    digests = [hashlib.sha256(data).hexdigest() for data in files.values()]
    assert len(files) > 100
    assert len(set(digests)) == len(digests)


def test_golden_storage_is_current() -> None:
    """Every manifest line has its stored file, every stored file a manifest line, every
    manifest a test that still exists; nothing else lies in tests/goldens."""
    problems = goldens.audit()
    assert not problems, "stale goldens (pytest -m golden --update-goldens):\n" + "\n".join(
        problems
    )


def test_the_golden_tests_cover_every_manifest() -> None:
    manifests = goldens.load_manifests()
    areas = {key.split("/", 1)[0] for key in manifests}
    assert areas == {"ansible", "diagram", "fleet", "platform", "pulumi", "pulumi-outputs"}
    stems = {p.stem for p in support.bundled_blueprints()}
    assert {k.split("/", 1)[1] for k in manifests if k.startswith("ansible/")} <= stems


# -- plan(): names stay where the bytes go --------------------------------------------------


def test_identical_files_in_several_trees_are_stored_once() -> None:
    staged = {
        "ansible/a": ("t[a]", {"roles/x.yml": b"same\n", "cfg": b"a\n"}),
        "ansible/b": ("t[b]", {"roles/x.yml": b"same\n", "cfg": b"b\n"}),
        "ansible/c": ("t[c]", {"roles/x.yml": b"same\n", "copy.yml": b"same\n"}),
    }
    manifests, files = goldens.plan({}, {}, staged)
    assert files == {
        "ansible/shared/roles/x.yml": b"same\n",
        "ansible/a/cfg": b"a\n",
        "ansible/b/cfg": b"b\n",
    }
    assert manifests["ansible/c"].entries == {
        "roles/x.yml": "ansible/shared/roles/x.yml",
        "copy.yml": "ansible/shared/roles/x.yml",
    }


def test_a_change_shared_by_every_tree_rewrites_one_stored_file_and_no_manifest() -> None:
    before = {f"ansible/{t}": ("n", {"roles/x.yml": b"v1\n", "cfg": t.encode()}) for t in "abcdef"}
    old, old_files = goldens.plan({}, {}, before)
    after = {k: (n, {**tree, "roles/x.yml": b"v2\n"}) for k, (n, tree) in before.items()}
    new, new_files = goldens.plan(old, old_files, after)
    assert new == old
    changed = {n for n in set(old_files) | set(new_files) if old_files.get(n) != new_files.get(n)}
    assert changed == {"ansible/shared/roles/x.yml"}


def test_one_tree_leaving_a_shared_file_gets_its_own_and_the_others_keep_the_name() -> None:
    before = {f"ansible/{t}": ("n", {"x.yml": b"v1\n"}) for t in "abc"}
    old, old_files = goldens.plan({}, {}, before)
    after = {**before, "ansible/b": ("n", {"x.yml": b"v2\n"})}
    new, new_files = goldens.plan(old, old_files, after)
    assert new_files == {"ansible/shared/x.yml": b"v1\n", "ansible/b/x.yml": b"v2\n"}
    assert new["ansible/a"] == old["ansible/a"]
    assert new["ansible/b"].entries == {"x.yml": "ansible/b/x.yml"}


def test_two_shared_variants_of_one_path_are_told_apart_by_a_number() -> None:
    staged = {
        "ansible/a": ("n", {"x.cfg": b"one\n"}),
        "ansible/b": ("n", {"x.cfg": b"one\n"}),
        "ansible/c": ("n", {"x.cfg": b"two\n"}),
        "ansible/d": ("n", {"x.cfg": b"two\n"}),
    }
    manifests, files = goldens.plan({}, {}, staged)
    assert files == {"ansible/shared/x.cfg": b"one\n", "ansible/shared/x~2.cfg": b"two\n"}
    assert manifests["ansible/d"].entries == {"x.cfg": "ansible/shared/x~2.cfg"}
    assert goldens.variant_name("ansible/shared/.gitignore", 3) == "ansible/shared/.gitignore~3"


def test_trees_not_staged_keep_their_manifest_and_dropped_ones_go() -> None:
    before = {"fleet/a": ("n[a]", {"x": b"a\n"}), "fleet/b": ("n[b]", {"x": b"b\n"})}
    old, old_files = goldens.plan({}, {}, before)
    new, files = goldens.plan(old, old_files, {"fleet/a": ("n[a]", {"x": b"a2\n"})})
    assert new["fleet/b"] == old["fleet/b"]
    assert files["fleet/b/x"] == b"b\n"
    new, files = goldens.plan(old, old_files, {}, drop=["fleet/b"])
    assert set(new) == {"fleet/a"}
    assert files == {"fleet/a/x": b"a\n"}


def test_a_bad_manifest_line_names_its_file_and_line() -> None:
    with pytest.raises(goldens.ManifestError, match=r"^m\.txt:3: expected '<generated path> -> "):
        goldens.parse_manifest("# test: t\na -> b\nno arrow here\n", "m.txt")
    with pytest.raises(goldens.ManifestError, match=r"^m\.txt:1: expected '# test: "):
        goldens.parse_manifest("a -> b\n", "m.txt")


# -- in a copy of the checkout ---------------------------------------------------------------


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def _python(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd / "src")}
    env.pop("PYTEST_CURRENT_TEST", None)
    env.pop(goldens.STAGING_ENV, None)
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """This checkout's files (as in the working tree) in a fresh git repository."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=support.ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    dest = tmp_path / "repo"
    for raw in listed:
        rel = raw.decode()
        source = support.ROOT / rel
        if rel and source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "copy")
    return dest


@pytest.mark.slow
def test_a_one_line_change_to_a_shared_template_is_a_one_file_golden_diff(copy: Path) -> None:
    manifests = goldens.load_manifests()
    users = {k for k, m in manifests.items() if m.entries.get(SHARED_OUTPUT)}
    names = {manifests[k].entries[SHARED_OUTPUT] for k in users}
    assert len(users) >= 5 and len(names) == 1, "the template must be shared by the trees"
    (stored,) = names

    template = copy / SHARED_TEMPLATE
    template.write_text(template.read_text() + "# one line a maintainer added\n")
    result = _python(copy, *REGENERATE, "--update-goldens", "tests/render/ansible")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    _git(copy, "add", "-A")
    changed = _git(copy, "diff", "--cached", "--name-only").split()
    assert changed == [SHARED_TEMPLATE, f"tests/goldens/files/{stored}"]
    stat = _git(copy, "diff", "--cached", "--stat", "--", "tests/goldens").splitlines()
    assert stat[-1].strip() == "1 file changed, 1 insertion(+)"
    assert (
        (copy / "tests/goldens/files" / stored)
        .read_bytes()
        .endswith(b"# one line a maintainer added\n")
    )


@pytest.mark.slow
def test_a_stale_golden_fails_the_golden_tests(copy: Path) -> None:
    store = copy / "tests/goldens/files"
    manifests = goldens.load_manifests(copy / "tests/goldens")
    one = manifests["ansible/aws-p5-efa-fsx"].entries[SHARED_OUTPUT]
    # 1. a stored file no manifest refers to; 2. a manifest line whose file is missing;
    # 3. an out-of-date golden (its bytes no longer what generate writes).
    (store / "ansible/shared/orphan.yml").write_text("left behind\n")
    missing = manifests["diagram"].entries["aws-p5-efa-fsx.dot"]
    (store / missing).unlink()
    (store / one).write_bytes((store / one).read_bytes() + b"# stale\n")

    problems = goldens.audit(copy / "tests/goldens")
    assert "tests/goldens/files/ansible/shared/orphan.yml: no manifest refers to it" in problems
    assert (
        f"tests/goldens/manifests/diagram.txt: aws-p5-efa-fsx.dot -> {missing}: no such stored file"
        in problems
    )
    run = _python(
        copy,
        "-m",
        "pytest",
        "-q",
        "-n",
        "0",
        "-p",
        "no:cacheprovider",
        "tests/test_golden_storage.py::test_golden_storage_is_current",
        "tests/render/ansible/test_ansible_target.py::test_golden_tree[aws-p5-efa-fsx]",
        "tests/diagram/test_diagram.py::test_goldens",
    )
    assert run.returncode == 1, run.stdout[-3000:]
    assert "3 failed" in run.stdout, run.stdout[-3000:]
    assert "-# stale" in run.stdout
    assert "orphan.yml: no manifest refers to it" in run.stdout

    # The regenerate command puts it right: the orphan goes, the missing file returns.
    fixed = _python(copy, *REGENERATE, "--update-goldens", "tests/render/ansible", "tests/diagram")
    assert fixed.returncode == 0, fixed.stdout[-3000:]
    assert goldens.audit(copy / "tests/goldens") == []
    _git(copy, "add", "-A")
    assert _git(copy, "diff", "--cached", "--name-only").split() == []
