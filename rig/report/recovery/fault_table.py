"""The per-fault table (metrics/recovery.json): when each fault was injected and healed (a fault
that is not undone, such as a reassignment, has no heal; one the scenario did not heal was
healed as the run ended), when it was detected, the new leader, the catch-up bytes and when
every partition was whole again.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rig.report.format import DASH, fmt_seconds, human_bytes
from rig.report.inputs import number
from rig.report.recovery.values import to_int

__all__ = [
    "MAX_FAULT_ROWS",
    "fault_rows",
]

MAX_FAULT_ROWS = 200  # rows of the per-fault table, as the fault table above it


def _moved(moved: Any) -> tuple[str | None, str]:
    """A reassignment's partition and the brokers it added: ("orders-0", "adds broker 3");
    (None, "") for any other fault."""
    if not isinstance(moved, Mapping):
        return None, ""
    adding = [str(b) for b in moved.get("adding") or ()]
    added = f"adds {'broker' if len(adding) == 1 else 'brokers'} {', '.join(adding)}"
    return f"{moved.get('topic')}-{moved.get('partition')}", added if adding else ""


def _targets(targets: Any) -> str:
    """["2"] → "broker 2"; ["0", "zk"] → "nodes 0, zk" (the scenario's node names)."""
    items = [str(t) for t in targets] if isinstance(targets, list) else (
        [str(targets)] if targets not in (None, "") else [])
    if not items:
        return DASH
    if all(t.isdigit() for t in items):
        return ("broker " if len(items) == 1 else "brokers ") + ", ".join(items)
    return ("node " if len(items) == 1 else "nodes ") + ", ".join(items)


def _healed(heal_ms: float | None, end_ms: float | None) -> str | None:
    """What the Healed cell says beside (or instead of) a time: a fault with no heal is not
    undone (rig.faults: no fault.heal); one healed at the run's declared end was healed by the
    run ending (the scenario gave it no heal_after or restart_after)."""
    if heal_ms is None:
        return "not undone"
    return "at the run's end" if end_ms is not None and heal_ms >= end_ms else None


def fault_rows(recovery: Sequence[Mapping[str, Any]], variants: Sequence[str],
               ends_ms: Mapping[str, float | None] | None = None) -> list[dict]:
    """A row per fault of metrics/recovery.json, in variant order, then by injection.
    `ends_ms`: each variant's declared duration (run.json), when the run heals what is left."""
    order = {v: i for i, v in enumerate(variants)}
    chosen = [r for r in recovery if str(r.get("variant")) in order]
    chosen.sort(key=lambda r: (order[str(r.get("variant"))], number(r.get("inject_ms")) or 0.0,
                               to_int(r.get("fault"))))

    def at(value: Any) -> str:
        ms = number(value)
        return DASH if ms is None else f"{ms / 1000:,.3f}"

    rows = []
    for r in chosen:
        inject, leader = number(r.get("inject_ms")), number(r.get("new_leader_ms"))
        targets = r.get("targets")
        moved, added = _moved(r.get("moved"))
        after = (f"+{(leader - inject) / 1000:,.3f}"
                 if inject is not None and leader is not None else DASH)
        rows.append({
            "variant": str(r.get("variant")),
            "fault": DASH if r.get("fault") is None else str(r.get("fault")),
            "kind": str(r.get("kind") or DASH),
            # a reassignment: the partition (never broken at its hyphen) and what it added
            "moved": moved,
            "targets": added if moved else _targets(targets),
            "inject": at(inject),
            "heal": at(r.get("heal_ms")),
            "healed": _healed(number(r.get("heal_ms")),
                              (ends_ms or {}).get(str(r.get("variant")))),
            "leader_after": after,
            "detected_after": (f"+{fmt_seconds(r.get('detection_seconds'))}"
                               if number(r.get("detection_seconds")) is not None else DASH),
            # A first reaction after the heal answered something else, or came late.
            "detected_late": (number(r.get("detected_ms")) or 0.0) > (number(r.get("heal_ms"))
                                                                      or math.inf),
            "catch_up": human_bytes(r.get("catch_up_bytes")) if "catch_up_bytes" in r else DASH,
            "recovered": at(r.get("recovered_ms")),
            "seconds": fmt_seconds(r.get("recovery_seconds")),
            # A fault that never recovered before the run ended: the reader must see it.
            "open": r.get("recovery_seconds") is None,
        })
    return rows
