"""tests/ is on sys.path (pytest `pythonpath`), so tests/packaging shadows the real
`packaging` distribution that pulumi imports. Load the real one for these tests."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1]


def _real_packaging() -> None:
    current = sys.modules.get("packaging")
    origin = Path(getattr(current, "__file__", "") or "/").resolve()
    if current is not None and _TESTS not in origin.parents:
        return
    saved_path, saved_mod = sys.path[:], current
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _TESTS]
    sys.modules.pop("packaging", None)
    try:
        importlib.import_module("packaging.version")
    except ImportError:
        if saved_mod is not None:
            sys.modules["packaging"] = saved_mod
    finally:
        sys.path[:] = saved_path


_real_packaging()
