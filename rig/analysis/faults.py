"""The fault table: every `broker.crash`, `broker.shutdown`, `broker.restart`,
`broker.startup_failed` and `fault.*` event of a run, in order.

Small (one row per fault step), so the report can mark each one on every timeline. The one pass
that parses the logs (rig.analysis.columnar) keeps these events whole, every detail field.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import orjson

from rig.events import names

__all__ = ["FAULT_PREFIX", "fault_rows", "fault_rows_of", "is_fault_event"]

FAULT_PREFIX = "fault."
_BROKER_EVENTS = {names.BROKER_CRASH: "crashed", names.BROKER_SHUTDOWN: "stopped",
                  names.BROKER_RESTART: "restarted",
                  names.BROKER_STARTUP_FAILED: "failed to start (still registered in ZooKeeper)"}
_SHORT = {names.BROKER_CRASH: "crash", names.BROKER_SHUTDOWN: "stop",
          names.BROKER_RESTART: "restart", names.BROKER_STARTUP_FAILED: "start failed"}
_ORDERING = ("t_ms", "seq", "event", "variant")  # shown as columns, not as details


def is_fault_event(name: object) -> bool:
    """Is this event name a fault step the timelines mark?"""
    return isinstance(name, str) and (name in _BROKER_EVENTS or name.startswith(FAULT_PREFIX))


def _targets(event: dict[str, Any]) -> str:
    """The ids a fault touches, briefly: "broker 1", "brokers 0, 2", "rack b", "nodes 0, zk"."""
    parts = []
    if isinstance(event.get("broker"), int):
        parts.append(f"broker {event['broker']}")
    for key, noun in (("brokers", "brokers"), ("targets", "nodes")):
        items = event.get(key)
        if isinstance(items, list) and items:
            parts.append(f"{noun} " + ", ".join(str(b) for b in items))
    if isinstance(event.get("rack"), str):
        parts.append(f"rack {event['rack']}")
    return ", ".join(parts)


def _labels(event: dict[str, Any]) -> tuple[str, str]:
    """(label for a table, a few characters for a chart marker)."""
    name = str(event["event"])
    target = _targets(event)
    broker = event.get("broker")
    prefix = f"b{broker} " if isinstance(broker, int) else ""
    if name in _BROKER_EVENTS:
        return f"{target or 'a broker'} {_BROKER_EVENTS[name]}", prefix + _SHORT[name]
    step = name[len(FAULT_PREFIX) :]
    kind = event.get("kind")
    if isinstance(kind, str) and kind:
        # fault.inject / fault.heal {kind, targets}: say which fault did what.
        verb = {"inject": "injected", "heal": "healed"}.get(step, step.replace("_", " "))
        label, short = f"{kind} {verb}", kind if step == "inject" else f"{kind} {verb}"
    else:
        label = short = step.replace("_", " ").replace("-", " ").replace(".", " ").strip()
        label = short = label or "fault"
    label += f" ({target})" if target else ""
    description = event.get("description")
    if isinstance(description, str) and description.strip():
        label += f": {description.strip()}"
    return label, prefix + short


def fault_rows(lines: Iterable[bytes | str]) -> list[dict[str, Any]]:
    """Parse event lines; keep the fault events, in (variant, t_ms, seq) order (fault_rows_of).
    Lines that are not JSON objects are skipped, as the analysis skips them elsewhere."""
    events = []
    for line in lines:
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return fault_rows_of(events)


def fault_rows_of(events: Iterable[dict[str, Any]],
                  variants: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The fault events among `events` as table rows, in (variant, t_ms, seq) order, variants
    in the order given (others after, by name).

    Each row: variant, t_ms, seq, event, broker (or None), label, short, and `details` holding
    every other field of the event.
    """
    rows = []
    for event in events:
        if not is_fault_event(event.get("event")):
            continue
        t_ms = event.get("t_ms")
        if not isinstance(t_ms, int | float) or isinstance(t_ms, bool):
            continue
        label, short = _labels(event)
        broker = event.get("broker")
        rows.append(
            {
                "variant": None if event.get("variant") is None else str(event["variant"]),
                # Which fault of the scenario this step belongs to: pairs inject with heal.
                "fault": event.get("fault") if isinstance(event.get("fault"), int) else None,
                "t_ms": float(t_ms),
                "seq": event.get("seq") if isinstance(event.get("seq"), int) else None,
                "event": str(event["event"]),
                "broker": broker if isinstance(broker, int) else None,
                "label": label,
                "short": short,
                "details": {k: v for k, v in event.items() if k not in _ORDERING},
            }
        )
    rows.sort(key=lambda r: (r["variant"] or "", r["t_ms"], r["seq"] or 0, r["event"]))
    index = {name: i for i, name in enumerate(variants)}
    # Stable: time order within each variant.
    rows.sort(key=lambda r: index.get(str(r["variant"]), len(index)) if r["variant"] is not None
              else len(index))
    return rows


