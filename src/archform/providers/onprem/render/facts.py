"""On-prem facts read by the cloud-neutral targets (Slurm clusters only)."""

from archform.render.targets.common.clouds import CloudFacts

FACTS = CloudFacts(
    name="onprem",
    pulumi_sdk=None,
    system_pool_instance=None,
    cli_image=None,
    nfs_mount_options="nfsvers=4.1,hard,timeo=600,retrans=2,_netdev",
    local_nvme_path="/mnt/local_nvme",
    # Built from lustre-release (client only) into .debs on the node.
    lustre_packages=(),
    object_uri=None,
)
