"""A producer's keyed records of one size, added to the accumulator in bulk (the hot loop of a
producer sending a million records), into exactly the batches the per-record loop makes
(rig.workload.accumulator: `RecordAccumulator.add_records`).

For `keys: {uniform: N}` under Kafka's murmur2 partitioner with a fixed `record_size`, a record's
only draw is its key: `randrange(N)`, which CPython's `random.Random` draws as
`getrandbits(N.bit_length())` repeated until below N, one 32-bit Mersenne Twister word a try
(`_randbelow_with_getrandbits`; the word's top bits). So the keys of `count` records are the
first `count` accepted among the stream's next words: drawn as one `getrandbits(32 × words)`
(the same words, in order, little-endian), the stream then set back and moved on by exactly the
words used. Each key's partition is murmur2's, worked out once per key. A record's size then
depends only on its place in its batch (its offset delta), so each partition's records fill its
open batch, and then new ones, a batch at a time: how many fit is a bisection over the sizes'
running sums. Batches closed are queued in the order their closing records came, and the open
batches keep the order the loop leaves them in (a dict's: a batch opened later comes later).
tests/workload/test_keyed_records.py holds every field of every batch, the stream's state and
the queues' order to the per-record loop's.
"""

from __future__ import annotations

import random
import sys
from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Callable
from operator import call
from typing import Protocol

from rig.hashing import murmur2
from rig.scenario.model import ProducerSpec
from rig.workload.batches import BatchQueues, OpenBatch

DENSE_KEYS = 1 << 22  # up to this many keys, their partitions are a list (8 bytes a key)

# An array of unsigned 32-bit words: the Mersenne Twister's, one per try.
_WORD = next(code for code in "ILH" if array(code).itemsize == 4)


class RecordAccumulator(Protocol):
    """What the bulk path takes of the accumulator (rig.workload.accumulator)."""

    spec: ProducerSpec
    rng: random.Random
    partitions: int
    sequence: int  # the next record's sequence number
    keep_keys: bool
    open_batches: dict[int, OpenBatch]
    queues: BatchQueues


def key_partition(key: int, partitions: int) -> int:
    """The partition of the record with key id `key` (its bytes `key-<id>`): Kafka's
    murmur2 partitioner, Utils.toPositive(murmur2(key bytes)) % partitions (BuiltInPartitioner
    .partitionForKey; DefaultPartitioner before 3.3)."""
    return (murmur2(f"key-{key}".encode()) & 0x7FFFFFFF) % partitions


def applies(accumulator: RecordAccumulator) -> bool:
    """Whether `accumulator`'s records can go in bulk: uniform keys, murmur2, one size."""
    spec = accumulator.spec
    return (spec.keys == "uniform" and spec.partitioner == "murmur2"
            and spec.record_size.kind not in ("uniform", "normal")
            and type(accumulator.rng) is random.Random and 1 <= spec.key_count < 1 << 32)


class KeyedRecords:
    """The bulk path of one accumulator (`applies` said so)."""

    def __init__(self, accumulator: RecordAccumulator, batch_header: int,
                 record_size: Callable[[int, int, int | None, int | None], int]):
        self.accumulator = accumulator
        spec = accumulator.spec
        self.keys = spec.key_count
        self.shift = 32 - self.keys.bit_length()
        # murmur2's partition of each key, worked out once: a list while keys are few enough
        # (-1: not yet), else a dict.
        self.partition_of: list[int] | dict[int, int] = (
            [-1] * self.keys if self.keys <= DENSE_KEYS else {})
        self.limit = spec.batch_size
        self.header = batch_header
        # running[t]: the bytes of a batch's first t records; far enough that the last one
        # exceeds what any batch can hold (the first record always goes in).
        self.running = [0]
        while self.running[-1] <= self.limit - batch_header or len(self.running) < 3:
            self.running.append(self.running[-1] + record_size(
                len(self.running) - 1, 0, spec.key_size, spec.record_size.low))
        self.capacity = max(1, bisect_right(self.running, self.limit - batch_header) - 1)

    def _draw_keys(self, count: int) -> list[int]:
        """The next `count` keys of the stream, which moves on past them (and no further)."""
        rng = self.accumulator.rng
        keys, shift = self.keys, self.shift
        state = rng.getstate()
        drawn: list[int] = []
        used = 0  # words
        while True:
            need = count - len(drawn)
            words = max(64, need * (1 << (32 - shift)) // keys * 9 // 8 + 16)
            block = array(_WORD)
            block.frombytes(rng.getrandbits(32 * words).to_bytes(4 * words, "little"))
            if sys.byteorder == "big":
                block.byteswap()
            tries = [word >> shift for word in block]
            accepted = [key for key in tries if key < keys]
            if len(accepted) < need:
                drawn += accepted
                used += words
                continue
            drawn += accepted[:need]
            # The words up to the need-th accepted one: drop the surplus ones from the end.
            surplus, end = len(accepted) - need, words
            while surplus or tries[end - 1] >= keys:
                surplus -= tries[end - 1] < keys
                end -= 1
            used += end
            break
        rng.setstate(state)
        rng.getrandbits(32 * used)
        return drawn

    def add(self, count: int, now_ms: float) -> None:
        if count <= 0:
            return
        acc = self.accumulator
        keys = self._draw_keys(count)
        partition_of = self.partition_of
        new = (set(keys).difference(partition_of) if isinstance(partition_of, dict)
               else {key for key in keys if partition_of[key] < 0})
        for key in new:
            partition_of[key] = key_partition(key, acc.partitions)
        # Each partition's records' places in this draw, in order (the loop runs in C).
        partitions = list(map(partition_of.__getitem__, keys))
        places: dict[int, list[int]] = {partition: [] for partition in partitions}
        appends = {partition: records.append for partition, records in places.items()}
        deque(map(call, map(appends.__getitem__, partitions), range(count)), maxlen=0)
        closed: list[tuple[int, int, OpenBatch]] = []  # (closing record's place, partition, batch)
        opened: list[tuple[int, int, OpenBatch]] = []  # the same for the batches left open
        for partition, records in places.items():
            self._fill(partition, records, keys, now_ms, closed, opened)
        acc.sequence += count
        topic = acc.spec.topic
        for _place, partition, batch in sorted(closed, key=lambda entry: entry[0]):
            acc.queues.append((topic, partition), batch)
        if opened:  # (each moved to the end of the open batches, in the order it was opened)
            for _place, partition, batch in sorted(opened, key=lambda entry: entry[0]):
                acc.open_batches[partition] = batch

    def _fill(self, partition: int, records: list[int], keys: list[int], now_ms: float,
              closed: list[tuple[int, int, OpenBatch]],
              opened: list[tuple[int, int, OpenBatch]]) -> None:
        """Add one partition's records (their places in this draw) to its open batch, then to
        new ones; note each batch closed (at the record that did not fit) and the one left
        open if it is new."""
        acc = self.accumulator
        running, limit, header = self.running, self.limit, self.header
        keep = acc.keep_keys
        total, done = len(records), 0
        batch = acc.open_batches.get(partition)
        if batch is not None:
            held = batch.records
            room = limit - batch.size + running[held]
            fit = bisect_right(running, room, held + 1,
                               min(held + total + 1, len(running))) - held - 1
            self._put(batch, records[:fit], keys, keep)
            done = fit
            if done < total:
                del acc.open_batches[partition]
                closed.append((records[done], partition, batch))
        while done < total:
            first = records[done]
            batch = OpenBatch(0, header, acc.sequence + first, now_ms)
            taking = records[done:done + self.capacity]
            self._put(batch, taking, keys, keep)
            done += len(taking)
            if done < total:
                closed.append((records[done], partition, batch))
            else:
                opened.append((first, partition, batch))

    def _put(self, batch: OpenBatch, records: list[int], keys: list[int], keep: bool) -> None:
        held, added = batch.records, len(records)
        batch.size += self.running[held + added] - self.running[held]
        batch.records = held + added
        if keep:
            batch.keys.extend(keys[place] for place in records)
