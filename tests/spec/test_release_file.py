"""Issue 24: release.json values are checked whole (fullmatch), not up to a trailing newline.

`re.match` with `$` accepted `"v3\\n"` (`$` matches before a final newline): a newline in the
version crashed generate, one in the checksum was written into every pod (whose weights check
then never matched). S3, GCS and Blob keys are literal, so `s3://bucket//model///v1` names
other objects than `s3://bucket/model/v1`, and is refused.
"""

from __future__ import annotations

import json

import pytest

from archform.spec.errors import UsageError
from archform.spec.release import SCHEMA, Release, parse_release

GOOD = {
    "schema": SCHEMA,
    "model": "llama-8b",
    "version": "v3",
    "source": "s3://registry/llama-8b/v3/",
    "checksum": "sha256:" + "a" * 64,
    "source_run": "run-1",
}


def _parse(**change: str) -> Release:
    return parse_release(json.dumps({**GOOD, **change}).encode(), "release.json", "hint")


def test_the_good_release_parses() -> None:
    assert _parse().version == "v3"


@pytest.mark.parametrize(
    "change",
    [
        {"version": "v3\n", "source": "s3://registry/llama-8b/v3\n/"},
        {"checksum": "sha256:" + "a" * 64 + "\n"},
        {"source": "s3://registry//llama-8b///v3/"},
        {"source": "s3://registry/llama-8b//v3/"},
        {"source": "s3:///llama-8b/v3/"},
        {"source": "s3://registry/llama 8b/v3/"},
    ],
    ids=[
        "newline-version",
        "newline-checksum",
        "double-slashes",
        "empty-segment",
        "no-bucket",
        "blank",
    ],
)
def test_a_release_value_with_a_newline_or_empty_key_segment_is_refused(
    change: dict[str, str],
) -> None:
    with pytest.raises(UsageError) as refused:
        _parse(**change)
    assert refused.value.render().startswith("error: release.json: "), refused.value.render()
