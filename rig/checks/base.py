"""What a check is and how results combine: failed beats unknown beats ok (Jepsen's merge)."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


class Status(enum.Enum):
    OK = "ok"
    UNKNOWN = "unknown"
    FAILED = "failed"

    @property
    def as_json(self) -> bool | None:
        return {Status.OK: True, Status.FAILED: False, Status.UNKNOWN: None}[self]


_RANK = {Status.OK: 0, Status.UNKNOWN: 1, Status.FAILED: 2}


def merge(statuses: Iterable[Status]) -> Status:
    """The status of several results together; nothing to judge is OK."""
    return max(statuses, key=_RANK.__getitem__, default=Status.OK)


@dataclass
class CheckResult:
    name: str
    status: Status
    violations: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""


class Check(Protocol):
    name: str

    def observe(self, event: Mapping[str, Any]) -> None:
        """See one event (stamped, before it is written). Must not modify it."""
        ...

    def finish(self, cluster: Any) -> None:
        """Judge the final state (after the run healed and settled)."""
        ...

    def result(self) -> CheckResult: ...
