"""A producer's batches: open while records are appended (Kafka's ProducerBatch), then queued
per partition (RecordAccumulator's batches map) until the Sender takes them."""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from rig.cluster.partition import TopicPartition


@dataclass(eq=False, slots=True)
class OpenBatch:
    """Kafka's ProducerBatch: open while records are appended, then queued, sent and retried
    as one (its first sequence is its identity in the brokers' logs)."""

    records: int
    size: int
    sequence: int
    created_ms: float
    attempts: int = 0
    keys: array = field(default_factory=lambda: array("i"))  # key id per keyed record
    # When a retried batch last went (ProducerBatch.lastAttemptMs), in simulated µs: integer,
    # so a look at that instant plus the backoff finds it ready (in ms, 32727.755 + 100 rounds
    # above the 32827.755 the clock shows then, and the batch waited for ever).
    last_attempt_us: int = 0
    # 3.7+ (KAFKA-15415): the leader epoch the batch last saw, and its attempts then.
    leader_epoch: int = -1  # currentLeaderEpoch; -1: none yet
    attempts_at_leader_change: int = 0  # attemptsWhenLeaderLastChanged

    def maybe_update_leader_epoch(self, epoch: int) -> None:
        """ProducerBatch.maybeUpdateLeaderEpoch: the metadata names a newer leader epoch."""
        if epoch >= 0 and epoch > self.leader_epoch:
            self.attempts_at_leader_change = self.attempts
            self.leader_epoch = epoch

    @property
    def leader_changed_for_retry(self) -> bool:
        """ProducerBatch.hasLeaderChangedForTheOngoingRetry: a retry whose partition got a
        newer leader since its last attempt (it goes without the backoff)."""
        return self.attempts >= 1 and self.attempts == self.attempts_at_leader_change


class BatchQueues:
    """The closed batches waiting per partition (RecordAccumulator's batches map), shared by the
    accumulator, which queues them, and the Sender, which takes them from the head and puts a
    retried one back there. The partitions holding a batch are kept apart, so that a look at
    what may go costs what is queued, not how many partitions the producer writes.

    Their order is the order in which each partition's first batch was queued: a dict's, as rig
    always walked them (Kafka walks a hash map's: arbitrary in both, fixed in rig)."""

    __slots__ = ("_drain_index", "_held", "_place", "_queues")

    def __init__(self) -> None:
        self._drain_index: dict[int, int] = {}  # per leader: where its next drain starts
        self._queues: dict[TopicPartition, deque[OpenBatch]] = {}
        self._place: dict[TopicPartition, int] = {}  # where a partition stands in the order
        self._held: set[TopicPartition] = set()  # the partitions whose queue is not empty

    def _queue(self, key: TopicPartition) -> deque[OpenBatch]:
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = deque()
            self._place[key] = len(self._place)
        self._held.add(key)
        return queue

    def append(self, key: TopicPartition, batch: OpenBatch) -> None:
        """A closed batch joins the tail of its partition's queue."""
        self._queue(key).append(batch)

    def appendleft(self, key: TopicPartition, batch: OpenBatch) -> None:
        """A batch to be retried goes back to the head of its partition's queue."""
        self._queue(key).appendleft(batch)

    def head(self, key: TopicPartition) -> OpenBatch | None:
        """The batch that goes next for `key`, if any."""
        return self._queues[key][0] if key in self._held else None

    def popleft(self, key: TopicPartition) -> OpenBatch:
        queue = self._queues[key]
        batch = queue.popleft()
        if not queue:
            self._held.discard(key)
        return batch

    def heads(self) -> list[tuple[TopicPartition, OpenBatch]]:
        """(partition, the batch that goes next) for each partition with a batch queued, in
        the queues' order."""
        queues = self._queues
        return [(key, queues[key][0]) for key in self.held()]

    def oldest_head_ms(self) -> float | None:
        """When the oldest batch at the head of a queue was created (None: nothing queued),
        found without ordering the partitions."""
        queues = self._queues
        return min((queues[key][0].created_ms for key in self._held), default=None)

    def held(self) -> list[TopicPartition]:
        """The partitions with a batch queued, in the queues' order."""
        return self.ordered(self._held)

    def ordered(self, keys: Iterable[TopicPartition]) -> list[TopicPartition]:
        """`keys` (partitions that have had a batch queued) in the queues' order."""
        return sorted(keys, key=self._place.__getitem__)

    def drain_node(self, leader: int, parts: list[TopicPartition], ready: set[TopicPartition],
                   max_request: int) -> dict[TopicPartition, OpenBatch]:
        """One request's batches for `leader` (RecordAccumulator.drainBatchesForOneNode): of
        `parts`, the partitions it leads, from where its last drain stopped (its drainIndex, so
        no partition starves), the head batch of each `ready` one, until max.request.size would
        be passed. The first batch goes whatever its size; a later one that does not fit ends
        the drain (it goes first in the next request). The request lists them in the order of
        the queues (Kafka's follows a HashMap's: the order is arbitrary in both)."""
        count = len(parts)
        start = index = self._drain_index.get(leader, 0) % count
        taken: dict[TopicPartition, OpenBatch] = {}
        size = 0
        while True:
            key = parts[index]
            self._drain_index[leader] = index
            index = (index + 1) % count
            head = self.head(key) if key in ready else None
            if head is not None:
                if taken and size + head.size > max_request:
                    break
                taken[key] = self.popleft(key)
                size += head.size
            if index == start:
                break
        if len(taken) < 2:
            return taken
        return {key: taken[key] for key in self.ordered(taken)}

    def __bool__(self) -> bool:
        return bool(self._held)
