"""The sdist and wheel a release builds: complete, versioned from the tag, usable outside the tree.

`python -m build` runs as CI and a release would: in an isolated environment (hatchling and
hatch-vcs from PyPI), sdist first, then the wheel from the unpacked sdist, on a fresh clone
tagged v1.2.3. `twine check` reads the metadata as PyPI would. The wheel is then installed
(with its dependencies, from PyPI) into a new virtual environment and run from a folder with
no source tree in reach.
"""

from __future__ import annotations

import email
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from distribution.venvs import clean_env, clone, ok, run, tag, venv
from support import ROOT

TAG = "v1.2.3"
VERSION = "1.2.3"
# archform's own data outside the Python package: shipped under archform/_bundled/.
BUNDLED = ("templates", "blueprints")
FLEET = "inference-h100-single-region"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("build")
    repo = clone(base / "clone")
    tag(repo, TAG)
    tools = venv(base / "tools", "build>=1.2", "twine>=5")
    out = base / "dist"
    ok(run([str(tools), "-m", "build", "--outdir", str(out), str(repo)], env=clean_env()))
    (wheel,) = out.glob("archform-*.whl")
    (sdist,) = out.glob("archform-*.tar.gz")
    return {"repo": repo, "tools": tools, "wheel": wheel, "sdist": sdist}


def _tree_files(root: Path, folder: str) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in (root / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _tracked(repo: Path) -> set[str]:
    listed = ok(run(["git", "-C", str(repo), "ls-files"])).stdout.splitlines()
    return set(listed)


@pytest.mark.slow
@pytest.mark.system
def test_build_names_the_tag_version_and_twine_accepts_the_metadata(
    built: dict[str, Path],
) -> None:
    assert built["wheel"].name == f"archform-{VERSION}-py3-none-any.whl"
    assert built["sdist"].name == f"archform-{VERSION}.tar.gz"
    check = run([str(built["tools"]), "-m", "twine", "check", "--strict", str(built["wheel"])])
    assert check.returncode == 0, check.stdout + check.stderr
    check = run([str(built["tools"]), "-m", "twine", "check", "--strict", str(built["sdist"])])
    assert check.returncode == 0, check.stdout + check.stderr
    with zipfile.ZipFile(built["wheel"]) as whl:
        meta = email.message_from_bytes(whl.read(f"archform-{VERSION}.dist-info/METADATA"))
        entry = whl.read(f"archform-{VERSION}.dist-info/entry_points.txt").decode()
        version_file = whl.read("archform/_version.py").decode()
    assert meta["Version"] == VERSION
    assert meta["Requires-Python"] == ">=3.11"
    extras = set(meta.get_all("Provides-Extra") or [])
    assert {"all", "aws", "gcp", "azure", "kubernetes", "ansible", "checkov"} <= extras
    requires = meta.get_all("Requires-Dist") or []
    assert any(r.startswith("pulumi-aws") and "extra == 'aws'" in r for r in requires), requires
    assert "archform = archform.cli:main" in entry
    assert VERSION in version_file


@pytest.mark.slow
@pytest.mark.system
def test_wheel_holds_every_template_blueprint_and_data_file(built: dict[str, Path]) -> None:
    repo = built["repo"]
    names = set(zipfile.ZipFile(built["wheel"]).namelist())
    for folder in BUNDLED:
        want = {f"archform/_bundled/{rel}" for rel in _tree_files(repo, folder)}
        assert want, folder
        assert want <= names, sorted(want - names)[:10]
        extra = {n for n in names if n.startswith(f"archform/_bundled/{folder}/")} - want
        assert not extra, sorted(extra)[:10]
    # every tracked file of the package (modules, the catalogs and fact tables under
    # spec/data/) is in the wheel at its package path
    package = {
        rel.removeprefix("src/") for rel in _tracked(repo) if rel.startswith("src/archform/")
    }
    assert {"archform/spec/data/catalog.yaml", "archform/spec/data/catalog.json"} <= package
    assert package <= names, sorted(package - names)[:10]


@pytest.mark.slow
@pytest.mark.system
def test_sdist_rebuilds_the_wheel_and_carries_changelog_and_scripts(
    built: dict[str, Path],
) -> None:
    with tarfile.open(built["sdist"]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
        pkg_info = sdist.extractfile(f"archform-{VERSION}/PKG-INFO")
        assert pkg_info is not None
        assert email.message_from_bytes(pkg_info.read())["Version"] == VERSION
    for rel in ("CHANGELOG.md", "README.md", "pyproject.toml", "dev"):
        assert rel in names, rel
    assert "scripts/vendor-collections.sh" in names
    for folder in BUNDLED:
        assert _tree_files(built["repo"], folder) <= names, folder


@pytest.mark.slow
@pytest.mark.system
def test_build_without_git_falls_back_to_a_placeholder_version(tmp_path: Path) -> None:
    """A source archive (no .git, no PKG-INFO) still builds, as version 0.0.0."""
    archive = tmp_path / "src.tar"
    ok(run(["git", "-C", str(ROOT), "archive", "-o", str(archive), "HEAD"]))
    tree = tmp_path / "tree"
    tree.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    tools = venv(tmp_path / "tools", "build>=1.2")
    out = tmp_path / "dist"
    env = clean_env(GIT_CEILING_DIRECTORIES=str(tmp_path))
    ok(run([str(tools), "-m", "build", "--wheel", "--outdir", str(out), str(tree)], env=env))
    assert [p.name for p in out.glob("*.whl")] == ["archform-0.0.0-py3-none-any.whl"]


@pytest.mark.slow
@pytest.mark.system
def test_wheel_in_a_fresh_venv_prints_the_tag_version_and_generates(
    built: dict[str, Path], tmp_path: Path
) -> None:
    python = venv(tmp_path / "venv", str(built["wheel"]))
    archform = python.parent / "archform"
    work = tmp_path / "work"  # no source tree above it, nothing on PYTHONPATH
    work.mkdir()
    env = clean_env()
    version = ok(run([str(archform), "--version"], cwd=work, env=env))
    assert version.stdout.strip() == f"archform {VERSION}"
    where = ok(
        run(
            [
                str(python),
                "-c",
                "import archform, archform.bundled as b, archform.install as i; "
                "print(archform.__file__); print(b.templates_dir()); print(i.detect().kind)",
            ],
            cwd=work,
            env=env,
        )
    )
    module, templates, kind = where.stdout.split()
    site = str(tmp_path / "venv")
    assert module.startswith(site) and templates.startswith(site), where.stdout
    assert kind == "pip"
    for preset in ("onprem-cpu-smoke", "aws-p5-efa-fsx"):
        ok(
            run(
                [str(archform), "init", "--preset", preset, "-o", f"{preset}.yaml"],
                cwd=work,
                env=env,
            )
        )
        ok(run([str(archform), "lint", f"{preset}.yaml"], cwd=work, env=env))
        ok(
            run(
                [str(archform), "generate", f"{preset}.yaml", "-o", f"out-{preset}"],
                cwd=work,
                env=env,
            )
        )
        assert (work / f"out-{preset}" / "resolved-blueprint.yaml").is_file()
    # the other commands a base install has: each runs from the wheel alone
    ok(run([str(archform), "init", "--preset", FLEET, "-o", "fleet.yaml"], cwd=work, env=env))
    for args in (
        ["validate", "aws-p5-efa-fsx.yaml", "fleet.yaml"],
        ["estimate", "fleet.yaml"],
        ["diff", "aws-p5-efa-fsx.yaml", "aws-p5-efa-fsx.yaml"],
        ["diagram", "aws-p5-efa-fsx.yaml", "--format", "mermaid"],
        ["schema"],
        ["rules"],
        ["rule", "TRN001"],
    ):
        out = ok(run([str(archform), *args], cwd=work, env=env))
        assert out.stdout.strip(), args
    # a hint from this copy names pip with this venv's interpreter and the wheel it came from
    plan = run([str(archform), "plan", "aws-p5-efa-fsx.yaml"], cwd=work, env=env)
    assert plan.returncode == 2, plan.stderr
    assert f"{python} -m pip install '{built['wheel']}[aws]'" in plan.stderr, plan.stderr


def test_source_tree_version_is_sane_without_a_build(tmp_path: Path) -> None:
    """Run from a source tree never built or installed: a placeholder version, not a crash."""
    import shutil

    shutil.copytree(
        ROOT / "src" / "archform",
        tmp_path / "src" / "archform",
        ignore=shutil.ignore_patterns("_version.py", "__pycache__"),
    )
    code = "import archform; print(archform.__version__)"
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code],  # -S: no site-packages, so no installed metadata
        env={"PYTHONPATH": str(tmp_path / "src")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0.0.0+unknown"
