"""Small quantitative models (NCCL busbw, training step, KV cache, Little's law) for lint, CLI."""
