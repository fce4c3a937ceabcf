"""The paths check on archform's own generated trees: order and presence of what roles assert.

Every case is a bundled blueprint's generated tree, unchanged (must pass) or with one edit a
practitioner found in a real tree (must fail, naming the path, the task or file, and the host
kind). The expected providers are the vendors' facts in images.yaml and paths.yaml (sourced),
not archform's output.
"""

from __future__ import annotations

import json
import shutil
from functools import cache
from pathlib import Path

import pytest

import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_paths, load_text
from archform.spec.provided_paths import (
    load_provided_paths,
    parse_provided_paths,
    provided_paths_data,
)
from archform.verify import builtin_checks
from archform.verify.checks import paths

BUNDLED = [
    "gcp-a3-mega-tcpxo",
    "aws-p5-efa-fsx",
    "azure-nd-h100-v5",
    "onprem-h100-ib-lustre",
    "platform-two-tier",
    "onprem-cpu-smoke",
]


@cache
def _pristine(stem: str, base: Path) -> Path:
    out = base / "pristine" / stem
    write_tree(out, build_files(load_paths([support.BLUEPRINTS / f"{stem}.yaml"])))
    return out


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("paths")


def _edited(base: Path, stem: str, name: str, path: str, old: str, new: str) -> Path:
    tree = base / "edited" / name
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(_pristine(stem, base), tree, symlinks=True)
    target = tree / path
    text = target.read_text("utf-8")
    assert text.count(old) == 1, f"{old!r} must occur once in {path}"
    target.write_text(text.replace(old, new), "utf-8")
    return tree


def _failures(tree: Path) -> str:
    results = paths.run(tree)
    assert results, "the check applies to every Ansible project"
    return "; ".join(r.detail for r in results if r.status == "failed")


def test_paths_is_a_builtin_check_after_packages() -> None:
    names = [c.name for c in builtin_checks()]
    assert names.index("paths") == names.index("packages") + 1


@pytest.mark.parametrize("stem", BUNDLED)
def test_bundled_trees_provide_every_path_they_assert_or_name(stem: str, base: Path) -> None:
    results = paths.run(_pristine(stem, base))
    assert results and all(r.status == "passed" for r in results), [r.detail for r in results]
    assert all("paths provided on" in r.detail for r in results)


def test_tcpxo_plugin_asserted_before_the_fabric_role_installs_it_is_caught(base: Path) -> None:
    """b0c054e's a3-mega tree: the only installer was the first multi-node job's prolog."""
    tree = _pristine("gcp-a3-mega-tcpxo", base)
    role = (tree / "ansible/roles/fabric/tasks/gpudirect_tcpxo.yml").read_text()
    start = role.index("    - name: Install the FasTrak NCCL plugin")
    end = role.index("    - name: Check for the FasTrak NCCL plugin")
    edited = _edited(
        base,
        "gcp-a3-mega-tcpxo",
        "tcpxo",
        "ansible/roles/fabric/tasks/gpudirect_tcpxo.yml",
        role[start:end],
        "",
    )
    found = _failures(edited)
    assert (
        "gpudirect_tcpxo.yml: 'Require the FasTrak NCCL plugin' asserts "
        "/var/lib/tcpxo/lib64/nccl-env-profile.sh on compute nodes before anything provides it"
    ) in found


def test_efa_record_on_the_dlami_is_the_images_and_nowhere_else(base: Path) -> None:
    """The DLAMI ships the EFA installer's record (images.yaml paths, sourced); b0c054e stat-ed
    /opt/amazon/efa/share/doc/efa-installer-<version>, which the installer does not write."""
    edited = _edited(
        base,
        "aws-p5-efa-fsx",
        "efa-doc",
        "ansible/roles/fabric/tasks/efa_version.yml",
        "    path: /opt/amazon/efa_installed_packages\n",
        "    path: /opt/amazon/efa/share/doc/efa-installer-1.50.0\n",
    )
    assert (
        "'Require an EFA installer at least as new as {{ fabric_efa_minimum }}' asserts "
        "/opt/amazon/efa/share/doc/efa-installer-1.50.0 on compute nodes"
    ) in _failures(edited)


def test_efa_installer_provides_its_record_on_a_plain_ubuntu_image(base: Path) -> None:
    """On ubuntu-22.04 (no EFA on the image) the installer task writes the record (paths.yaml
    programs); without that task the assert has nothing before it."""
    text = (support.BLUEPRINTS / "aws-p5-efa-fsx.yaml").read_text()
    text = text.replace(
        "  instance_type: p5.48xlarge\n", "  instance_type: p5.48xlarge\n  image: ubuntu-22.04\n"
    )
    tree = base / "efa-ubuntu"
    shutil.rmtree(tree, ignore_errors=True)
    write_tree(tree, build_files(load_text(text, "aws-ubuntu.yaml")))
    assert _failures(tree) == ""
    role = tree / "ansible/roles/fabric/tasks/efa.yml"
    body = role.read_text()
    start = body.index("    - name: Run the EFA installer")
    end = body.index("    - name: Read the EFA installer version it recorded")
    role.write_text(body[:start] + body[end:])
    assert "asserts /opt/amazon/efa_installed_packages on compute nodes before anything" in (
        _failures(tree)
    )


def test_enroot_temp_path_must_be_made_by_enroot(base: Path) -> None:
    """enroot creates only its runtime, cache and data paths (enroot.in: mkdir -p); b0c054e's
    per-user .../tmp was made by nothing, so every `enroot import` failed in mktemp."""
    edited = _edited(
        base,
        "gcp-a3-mega-tcpxo",
        "enroot-tmp",
        "ansible/roles/pyxis_enroot/files/enroot.conf",
        "ENROOT_TEMP_PATH /mnt/localssd/enroot/${UID}\n",
        "ENROOT_TEMP_PATH /mnt/localssd/enroot/${UID}/tmp\n",
    )
    assert "ENROOT_TEMP_PATH /mnt/localssd/enroot/${UID}/tmp: a per-user path" in _failures(edited)


def test_enroot_per_user_paths_need_the_shared_folder_made_by_root(base: Path) -> None:
    """enroot's mkdir -p runs as the job's user: the part before ${UID} must exist already."""
    role = "ansible/roles/local_nvme/tasks/nvme.yml"
    text = (_pristine("aws-p5-efa-fsx", base) / role).read_text()
    start = text.index("- name: Create the folders kept on local NVMe")
    end = text.index("- name: Create the mount paths of the blueprint's local NVMe entries")
    edited = _edited(base, "aws-p5-efa-fsx", "enroot-root", role, text[start:end], "")
    found = _failures(edited)
    assert (
        "ENROOT_RUNTIME_PATH /opt/dlami/nvme/enroot/${UID}/runtime: enroot creates it as the "
        "job's user, but nothing creates /opt/dlami/nvme/enroot on compute nodes" in found
    )


def test_plugstack_include_that_matches_nothing_is_caught(base: Path) -> None:
    """spank.c loads nothing, silently, from an include glob that matches nothing."""
    role = "ansible/roles/slurm/tasks/pyxis.yml"
    text = (_pristine("aws-p5-efa-fsx", base) / role).read_text()
    start = text.index("- name: Enable pyxis in Slurm's plugin stack")
    edited = _edited(base, "aws-p5-efa-fsx", "plugstack", role, text[start:], "")
    found = _failures(edited)
    assert "include /etc/slurm/plugstack.conf.d/*.conf: matches nothing on compute nodes" in found
    assert "matches nothing on login nodes" in found
    assert "on controller nodes" not in found  # slurmctld reads no plugin stack


@pytest.mark.parametrize(
    ("key", "kind"),
    [("TaskProlog", "compute"), ("Prolog", "compute"), ("HealthCheckProgram", "compute")],
)
def test_slurm_conf_programs_must_be_installed_where_slurmd_runs(
    key: str, kind: str, base: Path
) -> None:
    conf = "ansible/roles/slurm/files/slurm.conf"
    text = (_pristine("aws-p5-efa-fsx", base) / conf).read_text()
    [line] = [x for x in text.splitlines() if x.startswith(f"{key}=")]
    edited = _edited(
        base,
        "aws-p5-efa-fsx",
        f"conf-{key}",
        conf,
        line + "\n",
        f"{key}=/etc/slurm/missing-{key.lower()}\n",
    )
    found = _failures(edited)
    assert f"{key} /etc/slurm/missing-{key.lower()}: nothing provides it on {kind} nodes" in found
    assert found.count(f"missing-{key.lower()}") == 1  # only where slurmd runs it


def test_slurmd_creates_its_spool_folder_but_not_the_parents(base: Path) -> None:
    conf = "ansible/roles/slurm/files/slurm.conf"
    edited = _edited(
        base,
        "aws-p5-efa-fsx",
        "spool",
        conf,
        "SlurmdSpoolDir=/var/spool/slurmd\n",
        "SlurmdSpoolDir=/srv/nowhere/slurmd\n",
    )
    assert "SlurmdSpoolDir /srv/nowhere/slurmd: slurmd needs /srv/nowhere to exist" in (
        _failures(edited)
    )


def test_a_creates_path_the_image_already_ships_means_the_command_never_runs(
    base: Path,
) -> None:
    """A `creates:` on what the image ships skips the command on every fresh node."""
    role = "ansible/roles/health/tasks/main.yml"
    edited = _edited(
        base,
        "aws-p5-efa-fsx",
        "creates",
        role,
        "        creates: /usr/sbin/nhc\n",
        "        creates: /opt/amazon/efa/bin/fi_info\n",
    )
    found = _failures(edited)
    assert (
        "'Build and install NHC' never runs: its creates: /opt/amazon/efa/bin/fi_info is "
        "already there (image aws-dlami-base-oss-ubuntu-22.04)" in found
    )
    # ... and the slurm.conf HealthCheckProgram is then made by nothing.
    assert "HealthCheckProgram /usr/sbin/nhc: nothing provides it on compute nodes" in found


def test_every_provider_entry_has_a_public_source_and_the_loader_refuses_one_without() -> None:
    table = load_provided_paths()
    assert table.configs and table.programs and table.packages
    assert all(c.source.startswith("https://") for c in table.configs.values())
    assert all(p.source.startswith("https://") for p in table.programs)
    for field in ("configs", "programs", "packages", "modules"):
        data = json.loads(json.dumps(provided_paths_data()))
        entry = data[field]
        target = (
            entry
            if field == "modules"
            else (entry[0] if isinstance(entry, list) else next(iter(entry.values())))
        )
        target["source"] = "see our notes"
        with pytest.raises(ValueError, match="no public source URL"):
            parse_provided_paths(data)


def test_image_paths_name_their_source() -> None:
    from archform.spec.images import load_images

    images = load_images().images
    assert images["aws-dlami-base-oss-ubuntu-22.04"].paths
    for image in images.values():
        for path, source in image.paths.items():
            assert path.startswith("/") and source.startswith("https://"), (image.id, path)


@pytest.mark.parametrize(
    ("stem", "source", "provided"),
    [
        # The RDMA verbs devices exist where the fabric's driver is (kernel user_verbs docs).
        ("onprem-h100-ib-lustre", "/dev/infiniband", True),
        ("aws-p5-efa-fsx", "/dev/infiniband", True),  # EFA is an ib_core provider
        ("gcp-a3-mega-tcpxo", "/dev/infiniband", False),
        # The udev rule the fabric role installs makes the aperture folder at boot.
        ("gcp-a3-mega-tcpxo", "/dev/aperture_devices", True),
        ("aws-p5-efa-fsx", "/dev/aperture_devices", False),
    ],
)
def test_device_mounts_are_provided_by_the_fabric_driver_or_an_installed_udev_rule(
    stem: str, source: str, provided: bool, base: Path
) -> None:
    fstab = "ansible/roles/pyxis_enroot/files/nccl.fstab"
    first = "/etc/nccl.conf /etc/nccl.conf none"
    edited = _edited(
        base,
        stem,
        f"dev-{stem}-{source.rsplit('/', 1)[-1]}",
        fstab,
        first,
        f"{source} {source} none x-create=dir,bind,nofail 0 0\n{first}",
    )
    found = _failures(edited)
    assert (f"mount source {source}: nothing provides it on compute nodes" in found) is not (
        provided
    ), found


def test_slurm_plugins_on_compute_nodes_come_only_from_the_unpacked_build(base: Path) -> None:
    """Compute nodes get the built prefix by unpacking the controller's archive (paths.yaml
    archives): without that task, the plugin assertion has nothing before it."""
    role = "ansible/roles/slurm/tasks/install_build.yml"
    text = (_pristine("aws-p5-efa-fsx", base) / role).read_text()
    start = text.index("- name: Unpack the build into")
    end = text.index("- name: Put the built commands on PATH")
    found = _failures(_edited(base, "aws-p5-efa-fsx", "no-unpack", role, text[start:end], ""))
    assert "'Require every plugin the configuration names' asserts /opt/slurm/" in found
    assert "on compute nodes before anything provides it" in found


def test_a_creates_path_inside_an_installed_tree_still_runs(base: Path) -> None:
    """A folder provided whole (make install) is not proof that one file in it exists: the
    systemd units are copied from the build folder, `creates:` below the prefix still runs."""
    assert "never runs" not in _failures(_pristine("aws-p5-efa-fsx", base))
