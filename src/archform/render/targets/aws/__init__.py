"""AWS: the `pulumi-aws` training target (EC2 + EFA, FSx for Lustre, EFS)."""
