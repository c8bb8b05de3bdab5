"""Links between nodes: one-way latency plus serialization at the link's bandwidth.

Each directed link sends one message at a time, so a large response delays the next message on
the same link, as a TCP connection would. Faults can cut links (network partitions) and degrade
them (latency, bandwidth, loss). Nodes are broker ids, "zk", or client names; a node without a
rack (ZooKeeper, clients) is reached over the same-rack link.
"""

from __future__ import annotations

import random

from rig.scenario.model import LinkSpec, NetworkSpec

Node = int | str


class Network:
    def __init__(self, spec: NetworkSpec, racks: dict[int, str | None], rng: random.Random):
        self.spec = spec
        self.racks = racks
        self.rng = rng
        self._free_at: dict[tuple[Node, Node], int] = {}
        self._links: dict[tuple[Node, Node], tuple[int, float, float]] = {}
        self._overrides: dict[tuple[Node, Node], tuple[LinkSpec, float]] = {}
        self._cut: dict[tuple[Node, Node], int] = {}  # how many faults cut this link

    def _link(self, src: Node, dst: Node) -> tuple[int, float, float]:
        link = self._links.get((src, dst))
        if link is None:
            override = self._overrides.get((src, dst))
            if override is not None:
                spec, loss = override
            else:
                rack_a = self.racks.get(src) if isinstance(src, int) else None
                rack_b = self.racks.get(dst) if isinstance(dst, int) else None
                spec = self.spec.same_rack if rack_a is None or rack_b is None else (
                    self.spec.link(rack_a, rack_b))
                loss = 0.0
            link = self._links[(src, dst)] = (spec.latency_us, 1_000_000 /
                                              spec.bandwidth_bytes_per_s, loss)
        return link

    def arrival_us(self, src: Node, dst: Node, wire_bytes: int, now_us: int) -> int | None:
        """When a message sent now from `src` is fully received at `dst` (None: lost)."""
        latency_us, us_per_byte, loss = self._link(src, dst)
        if loss and self.rng.random() < loss:
            return None
        start = max(now_us, self._free_at.get((src, dst), 0))
        done = start + max(1, round(wire_bytes * us_per_byte))
        self._free_at[(src, dst)] = done
        return done + latency_us

    def blocked(self, src: Node, dst: Node) -> bool:
        return self._cut.get((src, dst), 0) > 0

    def cut(self, a: Node, b: Node, on: bool) -> None:
        """Cut (or restore) both directions between two nodes; cuts from several faults stack."""
        for pair in ((a, b), (b, a)):
            self._cut[pair] = self._cut.get(pair, 0) + (1 if on else -1)

    def degrade(self, a: Node, b: Node, spec: LinkSpec | None, loss: float = 0.0) -> None:
        """Replace both directions' link with `spec` (None restores the scenario's)."""
        for pair in ((a, b), (b, a)):
            if spec is None:
                self._overrides.pop(pair, None)
            else:
                self._overrides[pair] = (spec, loss)
            self._links.pop(pair, None)

    def base_link(self, a: Node, b: Node) -> LinkSpec:
        latency_us, us_per_byte, _ = self._link(a, b)
        return LinkSpec(latency_us, 1_000_000 / us_per_byte)
