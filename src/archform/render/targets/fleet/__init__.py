"""Target `fleet`: an InferenceFleet as a Pulumi project, manifests and a smoke playbook."""
