"""The nodes of a variant's cluster and what joins them: brokers (ids, racks), the KRaft
controller quorum (`cluster.controllers`), the network's links and the brokers' OS write-back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rig import units
from rig.scenario.model import BrokerSpec, ControllerSpec, LinkSpec, NetworkSpec, OsSpec
from rig.scenario.problems import Collector, UnitReader
from rig.scenario.source import PathKey

DEFAULT_LATENCY = "500us"
DEFAULT_BANDWIDTH = "10Gbit/s"


def read_brokers(data: dict[str, Any], out: Collector) -> tuple[BrokerSpec, ...]:
    raw = data["cluster"]["brokers"]
    if isinstance(raw, int):
        return tuple(BrokerSpec(i) for i in range(raw))
    brokers = tuple(BrokerSpec(b["id"], b.get("rack"), b.get("fenced", False)) for b in raw)
    seen: dict[int, int] = {}
    for i, broker in enumerate(brokers):
        if broker.id in seen:
            out.add(("cluster", "brokers", i, "id"),
                    f"broker id {broker.id} is used twice (also at index {seen[broker.id]})")
        seen.setdefault(broker.id, i)
    racked = [b for b in brokers if b.rack is not None]
    if racked and len(racked) != len(brokers):
        missing = [b.id for b in brokers if b.rack is None]
        out.add(("cluster", "brokers"),
                f"some brokers have a rack and some do not (no rack: {missing}); Kafka refuses "
                "rack-aware placement then: give every broker a rack, or none")
    return brokers


def read_controllers(data: dict[str, Any], brokers: Sequence[BrokerSpec], out: Collector,
                     ) -> tuple[ControllerSpec, ...]:
    """cluster.controllers: the KRaft quorum's voters (KIP-595). A count: dedicated nodes with
    the ids after the highest broker id, racks round-robin over the brokers' racks; a list:
    dedicated nodes with their ids and racks; {combined: [ids]}: controllers inside brokers."""
    raw = data["cluster"].get("controllers")
    if raw is None:
        return ()
    at: PathKey = ("cluster", "controllers")
    ids = sorted(b.id for b in brokers)
    rack_of = {b.id: b.rack for b in brokers}
    listed = ", ".join(map(str, ids))
    if isinstance(raw, int):
        racks = sorted({b.rack for b in brokers if b.rack})
        first = ids[-1] + 1 if ids else 0
        return tuple(ControllerSpec(first + i, racks[i % len(racks)] if racks else None)
                     for i in range(raw))
    seen: set[int] = set()
    result: list[ControllerSpec] = []
    if isinstance(raw, dict):
        for i, node in enumerate(raw["combined"]):
            if node not in rack_of:
                out.add((*at, "combined", i), f"broker {node} is not in the cluster (brokers: "
                        f"{listed}): a combined controller runs inside a broker")
            elif node in seen:
                out.add((*at, "combined", i), f"broker {node} is listed twice")
            else:
                seen.add(node)
                result.append(ControllerSpec(node, rack_of[node], combined=True))
        return tuple(result)
    for i, entry in enumerate(raw):
        node = entry["id"]
        if node in rack_of:
            out.add((*at, i, "id"), f"id {node} is broker {node}'s: a dedicated controller "
                    f"needs an id of its own (brokers: {listed}), or use {{combined: [...]}} "
                    "for controllers that run inside brokers")
        elif node in seen:
            out.add((*at, i, "id"), f"controller id {node} is used twice")
        else:
            seen.add(node)
            result.append(ControllerSpec(node, entry.get("rack")))
    return tuple(result)
def _link(raw: dict[str, Any], fallback: LinkSpec, at: PathKey, out: Collector) -> LinkSpec:
    u = UnitReader(raw, at, out)
    latency_us = u.get("latency", units.duration_us)
    bandwidth = u.get("bandwidth", units.bandwidth_bytes_per_s)
    return LinkSpec(fallback.latency_us if latency_us is None else latency_us,
                    fallback.bandwidth_bytes_per_s if bandwidth is None else bandwidth)


def read_network(data: dict[str, Any], out: Collector) -> NetworkSpec:
    raw = data.get("network", {})
    defaults = LinkSpec(units.duration_us(DEFAULT_LATENCY),
                        units.bandwidth_bytes_per_s(DEFAULT_BANDWIDTH))
    same = _link(raw, defaults, ("network",), out)
    cross = _link(raw.get("cross_rack", {}), same, ("network", "cross_rack"), out)
    return NetworkSpec(same, cross)

def read_os(data: dict[str, Any], out: Collector) -> OsSpec:
    raw = data.get("cluster", {}).get("os", {})
    try:
        return OsSpec(units.duration_ms(raw.get("dirty_expire", "30s")),
                      units.duration_ms(raw.get("writeback_interval", "5s")))
    except ValueError as exc:
        out.add(("cluster", "os"), str(exc))
        return OsSpec()
