"""The weights pipeline of a fleet region: stage the served version, then verify it in the pod.

Per region and model version the program creates one Kubernetes Job, ``stage-<version>``,
before the Deployment (the Deployment depends on it, and the Pulumi Kubernetes provider
waits for a Job to complete before it continues:
https://www.pulumi.com/registry/packages/kubernetes/api-docs/batch/v1/job/). In a replica
region the Job copies the version from the registry into the region's own bucket (data
first, ``SHA256SUMS`` and ``manifest.json`` last, so a half-copied version never looks
complete); in the registry's region it checks the version in place. Either way it refuses
a version whose manifest does not match the release's checksum.

The model server's init container then downloads the in-region copy and checks every file
with ``sha256sum -c`` against ``SHA256SUMS``, whose own SHA-256 is the manifest's set
checksum (``archform promote`` writes both). The server starts only after that succeeds.

Only coreutils (``sha256sum``, ``cut``, ``grep``) and the cloud's CLI are used, so the
scripts run in the clouds' own CLI images.
"""

from __future__ import annotations

from typing import Any

from archform.render.targets.common.clouds import cloud
from archform.render.targets.kubernetes.common import SAFE_TO_EVICT, digest_skip
from archform.render.targets.kubernetes.provider import fleet_of
from archform.render.targets.kubernetes.records import FleetView, RegionView
from archform.spec.container_images import pinned

SUMS = "SHA256SUMS"
MANIFEST = "manifest.json"
READER_SA = "model-reader"
REPLICATOR_SA = "model-replicator"
ENV_URI = "ARCHFORM_MODEL_URI"
ENV_SOURCE = "ARCHFORM_SOURCE_URI"
ENV_VERSION = "ARCHFORM_MODEL_VERSION"
ENV_CHECKSUM = "ARCHFORM_MODEL_SHA256"
ANN_VERSION = "archform.io/model-version"
ANN_CHECKSUM = "archform.io/model-checksum"

# `check DIR`: DIR holds SHA256SUMS and manifest.json; the listing's SHA-256 is the set
# checksum the manifest records and (when the release names one) the release's checksum.
_CHECK = (
    "check() {\n"
    f'  test -s "$1/{SUMS}" || {{ echo "$1: no {SUMS}: not a promoted model version" >&2; '
    "exit 1; }\n"
    f'  test -s "$1/{MANIFEST}" || {{ echo "$1: no {MANIFEST}" >&2; exit 1; }}\n'
    f'  sum="sha256:$(sha256sum "$1/{SUMS}" | cut -d" " -f1)"\n'
    f'  grep -q "\\"checksum\\": \\"$sum\\"" "$1/{MANIFEST}" || '
    f'{{ echo "{MANIFEST} does not record {SUMS} ($sum)" >&2; exit 1; }}\n'
    f'  if [ -n "${ENV_CHECKSUM}" ] && [ "$sum" != "${ENV_CHECKSUM}" ]; then\n'
    f'    echo "release is ${ENV_CHECKSUM}, the registry holds $sum" >&2; exit 1\n'
    "  fi\n"
    "}\n"
)


def fetch_image(provider: str) -> str:
    """In-region weight copy: the cloud's own CLI image, pinned (providers/<name>/render/facts.py).

    With its registry digest where archform's image table has one.
    """
    image = cloud(provider).cli_image
    assert image is not None, "fleets run on clouds"
    return pinned(image)


def fetch_script(provider: str, uri: str) -> str:
    """The init container: download the in-region copy, then verify every file."""
    get = fleet_of(provider).fetch_command(uri)
    return (
        _CHECK + get + "check /models/weights\n"
        f"(cd /models/weights && sha256sum -c {SUMS}) >/models/sha256-check.txt || "
        '{ grep -v ": OK$" /models/sha256-check.txt >&2; exit 1; }\n'
        'echo "verified $ARCHFORM_MODEL_VERSION ($sum)"\n'
    )


def stage_script(provider: str, source: str, dest: str, regions: tuple[str, str]) -> str:
    """The stage Job: check the registry's version, copy it in-region (data first).

    `regions` is (registry region, this region): bucket-to-bucket copies across regions
    need both (`aws s3 sync --source-region`).
    """
    copy = source != dest
    head, body = fleet_of(provider).stage_commands(source, dest, regions)
    script = _CHECK + head + "check /stage\n"
    if copy:
        script += body
    return script + 'echo "staged $ARCHFORM_MODEL_VERSION ($sum)"\n'


def release_env(v: FleetView, region: RegionView) -> list[dict[str, str]]:
    """The served release as env vars (a new version changes the pod template: a rollout)."""
    rel = v.release
    return [
        {"name": ENV_VERSION, "value": rel.version},
        {"name": ENV_SOURCE, "value": rel.source},
        {"name": ENV_URI, "value": region.weights_uri},
        {"name": ENV_CHECKSUM, "value": rel.checksum},
    ]


def release_annotations(v: FleetView) -> dict[str, str]:
    """Pod-template annotations naming the served release."""
    rel = v.release
    out = {ANN_VERSION: rel.version}
    if rel.checksum:
        out[ANN_CHECKSUM] = rel.checksum
    return out


def stage_job_name(v: FleetView) -> str:
    """`stage-<version slug>`: a new version is a new Job (a Job's template is immutable)."""
    return f"stage-{v.release.slug}"


def stage_job(
    v: FleetView, region: RegionView, meta: dict[str, Any], pool_affinity: dict[str, Any]
) -> dict[str, Any]:
    """The Job that stages the served version in this region before the Deployment rolls."""
    provider = v.provider
    parts = fleet_of(provider)
    scratch_gib = v.model.cache_gib if parts.stage_scratch_copy else 1
    labels = dict(meta["labels"])
    labels["app.kubernetes.io/component"] = "model-stage"
    pod_labels = dict(labels)
    pod_labels.update(parts.stage_pod_labels)
    script = stage_script(
        provider,
        region.source_uri,
        region.weights_uri,
        (v.model.source_region, region.name),
    )
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            **meta,
            "labels": labels,
            **digest_skip([fetch_image(provider)]),
        },
        "spec": {
            "backoffLimit": 3,
            # Copying tens of GiB between regions takes minutes; the Pulumi wait is set to match.
            "activeDeadlineSeconds": stage_deadline_seconds(v),
            "template": {
                "metadata": {
                    "labels": pod_labels,
                    # A copy in flight finishes before the autoscaler may take its node.
                    "annotations": {**release_annotations(v), SAFE_TO_EVICT: "false"},
                },
                "spec": {
                    "serviceAccountName": region.replicator_sa,
                    # The cloud identity is not the Kubernetes token (see objects.deployment).
                    "automountServiceAccountToken": False,
                    "restartPolicy": "Never",
                    "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                    "affinity": pool_affinity,
                    "containers": [
                        {
                            "name": "stage",
                            "image": fetch_image(provider),
                            "imagePullPolicy": "IfNotPresent",
                            "command": ["/bin/sh", "-ec", script],
                            "env": release_env(v, region),
                            "resources": {
                                "requests": {
                                    "cpu": "1",
                                    "memory": "2Gi",
                                    "ephemeral-storage": f"{scratch_gib + 1}Gi",
                                },
                                "limits": {
                                    "memory": "2Gi",
                                    "ephemeral-storage": f"{scratch_gib + 1}Gi",
                                },
                            },
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": [{"name": "stage", "mountPath": "/stage"}],
                        }
                    ],
                    "volumes": [
                        {"name": "stage", "emptyDir": {"sizeLimit": f"{scratch_gib}Gi"}},
                    ],
                },
            },
        },
    }


def stage_deadline_seconds(v: FleetView) -> int:
    """Time the stage Job may take: 60 s per 10 GiB of weights (~170 MB/s) plus 10 min."""
    return int(600 + 6 * v.model.weights_gib)
