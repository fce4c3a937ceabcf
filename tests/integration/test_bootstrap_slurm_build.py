"""The slurm role's build path for real: this (root, Debian) machine builds Slurm 24.11.5 from
Debian's copy of SchedMD's release tarball through the generated role (slurm_install_method:
build, a local tarball as the source), installs it into /opt/slurm/24.11.5, starts the built
slurmctld, slurmd and slurmdbd (with MariaDB, accounting on and AccountingStorageEnforce), and
runs `srun hostname` through them as root and as a non-root user of the default account.

The build uses the GENERATED role's package list (group_vars slurm_build_packages), and the role
checks every plugin the generated configs name (group_vars slurm_plugins: cgroup/v2,
accounting_storage/mysql, mpi/pmix, ...) after `make install`. The first case drops
libdbus-1-dev from that list (and from this machine): the role must stop naming cgroup/v2 and
the package, from configure's verdict in config.log, before compiling. This host mounts
cgroup v1, so cgroup_v2.so is proven built and found, not run
(slurmd loads cgroup/v1 here); a cgroup v2 slurmd only runs on the target image.

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
from archform.verify.checks.packages import _load
from integration.test_bootstrap import (
    _collections,
    _output,
    _require_root_debian,
    _run_site,
    _stop_daemons,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, *support.DAEMONS]

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


# A compile takes about 3-5 min on 2 idle cores, several times that on a shared machine.
BUILD_TIMEOUT = 3600
USER = "archform-ci-user"  # a non-root user: UID in 1000-59999, so in the default account
# Plugins the generated configs of this tree name whose build needs a dependency.
NEEDED = {"cgroup/v2": "cgroup_v2.so", "accounting_storage/mysql": "accounting_storage_mysql.so",
          "mpi/pmix": "mpi_pmix.so", "auth/munge": "auth_munge.so"}  # fmt: skip


def _project(tmp_path: Path, drop: str | None) -> Path:
    """The smoke blueprint at Slurm 24.11 with accounting (no accounts), generated."""
    tarball = _debian_tarball(tmp_path / "src")
    doc = load_paths([support.BLUEPRINTS / "onprem-cpu-smoke.yaml"]).documents[0].model
    data = doc.model_dump(mode="json", exclude_none=True)
    data["scheduler"]["version"] = "24.11"
    data["scheduler"]["accounting"] = True
    write_tree(tmp_path / "tree", build_files(load_text(json.dumps(data), "b.yaml")))
    project = tmp_path / "tree" / "ansible"
    path = project / "group_vars" / "all.yml"
    group_vars = _load(path)
    # The blueprint's image (debian-12) ships Slurm 22.05, not 24.11: the image table makes
    # archform choose the build path.
    assert group_vars["slurm_install_method"] == "build"
    assert group_vars["slurm_build_version"] == VERSION
    named = {p["plugin"]: p for p in group_vars["slurm_plugins"]}
    for plugin, so in NEEDED.items():
        assert named[plugin]["so"] == so, named
    assert {"libdbus-1-dev", "libmariadb-dev", "libpmix-dev"} <= set(
        group_vars["slurm_build_packages"]
    )
    text = path.read_text()
    if drop is not None:
        assert text.count(f'  - "{drop}"\n') == 1
        text = text.replace(f'  - "{drop}"\n', "")
    # Build from the local copy of Debian's tarball instead of the SchedMD URL (no network).
    path.write_text(text + f'slurm_build_source: "{tarball}"\n')
    return project


def _fresh_build() -> None:
    shutil.rmtree(PREFIX, ignore_errors=True)
    shutil.rmtree(f"/var/tmp/archform-slurm-build-{VERSION}", ignore_errors=True)
    shutil.rmtree(Path("/var/cache/archform/slurm"), ignore_errors=True)


def _stop_accounting() -> None:
    for daemon in ("slurmdbd", "mariadb"):
        subprocess.run(
            ["/usr/local/sbin/archform-service", "stop", daemon],
            check=False,
            timeout=120,
            capture_output=True,
        )


def test_role_names_the_plugin_and_package_a_dropped_dependency_leaves_out(
    tmp_path: Path,
) -> None:
    """Without libdbus-1-dev, configure only warns (WITH_DBUS off, cgroup/v2 left out of the
    build): the role reads that verdict from config.log and stops before compiling, naming the
    configuration line, the plugin, the conditional and the package."""
    _require_root_debian()
    collections = _collections()
    project = _project(tmp_path, drop="libdbus-1-dev")
    # The package must really be absent for configure to miss it (.ci/run installs it).
    subprocess.run(
        ["apt-get", "remove", "-y", "-qq", "libdbus-1-dev"], check=True, capture_output=True
    )
    _fresh_build()
    _stop_daemons()
    try:
        run = _run_site(project, tmp_path / "run1", collections, timeout=BUILD_TIMEOUT)
        out = _output(run)
        assert run.status == "failed", out[-4000:]
        build_dir = Path(f"/var/tmp/archform-slurm-build-{VERSION}")
        # configure really ran and really left dbus out; no compile was spent on it
        log = (build_dir / "config.log").read_text(errors="replace")
        assert "WITH_DBUS_TRUE='#'" in log.splitlines(), "configure found dbus-1 anyway"
        assert "WITH_MYSQL_TRUE=''" in log.splitlines()  # the other guards were found
        assert "Compile (about 3 min on 2 cores)" not in out
        assert not (PREFIX / "sbin" / "slurmctld").exists()
        assert (
            "cgroup.conf: CgroupPlugin=autodetect needs plugin cgroup/v2, but configure left it "
            f"out (WITH_DBUS off in {build_dir}/config.log; provided by: libdbus-1-dev"
        ) in " ".join(out.split()), out[-4000:]
    finally:
        _stop_daemons()
        _remove_links()
        shutil.rmtree(tmp_path / "home", ignore_errors=True)


def test_role_builds_slurm_24_11_with_accounting_and_runs_jobs(tmp_path: Path) -> None:
    _require_root_debian()
    collections = _collections()
    project = _project(tmp_path, drop=None)
    subprocess.run(["userdel", "-r", USER], check=False, capture_output=True)
    subprocess.run(["useradd", "-m", "-u", "2345", USER], check=True, capture_output=True)
    _fresh_build()
    _stop_daemons()
    _clear_state()
    try:
        run = _run_site(project, tmp_path / "run1", collections, timeout=BUILD_TIMEOUT)
        out = _output(run)
        assert run.status == "successful", out[-4000:]
        assert "Compile (about 3 min on 2 cores)" in out  # it really built
        # Every plugin the generated configs name, from the generated package list.
        for so in NEEDED.values():
            assert (PREFIX / "lib" / "slurm" / so).exists(), so
        assert "Require every plugin the configuration names" in out
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
        # A non-root user's job under AccountingStorageEnforce=associations,limits,qos: the
        # generated default account holds the local users.
        conf = (Path("/etc/slurm/slurm.conf")).read_text()
        assert "AccountingStorageEnforce=associations,limits,qos" in conf
        assocs = subprocess.run(
            ["/usr/local/bin/sacctmgr", "--noheader", "--parsable2", "show", "assoc",
             "format=account,user"],
            env=env, capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        assert f"default|{USER}" in assocs, assocs
        user_job = subprocess.run(
            ["runuser", "-u", USER, "--", "/usr/local/bin/srun", "--nodes=1", "--time=1",
             "hostname"],
            env=env, cwd="/tmp", capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert user_job.returncode == 0, user_job.stderr
        assert user_job.stdout.strip() == os.uname().nodename.split(".")[0]
        # The daemons that ran the job are the built ones, slurmdbd too.
        ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        assert "/usr/local/sbin/slurmctld" in ps and "/usr/local/sbin/slurmd" in ps, ps
        assert "/usr/local/sbin/slurmdbd" in ps, ps
    finally:
        _stop_daemons()
        _stop_accounting()
        subprocess.run(["userdel", "-r", USER], check=False, capture_output=True)
        _remove_links()
        _clear_state()
        shutil.rmtree(tmp_path / "home", ignore_errors=True)
