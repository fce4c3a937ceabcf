"""`kind: object` with `mount:` used to load and then be dropped silently (no mount was
generated). archform installs no FUSE client for buckets, so the mount is refused at its line
(issue 21 item 8)."""

from __future__ import annotations

import pytest

from archform.render.generate import build_files
from archform.spec import SpecError, TrainingCluster, load_text

TEXT = """\
version: 1
kind: TrainingCluster
name: t
placement: {{provider: {provider}, region: {region}}}
compute: {{nodes: 2, instance_type: {itype}}}
storage:
  - name: bucket
    kind: object
    purpose: training_data
    source: {uri}{mount}
"""
CLOUDS = {
    "gcp": ("us-central1", "a3-megagpu-8g", "gs://corp-data/"),
    "aws": ("us-east-1", "p5.48xlarge", "s3://corp-data/"),
    "azure": ("eastus", "Standard_ND96isr_H100_v5", "az://corp/data/"),
}


def _text(provider: str, mount: str = "") -> str:
    region, itype, uri = CLOUDS[provider]
    return TEXT.format(provider=provider, region=region, itype=itype, uri=uri, mount=mount)


@pytest.mark.parametrize("provider", sorted(CLOUDS))
def test_object_storage_mount_is_refused_at_the_mount_line(provider: str) -> None:
    with pytest.raises(SpecError) as err:
        load_text(_text(provider, "\n    mount: /gcs"), "bp.yaml")
    [problem] = err.value.problems
    assert (problem.line, problem.path) == (11, "storage[0].mount")
    assert "does not mount object storage" in problem.message
    assert "remove mount" in problem.hint


@pytest.mark.parametrize("provider", sorted(CLOUDS))
def test_object_storage_without_mount_loads_and_generates(provider: str) -> None:
    loaded = load_text(_text(provider), "bp.yaml")
    model = loaded.documents[0].model
    assert isinstance(model, TrainingCluster) and model.storage[0].mount is None
    assert build_files(loaded)
