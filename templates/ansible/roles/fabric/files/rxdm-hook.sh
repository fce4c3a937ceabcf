#!/bin/bash
# Slurm prolog/epilog hook (archform) for GCP A3 Mega (GPUDirect-TCPXO): run Google's receive
# data path manager (RxDM) for each multi-node job and refresh the FasTrak NCCL plugin in
# /var/lib/tcpxo/lib64 (first installed by the fabric role), following slurm-gcp
# tools/prologs-epilogs/receive-data-path-manager-mega (container images, docker options and
# the "Buffer manager initialization complete" readiness line are taken from there). Called by
# /etc/slurm/prolog.sh and epilog.sh with the phase.
set -euo pipefail
phase=${1:?usage: rxdm-hook.sh prolog|epilog}
[ "${SLURM_JOB_NUM_NODES:-1}" -gt 1 ] || exit 0
# Image names: written by the fabric role (roles/fabric/vars/main.yml) next to the plugin it
# installed at configuration time (a file on the node, not in this tree: shellcheck skips it).
# shellcheck source=/dev/null
. "${ARCHFORM_TCPXO_ENV:-/etc/default/archform-tcpxo}"
plugin_image=${ARCHFORM_TCPXO_PLUGIN_IMAGE:?}
rxdm_image=${ARCHFORM_TCPXO_RXDM_IMAGE:?}
name=archform-rxdm-${SLURM_JOB_ID:-0}

stop_all() {
    docker container ls --quiet --filter "name=archform-rxdm-" | xargs --no-run-if-empty docker container stop >/dev/null
}

if [ "$phase" = epilog ]; then
    stop_all
    exit 0
fi
modprobe import-helper
stop_all
docker run --rm --network=host --volume /var/lib:/var/lib "$plugin_image" install --install-nccl >/dev/null
docker run --detach --rm --name "$name" --cap-add=NET_ADMIN --network=host --privileged --gpus all \
    --volume /var/lib/nvidia/lib64:/usr/local/nvidia/lib64 \
    --volume /dev/dmabuf_import_helper:/dev/dmabuf_import_helper \
    --env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu \
    "$rxdm_image" --num_hops=2 --num_nics=8 --uid= --alsologtostderr >/dev/null
for _ in $(seq 60); do
    if docker container logs "$name" 2>&1 | grep -q "Buffer manager initialization complete"; then
        exit 0
    fi
    sleep 2
done
echo "RxDM did not initialise on $(hostname)" >&2
exit 1
