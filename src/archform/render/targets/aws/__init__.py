"""AWS: facts (facts.py) and the `pulumi-aws` training target (EC2 + EFA, FSx, EFS)."""
