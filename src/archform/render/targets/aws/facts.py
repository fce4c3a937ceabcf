"""AWS facts read by the cloud-neutral targets."""

from archform.render.targets.common.clouds import CloudFacts

FACTS = CloudFacts(
    name="aws",
    pulumi_sdk=("pulumi-aws", "7.51.1"),
    system_pool_instance="m6i.xlarge",
    # [image tag unverified offline]
    cli_image="public.ecr.aws/aws-cli/aws-cli:2.22.35",
    # EFS recommended mount options
    # (docs.aws.amazon.com/efs/latest/ug/mounting-fs-nfs-mount-settings.html)
    nfs_mount_options=(
        "nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,_netdev"
    ),
    local_nvme_path="/opt/dlami/nvme",
    # FSx: as AWS ParallelCluster's cookbook installs them (_install_lustre_debian.rb).
    lustre_packages=("lustre-client-modules-{kernel}", "lustre-client-modules-aws"),
    object_uri="s3://{bucket}/{path}",
)
