"""The slurmctld log filter ignores start-up and load noise, never configuration errors."""

from __future__ import annotations

from archform.verify.checks.slurm import LOG_PROBLEM, NOISE

NOISE_LINES = [
    "slurmctld: Warning: High latency for 1000 calls to gettimeofday(): 2947 microseconds",
    "slurmctld: error: Could not open node state file /s/node_state: No such file or directory",
    "slurmctld: error: mpi/pmix_v4: init: (null) [0]: pmi/pmix: can not load PMIx library",
]
REAL_PROBLEMS = [
    "slurmctld: error: Parsing error at unrecognized key: FooBarBaz",
    "slurmctld: error: WARNING: Invalid hostnames in switch configuration: gpu-[2000-2001]",
    "slurmctld: error: Invalid GRES configured on node gpu-[0001-1024]: nic:4",
    "slurmctld: fatal: Unable to process configuration file",
]


def test_noise_is_ignored() -> None:
    for line in NOISE_LINES:
        assert LOG_PROBLEM.search(line) and NOISE.search(line), line


def test_configuration_problems_are_kept() -> None:
    for line in REAL_PROBLEMS:
        assert LOG_PROBLEM.search(line) and not NOISE.search(line), line
