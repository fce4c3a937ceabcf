"""The deploy state file: which phases finished, for which blueprint.

``<out>/.archform-deploy/state.json`` = {"version": 1, "blueprint": <sha256>, "phases":
{"generate": "done", "ansible": "running", ...}}. Written atomically after every change,
so a run killed at any point leaves the phases that did finish marked done.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from archform.spec import UsageError

STATE_FILE = "state.json"
DONE, RUNNING, FAILED, PENDING = "done", "running", "failed", "pending"
# The serve phase of a Platform whose registry holds no release yet (deploy.serve).
WAITING = "waiting"


@dataclass(slots=True)
class DeployState:
    """Phase statuses of one output folder."""

    path: Path
    blueprint: str = ""
    phases: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, state_dir: Path) -> DeployState:
        """The saved state, or an empty one."""
        path = state_dir / STATE_FILE
        try:
            data = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError) as exc:
            raise UsageError(
                f"{path}: unreadable deploy state ({exc})",
                "delete it to start over (every phase runs again; they are idempotent)",
            ) from None
        phases = data.get("phases", {}) if isinstance(data, dict) else None
        blueprint = data.get("blueprint", "") if isinstance(data, dict) else None
        if (
            not isinstance(phases, dict)
            or not isinstance(blueprint, str)
            or not all(isinstance(v, str) for v in phases.values())
        ):
            raise UsageError(
                f"{path}: deploy state has the wrong shape (expected an object with "
                '"blueprint": "<sha256>" and "phases": '
                '{"<phase>": "done|running|failed|pending|waiting"})',
                "delete it to start over (every phase runs again; they are idempotent)",
            )
        return cls(path, blueprint, {str(k): v for k, v in phases.items()})

    def status(self, phase: str) -> str:
        """done, running, failed or pending."""
        return self.phases.get(phase, PENDING)

    def set(self, phase: str, status: str) -> None:
        """Record a status and save."""
        self.phases[phase] = status
        self.save()

    def reset(self, blueprint: str, phases: tuple[str, ...]) -> None:
        """A new run of `phases` for `blueprint`: those phases become pending."""
        if blueprint != self.blueprint:
            self.phases = {}
        self.blueprint = blueprint
        for phase in phases:
            self.phases[phase] = PENDING
        self.save()

    def save(self) -> None:
        """Write atomically."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        phases = dict(sorted(self.phases.items()))
        doc = {"version": 1, "blueprint": self.blueprint, "phases": phases}
        fd, name = tempfile.mkstemp(prefix=".state.", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(doc, indent=2, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        Path(name).replace(self.path)
