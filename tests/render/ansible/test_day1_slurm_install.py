"""Day-1 findings of the source-built Slurm, on archform's own trees for the bundled GPU blueprints.

Every bundled GPU tree installs Slurm with `slurm_install_method: build`. Each test reads the
generated files as Ansible would run them (group_vars over role defaults, the tasks walked by
the packages check's walker) and checks one finding against SchedMD's and NVIDIA's sources:

- cgroup/v2 is built only `if WITH_DBUS` (src/plugins/cgroup/Makefile.am; configure only warns,
  auxdir/x_ac_cgroup.m4): the build must install libdbus-1-dev;
- accounting_storage/mysql only `if WITH_MYSQL` (mysql_config/mariadb_config,
  auxdir/x_ac_databases.m4): libmariadb-dev on trees with accounting;
- slurmdbd must be the built one, not the distribution's (Ubuntu 22.04: 21.08) beside it;
- pyxis must be compiled after Slurm against the built prefix's include/ (SPANK plugins of
  another major.minor are refused: src/common/plugin.c plugin_peek()), without the
  distribution's libslurm-dev, and rebuilt when the Slurm version changes;
- with AccountingStorageEnforce=associations and no scheduler.accounts, some account must
  hold the cluster's users, or every non-root job is rejected.
(SchedMD/slurm at slurm-24-11-5-1; NVIDIA/pyxis v0.20.0.)
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_paths
from archform.spec.images import load_images
from archform.verify.checks.packages import _load, _Project, _render

GPU = ["aws-p5-efa-fsx", "azure-nd-h100-v5", "gcp-a3-mega-tcpxo", "onprem-h100-ib-lustre"]
ACCOUNTING = ["aws-p5-efa-fsx", "onprem-h100-ib-lustre"]
NO_ACCOUNTS = ["aws-p5-efa-fsx"]  # accounting: true, accounts: [] (the finding)


@cache
def _tree(stem: str, base: Path) -> Path:
    out = base / stem
    write_tree(out, build_files(load_paths([support.BLUEPRINTS / f"{stem}.yaml"])))
    return out / "ansible"


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("day1-slurm")


def _vars(ansible: Path) -> dict[str, Any]:
    """Role defaults of the slurm role under group_vars (Ansible's precedence)."""
    defaults = _load(ansible / "roles" / "slurm" / "defaults" / "main.yml") or {}
    return {**defaults, **(_load(ansible / "group_vars" / "all.yml") or {})}


def _installs(ansible: Path) -> list[tuple[str, str]]:
    """(task file: task name, package) of every apt install site.yml runs on this image."""
    gv = _load(ansible / "group_vars" / "all.yml") or {}
    table = load_images()
    project = _Project(ansible, table, table.images[gv["archform_image"]], gv)
    project.run_playbook("site.yml")
    return [(where, package) for where, _written, package in project.walk.installs]


def _build_packages(ansible: Path) -> list[str]:
    variables = _vars(ansible)
    assert variables["slurm_install_method"] == "build"
    return [str(p) for p in _render(variables["slurm_build_packages"], variables)]


@pytest.mark.parametrize("stem", GPU)
def test_build_installs_dbus_headers_so_cgroup_v2_is_built(stem: str, trees: Path) -> None:
    ansible = _tree(stem, trees)
    cgroup = (ansible / "roles/slurm/files/cgroup.conf").read_text()
    assert "CgroupPlugin=autodetect" in cgroup  # resolves to cgroup/v2 on the Ubuntu images
    assert "libdbus-1-dev" in _build_packages(ansible)


@pytest.mark.parametrize("stem", ACCOUNTING)
def test_build_installs_mariadb_client_headers_for_accounting_storage_mysql(
    stem: str, trees: Path
) -> None:
    ansible = _tree(stem, trees)
    dbd = (ansible / "roles/slurm/templates/slurmdbd.conf.j2").read_text()
    assert "StorageType=accounting_storage/mysql" in dbd
    assert "libmariadb-dev" in _build_packages(ansible)


@pytest.mark.parametrize("stem", ACCOUNTING)
def test_no_distribution_slurmdbd_beside_the_built_slurm(stem: str, trees: Path) -> None:
    ansible = _tree(stem, trees)
    installed = {package for _where, package in _installs(ansible)}
    assert "mariadb-server" in installed
    assert not installed & {"slurmdbd", "slurmctld", "slurmd", "slurm-client"}, installed


def _pyxis_builds(ansible: Path) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(ansible.glob("roles/*/tasks/*.yml")):
        stack = list(_load(path) or [])
        while stack:
            task = stack.pop(0)
            for key in ("block", "rescue", "always"):
                stack += task.get(key) or []
            for module in ("ansible.builtin.command", "ansible.builtin.shell"):
                args = task.get(module)
                if isinstance(args, dict) and "pyxis" in str(args.get("chdir", "")):
                    found.append((path.relative_to(ansible).as_posix(), task))
    return found


@pytest.mark.parametrize("stem", GPU)
def test_pyxis_is_built_after_slurm_against_the_built_prefix(stem: str, trees: Path) -> None:
    ansible = _tree(stem, trees)
    variables = _vars(ansible)
    prefix = _render(variables["slurm_build_prefix"], variables)
    libslurm = [where for where, package in _installs(ansible) if package == "libslurm-dev"]
    assert not libslurm, f"the distribution's Slurm headers are installed: {libslurm}"
    builds = _pyxis_builds(ansible)
    assert builds, "no task compiles pyxis"
    main = (ansible / "roles/slurm/tasks/main.yml").read_text()
    for where, task in builds:
        # In the slurm role, included after the install step (site.yml runs pyxis_enroot first).
        assert where.startswith("roles/slurm/tasks/"), where
        assert main.index(Path(where).name) > main.index("install_{{ slurm_install_method }}")
        text = (ansible / where).read_text()
        include = re.search(r"slurm_pyxis_include: \"(.*)\"", text)
        assert include is not None
        flags = str((task.get("environment") or {}).get("CPPFLAGS", ""))
        rendered = _render(
            flags, {**variables, "slurm_pyxis_include": _render(include.group(1), variables)}
        )
        assert rendered == f"-I{prefix}/include", rendered
        # Rebuilt when the Slurm version changes: the creates: marker is named after it.
        creates = str(task[next(k for k in task if k.endswith(("command", "shell")))]["creates"])
        assert creates == "{{ slurm_pyxis_marker }}"
        assert "slurm_installed.stdout" in text.split("slurm_pyxis_marker:")[1].split("\n- ")[0]


@pytest.mark.parametrize("stem", NO_ACCOUNTS)
def test_enforced_accounting_without_accounts_gets_an_account_for_the_users(
    stem: str, trees: Path
) -> None:
    ansible = _tree(stem, trees)
    conf = (ansible / "roles/slurm/files/slurm.conf").read_text()
    assert "AccountingStorageEnforce=associations" in conf
    accounts = _vars(ansible)["slurm_accounts"]
    assert accounts, "no account: every non-root job is rejected (Invalid account)"
    assert [a["name"] for a in accounts if a["local_users"]] == ["default"]
    tasks = (ansible / "roles/slurm/tasks/accounts.yml").read_text()
    assert "database: passwd" in tasks and "int >= 1000" in tasks
