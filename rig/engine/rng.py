"""Named random streams split from one root seed.

Each stream is a `random.Random` seeded from SHA-256(root seed, name), so adding a stream or
drawing more from one never changes another, and nothing depends on PYTHONHASHSEED.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable


class Streams:
    """Hands out one independent, reproducible `random.Random` per name."""

    def __init__(self, seed: int):
        self.seed = seed
        self._streams: dict[str, random.Random] = {}

    def get(self, name: str) -> random.Random:
        stream = self._streams.get(name)
        if stream is None:
            digest = hashlib.sha256(f"{self.seed}/{name}".encode()).digest()
            stream = random.Random(int.from_bytes(digest[:16], "big"))
            self._streams[name] = stream
        return stream


def randrange_of(rng: random.Random, start: int, stop: int) -> Callable[[], int]:
    """`functools.partial(rng.randrange, start, stop)`, drawing the same numbers from the same
    stream, in one call instead of three: CPython's `Random.randrange` takes `_randbelow(n)`,
    which for `random.Random` is `_randbelow_with_getrandbits` — `getrandbits(n.bit_length())`
    until the draw is below n — and this is that loop (tests/engine/test_rng.py holds it to
    `randrange`). For a producer's per-record key and size draws."""
    if type(rng) is not random.Random or stop <= start:
        return lambda: rng.randrange(start, stop)
    getrandbits = rng.getrandbits
    n = stop - start
    bits = n.bit_length()

    def draw() -> int:
        value = getrandbits(bits)
        while value >= n:
            value = getrandbits(bits)
        return start + value

    return draw
