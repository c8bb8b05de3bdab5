"""Where clients reach a broker, as responses carry it (NodeEndpoint, KIP-951): rig names broker
N's host `broker-N` and gives every broker Kafka's default port, 9092, and its scenario rack."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rig.protocol.fetch_response import NodeEndpoint

PORT = 9092


def broker_host(broker_id: int) -> str:
    return f"broker-{broker_id}"


def node_endpoints(brokers: Iterable[int],
                   racks: Mapping[int, str | None]) -> tuple[NodeEndpoint, ...]:
    """The endpoints of `brokers`, in id order."""
    return tuple(NodeEndpoint(b, broker_host(b), PORT, racks.get(b)) for b in sorted(brokers))
