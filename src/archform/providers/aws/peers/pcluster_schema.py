"""AWS ParallelCluster 3's cluster-config keys, as data (facts, not code).

Read from aws/aws-parallelcluster cli/src/pcluster/schemas/cluster_schema.py and
common_schema.py at 451cc5320d5d8a9318075990ead7f76f74372f85 (3.11 line): every marshmallow
field binds to the PascalCase of its name (to_pascal_case) unless a data_key says otherwise
(Region, StorageType, Type). Each schema lists its keys; a key naming a nested schema maps
to it (a list of mappings where the config takes a list). Schemas archform does not map
are listed without children: their keys are not checked beyond the top one.

Unknown keys are refused the way pcluster's marshmallow schemas refuse them
(`Unknown field.`): https://docs.aws.amazon.com/parallelcluster/latest/ug/cluster-configuration-file-v3.html
"""

from __future__ import annotations

SOURCE = (
    "https://github.com/aws/aws-parallelcluster/blob/451cc5320d5d8a9318075990ead7f76f74372f85/"
    "cli/src/pcluster/schemas/cluster_schema.py"
)

# schema -> {key: child schema or None}
SCHEMAS: dict[str, dict[str, str | None]] = {
    "Cluster": {
        "LoginNodes": "LoginNodes",
        "Image": "Image",
        "HeadNode": "HeadNode",
        "Scheduling": "Scheduling",
        "SharedStorage": "SharedStorage",
        "Monitoring": None,
        "AdditionalPackages": None,
        "Tags": "Tag",
        "Iam": None,
        "DirectoryService": None,
        "Region": None,
        "Imds": None,
        "CustomS3Bucket": None,
        "AdditionalResources": None,
        "DevSettings": None,
        "DeploymentSettings": None,
    },
    "Image": {"Os": None, "CustomAmi": None},
    "HeadNode": {
        "InstanceType": None,
        "DisableSimultaneousMultithreading": None,
        "Networking": "HeadNodeNetworking",
        "Ssh": "HeadNodeSsh",
        "LocalStorage": None,
        "SharedStorageType": None,
        "Dcv": None,
        "CustomActions": None,
        "Iam": None,
        "Imds": None,
        "Image": None,
    },
    "HeadNodeNetworking": {
        "AdditionalSecurityGroups": None,
        "SecurityGroups": None,
        "SubnetId": None,
        "ElasticIp": None,
        "Proxy": None,
    },
    "HeadNodeSsh": {"KeyName": None, "AllowedIps": None},
    "LoginNodes": {"Pools": "LoginNodesPool"},
    "LoginNodesPool": {
        "Name": None,
        "InstanceType": None,
        "Image": None,
        "Networking": None,
        "Count": None,
        "Dcv": None,
        "Ssh": None,
        "CustomActions": None,
        "Iam": None,
        "GracetimePeriod": None,
    },
    "Scheduling": {
        "Scheduler": None,
        "ScalingStrategy": None,
        "SlurmSettings": "SlurmSettings",
        "SlurmQueues": "SlurmQueue",
        "AwsBatchQueues": None,
        "AwsBatchSettings": None,
    },
    "SlurmSettings": {
        "ScaledownIdletime": None,
        "Dns": None,
        "QueueUpdateStrategy": None,
        "EnableMemoryBasedScheduling": None,
        "Database": None,
        "CustomSlurmSettings": None,
        "CustomSlurmSettingsIncludeFile": None,
        "MungeKeySecretArn": None,
        "ExternalSlurmdbd": None,
    },
    "SlurmQueue": {
        "Name": None,
        "CapacityType": None,
        "ComputeSettings": None,
        "CustomActions": None,
        "Iam": None,
        "Image": None,
        "CapacityReservationTarget": "CapacityReservationTarget",
        "AllocationStrategy": None,
        "ComputeResources": "SlurmComputeResource",
        "Networking": "SlurmQueueNetworking",
        "HealthChecks": "HealthChecks",
        "CustomSlurmSettings": None,
        "Tags": "Tag",
        "JobExclusiveAllocation": None,
    },
    "SlurmQueueNetworking": {
        "AdditionalSecurityGroups": None,
        "SecurityGroups": None,
        "AssignPublicIp": None,
        "SubnetIds": None,
        "PlacementGroup": "PlacementGroup",
        "Proxy": None,
    },
    "SlurmComputeResource": {
        "Name": None,
        "InstanceType": None,
        "Instances": "InstanceTypeItem",
        "MaxCount": None,
        "MinCount": None,
        "SpotPrice": None,
        "Efa": "Efa",
        "DisableSimultaneousMultithreading": None,
        "SchedulableMemory": None,
        "CapacityReservationTarget": "CapacityReservationTarget",
        "Networking": "SlurmComputeResourceNetworking",
        "HealthChecks": "HealthChecks",
        "CustomSlurmSettings": None,
        "Tags": "Tag",
        "StaticNodePriority": None,
        "DynamicNodePriority": None,
    },
    "SlurmComputeResourceNetworking": {"PlacementGroup": "PlacementGroup"},
    "InstanceTypeItem": {"InstanceType": None},
    "PlacementGroup": {"Enabled": None, "Id": None, "Name": None},
    "Efa": {"Enabled": None, "GdrSupport": None},
    "CapacityReservationTarget": {
        "CapacityReservationId": None,
        "CapacityReservationResourceGroupArn": None,
    },
    "HealthChecks": {"Gpu": "GpuHealthCheck"},
    "GpuHealthCheck": {"Enabled": None},
    "Tag": {"Key": None, "Value": None},
    "SharedStorage": {
        "MountDir": None,
        "Name": None,
        "StorageType": None,
        "EbsSettings": "EbsSettings",
        "EfsSettings": "EfsSettings",
        "FsxLustreSettings": "FsxLustreSettings",
        "FsxOpenZfsSettings": "VolumeSettings",
        "FsxOntapSettings": "VolumeSettings",
        "FileCacheSettings": None,
    },
    "EbsSettings": {
        "VolumeType": None,
        "Iops": None,
        "Size": None,
        "KmsKeyId": None,
        "Throughput": None,
        "Encrypted": None,
        "SnapshotId": None,
        "VolumeId": None,
        "Raid": None,
        "DeletionPolicy": None,
    },
    "EfsSettings": {
        "Encrypted": None,
        "KmsKeyId": None,
        "PerformanceMode": None,
        "ThroughputMode": None,
        "ProvisionedThroughput": None,
        "FileSystemId": None,
        "DeletionPolicy": None,
        "AccessPointId": None,
        "EncryptionInTransit": None,
        "IamAuthorization": None,
    },
    "FsxLustreSettings": {
        "StorageCapacity": None,
        "DeploymentType": None,
        "ImportedFileChunkSize": None,
        "ExportPath": None,
        "ImportPath": None,
        "WeeklyMaintenanceStartTime": None,
        "AutomaticBackupRetentionDays": None,
        "CopyTagsToBackups": None,
        "DailyAutomaticBackupStartTime": None,
        "PerUnitStorageThroughput": None,
        "BackupId": None,
        "KmsKeyId": None,
        "FileSystemId": None,
        "AutoImportPolicy": None,
        "DriveCacheType": None,
        "DataCompressionType": None,
        "StorageType": None,
        "DeletionPolicy": None,
        "DataRepositoryAssociations": "DataRepositoryAssociation",
    },
    "DataRepositoryAssociation": {
        "Name": None,
        "BatchImportMetaDataOnCreate": None,
        "DataRepositoryPath": None,
        "FileSystemPath": None,
        "ImportedFileChunkSize": None,
        "AutoExportPolicy": None,
        "AutoImportPolicy": None,
    },
    "VolumeSettings": {"VolumeId": None},
}

# Keys whose value is a list of mappings of the child schema (the rest hold one mapping).
LISTS = frozenset(
    {
        "Tags",
        "SlurmQueues",
        "ComputeResources",
        "Instances",
        "SharedStorage",
        "Pools",
        "DataRepositoryAssociations",
    }
)

# validate.OneOf values of the fields archform reads.
CAPACITY_TYPES = ("ONDEMAND", "SPOT", "CAPACITY_BLOCK")  # pcluster.config.common.CapacityType
SCHEDULERS = ("slurm", "awsbatch")
STORAGE_TYPES = ("Ebs", "FsxLustre", "FsxOpenZfs", "FsxOntap", "Efs", "FileCache")
FSX_DEPLOYMENT_TYPES = ("SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2")

# Defaults (pcluster.constants and config/cluster_config.py at the same commit).
DEFAULT_MAX_COUNT = 10
DEFAULT_MIN_COUNT = 0
DEFAULT_ALLOWED_IPS = "0.0.0.0/0"  # CIDR_ALL_IPS, HeadNodeSsh.allowed_ips
DEFAULT_FSX_DEPLOYMENT = "SCRATCH_2"  # SharedFsxLustre, when no FileSystemId / BackupId
DEFAULT_EFS_ENCRYPTED = False  # SharedEfs.encrypted
DEFAULT_EBS_ENCRYPTED = True  # Ebs.encrypted
DEFAULT_EBS_SIZE_GIB = 40  # EBS_VOLUME_SIZE_DEFAULT, a shared EBS volume without Size

# marshmallow field types of the keys archform reads (fields.Int / Bool / Str / List), so a
# wrong type is the schema's own "Not a valid ..." error, never a value read as its default.
TYPES: dict[tuple[str, str], str] = {
    ("Cluster", "Region"): "string",
    ("HeadNode", "InstanceType"): "string",
    ("HeadNodeNetworking", "SubnetId"): "string",
    ("HeadNodeSsh", "AllowedIps"): "string",
    ("LoginNodesPool", "Count"): "integer",
    ("Scheduling", "Scheduler"): "string",
    ("SlurmQueue", "Name"): "string",
    ("SlurmQueue", "CapacityType"): "string",
    ("SlurmQueue", "JobExclusiveAllocation"): "boolean",
    ("SlurmQueueNetworking", "SubnetIds"): "list",
    ("SlurmComputeResource", "Name"): "string",
    ("SlurmComputeResource", "InstanceType"): "string",
    ("SlurmComputeResource", "MaxCount"): "integer",
    ("SlurmComputeResource", "MinCount"): "integer",
    ("InstanceTypeItem", "InstanceType"): "string",
    ("PlacementGroup", "Enabled"): "boolean",
    ("PlacementGroup", "Id"): "string",
    ("PlacementGroup", "Name"): "string",
    ("Efa", "Enabled"): "boolean",
    ("Efa", "GdrSupport"): "boolean",
    ("CapacityReservationTarget", "CapacityReservationId"): "string",
    ("GpuHealthCheck", "Enabled"): "boolean",
    ("Tag", "Key"): "string",
    ("Tag", "Value"): "string",
    ("SharedStorage", "MountDir"): "string",
    ("SharedStorage", "Name"): "string",
    ("SharedStorage", "StorageType"): "string",
    ("EbsSettings", "Size"): "integer",
    ("EbsSettings", "Encrypted"): "boolean",
    ("EfsSettings", "Encrypted"): "boolean",
    ("FsxLustreSettings", "StorageCapacity"): "integer",
    ("FsxLustreSettings", "DeploymentType"): "string",
    ("FsxLustreSettings", "PerUnitStorageThroughput"): "integer",
    ("FsxLustreSettings", "ImportPath"): "string",
    ("FsxLustreSettings", "FileSystemId"): "string",
    ("DataRepositoryAssociation", "DataRepositoryPath"): "string",
}
