"""Azure facts read by the cloud-neutral targets."""

from archform.render.targets.common.clouds import CloudFacts

FACTS = CloudFacts(
    name="azure",
    pulumi_sdk=("pulumi-azure-native", "3.29.0"),
    system_pool_instance="Standard_D8s_v5",
    # [image tag unverified offline]
    cli_image="mcr.microsoft.com/azure-cli:2.67.0",
    # az keeps its configuration and token cache in $AZURE_CONFIG_DIR, $HOME/.azure by default
    # (https://learn.microsoft.com/cli/azure/azure-cli-configuration).
    cli_home_dirs=("~/.azure",),
    nfs_mount_options="nfsvers=4.1,hard,timeo=600,retrans=2,_netdev",
    local_nvme_path="/mnt/nvme",
    # AMLFS: the DKMS client the Azure HPC image build installs (install_lustre_client.sh,
    # versions.json lustre 2.15.8-35-gdf4872c); built against the running kernel by DKMS.
    lustre_packages=(
        "lustre-client-2.15.8-35-gdf4872c",
        "amlfs-lustre-client-dkms-2.15.8-35-gdf4872c",
    ),
    object_uri="https://{bucket}.blob.core.windows.net/{path}",
    # cluster-autoscaler cloudprovider/azure: GPULabel = "kubernetes.azure.com/accelerator"; its
    # azure_template.go sets it (and the legacy `accelerator`) to "nvidia" for NVIDIA VM sizes,
    # and AKS runs that autoscaler itself (enable_auto_scaling on the agent pools).
    autoscaler_gpu_label="kubernetes.azure.com/accelerator",
    autoscaler_gpu_label_by_platform=True,
    # Azure Instance Metadata Service: `az login --identity` (kubelet identity) asks it for
    # tokens (https://learn.microsoft.com/azure/virtual-machines/instance-metadata-service);
    # workload identity tokens come from Entra ID over HTTPS.
    identity_endpoints=(("169.254.169.254/32", 80),),
    # The Azure HPC images ship an /etc/nccl.conf tuned for their InfiniBand topology; the
    # nccl role adds archform's lines to it instead of replacing it.
    keeps_image_nccl_conf=True,
    # The HPC images ship NCCL topology files for the ND-series VMs (catalog nccl_topo_file).
    nccl_topo_files=True,
    nccl_topo_var="fabric_azure_topo_file",
)
