from __future__ import annotations

from pathlib import Path

import pytest

from support.lint_cases import BAD


@pytest.fixture
def bad_file(tmp_path: Path) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD, encoding="utf-8")
    return path
