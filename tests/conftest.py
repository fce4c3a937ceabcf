from __future__ import annotations

import fcntl
from collections.abc import Iterator
from pathlib import Path

import pytest

# Tests marked `system` install packages and start daemons on this machine (munged, slurmctld,
# slurmd on localhost): one at a time, also across pytest-xdist workers.
SYSTEM_LOCK = Path("/tmp/archform-system-tests.lock")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="Rewrite golden output trees under tests/goldens/ instead of comparing.",
    )


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


@pytest.fixture(autouse=True)
def _one_system_test_at_a_time(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("system") is None:
        yield
        return
    with SYSTEM_LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# The fuzz floor (support/fuzz_floor.py): counted across xdist workers, enforced in CI.
def pytest_sessionfinish(session: pytest.Session) -> None:
    from support import fuzz_floor

    fuzz_floor.session_finish(session)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: the controller, per worker
def pytest_testnodedown(node: object, error: object) -> None:
    from support import fuzz_floor

    fuzz_floor.node_down(node.config, node)  # type: ignore[attr-defined]
