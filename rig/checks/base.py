"""What a check is and how results combine: failed beats unknown beats ok (Jepsen's merge)."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rig.cluster.final_state import FinalState

# What a check found at the end, as an event for the run's log: (event name, fields). The check
# only returns it; the simulation, which owns the log, writes it (a check never writes into the
# stream it observes).
Finding = tuple[str, dict[str, Any]]


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

    @property
    def events(self) -> frozenset[str] | None:
        """The event names `observe` needs; None: every event. The log calls `observe` for
        these only, so a check that reads one kind of event costs nothing on the others."""
        ...

    def observe(self, event: Mapping[str, Any]) -> None:
        """See one event (stamped, before it is written). Must not modify it."""
        ...

    def finish(self, final: FinalState) -> list[Finding]:
        """Judge the final state (after the run healed and settled), read only; returns what
        it found, in order, for the caller to log."""
        ...

    def result(self) -> CheckResult: ...
