"""GCP facts read by the cloud-neutral targets."""

from archform.render.targets.common.clouds import CloudFacts

FACTS = CloudFacts(
    name="gcp",
    pulumi_sdk=("pulumi-gcp", "10.2.0"),
    system_pool_instance="n2-standard-8",
    # [image tag unverified offline]
    cli_image="gcr.io/google.com/cloudsdktool/google-cloud-cli:502.0.0-slim",
    # gcloud's config directory, ~/.config/gcloud on Linux, "must be write-enabled"
    # (https://cloud.google.com/sdk/docs/configurations).
    cli_home_dirs=("~/.config/gcloud",),
    # Filestore BASIC_HDD/BASIC_SSD (the tier archform creates) speak NFSv3 only; NFSv4.1 is
    # for the zonal, regional and enterprise tiers
    # (cloud.google.com/filestore/docs/mounting-fileshares; service-tiers).
    nfs_mount_options="nfsvers=3,hard,timeo=600,retrans=2,_netdev",
    local_nvme_path="/mnt/localssd",
    # Managed Lustre: Cluster Toolkit managed-lustre module (install-managed-lustre-client.sh).
    lustre_packages=("lustre-client-modules-{kernel}", "lustre-client-utils"),
    object_uri="gs://{bucket}/{path}",
    # cluster-autoscaler cloudprovider/gce: GPULabel = "cloud.google.com/gke-accelerator", the
    # label GKE puts on nodes with guest accelerators (GKE runs its own autoscaler).
    autoscaler_gpu_label="cloud.google.com/gke-accelerator",
    autoscaler_gpu_label_by_platform=True,
    # GKE metadata server (Workload Identity): 169.254.169.254:80 and, with network
    # policy, 169.254.169.252:988
    # (https://cloud.google.com/kubernetes-engine/docs/how-to/workload-identity, "Network policy").
    identity_endpoints=(("169.254.169.254/32", 80), ("169.254.169.252/32", 988)),
    # The NCCL RoCE plugin (gIB) the RoCE GPU images ship under /usr/local/gib: its
    # environment script and library folder.
    roce_nccl_profile=("/usr/local/gib/scripts/set_nccl_env.sh", "/usr/local/gib/lib64"),
)
