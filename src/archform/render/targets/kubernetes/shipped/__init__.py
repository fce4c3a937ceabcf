"""Python that runs inside the model-server containers (shipped in a ConfigMap, not imported)."""
