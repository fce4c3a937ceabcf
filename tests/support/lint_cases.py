"""Shared lint test inputs."""

from __future__ import annotations

import datetime as dt

TODAY = dt.date(2026, 11, 30)

BAD = """\
version: 1
kind: TrainingCluster
name: demo
placement:
  provider: aws
  regions: [us-east-1, us-west-2]
  zones: [us-east-1a, us-west-2a]
compute:
  nodes: 4
  instance_type: p5.48xlarge
storage:
  - {name: ckpt, kind: lustre, purpose: checkpoints, capacity_tib: 24, mount: /fsx/ckpt}
scheduler:
  health_checks: [nhc, dcgm]
access:
  ssh_cidrs: ["0.0.0.0/0"]
"""
