"""The slurm-plugins check: the plugins generated configs name, against the install path.

The bundled trees pass; a tree that asks for what its install cannot provide fails with the
plugin, the line that names it and the package or configure argument that is missing. The
distribution data (images.yaml distro.bookworm.plugins) is compared with the real Debian 12
package installed on this machine.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_paths, load_text
from archform.spec.images import load_images
from archform.spec.slurm import parse_version, plugins
from archform.verify.checks import slurm_plugins

TREES = ["aws-p5-efa-fsx", "azure-nd-h100-v5", "gcp-a3-mega-tcpxo", "onprem-h100-ib-lustre",
         "onprem-cpu-smoke", "platform-two-tier"]  # fmt: skip


def _write(tmp_path: Path, stem: str, change: dict[str, object] | None = None) -> Path:
    loaded = load_paths([support.BLUEPRINTS / f"{stem}.yaml"])
    if change:
        data = loaded.documents[0].model.model_dump(mode="json", exclude_none=True)
        data["scheduler"].update(change)
        loaded = load_text(json.dumps(data), f"{stem}.yaml")
    write_tree(tmp_path / stem, build_files(loaded))
    return tmp_path / stem


@pytest.mark.parametrize("stem", TREES)
def test_bundled_trees_name_only_provided_plugins(stem: str, tmp_path: Path) -> None:
    results = slurm_plugins.run(_write(tmp_path, stem))
    assert results and all(r.status == "passed" for r in results), results
    assert all("plugins named, all provided by the" in r.detail for r in results)


def test_nvml_autodetect_needs_nvml_on_the_build_host(tmp_path: Path) -> None:
    """A cloud controller boots plain Ubuntu (no CUDA): gpu/nvml would not be built there."""
    tree = _write(tmp_path, "aws-p5-efa-fsx", {"gres_autodetect": "nvml"})
    (result,) = slurm_plugins.run(tree)
    assert result.status == "failed"
    assert "gres.conf: AutoDetect=nvml needs gpu/nvml (gpu_nvml.so)" in result.detail
    assert "NVML headers on the build host" in result.detail


def test_named_plugins_follow_slurm_semantics() -> None:
    version = parse_version("24.11")
    files = {
        "slurm.conf": [[("MpiDefault", "none")], [("TaskPlugin", "task/cgroup,task/affinity")]],
        "cgroup.conf": [[("ConstrainCores", "yes")]],  # no CgroupPlugin: autodetect
        "gres.conf": [[("NodeName", "n1"), ("AutoDetect", "nvml"), ("Name", "gpu")]],
    }
    named = [(n.plugin, n.file) for n in plugins.named_plugins(files, version, "v2")]
    assert named == [
        ("task/cgroup", "slurm.conf"),
        ("task/affinity", "slurm.conf"),
        ("cgroup/v2", "cgroup.conf"),
        ("gpu/nvml", "gres.conf"),
    ]
    v1 = plugins.named_plugins({"cgroup.conf": [[("CgroupPlugin", "autodetect")]]}, version, "v1")
    assert [n.so for n in v1] == ["cgroup_v1.so"]


def test_build_provides_follows_the_dependency_table() -> None:
    version = parse_version("24.11.5")
    full = plugins.build_provides(version, plugins.build_packages(), nvml=False)
    assert {"cgroup/v2", "accounting_storage/mysql", "mpi/pmix", "auth/munge"} <= full
    assert "gpu/nvml" not in full and "auth/jwt" not in full  # never installed by archform
    no_dbus = plugins.build_provides(version, plugins.build_packages(["libdbus-1-dev"]), False)
    assert full - no_dbus == {"cgroup/v2"}
    no_pmix = plugins.build_provides(version, plugins.build_packages(), False, configure=[])
    assert "mpi/pmix" not in no_pmix and "cgroup/v2" in no_pmix


def test_bookworm_plugin_data_is_the_installed_debian_package() -> None:
    support.require_tool("dpkg-query")
    listed = subprocess.run(
        ["dpkg-query", "-L", "slurm-wlm-basic-plugins"], capture_output=True, text=True
    )
    if listed.returncode != 0:
        if support.REQUIRE_TOOLS:
            pytest.fail("ARCHFORM_REQUIRE_TOOLS=1 but slurm-wlm-basic-plugins is not installed")
        pytest.skip("slurm-wlm-basic-plugins (Debian 12) is not installed")
    shipped = {Path(line).name for line in listed.stdout.split() if line.endswith(".so")}
    data = {so for so, pkg in load_images().distro_plugins("bookworm").items()
            if pkg == "slurm-wlm-basic-plugins"}  # fmt: skip
    assert data <= shipped, data - shipped
    kinds = {so.rsplit("_", 1)[0] for so in data}
    assert {so for so in shipped if so.rsplit("_", 1)[0] in kinds} - data == set()
