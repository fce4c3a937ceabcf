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
    # cluster-autoscaler cloudprovider/aws: GPULabel = "k8s.amazonaws.com/accelerator"; nodes
    # must carry it ("label nodes ... k8s.amazonaws.com/accelerator=<gpu-type>", its
    # cloudprovider/aws/README.md, kubernetes/autoscaler@b6e1991f7858b3a2c127aad2b16b3e19e5c0a72d).
    autoscaler_gpu_label="k8s.amazonaws.com/accelerator",
    autoscaler_gpu_label_by_platform=False,
    # EKS Pod Identity agent: 169.254.170.23, port 80
    # (https://docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html).
    identity_endpoints=(("169.254.170.23/32", 80),),
)
