#!/bin/sh
# Slurm Prolog (archform): refuse to start a job on unhealthy GPUs. A non-zero exit drains
# the node and requeues the job (slurm.schedmd.com/prolog_epilog.html).
#
# `dcgmi health --check` reads the background watches that archform-dcgm-watches.service sets
# at every boot. dcgmi exits 0 whenever it could read a result, also when that result is
# "Warning" or "Failure" (NVIDIA/DCGM dcgmi/Health.cpp, CheckWatches), so the verdict is taken
# from the JSON report: body."Overall Health".value is "Healthy", "Warning" or "Failure".
# With no watches set dcgmi prints an error and exits non-zero: set them again once and retry,
# so a node whose boot unit failed is repaired rather than drained.
[ -e "${ARCHFORM_GPU_DEVICE:-/dev/nvidia0}" ] || exit 0
# Site and fabric hooks (e.g. the TCPXO RxDM hook): every executable in ${ARCHFORM_HOOK_DIR:-/etc/slurm/prolog.d}.
for hook in ${ARCHFORM_HOOK_DIR:-/etc/slurm/prolog.d}/*; do
    [ -x "$hook" ] || continue
    "$hook" || { logger -t slurm-prolog "$hook failed"; exit 1; }
done
DCGMI=${ARCHFORM_DCGMI:-dcgmi}
LOG=${ARCHFORM_PROLOG_LOG:-/tmp/archform-prolog-dcgm.json}

check() {
    "$DCGMI" health --check --group 0 --json >"$LOG" 2>&1
}

if ! check; then
    "$DCGMI" health --set a --group 0 >/dev/null 2>&1
    if ! check; then
        logger -t slurm-prolog "dcgmi health --check failed: $(tr '\n' ' ' <"$LOG")"
        exit 1
    fi
fi
verdict=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["body"]["Overall Health"]["value"])' <"$LOG" 2>/dev/null)
case "$verdict" in
    Healthy) exit 0 ;;
    Warning)
        # Warnings (e.g. a correctable ECC count) are logged, not drained.
        logger -t slurm-prolog "DCGM health warning: $(tr '\n' ' ' <"$LOG")"
        exit 0 ;;
    *)
        logger -t slurm-prolog "DCGM health ${verdict:-unreadable}: $(tr '\n' ' ' <"$LOG")"
        exit 1 ;;
esac
