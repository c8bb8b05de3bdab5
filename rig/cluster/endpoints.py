"""Where a broker is reached, as messages carry it (UpdateMetadata's and LeaderAndIsr's brokers,
Metadata's, KIP-951's NodeEndpoints): rig names no hosts, so broker N's host is `broker-N` (the
name its fetchers' client ids start with), on Kafka's default listener, PLAINTEXT on port 9092,
in its scenario rack."""

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
