"""Keyed records of one size added in bulk (rig.workload.keyed_records) make exactly the batches,
queues and stream state the accumulator's per-record loop makes."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rig.scenario.model import ProducerSpec, SizeDist
from rig.workload import keyed_records
from rig.workload.accumulator import RecordAccumulator
from rig.workload.batches import OpenBatch
from tests.examples import examples


def _pair(spec: ProducerSpec, partitions: int, seed: int, message_format: int,
          keep_keys: bool) -> tuple[RecordAccumulator, RecordAccumulator]:
    looped, bulk = (RecordAccumulator(spec, partitions, random.Random(seed), message_format,
                                      keep_keys) for _ in range(2))
    looped._bulk = None  # the per-record loop
    assert bulk._bulk is not None
    return looped, bulk


def _batch(batch: OpenBatch) -> tuple[Any, ...]:
    return (batch.records, batch.size, batch.sequence, batch.created_ms, batch.keys.tolist())


def _state(acc: RecordAccumulator) -> tuple[Any, ...]:
    queues = acc.queues
    return (acc.rng.getstate(), acc.sequence,
            [(p, _batch(b)) for p, b in acc.open_batches.items()],
            [(key, [_batch(b) for b in queues._queues[key]]) for key in queues.held()],
            sorted(queues._place.items(), key=lambda item: item[1]))


@settings(max_examples=examples(60), deadline=None)
@given(seed=st.integers(0, 2**32), keys=st.one_of(
           st.integers(1, 70), st.sampled_from([1 << 16, (1 << 16) + 1, 100_000, (1 << 31) - 1]),
           st.integers(1, 300_000)),
       partitions=st.integers(1, 40), value=st.integers(0, 3000), key_size=st.integers(1, 40),
       batch_size=st.integers(1, 70_000), message_format=st.sampled_from([0, 1, 2]),
       keep_keys=st.booleans(),
       draws=st.lists(st.tuples(st.integers(0, 2500), st.booleans()), min_size=1, max_size=6))
def test_bulk_records_make_the_loops_batches(seed: int, keys: int, partitions: int, value: int,
                                             key_size: int, batch_size: int,
                                             message_format: int, keep_keys: bool,
                                             draws: list[tuple[int, bool]]) -> None:
    spec = ProducerSpec("p", "t", 1000.0, record_size=SizeDist("fixed", value),
                        key_size=key_size, keys="uniform", key_count=keys,
                        batch_size=batch_size)
    looped, bulk = _pair(spec, partitions, seed, message_format, keep_keys)
    for step, (count, linger_over) in enumerate(draws):
        for acc in (looped, bulk):
            acc.add_records(count, step * 10.0)
            if linger_over:
                acc.close_all(step * 10.0)
        assert _state(bulk) == _state(looped)
        # The stream goes on the same (the next draws of any kind agree).
        assert bulk.rng.random() == looped.rng.random()


@pytest.mark.parametrize(("change", "bulk"), [
    ({}, True), ({"keys": "zipf"}, False), ({"partitioner": "round-robin"}, False),
    ({"record_size": SizeDist("uniform", 10, 20)}, False), ({"key_count": (1 << 32) - 1}, True),
    ({"key_count": 1 << 32}, False)])
def test_only_uniform_keys_murmur2_and_one_size_go_in_bulk(change: dict[str, Any],
                                                           bulk: bool) -> None:
    spec = ProducerSpec("p", "t", 1000.0, keys="uniform", key_count=10)
    spec = ProducerSpec(**{**spec.__dict__, **change})
    acc = RecordAccumulator(spec, 4, random.Random(1), 2, False)
    assert keyed_records.applies(acc) is bulk
    assert (acc._bulk is not None) is bulk
