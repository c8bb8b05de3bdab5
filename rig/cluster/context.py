"""What a node of the model may use of the world around it, and nothing more.

A broker (and each of its parts) is built with a `NodeContext`: the simulation clock and
scheduler, `emit` for the event log, the wire (`send`), a typed record of the strategies, the
topic configuration look-ups, the byte meter, and the two ZooKeeper writes a leader makes. The
`Cluster` builds one for its brokers; a unit test builds one with a fake wire and no cluster
(tests/cluster/test_broker_unit.py). Nothing here imports a node, so no node imports another
through it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from rig.engine import Simulation
from rig.events.log import positional
from rig.scenario.broker_config import BrokerConfig
from rig.scenario.model import OsSpec
from rig.strategies.compaction.base import CompactionStrategy
from rig.strategies.fetch_session.base import FetchSessionStrategy
from rig.strategies.isr.base import IsrStrategy
from rig.strategies.placement.base import PlacementStrategy
from rig.strategies.replication.base import ReplicationStrategy

if TYPE_CHECKING:
    from rig.cluster.replica import Replica, TopicPartition

Node = int | str  # a broker id, a client's name, or ZooKeeper's "zk"
Action = Callable[[], None]


class Emit(Protocol):
    def __call__(self, event: str, /, **fields: Any) -> None: ...


class EmitterOf(Protocol):
    """An event kind's emitter: `kind(event, *fields, **fixed)` → a function of the fields'
    values, by position, after the fixed ones (rig.events.log.EventLog.kind)."""

    def __call__(self, event: str, /, *fields: str, **fixed: Any) -> Callable[..., None]: ...


class Send(Protocol):
    """The wire: carry `nbytes` from `src` to `dst` and run `deliver` on arrival (or never)."""

    def __call__(self, src: Node, dst: Node, nbytes: int, deliver: Action, *,
                 reliable: bool = False, kind: str = "control") -> None: ...


class IsrWriter(Protocol):
    """The two ZooKeeper writes a partition leader makes (rig.cluster.cluster carries them)."""

    def change_isr(self, broker: Any, replica: Replica, isr: tuple[int, ...],
                   shrink: list[int] | None = None,
                   expand: list[int] | None = None) -> None: ...

    def propagate_isr_changes(self, broker: Any,
                              keys: tuple[TopicPartition, ...]) -> None: ...


class Process(Protocol):
    """A broker process as its parts see it: who it is, whether it runs, its clock."""

    id: int
    config: BrokerConfig
    alive: bool
    stalled: bool  # a pause (GC): its threads do nothing until it ends
    incarnation: int  # bumped by each crash: timers of an older one do nothing

    @property
    def now_ms(self) -> float: ...

    def every(self, period_ms: int, action: Action, *, first_ms: int | None = None) -> None:
        """Run `action` every `period_ms` (first after `first_ms`, if given) while this
        incarnation lives."""
        ...

    def schedule(self, delay_us: int, action: Action) -> None:
        """Run `action` once after `delay_us`, cancelled by a crash."""
        ...


class Wakeable(Protocol):
    """A fetch client's idle rounds held in closed form (rig.cluster.coast.Coast)."""

    def wake(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Strategies:
    """The variant's strategy of each kind, as the model calls them (guarded by the caller)."""

    placement: PlacementStrategy
    replication: ReplicationStrategy
    isr: IsrStrategy
    fetch_session: FetchSessionStrategy
    compaction: CompactionStrategy | None = None

    @classmethod
    def of(cls, chosen: Mapping[str, Any]) -> Strategies:
        """From a mapping kind → instance (the variant's `strategies`)."""
        return cls(chosen["placement"], chosen["replication"], chosen["isr"],
                   chosen["fetch_session"], chosen.get("compaction"))


class TopicConfigs:
    """Per-topic settings over the broker defaults (Kafka's topic-level overrides)."""

    def __init__(self, topic_config: Mapping[str, Mapping[str, Any]], cluster: BrokerConfig):
        self.by_topic = topic_config
        self._cluster = cluster
        # min.insync.replicas as an alter-config fault set it: per topic, and the cluster-wide
        # default (None: the broker config's)
        self._min_isr: dict[str, int] = {}
        self._default_min_isr: int | None = None

    def config(self, topic: str) -> Mapping[str, Any]:
        """The topic's own settings (empty for a topic that sets none)."""
        return self.by_topic.get(topic, {})

    def min_isr(self, key: TopicPartition) -> int:
        topic = key[0]
        value = self._min_isr.get(topic) if self._min_isr else None
        if value is None:
            value = self.by_topic[topic].get("min.insync.replicas")
        if value is not None:
            return int(value)
        default = self._default_min_isr
        return default if default is not None else self._cluster.min_insync_replicas

    def explicit_min_isr(self, topic: str | None) -> int | None:
        """The value an alter-config set for `topic` (None: the cluster default), or None."""
        return self._default_min_isr if topic is None else self._min_isr.get(topic)

    def follows_default(self, topic: str) -> bool:
        """Does the topic take min.insync.replicas from the cluster-wide default?"""
        return topic not in self._min_isr and "min.insync.replicas" not in self.by_topic[topic]

    def alter_min_isr(self, topic: str | None, value: int | None) -> None:
        """Set (None: drop) a topic's min.insync.replicas, or the cluster-wide default."""
        if topic is None:
            self._default_min_isr = value
        elif value is None:
            self._min_isr.pop(topic, None)
        else:
            self._min_isr[topic] = value

    def leader_min_isr(self, key: TopicPartition, replication_factor: int,
                       config: BrokerConfig) -> int:
        """min.insync.replicas as a leader applies it to acks=all and its HW: from Kafka 3.7 no
        more than the replication factor (Partition.effectiveMinIsr, KAFKA-15583), so a
        setting above it no longer refuses every acks=all write."""
        value = self.min_isr(key)
        return min(value, replication_factor) if config.effective_min_isr else value

    def unclean_election(self, key: TopicPartition) -> bool:
        value = self.by_topic[key[0]].get("unclean.leader.election.enable")
        return bool(value) if value is not None else self._cluster.unclean_leader_election_enable

    def flush_messages(self, key: TopicPartition, config: BrokerConfig) -> int | None:
        value = self.by_topic[key[0]].get("flush.messages")
        return int(value) if value is not None else config.log_flush_interval_messages


@dataclass(frozen=True, slots=True)
class NodeContext:
    """Everything a broker reaches outside itself."""

    sim: Simulation
    emit: Emit
    send: Send
    after_stall: Callable[[int, Action], None]  # run when broker `id`'s stall ends
    strategies: Strategies
    topics: TopicConfigs
    meter: Any  # rig.cluster.wire.Meter: request/response sizes of a shape
    os: OsSpec
    isr_writer: IsrWriter
    # Makes a follower's fetcher for (broker, leader, fetcher slot).
    new_fetcher: Callable[[Any, int, int], Any]
    # Each broker's rack, as the metadata cache's endpoints give it (KIP-392's replica views).
    racks: Mapping[int, str | None] = field(default_factory=dict)
    # Makes the hot events' emitters (EventLog.kind); None: `emit` with the fields by name.
    kind: EmitterOf | None = None
    # Idle fetch rounds may be held in closed form (rig.cluster.coast)
    coasting: bool = False

    def emitter(self, event: str, *fields: str, **fixed: Any) -> Callable[..., None]:
        """An emitter of `event`: the `fixed` fields, then the values of `fields` by position."""
        return (self.kind or partial(positional, self.emit))(event, *fields, **fixed)
