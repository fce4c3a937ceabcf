"""Small quantitative models (allreduce, KV cache, Little's law) shared by lint and CLI."""
