"""Named random streams split from one root seed.

Each stream is a `random.Random` seeded from SHA-256(root seed, name), so adding a stream or
drawing more from one never changes another, and nothing depends on PYTHONHASHSEED.
"""

from __future__ import annotations

import hashlib
import random


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
