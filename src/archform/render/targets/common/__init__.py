"""Shared by several targets: the training-cluster view, node image, Pulumi project skeleton."""
