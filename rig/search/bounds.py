"""What `rig fuzz` may draw for one scenario: its optional `fuzz:` block, with defaults taken from
the scenario's own faults, brokers, controller and duration. Problems are located like any
scenario error.

The control plane decides which nodes a partition or a link may cut and what a controller fault
is (docs/kafka.md §10, §12): with ZooKeeper, node "zk", `zk-session-expiry`, and
`controller-failover` (the controller broker resigns); with KRaft, the quorum's dedicated
controllers by id (or its one implicit node "controller", which never fails), no ZooKeeper
session, and `controller-failover` drawn as a crash of the active controller (a quorum is
needed for that: `cluster.controllers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rig import units
from rig.errors import ScenarioError
from rig.scenario import profiles
from rig.scenario.load import DEFAULT_DURATION
from rig.scenario.model import Scenario, VariantSpec
from rig.scenario.overrides import deep_merge
from rig.scenario.source import Document, Lines

# Power loss is left out unless asked for: Kafka does not fsync by default, so losing
# acknowledged data to a power loss on several replicas is within its contract.
DEFAULT_KINDS = ("crash", "stall", "network-partition", "zk-session-expiry",
                 "controller-failover")
# KRaft: no ZooKeeper session; a controller failover only where a quorum can lose its leader.
KRAFT_DEFAULT_KINDS = ("crash", "stall", "network-partition", "controller-failover")
_ZOOKEEPER_ONLY_KINDS = ("zk-session-expiry",)
# The kinds rig.search.draw can draw (a scenario's own faults of other kinds are not defaults).
# alter-config is not among them: which setting to change, and to what, is the scenario's
# question, not a random one.
DRAWN_KINDS = ("crash", "power-loss", "controlled-shutdown", "rack-failure", "stall",
               "fetcher-stuck", "zk-session-expiry", "network-partition", "link",
               "controller-failover", "reassign")
DEFAULT_MAX_FAULTS = 3
DEFAULT_HOLD = ("100ms", "15s")


@dataclass(frozen=True)
class FuzzBounds:
    """The space of schedules: kinds, how many, when, for how long, and on which brokers."""

    kinds: tuple[str, ...]
    max_faults: int
    window_ms: tuple[int, int]
    hold_ms: tuple[int, int]
    brokers: tuple[int, ...]
    racks: tuple[str, ...]
    cluster: tuple[int, ...]  # every broker, for the far side of a network partition
    # The control plane's nodes a partition or a link may cut: ("zk",) with ZooKeeper; KRaft's
    # dedicated controllers, or ("controller",) for its one implicit node.
    control_nodes: tuple[int | str, ...] = ("zk",)
    kraft: bool = False  # controller-failover is a crash of the active KRaft controller
    # (name, partitions, replication factor) of each topic a reassignment may move
    topics: tuple[tuple[str, int, int], ...] = ()


def _broker_ids(data: dict[str, Any]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    raw = data["cluster"]["brokers"]
    if isinstance(raw, int):
        return tuple(range(raw)), ()
    racks = sorted({b["rack"] for b in raw if b.get("rack")})
    return tuple(b["id"] for b in raw), tuple(racks)


def _topics(variant: VariantSpec | None) -> tuple[tuple[str, int, int], ...]:
    """(name, partitions, replication factor) of each of the variant's own topics, as its
    loader resolved them. Without a loaded variant nothing says which topics a reassignment
    may move: none."""
    if variant is None:
        return ()
    return tuple((t.name, t.partitions, t.replication_factor) for t in variant.topics
                 if not t.name.startswith("__"))


def _control_plane(variant: VariantSpec | None) -> tuple[str, tuple[int | str, ...], bool]:
    """(controller kind, the nodes a fault may cut, whether a controller can fail)."""
    ref = variant.strategies.get("controller") if variant is not None else None
    kind = ref.name if ref is not None else "zookeeper"
    if kind == "zookeeper":
        return kind, ("zk",), True
    if kind != "kraft":
        return kind, (), False  # a plugin's control plane: its nodes are its own business
    assert variant is not None
    if not variant.controllers:
        return kind, ("controller",), False  # the one implicit controller never fails
    return kind, tuple(c.id for c in variant.controllers if not c.combined), True


def _takes_reassignments(controller: str, variant: VariantSpec | None) -> bool:
    """KRaft's controller, or a ZooKeeper one with AlterPartitionReassignments (KIP-455)."""
    return controller == "kraft" or (controller == "zookeeper" and variant is not None
                                     and not profiles.older(variant.kafka, "2.4"))


def fuzz_bounds(doc: Document, data: dict[str, Any],
                variant: VariantSpec | None = None) -> FuzzBounds:
    """The bounds of `data` (a variant's merged document, already valid against the schema);
    `variant`, the same variant loaded, says which control plane it runs (default ZooKeeper).

    `doc` locates problems in the file: a window outside the run, brokers not in the cluster,
    a kind the variant's controller cannot take.
    """
    raw: dict[str, Any] = data.get("fuzz") or {}
    problems = []
    own_faults = data.get("faults") or []
    own_kinds = tuple(dict.fromkeys(f["kind"] for f in own_faults
                                    if f["kind"] in DRAWN_KINDS))
    controller, control_nodes, can_fail = _control_plane(variant)
    defaults = (DEFAULT_KINDS if controller == "zookeeper" else tuple(
        k for k in KRAFT_DEFAULT_KINDS if k != "controller-failover" or can_fail))
    kinds = tuple(raw.get("kinds") or own_kinds or defaults)
    duration = units.duration_ms(data.get("duration", DEFAULT_DURATION))
    window = tuple(units.duration_ms(v) for v in raw.get("window", (0, duration)))
    hold = tuple(units.duration_ms(v) for v in raw.get("hold", DEFAULT_HOLD))
    ids, racks = _broker_ids(data)
    brokers = tuple(raw.get("brokers") or ids)
    if not window[0] < window[1] <= duration:
        problems.append(doc.problem(("fuzz", "window"), f"must be [start, end] with start < end ≤ "
                                    f"the duration ({units.format_duration_ms(duration)})"))
    if not 0 < hold[0] <= hold[1]:
        problems.append(doc.problem(("fuzz", "hold"), "must be [shortest, longest] with "
                                    "0 < shortest ≤ longest"))
    unknown = sorted(set(brokers) - set(ids))
    if unknown:
        problems.append(doc.problem(("fuzz", "brokers"), f"brokers {unknown} are not in the "
                                    f"cluster (brokers: {list(ids)})"))
    if "rack-failure" in kinds and not racks:
        problems.append(doc.problem(("fuzz", "kinds"), "rack-failure needs brokers with racks"))
    if "reassign" in kinds and not _takes_reassignments(controller, variant):
        problems.append(doc.problem(("fuzz", "kinds"), "reassign is modelled with the kraft "
                                    "controller and with the zookeeper controller from Kafka "
                                    f"2.4, and this variant runs the {controller} controller"
                                    + (f" (kafka {variant.kafka})" if variant else "")))
    if controller != "zookeeper":
        for kind in kinds:
            if kind in _ZOOKEEPER_ONLY_KINDS:
                problems.append(doc.problem(("fuzz", "kinds"), f"{kind} acts on ZooKeeper, but "
                                            f"this variant runs the {controller} controller: "
                                            "draw network-partition instead (it cuts brokers "
                                            "off from the controller too)"))
            elif kind == "controller-failover" and not can_fail:
                problems.append(doc.problem(("fuzz", "kinds"), "controller-failover needs a "
                                            "controller that can fail: declare the KRaft "
                                            "quorum (cluster.controllers: 3)"
                                            if controller == "kraft" else
                                            f"controller-failover is not defined for the "
                                            f"{controller} controller"))
    if problems:
        raise ScenarioError(problems)
    return FuzzBounds(kinds=kinds,
                      max_faults=raw.get("max_faults", max(DEFAULT_MAX_FAULTS, len(own_faults))),
                      window_ms=(window[0], window[1]), hold_ms=(hold[0], hold[1]),
                      brokers=brokers, racks=racks, cluster=ids, control_nodes=control_nodes,
                      kraft=controller == "kraft", topics=_topics(variant))


def merged_variant(data: dict[str, Any], variant: str | None) -> dict[str, Any]:
    """The document variant `variant` runs: the scenario's keys with the variant's merged in."""
    if variant is None or not data.get("variants"):
        return data
    base = {k: v for k, v in data.items() if k not in ("variants", "expect")}
    merged: dict[str, Any] = deep_merge(base, data["variants"][variant], Lines(), Lines())
    return merged


def variant_bounds(doc: Document, scenario: Scenario) -> dict[str | None, FuzzBounds]:
    """The bounds of each of `scenario`'s variants (key None: a file without variants), loaded
    from `doc`; every problem of every variant is raised at once, each named once."""
    data: dict[str, Any] = doc.data
    names: list[str | None] = ([v.name for v in scenario.variants] if data.get("variants")
                               else [None])
    bounds: dict[str | None, FuzzBounds] = {}
    problems: dict[str, Any] = {}
    for name, variant in zip(names, scenario.variants, strict=True):
        try:
            bounds[name] = fuzz_bounds(doc, merged_variant(data, name), variant)
        except ScenarioError as error:
            problems.update((str(p), p) for p in error.problems if str(p) not in problems)
    if problems:
        raise ScenarioError(list(problems.values()))
    return bounds
