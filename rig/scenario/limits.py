"""How big a variant would be, projected before it is simulated, and the bounds rig keeps to.

A run costs what happens in it: records produced, fetch rounds logged, periodic samples, and the
model's replicas in memory. The projection is an estimate from the scenario alone (no
simulation): generous, so every realistic scenario passes, but orders of magnitude below what
would fill a disk or hang for days (`duration: 1000000h`, `rate: 1e12`). A scenario that means
to be that big says so with its `limits:` key (README, "Limits").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rig.scenario.model import VariantSpec
from rig.scenario.source import PathKey
from rig.units import format_duration_ms

# Defaults of the `limits:` keys. Every shipped scenario stays at least four times below each
# (the largest, benchmarks/scenarios/idle-100k-partitions.yaml, projects 12.6M events).
DEFAULT_EVENTS = 50_000_000  # about 15 GB of event log, an hour or more of simulation
DEFAULT_RECORDS = 100_000_000  # 1,000 s of simulation at ~100k simulated records per wall second
DEFAULT_REPLICAS = 1_000_000  # ~1.5 GB of model (100k partitions × RF 3 take ~470 MiB)
EVENT_BYTES = 300  # a JSON line of the event log, rounded up
MAX_RECORD_BYTES = 1 << 20  # Kafka's max.request.size (and ~max.message.bytes) default


@dataclass(frozen=True)
class Projection:
    """What one variant would cost, and the key most responsible for each figure."""

    records: float
    records_at: PathKey
    events: float
    events_at: PathKey
    replicas: int


def _seconds(ms: float) -> float:
    return max(ms, 0) / 1000


def project(variant: VariantSpec) -> Projection:
    """An estimate of records, events and replicas of `variant`, from its spec alone."""
    run_s = _seconds(variant.duration_ms)
    partitions = {t.name: t.partitions for t in variant.topics}
    rf = {t.name: t.replication_factor for t in variant.topics}
    records, biggest = 0.0, -1.0
    records_at: PathKey = ("duration",)
    batches = 0.0
    for i, p in enumerate(variant.producers):
        active_s = _seconds((p.stop_ms if p.stop_ms is not None else variant.duration_ms)
                            - p.start_ms)
        if p.burst_on_ms:
            active_s *= p.burst_on_ms / (p.burst_on_ms + p.burst_off_ms)
        count = p.rate * active_s
        if p.count is not None:
            count = min(count, float(p.count))
        records += count
        if count > biggest:
            biggest = count
            records_at = ("workload", "producers", i, "count" if p.count is not None else "rate")
        # a batch closes when full or when linger expires on one partition; the sticky and
        # explicit partitioners fill one partition at a time
        size = max(p.record_size.low, p.record_size.high, 1) + p.key_size
        spread = 1 if p.partitioner in ("sticky", "explicit") else partitions.get(p.topic, 1)
        per_linger = p.rate * max(p.linger_ms, 1) / 1000 / max(spread, 1)
        per_batch = max(1.0, min(p.batch_size / size, per_linger))
        # each batch: a produce request and ack, a fetch round per follower, and consumer reads
        batches += count / per_batch * (2 + 2 * max(rf.get(p.topic, 1) - 1, 0))
    consumers = sum(c.members for c in variant.consumers)
    periodic = len(variant.brokers) + len(variant.consumers) + consumers
    fetch_rounds = 0.0
    if variant.events != "fetch-aggregated":
        n = len(variant.brokers)
        followers = sum(t.partitions * max(t.replication_factor - 1, 0) for t in variant.topics)
        connections = min(n * max(n - 1, 0) * variant.config.num_replica_fetchers, followers)
        fetch_rounds = connections * 1000 / max(variant.config.replica_fetch_wait_max_ms, 1)
        fetch_rounds += sum(c.members * min(n, partitions.get(c.topic, 1)) * 1000
                            / max(c.fetch_max_wait_ms, 1) for c in variant.consumers)
    timed = run_s * (2 * fetch_rounds + periodic)
    events = timed + batches
    events_at: PathKey = ("duration",) if timed >= batches else records_at
    replicas = sum(t.partitions * t.replication_factor for t in variant.topics)
    return Projection(records, records_at, events, events_at, replicas)


def _about(n: float) -> str:
    return f"{n:,.0f}" if n < 1e9 else f"{n:.2g}".replace("e+", "e")


def _bytes(n: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= size:
            return f"{n / size:,.0f} {unit}"
    return f"{n:,.0f} B"


def size_problems(variant: VariantSpec, limits: Mapping[str, Any]) -> list[tuple[PathKey, str]]:
    """What makes `variant` too big to simulate, each located at the key that makes it so."""
    found: list[tuple[PathKey, str]] = []
    for i, p in enumerate(variant.producers):
        largest = max(p.record_size.low, p.record_size.high if p.record_size.kind == "uniform"
                      else 0) + p.key_size
        if largest > MAX_RECORD_BYTES:
            found.append((("workload", "producers", i, "record_size"),
                          f"records of up to {largest:,} bytes (value and key) are larger than "
                          f"Kafka's max.request.size ({MAX_RECORD_BYTES:,} bytes by default): "
                          "Kafka refuses them (RECORD_TOO_LARGE) and rig would simulate nothing"))
    projection = project(variant)
    max_records = int(limits.get("records", DEFAULT_RECORDS))
    max_events = int(limits.get("events", DEFAULT_EVENTS))
    max_replicas = int(limits.get("replicas", DEFAULT_REPLICAS))
    if projection.records > max_records:
        found.append((projection.records_at,
                      f"would produce about {_about(projection.records)} records in "
                      f"{format_duration_ms(variant.duration_ms)}; "
                      f"rig stops at {max_records:,} (limits.records): lower the rate or the "
                      "duration, or raise limits.records if you mean it"))
    elif projection.events > max_events:
        found.append((projection.events_at,
                      f"would log about {_about(projection.events)} events (~"
                      f"{_bytes(projection.events * EVENT_BYTES)} of event log); rig stops at "
                      f"{max_events:,} (limits.events): shorten the duration, use "
                      "`events: fetch-aggregated`, or raise limits.events if you mean it"))
    if projection.replicas > max_replicas:
        found.append((("topics",),
                      f"{projection.replicas:,} partition replicas in all topics; rig models at "
                      f"most {max_replicas:,} (limits.replicas): fewer partitions, or raise "
                      "limits.replicas if the machine has the memory (~1.5 KB each)"))
    return found
