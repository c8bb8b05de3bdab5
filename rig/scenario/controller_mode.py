"""The controller kind a variant runs (ZooKeeper or KRaft) against what it sets: the Kafka
release must have that controller, and the settings, faults and nodes the variant names must be
of it (docs/kafka.md §10, §12)."""

from __future__ import annotations

from typing import Any

from rig.scenario import profiles
from rig.scenario.problems import Collector
from rig.scenario.source import PathKey

# Keys and faults that belong to one controller kind only (docs/kafka.md §10, §12).
_ZK_ONLY_KEYS = ("zookeeper.session.timeout.ms",)
_KRAFT_ONLY_KEYS = ("broker.heartbeat.interval.ms", "broker.session.timeout.ms",
                    "eligible.leader.replicas.enable", "controller.quorum.election.timeout.ms",
                    "controller.quorum.fetch.timeout.ms", "metadata.max.idle.interval.ms")
_ZK_ONLY_FAULTS = ("zk-session-expiry", "controller-failover")
_NODE_OF = {"zookeeper": "zk", "kraft": "controller"}
# The first release whose controller takes AlterPartitionReassignments (KIP-455); before it a
# reassignment went through the /admin/reassign_partitions znode, with other rules.
_REASSIGNMENT_API = "2.4"


def check_controller_mode(data: dict[str, Any], kafka: str, kind: str, out: Collector) -> None:
    """The controller a variant runs must be one its Kafka release has, and the settings,
    faults and nodes it names must be of that controller: a ZooKeeper key in a KRaft variant
    (or the reverse) would otherwise be silently ignored."""
    profile = profiles.profile(kafka)
    if not profile.accepts_controller(kind):
        if kind == "zookeeper":
            out.add(("strategies", "controller"), f"Kafka {kafka} has no ZooKeeper mode "
                    "(removed in 4.0, KIP-833): use strategies.controller: kraft, or kafka 3.9 "
                    "or older")
        else:
            out.add(("strategies", "controller"), f"Kafka {kafka} has no KRaft mode rig "
                    "models (KRaft is production-ready from 3.3, KIP-833): use kafka ≥ 3.3")
    if kind not in _NODE_OF:
        return  # a plugin's control plane: its keys are its own business
    other = "kraft" if kind == "zookeeper" else "zookeeper"
    wrong = _KRAFT_ONLY_KEYS if kind == "zookeeper" else _ZK_ONLY_KEYS
    places: list[tuple[PathKey, dict[str, Any]]] = [
        (("cluster", "config"), data.get("cluster", {}).get("config") or {})]
    raw_brokers = data.get("cluster", {}).get("brokers")
    for i, raw in enumerate(raw_brokers if isinstance(raw_brokers, list) else []):
        if isinstance(raw, dict) and isinstance(raw.get("config"), dict):
            places.append((("cluster", "brokers", i, "config"), raw["config"]))
    # Offer the other controller only where this Kafka has it (4.0+ has no ZooKeeper mode).
    switch = (f", or set strategies.controller: {other}" if profile.accepts_controller(other)
              else f" (Kafka {kafka} runs {kind} only)")
    for at, config in places:
        for key in wrong:
            if key in config:
                out.add((*at, key), f"{key} is a {other} setting, but this variant runs the "
                        f"{kind} controller (kafka {kafka}): it would have no effect; drop it"
                        f"{switch}")
    quorum = data.get("cluster", {}).get("controllers")
    if kind == "zookeeper" and quorum is not None:
        out.add(("cluster", "controllers"), "cluster.controllers is KRaft's controller quorum, "
                f"but this variant runs the zookeeper controller (kafka {kafka}), which elects "
                "its controller among the brokers through ZooKeeper: drop it, or set "
                "strategies.controller: kraft")
    for i, raw in enumerate(data.get("faults") or []):
        for key in ("controller", "controllers"):
            if key not in raw:
                continue
            if kind == "zookeeper":
                out.add(("faults", i, key), f"{key} names a KRaft controller node, but this "
                        f"variant runs the zookeeper controller (kafka {kafka}); its controller "
                        "is a broker (crash that broker, or use controller-failover)")
            elif quorum is None:
                out.add(("faults", i, key), "this variant has one controller that never "
                        "fails (no cluster.controllers): declare the quorum, e.g. "
                        "cluster.controllers: 3, to crash a controller")
        if (kind == "zookeeper" and raw.get("kind") == "reassign"
                and profiles.older(kafka, _REASSIGNMENT_API)):
            out.add(("faults", i, "kind"), "reassign is modelled from Kafka "
                    f"{_REASSIGNMENT_API} (AlterPartitionReassignments, KIP-455), but this "
                    f"variant runs kafka {kafka}, whose kafka-reassign-partitions writes "
                    "/admin/reassign_partitions, which rig does not model: use kafka ≥ "
                    f"{_REASSIGNMENT_API}")
        if kind == "kraft" and raw.get("kind") in _ZK_ONLY_FAULTS:
            instead = ("a KRaft broker has no ZooKeeper session: cut it off from node "
                       "\"controller\" with a network-partition instead"
                       if raw["kind"] == "zk-session-expiry"
                       else "crash the active controller instead (cluster.controllers, then "
                       "a crash with controller: active)")
            out.add(("faults", i, "kind"), f"{raw['kind']} acts on ZooKeeper, but this variant "
                    f"runs the kraft controller (kafka {kafka}); {instead}")
        nodes = [n for g in raw.get("groups") or [] for n in g] + list(raw.get("between") or [])
        for node in nodes:
            if kind == "kraft" and quorum is not None and node == "controller":
                out.add(("faults", i), "with cluster.controllers the controllers are nodes of "
                        "their own: name them by id, not \"controller\"")
            elif isinstance(node, str) and node != _NODE_OF[kind]:
                out.add(("faults", i), f"node {node!r} exists only with the {other} controller;"
                        f" this variant runs {kind}, whose node is {_NODE_OF[kind]!r}")
