#!/bin/sh
# Slurm Prolog (archform): refuse to start a job on unhealthy GPUs. A non-zero exit drains
# the node and requeues the job (prolog_epilog.shtml). `dcgmi health -c` reads the
# background watches set with `dcgmi health -s a`: seconds, not minutes.
[ -e /dev/nvidia0 ] || exit 0
if ! dcgmi health --check --group 0 >/tmp/archform-prolog-dcgm.log 2>&1; then
    logger -t slurm-prolog "DCGM health check failed: $(tr '\n' ' ' </tmp/archform-prolog-dcgm.log)"
    exit 1
fi
exit 0
