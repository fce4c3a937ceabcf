"""resolved-blueprint.yaml shows every default the generators used: one home per fact.

The node image is chosen once (spec.images.default_image, filled into compute.image by the
model), the default Slurm release once (spec/data/slurm/upgrades.json); the generated
Ansible variables must name the same values the resolved blueprint shows.
"""

from __future__ import annotations

import json
from importlib import resources

from ruamel.yaml import YAML

from archform.render.generate import RESOLVED, build_files
from archform.spec import load_text
from archform.spec.models.training import Scheduler

BARE = """\
version: 1
kind: TrainingCluster
name: t
placement: {provider: aws, region: us-east-1}
compute: {name: gpu, nodes: 2, instance_type: p5.48xlarge}
fabric: {kind: efa}
"""


def _files(text: str) -> dict[str, str]:
    blueprints = load_text(text, "t.yaml")
    return {f.path: f.content.decode() for f in build_files(blueprints)}


def test_default_slurm_release_comes_from_the_release_data() -> None:
    data = resources.files("archform.spec").joinpath("data/slurm/upgrades.json").read_text()
    assert Scheduler().version == json.loads(data)["default_version"]


def test_resolved_blueprint_names_the_image_and_slurm_release_used() -> None:
    files = _files(BARE)
    resolved = YAML(typ="safe").load(files[RESOLVED])
    image = resolved["compute"]["image"]
    version = resolved["scheduler"]["version"]
    assert image and version
    group_vars = files["ansible/group_vars/all.yml"].splitlines()
    assert f'archform_image: "{image}"' in group_vars
    assert f'slurm_version: "{version}"' in group_vars
