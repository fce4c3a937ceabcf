#!/bin/sh
# Slurm Epilog (archform): quick DCGM diagnostic (level 1, seconds) after every job;
# a failure drains the node for an administrator (levels 2-4 are for post-mortems).
[ -e /dev/nvidia0 ] || exit 0
# Site and fabric hooks (e.g. the TCPXO RxDM hook): every executable in /etc/slurm/epilog.d.
for hook in /etc/slurm/epilog.d/*; do
    [ -x "$hook" ] || continue
    "$hook" || { logger -t slurm-epilog "$hook failed"; exit 1; }
done
if ! dcgmi diag --run 1 >/tmp/archform-epilog-dcgm.log 2>&1; then
    logger -t slurm-epilog "dcgmi diag -r 1 failed: $(tr '\n' ' ' </tmp/archform-epilog-dcgm.log)"
    exit 1
fi
exit 0
