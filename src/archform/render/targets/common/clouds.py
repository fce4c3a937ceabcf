"""Per-provider facts the cloud-neutral targets need, looked up by provider name.

Each provider package (`archform/providers/<name>/`) has a `render` part whose `FACTS` is
a `CloudFacts`; `cloud()` asks the provider registry for it, so the shared code never
imports a provider package and a new provider is a new package. What differs in
behaviour per provider (Service exposure, weight copies) is the provider's fleet part
(`render.targets.fleet.provider`); values live here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from archform import providers


@dataclass(frozen=True, slots=True)
class CloudFacts:
    """Values that differ per provider (sources in each facts.py)."""

    name: str
    # The Pulumi provider SDK (package, version) the generated projects pin; None on-prem.
    pulumi_sdk: tuple[str, str] | None
    # Default node type of an inference fleet's system pool; None where there are no fleets.
    system_pool_instance: str | None
    # The cloud's CLI image, pinned, that copies model weights in-region.
    cli_image: str | None
    # NFS client mount options for the provider's managed NFS service.
    nfs_mount_options: str
    # Where instance-local NVMe is mounted on the provider's GPU images.
    local_nvme_path: str
    # Lustre client packages for images without a preinstalled client ({kernel}: the
    # running kernel release); empty where the client is built from source.
    lustre_packages: tuple[str, ...]
    # An object's URI in the provider's object store, from {bucket} and {path}
    # (s3://, gs://, Azure Blob https:// with the storage account as {bucket}).
    object_uri: str | None
    # The node label cluster-autoscaler reads to know a node has GPUs before the device
    # plugin reports them (`GPULabel` of its cloud provider), and whether the platform sets
    # it on GPU nodes itself (False: archform labels the GPU node pools); None on-prem.
    autoscaler_gpu_label: str | None = None
    autoscaler_gpu_label_by_platform: bool = False
    # Link-local endpoints pods reach for their cloud identity ((CIDR, TCP port), sources in
    # each facts.py): the fleet's NetworkPolicy allows egress to exactly these.
    identity_endpoints: tuple[tuple[str, int], ...] = ()
    # The image's own NCCL configuration is kept (the images tune NCCL for their fabric).
    keeps_image_nccl_conf: bool = False
    # The images ship an NCCL topology file per instance family (catalog nccl_topo_file):
    # NCCL_TOPO_FILE points at it and containers bind its folder.
    nccl_topo_files: bool = False
    # The Ansible group variable that names that topology file, written in every cluster's
    # group_vars ("" where the instance family has none) so a playbook may read it anywhere.
    nccl_topo_var: str | None = None
    # The environment script (and its library folder) of the provider's RoCE NCCL plugin,
    # which the NCCL profile sources when present; None: no such plugin.
    roce_nccl_profile: tuple[str, str] | None = None
    # Where the CLI of `cli_image` writes under its user's home directory (its config
    # directory, sources in each facts.py); empty: nowhere archform knows of.
    cli_home_dirs: tuple[str, ...] = ()

    def object_url(self, bucket: str, path: str) -> str:
        """The URI of `path` in `bucket` (a cloud with an object store)."""
        assert self.object_uri is not None, f"{self.name} has no object store"
        return self.object_uri.format(bucket=bucket, path=path)


def pulumi_sdks() -> dict[str, str]:
    """Provider name -> the Pulumi SDK package its generated projects pin (those with one)."""
    out = {}
    for name in providers.names():
        sdk = cloud(name).pulumi_sdk
        if sdk is not None:
            out[name] = sdk[0]
    return out


def nccl_topo_vars() -> tuple[str, ...]:
    """The NCCL topology file group variables of the providers that declare one."""
    return tuple(v for name in providers.names() if (v := cloud(name).nccl_topo_var))


def cli_home_dirs() -> tuple[str, ...]:
    """Every provider's CLI's folders under its home directory, in list order."""
    return tuple(d for name in providers.names() for d in cloud(name).cli_home_dirs)


@cache
def cloud(provider: str) -> CloudFacts:
    """The facts of one provider (its package's render.FACTS)."""
    facts = getattr(providers.part(provider, "render"), "FACTS", None)
    if not isinstance(facts, CloudFacts) or facts.name != provider:
        raise TypeError(f"archform/providers/{provider}/render must define FACTS: CloudFacts")
    return facts
