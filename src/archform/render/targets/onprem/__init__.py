"""On-prem: no Pulumi target (the ansible target alone); the facts the shared targets read."""
