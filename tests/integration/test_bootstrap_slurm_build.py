"""The slurm role's build path for real: this (root, Debian) machine builds Slurm 24.11.5 from
Debian's copy of SchedMD's release tarball through the generated role (slurm_install_method:
build, a local tarball as the source), installs it into /opt/slurm/24.11.5, starts the built
slurmctld and slurmd, and runs `srun hostname` through them.

Run it under `flock /tmp/archform-system.lock`: it starts system daemons on localhost. It
removes /opt/slurm/24.11.5 first so the role really compiles (about 3 min on 2 idle cores),
and removes its /usr/local links and the 24.11 state (/var/spool/slurmctld, /var/spool/slurmd)
afterwards so the distribution's Slurm is what remains and can start.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_paths, load_text
from integration.test_bootstrap import (
    _collections,
    _output,
    _require_root_debian,
    _run_site,
    _stop_daemons,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.system]

VERSION = "24.11.5"
PREFIX = Path("/opt/slurm") / VERSION
LINKS = ("sbin/slurmctld", "sbin/slurmd", "sbin/slurmdbd", "bin/srun", "bin/sbatch", "bin/salloc",
         "bin/squeue", "bin/sinfo", "bin/scontrol", "bin/scancel", "bin/sacct", "bin/sacctmgr",
         "bin/sstat", "bin/sshare", "bin/sprio", "bin/sdiag")  # fmt: skip


def _debian_tarball(workdir: Path) -> Path:
    """slurm-wlm_24.11.5.orig.tar.gz (SchedMD's tarball) from Debian trixie's source archive."""
    support.require_tool("apt-get", "apt-cache")
    shows = subprocess.run(
        ["apt-cache", "showsrc", "slurm-wlm"], capture_output=True, text=True, check=False
    ).stdout
    debs = [w.split()[1] for w in shows.splitlines() if w.startswith(f"Version: {VERSION}-")]
    if not debs:
        reason = "no deb-src entry for trixie's slurm-wlm 24.11.5 (run scripts/build-slurm.sh)"
        if support.REQUIRE_TOOLS:
            pytest.fail(f"ARCHFORM_REQUIRE_TOOLS=1 but {reason}")
        pytest.skip(reason)
    workdir.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["apt-get", "source", "-qq", "--download-only", f"slurm-wlm={debs[0]}"],
        cwd=workdir,
        capture_output=True,
        check=False,
    )
    tarball = workdir / f"slurm-wlm_{VERSION}.orig.tar.gz"
    assert tarball.is_file(), f"apt-get source gave no {tarball.name}"
    return tarball


def _clear_state() -> None:
    """Controller and node state are versioned: 22.05 refuses what 24.11 saved."""
    for folder in (Path("/var/spool/slurmctld"), Path("/var/spool/slurmd")):
        if folder.is_dir():
            for entry in folder.iterdir():
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)


def _remove_links() -> None:
    for link in LINKS:
        path = Path("/usr/local") / link
        if path.is_symlink() and str(path.readlink()).startswith(str(PREFIX)):
            path.unlink()


def test_role_builds_slurm_24_11_on_the_controller_and_runs_a_job(tmp_path: Path) -> None:
    _require_root_debian()
    collections = _collections()
    tarball = _debian_tarball(tmp_path / "src")
    doc = load_paths([support.BLUEPRINTS / "onprem-cpu-smoke.yaml"]).documents[0].model
    data = doc.model_dump(mode="json", exclude_none=True)
    data["scheduler"]["version"] = "24.11"
    write_tree(tmp_path / "tree", build_files(load_text(json.dumps(data), "b.yaml")))
    project = tmp_path / "tree" / "ansible"
    group_vars = (project / "group_vars" / "all.yml").read_text()
    # The blueprint's image (debian-12) ships Slurm 22.05, not 24.11: the image table makes
    # archform choose the build path.
    assert 'slurm_install_method: "build"' in group_vars
    assert f"slurm_build_version: {VERSION}" in group_vars.replace('"', "")
    # Build from the local copy of Debian's tarball instead of the SchedMD URL (no network).
    (project / "group_vars" / "all.yml").write_text(
        group_vars + f'slurm_build_source: "{tarball}"\n'
    )
    shutil.rmtree(PREFIX, ignore_errors=True)
    shutil.rmtree(f"/var/tmp/archform-slurm-build-{VERSION}", ignore_errors=True)
    _stop_daemons()
    _clear_state()
    try:
        run = _run_site(project, tmp_path / "run1", collections)
        out = _output(run)
        assert run.status == "successful", out[-4000:]
        assert "Compile (about 3 min on 2 cores)" in out  # it really built
        version = subprocess.run(
            ["/usr/local/sbin/slurmctld", "-V"], capture_output=True, text=True, check=True
        )
        assert version.stdout.strip() == f"slurm {VERSION}"
        env = dict(os.environ, SLURM_CONF="/etc/slurm/slurm.conf")
        ping = subprocess.run(
            ["/usr/local/bin/scontrol", "--version"], capture_output=True, text=True, env=env
        )
        assert ping.stdout.strip() == f"slurm {VERSION}"
        job = subprocess.run(
            ["/usr/local/bin/srun", "--nodes=1", "--time=1", "hostname"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert job.returncode == 0, job.stderr
        assert job.stdout.strip() == os.uname().nodename.split(".")[0]
        # The daemons that ran the job are the built ones.
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        assert "/usr/local/sbin/slurmctld" in ps and "/usr/local/sbin/slurmd" in ps, ps
    finally:
        _stop_daemons()
        _remove_links()
        _clear_state()
        shutil.rmtree(tmp_path / "home", ignore_errors=True)
