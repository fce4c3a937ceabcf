"""The node image a cluster boots, and the group variables that follow from it.

The image table (archform/spec/data/images.yaml) says what the image ships; the roles keep
and version-check what is there and install the rest from the sources the table names.
"""

from __future__ import annotations

from archform.render.targets.common.clouds import cloud
from archform.spec.images import Image, default_image, load_images, slurm_install_method
from archform.spec.models.training import TrainingCluster
from archform.spec.provider import spec_of

# lustre-release tag built on-prem (LTS 2.15 branch, wiki.lustre.org/Lustre_2.15.7_Changelog).
# unverified: the tag spelling in github.com/lustre/lustre-release (2.15.7 vs v2_15_7).
LUSTRE_RELEASE_TAG = "2.15.7"


def lnet_networks(cluster: TrainingCluster) -> str:
    """The `networks=` option of the lnet module for the Lustre client.

    The blueprint's storage[].lnet values (one per LNet network, validated by the model), else
    o2ib on the InfiniBand fabric's first IPoIB interface, else tcp.
    """
    given = [s.lnet for s in cluster.storage if s.kind == "lustre" and s.lnet]
    if given:
        return ",".join(dict.fromkeys(given))
    return "o2ib(ib0)" if cluster.fabric.kind == "infiniband" else "tcp"


def cluster_image(cluster: TrainingCluster) -> Image:
    """The image the cluster's nodes boot: compute.image, which the model fills when unnamed.

    A model built in code with a Compute object (not loaded from data) may still carry None;
    the same choice (spec.images.default_image) then applies. The loader validated that an
    image fits (spec.images.image_problems), so one always does.
    """
    name = cluster.compute.image or default_image(cluster.model_dump(mode="json"))
    image = load_images().images.get(name or "")
    if image is None:  # pragma: no cover - the loader reports this as a blueprint error
        raise ValueError(f"{cluster.name}: no node image fits; validate the blueprint first")
    return image


def image_reference(cluster: TrainingCluster) -> str:
    """The provider's reference for the cluster's image (AMI parameter, family, URN)."""
    ref = cluster_image(cluster).providers.get(cluster.placement.provider)
    return ref or ""


def head_reference(cluster: TrainingCluster) -> str:
    """Controller and login nodes: plain Ubuntu of the node image's release on the provider."""
    codename = cluster_image(cluster).codename
    plain = {"jammy": "ubuntu-22.04", "noble": "ubuntu-24.04"}.get(codename or "", "ubuntu-22.04")
    return load_images().images[plain].providers.get(cluster.placement.provider) or ""


def _repo(name: str, codename: str | None) -> dict[str, str] | None:
    repo = load_images().repositories[name]
    suite = repo.suite(codename or "")
    if suite is None:
        return None
    return {"name": name, "uri": repo.uri, "suite": suite, "key": repo.key}


def _method(value: str) -> tuple[str, str | None]:
    kind, _, name = value.partition(":")
    return kind, (name or None)


def image_group_vars(cluster: TrainingCluster) -> list[tuple[str, object]]:
    """Group variables derived from the node image."""
    image = cluster_image(cluster)
    provider = cluster.placement.provider
    lustre_kind, lustre_repo = _method(image.lustre_method(provider))
    fabric_kind, fabric_repo = _method(image.fabric_method(cluster.fabric.kind))
    tcpxo = cluster.fabric.kind == "gpudirect_tcpxo"
    # LNet is bound only where the provider's Lustre is reached over LNet addresses (on-prem);
    # empty: the role leaves the client's LNet configuration alone.
    lnet = lnet_networks(cluster) if spec_of(provider).lnet else ""
    return [
        ("archform_image", image.id),
        ("archform_image_codename", image.codename or ""),
        ("slurm_install_method", slurm_install_method(image, cluster.scheduler.version)),
        # Preinstalled stacks are kept and version-checked, never installed a second time.
        ("image_driver", image.ships["driver"] or ""),
        ("image_dcgm", image.ships["dcgm"] or ""),
        ("image_cuda", image.ships["cuda"] or ""),
        ("image_efa_installer", image.ships["efa_installer"] or ""),
        ("image_doca_ofed", image.ships["doca_ofed"] or ""),
        ("image_lustre_client", image.ships["lustre_client"] or ""),
        # enroot's 98-nvidia.sh hook needs nvidia-container-cli; images without the toolkit get
        # it from NVIDIA's libnvidia-container repository (spec/data/containers.yaml).
        ("image_container_toolkit", image.ships["container_toolkit"] or ""),
        ("container_toolkit_repo", _repo("libnvidia-container", image.codename)),
        ("image_nccl_conf_kept", cloud(provider).keeps_image_nccl_conf and image.has("nccl")),
        ("fabric_stack_source", fabric_kind),
        ("fabric_tcpxo_repo", _repo("gpudirect-tcpxo", image.codename) if tcpxo else None),
        (
            "fabric_tcpxo_transport_repo",
            _repo("artifact-registry-transport", image.codename) if tcpxo else None,
        ),
        ("fabric_doca_source", fabric_repo or ""),
        ("lustre_client_method", lustre_kind),
        (
            "lustre_client_repo",
            _repo(lustre_repo, image.codename) if lustre_kind == "repo" and lustre_repo else None,
        ),
        (
            "lustre_client_packages",
            list(cloud(provider).lustre_packages) if lustre_kind == "repo" else [],
        ),
        ("lustre_release_tag", LUSTRE_RELEASE_TAG),
        ("lustre_lnet_networks", lnet),
    ]
