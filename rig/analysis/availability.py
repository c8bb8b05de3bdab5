"""How soon the controller declared a crashed broker dead, and how long partitions could not take
acks=all writes, from the few events rig.analysis.replication selects.

- fencing delay: from a broker's crash (or power loss) to the moment the controller took it out
  of the cluster: its `broker.fenced` in KRaft (QuorumController.maybeFenceOneStaleBroker, about
  broker.session.timeout.ms after its last heartbeat) or the expiry of its ZooKeeper session
  (`zk.session_expired`, which KafkaController.onBrokerFailure follows). A restart does not end
  the wait: until then ZooKeeper keeps the crashed process's session, so a new process cannot
  register (0.9+: `broker.startup_failed`; 0.8.2 waits), and KRaft refuses the new incarnation's
  registration until it has fenced the old one.
- under-min-ISR partition-seconds: the time partitions spent led with fewer in-sync replicas than
  min.insync.replicas (as `topic.created`, then each `config.altered`, gives it), summed
  (Kafka's UnderMinIsrPartitionCount, Partition.isUnderMinIsr: the leader's ISR below its
  effective min ISR; an offline partition has no leader and counts in the offline
  partition-seconds instead).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rig.events import names

__all__ = ["EVENTS", "fencing_delays", "under_min_isr_seconds"]

_DOWN = (names.BROKER_CRASH, names.BROKER_POWER_LOSS)
_DEAD = (names.BROKER_FENCED, names.ZK_SESSION_EXPIRED)
# The events both measures read besides the ISR changes and topic.created (fields: variant,
# event, t_ms, broker, topic, min_insync_replicas).
EVENTS = (*_DOWN, *_DEAD, names.CONFIG_ALTERED)
_LED = (names.ISR_SHRINK, names.ISR_EXPAND, names.LEADER_ELECTED)


def fencing_delays(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[float]]:
    """Per variant, the milliseconds from each broker crash to its fencing (or session expiry),
    in crash order. `rows` are in (variant, seq) order."""
    crashed: dict[tuple[str, Any], float] = {}  # (variant, broker) → crash time
    out: dict[str, list[float]] = {}
    for row in rows:
        event = row["event"]
        if event not in (*_DOWN, *_DEAD) or row["broker"] is None:
            continue
        key = (row["variant"], row["broker"])
        if event in _DOWN:
            crashed.setdefault(key, row["t_ms"])
        elif key in crashed:
            out.setdefault(row["variant"], []).append(round(row["t_ms"] - crashed.pop(key), 3))
    return out


def under_min_isr_seconds(rows: Sequence[Mapping[str, Any]],
                          end_ms: Mapping[str, float | None]) -> dict[str, float | None]:
    """Per variant, the partition-seconds spent led with an ISR below min.insync.replicas (as
    `topic.created` gives it; None for a variant whose log does not say it). `rows` are in
    (variant, seq) order; every partition starts with its whole assignment in sync."""
    min_isr: dict[tuple[str, Any], int | None] = {}
    led_isr: dict[tuple[str, Any, Any], int | None] = {}  # ISR size; None: offline
    under: dict[tuple[str, Any, Any], bool] = {}
    count: dict[str, int] = {}
    since: dict[str, float] = {}
    total: dict[str, float | None] = {}

    def settle(variant: str, key: tuple[str, Any, Any], now: bool, t_ms: float) -> None:
        if now == under.get(key, False):
            return
        held = count.get(variant, 0)
        if held and total[variant] is not None:
            total[variant] = (total[variant] or 0.0) + held * (t_ms - since[variant]) / 1000
        count[variant] = held + (1 if now else -1)
        since[variant] = t_ms
        under[key] = now

    for row in rows:
        variant, event = row["variant"], row["event"]
        if event in (names.TOPIC_CREATED, names.CONFIG_ALTERED):
            value = row["min_insync_replicas"]
            min_isr[(variant, row["topic"])] = value
            total.setdefault(variant, 0.0)
            if value is None:
                total[variant] = None
                continue
            for key, size in led_isr.items():  # the topic's partitions under the new value
                if key[0] == variant and key[1] == row["topic"]:
                    settle(variant, key, size is not None and size < value, row["t_ms"])
            continue
        wanted = min_isr.get((variant, row["topic"]))
        if wanted is None or event not in (*_LED, names.PARTITION_OFFLINE):
            continue
        key = (variant, row["topic"], row["partition"])
        led = event in _LED and row["isr"] is not None
        led_isr[key] = len(row["isr"]) if led else None
        settle(variant, key, led and len(row["isr"]) < wanted, row["t_ms"])
    for variant, held in count.items():
        stop = end_ms.get(variant)
        if held and stop is not None and total[variant] is not None:
            total[variant] = (total[variant] or 0.0) + held * max(0.0, stop - since[variant]) / 1000
    return total
