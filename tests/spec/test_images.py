"""Node images as data: every row sourced, the chosen image provides what the blueprint needs.

Expected values come from the vendors' published files, not from the code under test:
- Ubuntu 22.04 ships slurm-wlm 21.08.5 (packages.ubuntu.com/jammy/slurm-wlm), Ubuntu 24.04
  ships 23.11.4 (packages.ubuntu.com/noble/slurm-wlm), Debian 12 ships 22.05.8
  (packages.debian.org/bookworm/slurm-wlm): any other version must be built.
- Google's Managed Lustre client exists for Ubuntu 22.04 and Rocky 8 only (Cluster Toolkit,
  modules/file-system/managed-lustre/scripts/install-managed-lustre-client.sh).
- The Azure HPC image carries the AMLFS Lustre client and DOCA-OFED (Azure/azhpc-images
  versions.json); the AWS Base OSS DLAMI carries the driver and the EFA installer.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import support
from archform.cli._app import build
from archform.render.generate import build_files
from archform.spec import SpecError, TrainingCluster, load_paths, load_text
from archform.spec.images import load_images

TABLE = load_images()


def _training(path: Path) -> list[TrainingCluster]:
    return [d.model for d in load_paths([path]).documents if isinstance(d.model, TrainingCluster)]


class _AnsibleLoader(yaml.SafeLoader):
    """Reads Ansible's `!unsafe` strings (literal text, never templated) as plain strings."""


_AnsibleLoader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _vars_of(files: dict[str, bytes]) -> dict[str, Any]:
    [key] = [k for k in files if k.endswith("ansible/group_vars/all.yml")]
    data: dict[str, Any] = yaml.load(files[key], Loader=_AnsibleLoader)
    return data


def _group_vars(path: Path) -> dict[str, Any]:
    bs = load_paths([path])
    return _vars_of({f.path: f.content for f in build_files(bs)})


def test_every_row_and_repository_names_a_vendor_source() -> None:
    for image in TABLE.images.values():
        assert image.source.startswith("https://"), image.id
        assert "shared" not in image.source
    for repo in TABLE.repositories.values():
        assert repo.source.startswith("https://"), repo.name
    for codename, distro in TABLE.distro.items():
        assert str(distro["source"]).startswith("https://"), codename


def test_every_repo_reference_and_default_resolves() -> None:
    for image in TABLE.images.values():
        for method in [*image.fabrics.values(), *image.lustre.values()]:
            kind, _, name = method.partition(":")
            assert kind in {"image", "repo", "installer", "none", "unavailable", "build"}, method
            if kind == "repo":
                assert name in TABLE.repositories, (image.id, name)
        if image.archform_roles:
            assert image.codename in TABLE.distro, image.id
    for provider, ids in TABLE.defaults.items():
        for key in ids:
            assert provider in TABLE.images[key].providers, (provider, key)


def test_distro_slurm_versions_are_the_published_ones() -> None:
    assert TABLE.distro_slurm("jammy") == "21.08.5"
    assert TABLE.distro_slurm("noble") == "23.11.4"
    assert TABLE.distro_slurm("bookworm") == "22.05.8"


@pytest.mark.parametrize("path", support.bundled_blueprints(), ids=lambda p: p.stem)
def test_bundled_training_blueprints_name_an_image_that_provides_everything(path: Path) -> None:
    clusters = _training(path)
    if not clusters:
        pytest.skip("no training cluster")
    cluster = clusters[0]
    gv = _group_vars(path)
    image = TABLE.images[gv["archform_image"]]
    provider = cluster.placement.provider
    assert provider in image.providers and image.archform_roles
    # Slurm: the image's archive ships exactly this major.minor, or it is built.
    shipped = TABLE.distro_slurm(image.codename) or ""
    same = shipped.split(".")[:2] == cluster.scheduler.version.split(".")[:2]
    assert gv["slurm_install_method"] == ("distro" if same else "build")
    # Driver: preinstalled (checked) or installed from NVIDIA's CUDA repository.
    gpu = any(g.gpu for g in cluster.compute.groups)
    if gpu and not image.has("driver"):
        assert "nvidia-driver-*" in TABLE.repositories["cuda"].provides
    # Fabric stack and Lustre client have a source on this image.
    assert image.fabric_method(cluster.fabric.kind) != "unavailable"
    if any(s.kind == "lustre" for s in cluster.storage):
        method = image.lustre_method(provider)
        assert method != "unavailable"
        assert gv["lustre_client_method"] == method.partition(":")[0]


@pytest.mark.parametrize(
    ("stem", "image", "method"),
    [
        ("aws-p5-efa-fsx", "aws-dlami-base-oss-ubuntu-22.04", "build"),  # 24.05 vs 21.08.5
        ("azure-nd-h100-v5", "azure-hpc-ubuntu-22.04", "build"),  # no Slurm on the HPC image
        ("gcp-a3-mega-tcpxo", "gcp-ubuntu-accelerator-22.04", "build"),  # Lustre: jammy only
        ("onprem-h100-ib-lustre", "ubuntu-22.04", "build"),
        ("onprem-cpu-smoke", "debian-12", "distro"),  # Debian 12 ships 22.05
    ],
)
def test_default_images_per_bundled_blueprint(stem: str, image: str, method: str) -> None:
    gv = _group_vars(support.BLUEPRINTS / f"{stem}.yaml")
    assert (gv["archform_image"], gv["slurm_install_method"]) == (image, method)


def test_preinstalled_stacks_are_kept() -> None:
    azure = _group_vars(support.BLUEPRINTS / "azure-nd-h100-v5.yaml")
    assert azure["lustre_client_method"] == "image"
    assert azure["fabric_stack_source"] == "image"
    assert azure["image_doca_ofed"] and azure["image_driver"]
    aws = _group_vars(support.BLUEPRINTS / "aws-p5-efa-fsx.yaml")
    assert aws["image_efa_installer"] and aws["image_driver"]
    assert (
        aws["lustre_client_repo"]["uri"] == "https://fsx-lustre-client-repo.s3.amazonaws.com/ubuntu"
    )


def _with_image(stem: str, image: str, version: str | None = None) -> str:
    text = (support.BLUEPRINTS / f"{stem}.yaml").read_text()
    text = re.sub(r"(?m)^compute:\n", f"compute:\n  image: {image}\n", text, count=1)
    if version:
        text = re.sub(r'(?m)^  version: "[0-9.]+"', f'  version: "{version}"', text, count=1)
    return text


def _error(text: str) -> tuple[int, int, str]:
    with pytest.raises(SpecError) as info:
        load_text(text, "cluster.yaml")
    problem = info.value.problems[0]
    return problem.line, problem.column, problem.render()


def test_noble_ships_slurm_23_11_so_it_is_not_built() -> None:
    text = _with_image("onprem-h100-ib-lustre", "ubuntu-24.04", "23.11")
    bs = load_text(text, "cluster.yaml")
    gv = _vars_of({f.path: f.content for f in build_files(bs)})
    assert gv["slurm_install_method"] == "distro"


def test_managed_lustre_on_ubuntu_24_04_is_an_error_at_the_lustre_storage() -> None:
    text = _with_image("gcp-a3-mega-tcpxo", "ubuntu-24.04")
    line, col, rendered = _error(text)
    lines = text.splitlines()
    assert lines[line - 1].strip().startswith("kind: lustre"), rendered
    assert lines[line - 1][col - 1 :].startswith("lustre")
    assert "no Lustre client" in rendered and "gcp-ubuntu-accelerator-22.04" in rendered


def test_vendor_managed_image_is_an_error_at_compute_image() -> None:
    text = _with_image("gcp-a3-mega-tcpxo", "slurm-gcp-6-12-hpc-rocky-linux-8")
    line, col, rendered = _error(text)
    assert text.splitlines()[line - 1].strip() == "image: slurm-gcp-6-12-hpc-rocky-linux-8"
    assert rendered.startswith(f"cluster.yaml:{line}:{col}: error: compute.image:")
    assert "slurm-gcp" in rendered


@pytest.mark.parametrize(
    ("image", "words"),
    [("azure-hpc-ubuntu-22.04", "exists on azure, not on aws"), ("ubuntu-22.4", "unknown")],
)
def test_wrong_or_unknown_image_names_the_line(image: str, words: str) -> None:
    text = _with_image("aws-p5-efa-fsx", image)
    line, _col, rendered = _error(text)
    assert text.splitlines()[line - 1].strip() == f"image: {image}"
    assert words in rendered


def test_cli_exits_2_with_one_located_line(tmp_path: Path) -> None:
    bad = tmp_path / "cluster.yaml"
    bad.write_text(_with_image("gcp-a3-mega-tcpxo", "ubuntu-24.04"))
    result = support.run_cli(["validate", str(bad)])
    assert result.returncode == 2
    first = result.stderr.strip().splitlines()[0]
    assert re.match(rf"{re.escape(str(bad))}:\d+:\d+: error: storage\[0\]\.kind: ", first), first
    assert "Traceback" not in result.stderr


def _with_scheduler(extra: str, accounting: str = "true") -> str:
    text = (support.BLUEPRINTS / "onprem-h100-ib-lustre.yaml").read_text()
    text = text.replace("  accounting: true\n", f"  accounting: {accounting}\n")
    start, end = text.index("  qos:"), text.index("  containers: pyxis")
    return text[:start] + extra + text[end:]


def test_accounts_need_accounting() -> None:
    text = _with_scheduler("  accounts:\n    - {name: research, users: [alice]}\n", "false")
    line, _col, rendered = _error(text)
    assert text.splitlines()[line - 1].strip() == "accounts:"
    assert "accounts need Slurm accounting" in rendered


def test_accounts_must_name_defined_qos() -> None:
    text = _with_scheduler("  accounts:\n    - {name: research, users: [alice], qos: [gold]}\n")
    _line, _col, rendered = _error(text)
    assert "QOS 'gold', which is not defined" in rendered


def test_accounts_reach_the_controller_tasks() -> None:
    gv = _group_vars(support.BLUEPRINTS / "onprem-h100-ib-lustre.yaml")
    assert [a["name"] for a in gv["slurm_accounts"]] == ["pretrain", "research"]
    assert gv["slurm_accounts"][0]["unix_group"] == "ml-pretrain"
    assert gv["slurm_qos"][0] == {
        "name": "high",
        "priority": 100,
        "max_gpus_per_user": 64,
        "max_wall_hours": 72,
    }


def test_storage_of_the_wrong_shape_is_a_located_error_not_a_crash(tmp_path: Path) -> None:
    """Found by the value-mutation fuzzer: `storage: true` crashed the default image choice."""
    text = (support.BLUEPRINTS / "aws-p5-efa-fsx.yaml").read_text()
    start = text.index("\nstorage:\n")
    end = text.index("\nscheduler:")
    bp = tmp_path / "bp.yaml"
    bp.write_text(text[:start] + "\nstorage: true" + text[end:])
    result = CliRunner().invoke(build(["validate"]), ["validate", str(bp)])
    lines = result.output.splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and ": error: storage" in lines[0], lines


def test_every_image_writes_exactly_the_listed_components() -> None:
    # The raw rows, not the loaded table (which fills every listed component): a `ships` key
    # outside `components` would be dropped silently, a missing one read as "not shipped".
    from archform.spec.images import images_data

    data = images_data()
    listed = list(data["components"])
    assert len(set(listed)) == len(listed)
    for key, raw in data["images"].items():
        assert list(raw["ships"]) == listed, key
    # The EFA host stack's NCCL plugin is one of them (the DLAMI ships aws-ofi-nccl 1.21.1).
    assert TABLE.images["aws-dlami-base-oss-ubuntu-22.04"].ships["aws_ofi_nccl"] == "1.21.1"
