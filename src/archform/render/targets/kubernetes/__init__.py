"""The Kubernetes objects of an InferenceFleet (cloud-neutral; embedded in its Pulumi program)."""
