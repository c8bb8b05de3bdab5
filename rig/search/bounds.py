"""What `rig fuzz` may draw for one scenario: its optional `fuzz:` block, with defaults taken from
the scenario's own faults, brokers and duration. Problems are located like any scenario error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rig import units
from rig.errors import ScenarioError
from rig.scenario.load import DEFAULT_DURATION
from rig.scenario.source import Document

# Power loss is left out unless asked for: Kafka does not fsync by default, so losing
# acknowledged data to a power loss on several replicas is within its contract.
DEFAULT_KINDS = ("crash", "stall", "network-partition", "zk-session-expiry",
                 "controller-failover")
DEFAULT_MAX_FAULTS = 3
DEFAULT_HOLD = ("100ms", "15s")


@dataclass(frozen=True)
class FuzzBounds:
    """The space of schedules: kinds, how many, when, for how long, and on which brokers."""

    kinds: tuple[str, ...]
    max_faults: int
    window_ms: tuple[int, int]
    hold_ms: tuple[int, int]
    brokers: tuple[int, ...]
    racks: tuple[str, ...]
    cluster: tuple[int, ...]  # every broker, for the far side of a network partition


def _broker_ids(data: dict[str, Any]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    raw = data["cluster"]["brokers"]
    if isinstance(raw, int):
        return tuple(range(raw)), ()
    racks = sorted({b["rack"] for b in raw if b.get("rack")})
    return tuple(b["id"] for b in raw), tuple(racks)


def fuzz_bounds(doc: Document, data: dict[str, Any]) -> FuzzBounds:
    """The bounds of `data` (a variant's merged document, already valid against the schema).

    `doc` locates problems in the file: a window outside the run, brokers not in the cluster.
    """
    raw: dict[str, Any] = data.get("fuzz") or {}
    problems = []
    own_faults = data.get("faults") or []
    own_kinds = tuple(dict.fromkeys(f["kind"] for f in own_faults))
    kinds = tuple(raw.get("kinds") or own_kinds or DEFAULT_KINDS)
    duration = units.duration_ms(data.get("duration", DEFAULT_DURATION))
    window = tuple(units.duration_ms(v) for v in raw.get("window", (0, duration)))
    hold = tuple(units.duration_ms(v) for v in raw.get("hold", DEFAULT_HOLD))
    ids, racks = _broker_ids(data)
    brokers = tuple(raw.get("brokers") or ids)
    if not window[0] < window[1] <= duration:
        problems.append(doc.problem(("fuzz", "window"), f"must be [start, end] with start < end ≤ "
                                    f"the duration ({units.format_duration_ms(duration)})"))
    if not 0 < hold[0] <= hold[1]:
        problems.append(doc.problem(("fuzz", "hold"), "must be [shortest, longest] with "
                                    "0 < shortest ≤ longest"))
    unknown = sorted(set(brokers) - set(ids))
    if unknown:
        problems.append(doc.problem(("fuzz", "brokers"), f"brokers {unknown} are not in the "
                                    f"cluster (brokers: {list(ids)})"))
    if "rack-failure" in kinds and not racks:
        problems.append(doc.problem(("fuzz", "kinds"), "rack-failure needs brokers with racks"))
    if problems:
        raise ScenarioError(problems)
    return FuzzBounds(kinds=kinds,
                      max_faults=raw.get("max_faults", max(DEFAULT_MAX_FAULTS, len(own_faults))),
                      window_ms=(window[0], window[1]), hold_ms=(hold[0], hold[1]),
                      brokers=brokers, racks=racks, cluster=ids)
