"""The fractional-GPU Azure sizes are known, with their fraction, and refused at the line.

Standard_NV6ads/NV12ads/NV18ads_A10_v5 carry 1/6, 1/3 and 1/2 of an A10 (4, 8, 12 GiB of frame
buffer; Microsoft's NVadsA10 v5 size table). archform sizes whole GPUs, so validate refuses
them with that reason instead of calling them unknown types (issue 21).
"""

from __future__ import annotations

import pytest

from archform.spec import SpecError, load_text
from archform.spec.catalog import load_catalog
from support import BLUEPRINTS

FLEET = BLUEPRINTS / "inference-3region-a10.yaml"
WHOLE = "Standard_NV72ads_A10_v5"


@pytest.mark.parametrize(
    ("size", "fraction", "memory"),
    [
        ("Standard_NV6ads_A10_v5", "1/6", 4),
        ("Standard_NV12ads_A10_v5", "1/3", 8),
        ("Standard_NV18ads_A10_v5", "1/2", 12),
    ],
)
def test_fractional_a10_is_refused_with_its_fraction_at_the_line(
    size: str, fraction: str, memory: int
) -> None:
    text = FLEET.read_text("utf-8")
    line = text[: text.index(f"instance_type: {WHOLE}")].count("\n") + 1
    with pytest.raises(SpecError) as caught:
        load_text(text.replace(f"instance_type: {WHOLE}", f"instance_type: {size}"), "f.yaml")
    (only,) = [p.render() for p in caught.value.problems]
    assert only.startswith(f"f.yaml:{line}:")
    assert f"{size} has {fraction} of an A10 ({memory} GiB of GPU memory)" in only
    assert "not in archform's catalog" not in only
    assert "use Standard_NV36ads_A10_v5" in only


def test_partial_sizes_are_data_with_a_source_and_name_a_whole_size() -> None:
    catalog = load_catalog()
    assert set(catalog.partial_gpus) == {
        "Standard_NV6ads_A10_v5",
        "Standard_NV12ads_A10_v5",
        "Standard_NV18ads_A10_v5",
    }
    for partial in catalog.partial_gpus.values():
        whole = catalog.instance(partial.whole)
        assert whole is not None and whole.gpu_model == partial.gpu and whole.gpu_count == 1
        gpu = catalog.gpu(partial.gpu)
        assert gpu is not None
        numerator, denominator = map(int, partial.fraction.split("/"))
        assert partial.gpu_memory_gib == gpu.memory_gib * numerator / denominator
        assert partial.source.startswith("https://learn.microsoft.com/")
        assert catalog.instance(partial.name) is None  # never sized as a whole GPU
