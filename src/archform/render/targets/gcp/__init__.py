"""GCP: facts (facts.py) and the `pulumi-gcp` training target (GPUDirect, Lustre, Filestore)."""
