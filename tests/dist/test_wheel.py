"""The wheel carries templates and blueprints; an installed copy renders without the source tree."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from support import ROOT, require_module


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_module("hatchling")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    (path,) = out.glob("archform-*.whl")
    return path


@pytest.mark.slow
def test_wheel_contains_templates_blueprints_and_catalog(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "archform/spec/data/catalog.yaml" in names
    blueprints = [
        n for n in names if n.startswith("archform/_bundled/blueprints/") and n.endswith(".yaml")
    ]
    assert len(blueprints) == len(list((ROOT / "blueprints").glob("*.yaml")))
    templates = [n for n in names if n.startswith("archform/_bundled/templates/")]
    source_templates = [p for p in (ROOT / "templates").rglob("*") if p.is_file()]
    assert len(templates) == len(source_templates)


@pytest.mark.slow
def test_installed_copy_inits_and_generates(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=str(site))
    code = (
        "import archform, archform.bundled as b; print(archform.__file__); "
        "print(b.templates_dir()); print(b.blueprints_dir())"
    )
    where = subprocess.run(
        [sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True, check=True
    )
    lines = where.stdout.splitlines()
    assert all(line.startswith(str(site)) for line in lines), lines
    for preset in ("onprem-cpu-smoke", "aws-p5-efa-fsx"):
        init = subprocess.run(
            [sys.executable, "-m", "archform", "init", "--preset", preset, "-o", f"{preset}.yaml"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
        )
        assert init.returncode == 0, init.stderr
        gen = subprocess.run(
            [sys.executable, "-m", "archform", "generate", f"{preset}.yaml", "-o", f"out-{preset}"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
        )
        assert gen.returncode == 0, gen.stderr
        assert (work / f"out-{preset}" / "resolved-blueprint.yaml").is_file()
