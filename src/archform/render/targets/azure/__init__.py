"""Azure: facts (facts.py) and the `pulumi-azure` training target (scale sets + IB, AMLFS)."""
