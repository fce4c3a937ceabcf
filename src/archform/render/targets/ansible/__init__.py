"""The Ansible project of a Slurm TrainingCluster (any provider): roles, slurm.conf, NCCL."""
