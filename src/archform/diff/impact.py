"""Impact classes of a blueprint change, ordered from harmless to disruptive."""

from __future__ import annotations

import enum


class Impact(enum.IntEnum):
    """What applying a change does to a running system (higher is worse)."""

    IN_PLACE = 0
    ROLLING_RESTART = 1
    NODE_REPLACEMENT = 2
    DATA_LOSS_RISK = 3
    CLUSTER_WIDE_OUTAGE = 4

    @property
    def label(self) -> str:
        """Human name: ``node replacement``, ``cluster-wide outage``."""
        return self.name.lower().replace("_", " ").replace("cluster wide", "cluster-wide")

    @property
    def slug(self) -> str:
        """CLI/JSON name: ``node-replacement``."""
        return self.name.lower().replace("_", "-")

    @classmethod
    def parse(cls, text: str) -> Impact:
        """Accept ``node-replacement``, ``node replacement`` or ``NODE_REPLACEMENT``."""
        key = text.strip().upper().replace("-", "_").replace(" ", "_")
        try:
            return cls[key]
        except KeyError:
            names = ", ".join(i.slug for i in cls)
            raise ValueError(f"unknown impact class {text!r}; choose one of {names}") from None
