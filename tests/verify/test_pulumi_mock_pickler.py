"""Mocked runs leave the pickler as they found it.

The SDK's dynamic-provider serializer wraps ``pickle._Pickler._batch_setitems`` once per
dynamic resource and never unwraps it (pulumi/dynamic/dynamic.py): a few hundred mocked runs
in one test process then die of RecursionError. run_program puts it back after each run.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

import support
from support import BLUEPRINTS, programs

pytestmark = [pytest.mark.integration]


def test_a_run_with_dynamic_resources_restores_the_pickler(tmp_path: Path) -> None:
    support.require_module("pulumi", "pulumi_azure_native", "pulumi_kubernetes")
    from archform.verify.pulumi_mock import run_program
    from archform.verify.pulumi_projects import dry_run_config

    text = (BLUEPRINTS / "inference-3region-a10.yaml").read_text("utf-8")
    project = programs.generate(text, tmp_path, "a10") / "pulumi"
    before = pickle._Pickler._batch_setitems  # type: ignore[attr-defined]
    run = run_program(project, dry_run_config(project)[0])
    assert run.of_type("pulumi-python:dynamic:Resource"), "no dynamic resource was serialized"
    assert pickle._Pickler._batch_setitems is before  # type: ignore[attr-defined]
