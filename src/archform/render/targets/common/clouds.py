"""Per-cloud facts the cloud-neutral targets need, looked up by provider name.

Each provider has a folder beside this one (``targets/<provider>/``) whose ``facts.py``
defines ``FACTS``; `cloud()` imports it by name, so the shared code never imports a cloud
folder and a new cloud is a new folder (import-linter keeps the folders independent).
What differs in behaviour per cloud (IAM wiring, fetch scripts) still branches on the name
in kubernetes/ and fleet/; values live here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache


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

    def object_url(self, bucket: str, path: str) -> str:
        """The URI of `path` in `bucket` (a cloud with an object store)."""
        assert self.object_uri is not None, f"{self.name} has no object store"
        return self.object_uri.format(bucket=bucket, path=path)


PROVIDERS = ("aws", "azure", "gcp", "onprem")


@cache
def cloud(provider: str) -> CloudFacts:
    """The facts of one provider (its folder's facts.FACTS)."""
    if provider not in PROVIDERS:
        raise KeyError(f"no cloud folder for provider {provider!r}")
    module = importlib.import_module(f"archform.render.targets.{provider}.facts")
    facts = module.FACTS
    assert isinstance(facts, CloudFacts) and facts.name == provider
    return facts
