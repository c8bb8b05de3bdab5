"""One rule that changed across Kafka releases (`VersionRule`), and releases as sortable keys.
The rules themselves are rig.scenario.version_rules' and rig.scenario.kraft_rules'."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def release_key(version: str) -> tuple[int, ...]:
    """A release (or inter.broker.protocol.version) as a sortable tuple: "0.10.1" → (0, 10, 1)."""
    return tuple(int(part) for part in version.split("."))


@dataclass(frozen=True)
class VersionRule:
    """One behaviour or default that changed across releases: `values` gives (first release,
    value) pairs in release order, the first from the oldest profile rig models."""

    field: str  # the Profile field it sets
    what: str  # what it switches, for README's table
    values: tuple[tuple[str, Any], ...]
    source: str  # the KIP, JIRA or Kafka class that changed it

    def at(self, version: str) -> Any:
        value = self.values[0][1]
        for since, changed in self.values:
            if release_key(version) >= release_key(since):
                value = changed
        return value
