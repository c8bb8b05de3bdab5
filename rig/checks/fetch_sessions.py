"""KIP-227 session discipline: no session errors unless a session was really lost.

A correct client sends each incremental epoch exactly once, in order, so INVALID_FETCH_SESSION_EPOCH
(71) never happens on a lossless network, and FETCH_SESSION_ID_NOT_FOUND (70) only for a session
the broker evicted or lost in a restart. Anything else is a violation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rig.checks.base import CheckResult, Status
from rig.events import names
from rig.strategies.fetch_session import FETCH_SESSION_ID_NOT_FOUND

MAX_VIOLATIONS = 100


class FetchSessionCheck:
    name = "fetch-session-protocol"
    events = frozenset({names.SESSION_EVICTED, names.BROKER_RESTART, names.SESSION_ERROR})

    def __init__(self) -> None:
        self._lost: set[tuple[int, int]] = set()  # (broker, session id) evicted or lost
        self._count = 0
        self._violations: list[dict[str, Any]] = []

    def observe(self, event: Mapping[str, Any]) -> None:
        name = event["event"]
        if name == names.SESSION_EVICTED:
            self._lost.add((event["broker"], event["session_id"]))
        elif name == names.BROKER_RESTART:
            self._lost.update(k for k in list(self._lost) if k[0] == event["broker"])
            self._lost.add((event["broker"], -1))
        elif name == names.SESSION_ERROR:
            broker, session_id = event["broker"], event["session_id"]
            excused = event["error_code"] == FETCH_SESSION_ID_NOT_FOUND and (
                (broker, session_id) in self._lost or (broker, -1) in self._lost)
            if not excused:
                self._count += 1
                if len(self._violations) < MAX_VIOLATIONS:
                    self._violations.append({
                        "t_ms": event["t_ms"], "seq": event["seq"], "broker": broker,
                        "client": event["client"], "session_id": session_id,
                        "session_epoch": event["session_epoch"],
                        "error_code": event["error_code"],
                        "message": "session error without a lost session: the client broke "
                                   "the epoch sequence"})

    def finish(self, final: Any) -> list[tuple[str, dict[str, Any]]]:
        return []

    def result(self) -> CheckResult:
        status = Status.FAILED if self._count else Status.OK
        note = f"{self._count} violations" + (f" (first {MAX_VIOLATIONS} kept)"
                                               if self._count > MAX_VIOLATIONS else "")
        return CheckResult(self.name, status, self._violations, note)
