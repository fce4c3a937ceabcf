"""Issue 24: an ARCHFORM_CATALOG entry of the wrong type, a bad regex or a NaN is one line,
exit 2, naming the catalog file and the entry; never exit 3, never blamed on a blueprint line,
never accepted (a NaN memory size used to validate and reach the estimates).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from archform.cli._app import build
from archform.spec import catalog
from support import BLUEPRINTS

BUNDLED: dict[str, Any] = json.loads(
    (Path(catalog.__file__).parent / "data" / "catalog.json").read_text("utf-8")
)
P5 = "p5.48xlarge"


def _set(*path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        node = data
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value

    return change


CASES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "nan-memory": (_set("gpus", "H100", "memory_gib", value=float("nan")), "gpus.H100.memory_gib"),
    "inf-vcpus": (_set("instances", P5, "vcpus", value=float("inf")), f"instances.{P5}.vcpus"),
    "instance-list": (_set("instances", P5, value=[1]), f"instances.{P5}"),
    "cpu-string": (_set("instances", P5, "cpu", value="x"), f"instances.{P5}"),
    "gpu-string": (_set("gpus", "H100", value="x"), "gpus.H100"),
    "bad-regex": (_set("naming", "gpu_type_pattern", value="(["), "naming.gpu_type_pattern"),
    "families-list": (_set("families", value=[1]), "families"),
}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_bad_catalog_entry_names_the_file_and_entry(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change, where = CASES[case]
    assert "H100" in BUNDLED["gpus"] and P5 in BUNDLED["instances"]
    data = copy.deepcopy(BUNDLED)
    change(data)
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(data))  # json.dumps writes NaN / Infinity as JSON5 allows
    monkeypatch.setenv(catalog.CATALOG_ENV, str(path))
    result = CliRunner().invoke(
        build(["validate"]), ["validate", str(BLUEPRINTS / "aws-p5-efa-fsx.yaml")]
    )
    lines = result.output.splitlines()
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {catalog.CATALOG_ENV}={path}: {where}"), lines[0]
    assert "(hint: " in lines[0]
