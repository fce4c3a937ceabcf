"""GCP: the `pulumi-gcp` training target (Compute Engine + GPUDirect, Managed Lustre, Filestore)."""
