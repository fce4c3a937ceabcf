"""Built-in targets. Each module exposes TARGET; add new ones to BUILTIN."""

from __future__ import annotations

from archform.render.target import Target
from archform.render.targets import ansible, platform

BUILTIN: list[Target] = [ansible.TARGET, platform.TARGET]
