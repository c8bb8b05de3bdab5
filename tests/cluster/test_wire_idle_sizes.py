"""An idle full response is sized by its topic runs alone: the same sizes as its shape, built
the long way (response_shape), gives the meter — including runs where a topic comes back."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from rig.cluster.messages import response_shape, response_sizes
from rig.cluster.wire import Meter
from rig.protocol.errors import NONE


@pytest.mark.parametrize("version", [4, 6, 7, 11, 12, 13, 15, 17])
@pytest.mark.parametrize("runs", [
    (("t", 1000),),
    (("a", 3), ("b", 200), ("c", 1)),
    (("a", 2), ("b", 1), ("a", 5)),  # a topic in two runs (leadership moved)
])
def test_idle_full_response_sizes_equal_the_shapes(version: int,
                                                   runs: tuple[tuple[str, int], ...]) -> None:
    partitions: dict[tuple[str, int], None] = {}
    for topic, n in runs:  # each run's partitions, numbered on from the topic's last run
        first = sum(1 for t, _ in partitions if t == topic)
        partitions.update(dict.fromkeys((topic, first + i) for i in range(n)))
    request: Any = SimpleNamespace(version=version, topic_runs=runs, partitions=partitions)
    context: Any = SimpleNamespace(full=True, error_code=NONE)
    slow = Meter(verify=1 << 20).response(response_shape(request, context, {}, {}))
    fast_meter = Meter(verify=1 << 20)
    assert response_sizes(fast_meter, request, context, {}, {}) == slow
    assert response_sizes(fast_meter, request, context, {}, {}) == slow  # kept, same
    assert fast_meter.verified == 1  # sized (and checked against the encoder) once


@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("version", [12, 13, 17])
def test_a_diverging_epoch_costs_its_tagged_field_exactly(version: int, full: bool) -> None:
    # KAFKA-10554: a partition answered with diverging_epoch (tag 0 of the response partition:
    # tag, size, epoch int32, end offset int64, its own empty tagged fields = 15 bytes) and
    # no records is not idle; the meter checks each size against a real encoding.
    partitions = {("t", 0): None, ("t", 1): None}
    request: Any = SimpleNamespace(version=version, topic_runs=(("t", 2),), partitions=partitions)
    context: Any = SimpleNamespace(full=full, error_code=NONE)
    listed = {} if full else {("t", 1): None}
    meter = Meter(verify=1 << 20)
    idle = response_sizes(meter, request, context, {}, listed)
    diverging = response_sizes(meter, request, context, {}, listed, {("t", 1): (0, 3)})
    assert meter.verified == 2
    assert [d - i for d, i in zip(diverging, idle, strict=True)] == [15, 0, 15]
