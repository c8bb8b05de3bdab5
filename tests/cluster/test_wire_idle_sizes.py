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
