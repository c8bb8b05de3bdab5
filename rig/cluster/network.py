"""Links between nodes: one-way latency plus serialization at the link's bandwidth.

Each directed link sends one message at a time, so a large response delays the next message on
the same link, as a TCP connection would.
"""

from __future__ import annotations

from rig.scenario.model import NetworkSpec


class Network:
    def __init__(self, spec: NetworkSpec, racks: dict[int, str | None]):
        self.spec = spec
        self.racks = racks
        self._free_at: dict[tuple[int, int], int] = {}
        self._links: dict[tuple[int, int], tuple[int, float]] = {}

    def _link(self, src: int, dst: int) -> tuple[int, float]:
        link = self._links.get((src, dst))
        if link is None:
            spec = self.spec.link(self.racks.get(src), self.racks.get(dst))
            link = self._links[(src, dst)] = (spec.latency_us,
                                              1_000_000 / spec.bandwidth_bytes_per_s)
        return link

    def arrival_us(self, src: int, dst: int, wire_bytes: int, now_us: int) -> int:
        """When a message of `wire_bytes` sent now from `src` is fully received at `dst`."""
        latency_us, us_per_byte = self._link(src, dst)
        start = max(now_us, self._free_at.get((src, dst), 0))
        done = start + max(1, round(wire_bytes * us_per_byte))
        self._free_at[(src, dst)] = done
        return done + latency_us
