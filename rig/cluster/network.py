"""Links between nodes: one-way latency plus serialization at the link's bandwidth.

Each directed link sends one message at a time, so a large response delays the next message on
the same link, as a TCP connection would. Faults can cut links (network partitions) and degrade
them (latency, bandwidth, loss). Nodes are broker ids, "zk", or client names; a client may have
a rack (client.rack, `place`), and two racked nodes in different racks use the cross-rack link;
a node without a rack (ZooKeeper, clients without client.rack) is reached over the same-rack link.

An idle fetch client that coasts (rig.cluster.coast) sends its messages in closed form: it
registers its two links here, and any real message on them, or a change to them, first wakes it
so the link is busy exactly as it would have been.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Protocol

from rig.scenario.model import LinkSpec, NetworkSpec

Node = int | str
Link = tuple[Node, Node]


class Coasting(Protocol):
    """A client whose messages on a link are computed, not simulated (rig.cluster.coast)."""

    def meets(self, link: Link, start_us: int, end_us: int) -> bool:
        """Whether one of its messages on `link` holds or waits for it within [start, end)."""
        ...

    def wake(self) -> None:
        """Put its messages on the links for real."""
        ...


class Network:
    def __init__(self, spec: NetworkSpec, racks: Mapping[int, str | None], rng: random.Random):
        self.spec = spec
        self.racks: dict[Node, str | None] = {node: rack for node, rack in racks.items()}
        self.rng = rng
        self._free_at: dict[tuple[Node, Node], int] = {}
        self._links: dict[tuple[Node, Node], tuple[int, float, float]] = {}
        self._overrides: dict[tuple[Node, Node], tuple[LinkSpec, float]] = {}
        # How many faults cut each link (a healed link leaves: empty while none is cut).
        self.cuts: dict[tuple[Node, Node], int] = {}
        # Links carrying a coasting client's messages → those clients.
        self.coasting: dict[Link, dict[Coasting, None]] = {}

    def _link(self, src: Node, dst: Node) -> tuple[int, float, float]:
        link = self._links.get((src, dst))
        if link is None:
            override = self._overrides.get((src, dst))
            if override is not None:
                spec, loss = override
            else:
                spec = self.spec.link(self.racks.get(src), self.racks.get(dst))
                loss = 0.0
            link = self._links[(src, dst)] = (spec.latency_us, 1_000_000 /
                                              spec.bandwidth_bytes_per_s, loss)
        return link

    def place(self, node: Node, rack: str) -> None:
        """A client node runs in `rack` (its client.rack): links to it follow the racks."""
        self.racks[node] = rack
        self._links = {link: v for link, v in self._links.items() if node not in link}

    def rack_of(self, node: Node) -> str | None:
        return self.racks.get(node)

    def arrival_us(self, src: Node, dst: Node, wire_bytes: int, now_us: int) -> int | None:
        """When a message sent now from `src` is fully received at `dst` (None: lost)."""
        key = (src, dst)
        latency_us, us_per_byte, loss = self._links.get(key) or self._link(src, dst)
        busy = round(wire_bytes * us_per_byte) or 1  # at least 1 µs
        if self.coasting and key in self.coasting:
            self._wake_met(key, now_us, busy)
        if loss and self.rng.random() < loss:
            return None
        free_at = self._free_at.get(key, 0)
        done = (now_us if now_us > free_at else free_at) + busy
        self._free_at[key] = done
        return done + latency_us

    def serialization_us(self, src: Node, dst: Node, wire_bytes: int) -> int:
        """How long `wire_bytes` occupy the link from `src` to `dst`."""
        return max(1, round(wire_bytes * self._link(src, dst)[1]))

    def quiet_transit_us(self, src: Node, dst: Node, wire_bytes: int) -> int | None:
        """Send to arrival on an idle, lossless, uncut link; None if the link is not so now."""
        latency_us, us_per_byte, loss = self._link(src, dst)
        if loss or self.blocked(src, dst):
            return None
        return max(1, round(wire_bytes * us_per_byte)) + latency_us

    def free_at(self, src: Node, dst: Node) -> int:
        """When the link from `src` to `dst` has sent everything queued on it."""
        return self._free_at.get((src, dst), 0)

    def occupy(self, src: Node, dst: Node, until_us: int) -> None:
        """A message computed in closed form kept the link busy until `until_us`."""
        if until_us > self._free_at.get((src, dst), 0):
            self._free_at[(src, dst)] = until_us

    def wake_coasting(self, a: Node, b: Node) -> None:
        """Wake the coasting clients whose messages use a link between `a` and `b`."""
        for link in ((a, b), (b, a)):
            for coast in list(self.coasting.get(link, ())):
                coast.wake()

    def _wake_met(self, link: Link, now_us: int, busy_us: int) -> None:
        """A real message sent now takes `link` for `busy_us`: wake the coasting clients whose
        messages it would wait for or hold up (once woken, theirs are on the link for real, and
        ours may then wait longer and meet more)."""
        waiting = self.coasting.get(link)
        while waiting:
            end = max(now_us, self._free_at.get(link, 0)) + busy_us
            met = [coast for coast in waiting if coast.meets(link, now_us, end)]
            if not met:
                return
            for coast in met:
                coast.wake()
            waiting = self.coasting.get(link)

    def blocked(self, src: Node, dst: Node) -> bool:
        return self.cuts.get((src, dst), 0) > 0

    def cut(self, a: Node, b: Node, on: bool) -> None:
        """Cut (or restore) both directions between two nodes; cuts from several faults stack."""
        if self.coasting:
            self.wake_coasting(a, b)
        for pair in ((a, b), (b, a)):
            count = self.cuts.get(pair, 0) + (1 if on else -1)
            if count:
                self.cuts[pair] = count
            else:
                del self.cuts[pair]

    def degrade(self, a: Node, b: Node, spec: LinkSpec | None, loss: float = 0.0) -> None:
        """Replace both directions' link with `spec` (None restores the scenario's)."""
        if self.coasting:
            self.wake_coasting(a, b)
        for pair in ((a, b), (b, a)):
            if spec is None:
                self._overrides.pop(pair, None)
            else:
                self._overrides[pair] = (spec, loss)
            self._links.pop(pair, None)

    def base_link(self, a: Node, b: Node) -> LinkSpec:
        latency_us, us_per_byte, _ = self._link(a, b)
        return LinkSpec(latency_us, 1_000_000 / us_per_byte)

    def round_trip_us(self, a: Node, b: Node) -> int:
        """Twice the base latency between `a` and `b`: how long a refused connection or a
        reset takes to reach the client (a SYN and its RST)."""
        return 2 * self._link(a, b)[0]
