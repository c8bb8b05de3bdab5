"""The metadata log `__cluster_metadata` as the active controller appends it and the brokers
fetch it (KafkaRaftClient with long poll; docs/kafka.md §12). A record's offset is its place
in the log; a broker epoch is the offset of the broker's RegisterBrokerRecord.

A fetch from an offset below the end is answered at once with what follows; one at the end
waits (`fetch.max.wait` of the Raft client, 500 ms) until a record is appended or the wait is
over. rig keeps each record as a small frozen object; its size on the wire is `RECORD_BYTES`.
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


Record = RegisterBrokerRecord | BrokerRegistrationChangeRecord | PartitionChangeRecord
Reply = Callable[[int, tuple[Record, ...]], None]  # (start offset, records)


class MetadataLog:
    def __init__(self, sim: Simulation):
        self.sim = sim
        self.records: list[Record] = []
        self._waiting: list[tuple[int, Reply, Timer]] = []

    @property
    def end_offset(self) -> int:
        return len(self.records)

    def append(self, record: Record) -> int:
        """Append one record (the fetches parked at the end hear of it with `appended`);
        returns its offset."""
        self.records.append(record)
        return len(self.records) - 1

    def appended(self) -> None:
        """The controller's batch is written: answer the fetches parked at the old end."""
        waiting, self._waiting = self._waiting, []
        for offset, reply, timer in waiting:
            timer.cancel()
            reply(offset, tuple(self.records[offset:]))

    def fetch(self, offset: int, reply: Reply) -> None:
        """A broker's Fetch from `offset`: answered now if there is something, else parked."""
        if offset < len(self.records):
            reply(offset, tuple(self.records[offset:]))
            return
        entry: list[tuple[int, Reply, Timer]] = []

        def expire() -> None:
            if entry and entry[0] in self._waiting:
                self._waiting.remove(entry[0])
                reply(offset, ())

        entry.append((offset, reply, self.sim.after(FETCH_MAX_WAIT_MS * 1000, expire)))
        self._waiting.append(entry[0])
