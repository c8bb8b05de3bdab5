"""The metadata log `__cluster_metadata` as a controller holds it, the active one appends it and
the brokers fetch it (KafkaRaftClient with long poll; docs/kafka.md §12). A record's offset is
its place in the log; a broker epoch is the offset of the broker's RegisterBrokerRecord. Each
record carries the Raft epoch it was written in (rig.cluster.kraft.raft replicates the log
between the controllers of a quorum).

The brokers read the log up to the high watermark: a fetch from below it is answered at once
with what follows; one at it waits (`fetch.max.wait` of the Raft client, 500 ms) until the
HW moves or the wait is over. Kafka sends an observer the uncommitted tail too, but its
listener applies records only up to the HW (handleCommit), so the brokers' images are the
same. With one controller (no cluster.controllers) every append is committed at once and
`appended()` answers every parked fetch. rig keeps each record as a small frozen object; its
size on the wire is `RECORD_BYTES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rig.cluster.kraft.partition_change_builder import PartitionRegistration
from rig.cluster.partition import TopicPartition
from rig.engine import Simulation, Timer

FETCH_MAX_WAIT_MS = 500  # KafkaRaftClient: a fetch at the log end waits this long
RECORD_BYTES = 60  # a PartitionChangeRecord or a broker record, framed, roughly
FETCH_BYTES = 100  # a Fetch of __cluster_metadata (request or empty response)


@dataclass(frozen=True)
class RegisterBrokerRecord:
    broker: int
    broker_epoch: int  # the offset this record takes
    fenced: bool = True
    incarnation: int = 0  # the registering process (Kafka's incarnation id)


@dataclass(frozen=True)
class BrokerRegistrationChangeRecord:
    broker: int
    broker_epoch: int
    fenced: bool | None = None  # None: unchanged
    in_controlled_shutdown: bool | None = None


@dataclass(frozen=True)
class PartitionChangeRecord:
    key: TopicPartition
    registration: PartitionRegistration  # the partition as it is after this record


@dataclass(frozen=True)
class LeaderChangeRecord:
    """The control record a new Raft leader writes first in its epoch (LeaderChangeMessage);
    the controllers' state machines skip it, and so do the brokers."""

    leader: int
    epoch: int
    voters: tuple[int, ...]


@dataclass(frozen=True)
class NoOpRecord:
    """What the active controller writes when nothing else is written (KIP-835, 3.3+): every
    metadata.max.idle.interval.ms, so the brokers' and standbys' logs, HWs and last-applied
    times move while the cluster is quiet. Nobody's image changes by it."""


Record = (RegisterBrokerRecord | BrokerRegistrationChangeRecord | PartitionChangeRecord
          | LeaderChangeRecord | NoOpRecord)
Reply = Callable[[int, tuple[Record, ...]], None]  # (start offset, records)


class MetadataLog:
    def __init__(self, sim: Simulation, quorum: bool = False):
        self.sim = sim
        self.records: list[Record] = []
        self.epochs: list[int] = []  # the Raft epoch each record was written in
        self.epoch = 1  # the epoch appends are written in (the leader's)
        self.hw = 0  # records [0, hw) are committed
        self.quorum = quorum  # replicated by Raft: the HW moves on a majority, not on append
        self.on_append: Callable[[], None] | None = None  # the Raft leader's replication
        self._waiting: list[tuple[int, Reply, Timer]] = []

    @property
    def end_offset(self) -> int:
        return len(self.records)

    @property
    def last_epoch(self) -> int:
        return self.epochs[-1] if self.epochs else 0

    def append(self, record: Record) -> int:
        """Append one record (the fetches parked at the end hear of it with `appended`);
        returns its offset."""
        self.records.append(record)
        self.epochs.append(self.epoch)
        return len(self.records) - 1

    def appended(self) -> None:
        """The controller's batch is written. One controller: it is committed, and every
        parked fetch is answered. A quorum: the Raft leader replicates it (`on_append`)."""
        if self.quorum:
            if self.on_append is not None:
                self.on_append()
            return
        self.hw = len(self.records)
        self._answer_waiting()

    def advance_hw(self, hw: int) -> None:
        """The quorum committed records up to `hw`: the parked fetches hear of them."""
        if hw > self.hw:
            self.hw = hw
            self._answer_waiting()

    @property
    def committed(self) -> int:
        """Where what a broker may read ends (one controller: the end of the log)."""
        return self.hw if self.quorum else len(self.records)

    def _answer_waiting(self) -> None:
        waiting, self._waiting = self._waiting, []
        end = self.committed
        for offset, reply, timer in waiting:
            timer.cancel()
            reply(offset, tuple(self.records[offset:end]))

    def replicate(self, records: tuple[Record, ...], epochs: tuple[int, ...]) -> None:
        """Append what the Raft leader sent a follower, each record with its own epoch."""
        self.records.extend(records)
        self.epochs.extend(epochs)

    def truncate(self, end: int) -> None:
        """Drop the records from `end` on (a follower whose log diverged from its leader's)."""
        del self.records[end:]
        del self.epochs[end:]
        self.hw = min(self.hw, end)

    def end_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(the largest epoch ≤ `epoch` in the log, the offset where it ends): Kafka's
        ReplicatedLog.endOffsetForEpoch, what a leader sends a diverging follower."""
        for i in range(len(self.epochs) - 1, -1, -1):
            if self.epochs[i] <= epoch:
                return self.epochs[i], i + 1
        return 0, 0

    def abandon_waiting(self) -> None:
        """This node stops serving fetches (it crashed, or is no longer the leader)."""
        for _, _, timer in self._waiting:
            timer.cancel()
        self._waiting = []

    def fetch(self, offset: int, reply: Reply) -> None:
        """A broker's Fetch from `offset`: answered now if there is something committed,
        else parked."""
        end = self.committed
        if offset < end:
            reply(offset, tuple(self.records[offset:end]))
            return
        entry: list[tuple[int, Reply, Timer]] = []

        def expire() -> None:
            if entry and entry[0] in self._waiting:
                self._waiting.remove(entry[0])
                reply(offset, ())

        entry.append((offset, reply, self.sim.after(FETCH_MAX_WAIT_MS * 1000, expire)))
        self._waiting.append(entry[0])
