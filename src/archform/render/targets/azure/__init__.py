"""Azure: the `pulumi-azure` training target (VM scale sets + InfiniBand, AMLFS, Azure Files)."""
