from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from rig.engine import Streams
from rig.engine.rng import randrange_of


def test_same_seed_and_name_give_the_same_stream() -> None:
    a, b = Streams(42), Streams(42)
    assert [a.get("x").random() for _ in range(5)] == [b.get("x").random() for _ in range(5)]


def test_streams_are_independent_of_each_other() -> None:
    a, b = Streams(42), Streams(42)
    a.get("other").random()  # drawing from another stream changes nothing here
    for _ in range(100):
        b.get("noise").random()
    assert a.get("x").random() == b.get("x").random()
    assert Streams(42).get("x").random() != Streams(43).get("x").random()


def test_streams_do_not_depend_on_the_hash_seed() -> None:
    code = "from rig.engine import Streams; print(Streams(7).get('placement').random())"
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("0", "1", "12345")}
    assert len(outputs) == 1


def test_randrange_of_draws_what_randrange_draws_and_leaves_the_stream_where_it_does() -> None:
    # Ranges just above and below powers of two (many and few rejected draws), 1, and offsets.
    for start, stop in ((0, 1), (0, 2), (0, 3), (0, 100_000), (0, 65_536), (0, 65_537),
                        (200, 201), (10, 1_034), (-5, 5), (0, 2**40 + 1)):
        drawn, expected = random.Random(stop), random.Random(stop)
        draw = randrange_of(drawn, start, stop)
        assert [draw() for _ in range(2_000)] == [expected.randrange(start, stop)
                                                  for _ in range(2_000)]
        assert drawn.random() == expected.random()


def test_randrange_of_a_subclass_or_an_empty_range_is_randrange_itself() -> None:
    class Fixed(random.Random):
        def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
            return 7

    assert randrange_of(Fixed(1), 0, 100)() == 7
    with pytest.raises(ValueError):
        randrange_of(random.Random(1), 5, 5)()
