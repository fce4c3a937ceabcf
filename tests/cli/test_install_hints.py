"""Install hints name the command that fits how archform was installed (archform.install).

The fresh-clone test (tests/distribution/test_fresh_clone.py) runs a pipx hint for real; the wheel
test runs a pip-from-wheel copy. These cover each kind's wording from real metadata files.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import PathDistribution
from pathlib import Path

import pytest

from archform import install
from support import ROOT

METADATA = """\
Metadata-Version: 2.4
Name: archform
Version: 1.2.3
Provides-Extra: aws
Requires-Dist: pulumi-aws<8,>=7; extra == 'aws'
Requires-Dist: pulumi<4,>=3.120; extra == 'aws'
Provides-Extra: ansible
Requires-Dist: ansible-core<2.20,>=2.16; extra == "ansible"
Provides-Extra: all
Requires-Dist: archform[ansible,aws]; extra == 'all'
Provides-Extra: checkov
Requires-Dist: checkov<4,>=3.2; extra == 'checkov'
Requires-Dist: pydantic<3,>=2.7
"""


def _dist(tmp_path: Path) -> PathDistribution:
    info = tmp_path / "archform-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(METADATA)
    return PathDistribution(info)


def test_extra_requirements_expand_nested_extras_from_metadata(tmp_path: Path) -> None:
    dist = _dist(tmp_path)
    assert install.extra_requirements("aws", dist) == ["pulumi-aws<8,>=7", "pulumi<4,>=3.120"]
    assert install.extra_requirements("all", dist) == [
        "ansible-core<2.20,>=2.16",
        "pulumi-aws<8,>=7",
        "pulumi<4,>=3.120",
    ]
    assert install.extra_requirements("nope", dist) == []


def test_pip_hints_use_the_interpreter_and_the_source_it_came_from(tmp_path: Path) -> None:
    wheel = tmp_path / "archform-1.2.3-py3-none-any.whl"
    wheel.write_bytes(b"")
    venv = tmp_path / "v"
    python = str(venv / "bin" / "python")
    index = install.Install("pip", python, venv)
    assert install.extra_hint("aws", install=index) == f"{python} -m pip install 'archform[aws]'"
    local = install.Install("pip", python, venv, url=wheel.as_uri())
    assert install.extra_hint("aws", "gcp", install=local) == (
        f"{python} -m pip install '{wheel}[aws,gcp]'"
    )
    gone = install.Install("pip", python, venv, url="git+https://example.org/archform@v1")
    assert install.extra_hint("aws", install=gone) == (
        f"{python} -m pip install 'archform[aws] @ git+https://example.org/archform@v1'"
    )


def test_clone_hints_use_dev_for_its_venv_and_pip_e_for_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARCHFORM_VENV", raising=False)
    monkeypatch.chdir(ROOT)
    dev = install.Install("clone", str(ROOT / ".venv/bin/python"), ROOT / ".venv", tree=ROOT)
    assert install.extra_hint("aws", install=dev) == "./dev install aws"
    assert install.checkov_hint(install=dev) == "./dev install checkov"
    assert install.collections_hint(install=dev) == "./dev install ansible"
    other = install.Install("clone", "/opt/v/bin/python", Path("/opt/v"), tree=ROOT)
    assert install.extra_hint("ansible", install=other) == (
        f"/opt/v/bin/python -m pip install -e '{ROOT}[ansible]'"
    )
    monkeypatch.chdir(tmp_path)
    assert install.extra_hint("aws", install=dev) == f"{ROOT}/dev install aws"


def test_detect_finds_pipx_by_its_metadata_file_and_a_clone_by_its_tree(tmp_path: Path) -> None:
    """The running copy is a clone (src/ of this repository); a pipx venv is recognised."""
    code = "import archform.install as i; d = i.detect(); print(d.kind, d.tree)"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.split() == ["clone", str(ROOT)]
    pipx_venv = tmp_path / "archform"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(pipx_venv)], check=True)
    (pipx_venv / install.PIPX_METADATA).write_text("{}")
    proc = subprocess.run(
        [str(pipx_venv / "bin" / "python"), "-c", code],
        env={"PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.stdout.split()[0] == "pipx", proc.stderr


def test_no_hint_in_the_code_names_a_bare_pip_install_of_archform() -> None:
    """Every install hint goes through archform.install (the issue: no such package existed)."""
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "src" / "archform").rglob("*.py")
        if "pip install 'archform" in p.read_text("utf-8") and p.name != "install.py"
    ]
    assert offenders == []
