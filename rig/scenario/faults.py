"""A variant's `faults`: each fault's targets (brokers, controllers, racks, partition groups
with clients, links, alter-config's topic) checked against the cluster, its trigger checked to
fire within the run, and the fault resolved to a `FaultSpec`."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

from rig import units
from rig.events import names as event_names
from rig.scenario.model import BrokerSpec, ConsumerSpec, ControllerSpec, FaultSpec, ProducerSpec
from rig.scenario.problems import Collector, UnitReader
from rig.scenario.source import PathKey

_FAULT_TARGETS = {
    "crash": "brokers", "power-loss": "brokers", "controlled-shutdown": "brokers",
    "stall": "brokers", "fetcher-stuck": "brokers",
    "zk-session-expiry": "brokers", "rack-failure": "rack", "network-partition": "groups",
    "link": "between", "controller-failover": None, "alter-config": "config",
    "reassign": "replicas",
}


def _never_fires(raw: dict[str, Any], at: PathKey, fault: FaultSpec, ids: set[int],
                 duration_ms: int, out: Collector) -> None:
    """Report a trigger that cannot fire in this run: the run would pass without the fault."""
    end = units.format_duration_ms(duration_ms)
    if fault.at_ms is not None and duration_ms and fault.at_ms >= duration_ms:
        out.add((*at, "at"), f"{raw['at']} is not before the end of the run (duration {end}): "
                "this fault would never fire; inject it earlier or lengthen the duration")
    if fault.after_event is None:
        return
    if fault.after_event not in event_names.ALL:
        close = difflib.get_close_matches(fault.after_event, sorted(event_names.ALL), n=1)
        hint = (f"; did you mean {close[0]!r}?" if close
                else "; the names are listed in rig/events/names.py")
        out.add((*at, "after", "event"), f"no event is named {fault.after_event!r}, so this "
                f"fault would never fire{hint}")
    if duration_ms and fault.after_delay_ms >= duration_ms:
        out.add((*at, "after", "delay"), f"{raw['after']['delay']} is not shorter than the run "
                f"(duration {end}): this fault would never fire")
    for key in ("broker", "leader"):
        value = fault.after_where.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value not in ids:
            out.add((*at, "after", "where", key), f"broker {value} is not in the cluster, so "
                    "no event matches and this fault would never fire")


def _client_nodes(node: dict[str, Any], producers: Sequence[ProducerSpec],
                  consumers: Sequence[ConsumerSpec], at: PathKey, out: Collector) -> list[str]:
    """The network nodes a client entry of a partition group names: `{producer: NAME}`, or
    `{consumer: GROUP}` (every member) or `{consumer: GROUP, member: N}`."""
    if "producer" in node:
        found = [p.node for p in producers if p.name == node["producer"]]
        if not found:
            out.add(at, f"no producer is named {node['producer']!r} (producers: "
                    f"{', '.join(p.name for p in producers) or 'none'})")
        return found
    group = next((c for c in consumers if c.group == node["consumer"]), None)
    if group is None:
        out.add(at, f"no consumer group is named {node['consumer']!r} (groups: "
                f"{', '.join(c.group for c in consumers) or 'none'})")
        return []
    member = node.get("member")
    if member is not None and member >= group.members:
        out.add(at, f"group {group.group!r} has {group.members} member(s): member {member} "
                f"does not exist (members count from 0)")
        return []
    return [group.member_node(m) for m in ([member] if member is not None
                                           else range(group.members))]


def read_faults(data: dict[str, Any], brokers: Sequence[BrokerSpec], duration_ms: int,
                out: Collector, producers: Sequence[ProducerSpec] = (),
                consumers: Sequence[ConsumerSpec] = (),
                controllers: Sequence[ControllerSpec] = ()) -> tuple[FaultSpec, ...]:
    ids = {b.id for b in brokers}
    voters = {c.id for c in controllers}
    racks = {b.rack for b in brokers if b.rack}
    result = []
    for i, raw in enumerate(data.get("faults", [])):
        at: PathKey = ("faults", i)
        kind = raw["kind"]
        targets = tuple(raw.get("brokers", ())) + ((raw["broker"],) if "broker" in raw else ())
        need = _FAULT_TARGETS[kind]
        named = tuple(raw.get("controllers", ())) + ((raw["controller"],)
                                                     if "controller" in raw else ())
        if need == "brokers" and not targets and not (named and kind in _CONTROLLER_FAULTS):
            out.add(at, f"a {kind} fault needs `broker` or `brokers`"
                    + (" (or `controller`)" if kind in _CONTROLLER_FAULTS else ""))
        _controller_targets(raw, at, kind, named, voters, out)
        for b in targets:
            if b not in ids:
                key = "broker" if raw.get("broker") == b else "brokers"
                out.add((*at, key), f"broker {b} is not in the cluster (brokers: "
                        f"{', '.join(map(str, sorted(ids)))})")
        if need == "rack" and raw.get("rack") not in racks:
            out.add((*at, "rack"), f"rack {raw.get('rack')!r} is not a rack of this cluster "
                    f"(racks: {', '.join(sorted(racks)) or 'none'})")
        if need == "groups" and "groups" not in raw:
            out.add(at, "a network-partition needs `groups` (lists of brokers, the controller's "
                    "node: \"zk\", or \"controller\" in KRaft, {producer: NAME} or "
                    "{consumer: GROUP[, member: N]})")
        if need == "between" and "between" not in raw:
            out.add(at, "a link fault needs `between: [node, node]`")
        _alter_config(raw, at, kind, data, out)
        _reassign(raw, at, kind, data, ids, out)
        groups: list[tuple[int | str, ...]] = []
        for g, group in enumerate(raw.get("groups", [])):
            nodes: list[int | str] = []
            for n, node in enumerate(group):
                if isinstance(node, dict):  # a client (a network partition may cut clients)
                    nodes.extend(_client_nodes(node, producers, consumers,
                                               (*at, "groups", g, n), out))
                else:
                    nodes.append(node)
            groups.append(tuple(nodes))
        for node in [n for g in groups for n in g] + list(raw.get("between", [])):
            if isinstance(node, int) and node not in ids and node not in voters:
                out.add(at, f"node {node} is not in the cluster")
        after = raw.get("after", {})
        u = UnitReader(raw, at, out)
        delay = UnitReader(after, (*at, "after"), out).get("delay", units.duration_ms, 0)
        result.append(FaultSpec(
            kind=kind, index=i,
            at_ms=u.get("at", units.duration_ms),
            after_event=after.get("event"), after_where=dict(after.get("where", {})),
            after_delay_ms=delay,
            brokers=targets, controllers=named, rack=raw.get("rack"),
            groups=tuple(groups),
            between=tuple(raw.get("between", ())),
            latency_us=u.get("latency", units.duration_us),
            bandwidth_bytes_per_s=u.get("bandwidth", units.bandwidth_bytes_per_s),
            loss=raw.get("loss", 0.0),
            restart_after_ms=u.get("restart_after", units.duration_ms),
            heal_after_ms=u.get("heal_after", units.duration_ms),
            description=raw.get("description", ""),
            topic=raw.get("topic"), config=dict(raw.get("config", {})),
            partition=raw.get("partition"), replicas=tuple(raw.get("replicas", ()))))
        _never_fires(raw, at, result[-1], ids, duration_ms, out)
    return tuple(result)


_CONTROLLER_FAULTS = ("crash", "power-loss")


def _alter_config(raw: dict[str, Any], at: PathKey, kind: str, data: dict[str, Any],
                  out: Collector) -> None:
    """`topic` and `config` belong to alter-config, which needs `config` and names a topic of
    the scenario (or none: the cluster-wide default)."""
    if kind != "alter-config":
        for key in ("topic", "config"):
            if key in raw and not (key == "topic" and kind == "reassign"):
                out.add((*at, key), f"`{key}` is for an alter-config fault, not {kind}")
        return
    if "config" not in raw:
        out.add(at, "an alter-config fault needs `config`, e.g. {min.insync.replicas: 1}")
    topic = raw.get("topic")
    names = [t.get("name") for t in data.get("topics") or [] if isinstance(t, dict)]
    if topic is not None and topic not in names:
        out.add((*at, "topic"), f"no topic is named {topic!r} (topics: "
                f"{', '.join(map(str, names)) or 'none'}); leave `topic` out to change the "
                "cluster-wide default")


def _reassign(raw: dict[str, Any], at: PathKey, kind: str, data: dict[str, Any],
              ids: set[int], out: Collector) -> None:
    """reassign needs `topic`, `partition` and `replicas`: a partition of a topic of the
    scenario, and brokers of the cluster, none twice (ReplicationControlManager
    .validateManualPartitionAssignment; any count, as Kafka takes a reassignment that changes
    the replication factor)."""
    if kind != "reassign":
        for key in ("partition", "replicas"):
            if key in raw:
                out.add((*at, key), f"`{key}` is for a reassign fault, not {kind}")
        return
    missing = [key for key in ("topic", "partition", "replicas") if key not in raw]
    if missing:
        out.add(at, "a reassign fault needs " + ", ".join(f"`{k}`" for k in missing)
                + ", e.g. {topic: events, partition: 0, replicas: [2, 3, 4]}")
    topics = {t.get("name"): t for t in data.get("topics") or [] if isinstance(t, dict)}
    topic = raw.get("topic")
    if topic is not None and topic not in topics:
        out.add((*at, "topic"), f"no topic is named {topic!r} (topics: "
                f"{', '.join(map(str, topics)) or 'none'})")
    partition, count = raw.get("partition"), topics.get(topic, {}).get("partitions")
    if isinstance(partition, int) and isinstance(count, int) and partition >= count:
        out.add((*at, "partition"), f"topic {topic!r} has {count} partition(s): partition "
                f"{partition} does not exist (partitions count from 0)")
    replicas = raw.get("replicas", [])
    for b in replicas:
        if b not in ids:
            out.add((*at, "replicas"), f"broker {b} is not in the cluster (brokers: "
                    f"{', '.join(map(str, sorted(ids)))})")
    twice = sorted({b for b in replicas if replicas.count(b) > 1})
    if twice:
        out.add((*at, "replicas"), f"broker {twice[0]} is listed more than once: a partition "
                "has at most one replica on a broker")


def _controller_targets(raw: dict[str, Any], at: PathKey, kind: str,
                        named: tuple[int | str, ...], voters: set[int], out: Collector) -> None:
    """The controllers a crash or power-loss names: ids of cluster.controllers, or "active"
    (whichever is the active controller when the fault fires). Whether the variant has a
    quorum at all is check_controller_mode's question."""
    if not named or not voters:
        return
    key = "controller" if "controller" in raw else "controllers"
    if kind not in _CONTROLLER_FAULTS:
        out.add((*at, key), f"a {kind} fault cannot name a controller: crash and power-loss "
                "do (network-partition groups and link name a controller by its id)")
        return
    for node in named:
        if node != "active" and node not in voters:
            out.add((*at, key), f"controller {node} is not in cluster.controllers (ids: "
                    f"{', '.join(map(str, sorted(voters)))}, or \"active\")")
