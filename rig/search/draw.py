"""Random fault schedules within a scenario's fuzz bounds, as scenario `faults:` entries.

Every draw comes from a `random.Random` the caller seeds, so a schedule is a pure function of
(seed, run index); nothing here reads a clock or the global random module.
"""

from __future__ import annotations

import random
from typing import Any

from rig.search.bounds import FuzzBounds

Fault = dict[str, Any]

# The fields of a fault that hold a duration in ms (shrinking makes these smaller).
TIMED_FIELDS = ("at", "restart_after", "heal_after")


def run_rng(seed: int, index: int) -> random.Random:
    """The random stream of run `index` of a fuzz session started with `seed`."""
    return random.Random(f"rig-fuzz/{seed}/{index}")


def draw_fault(rng: random.Random, bounds: FuzzBounds) -> Fault:
    kind = rng.choice(bounds.kinds)
    low, high = bounds.window_ms
    fault: Fault = {"kind": kind, "at": rng.randrange(low, high)}
    hold = rng.randint(*bounds.hold_ms)
    broker = rng.choice(bounds.brokers)
    if kind in ("crash", "power-loss", "controlled-shutdown"):
        fault.update(broker=broker, restart_after=hold)
    elif kind == "rack-failure":
        fault.update(rack=rng.choice(bounds.racks), restart_after=hold)
    elif kind in ("stall", "fetcher-stuck"):
        fault.update(broker=broker, heal_after=hold)
    elif kind == "zk-session-expiry":
        fault.update(broker=broker)
    elif kind == "network-partition":
        nodes: list[int | str] = [*bounds.cluster, *bounds.control_nodes]
        alone = rng.choice([*bounds.brokers, *bounds.control_nodes])
        rest = [b for b in nodes if b != alone]
        fault.update(groups=[[alone], rest], heal_after=hold)
    elif kind == "link":
        nodes = [*bounds.cluster, *bounds.control_nodes]
        others = [b for b in nodes if b != broker]
        other = rng.choice(others)
        fault.update(between=[broker, other], loss=rng.choice([0.5, 1.0]), heal_after=hold)
    elif kind == "reassign":
        # kafka-reassign-partitions --execute: one partition to as many brokers as it has
        # replicas, drawn from the whole cluster in a random order (its first is the preferred
        # leader). A target on the same brokers only reorders them.
        topic, partitions, replication_factor = rng.choice(bounds.topics)
        fault.update(topic=topic, partition=rng.randrange(partitions),
                     replicas=rng.sample(bounds.cluster, min(replication_factor,
                                                             len(bounds.cluster))))
    elif kind == "controller-failover" and bounds.kraft:
        # KRaft's failover: the active controller's process dies (KafkaRaftClient: the voters
        # elect another after the fetch timeout) and starts again after the hold.
        fault.update(kind="crash", controller="active", restart_after=hold)
    return fault  # ZooKeeper's controller-failover needs nothing more


def draw_schedule(rng: random.Random, bounds: FuzzBounds) -> list[Fault]:
    """One to `max_faults` faults, sorted by injection time."""
    count = rng.randint(1, bounds.max_faults)
    faults = [draw_fault(rng, bounds) for _ in range(count)]
    return sorted(faults, key=lambda f: f["at"])


def draw_run(bounds: FuzzBounds, seed: int, index: int) -> tuple[list[Fault], int]:
    """Run `index` of a session seeded `seed`: its schedule and its scenario seed."""
    rng = run_rng(seed, index)
    faults = draw_schedule(rng, bounds)
    return faults, rng.randrange(2**31)


def as_yaml_faults(faults: list[Fault]) -> list[Fault]:
    """The schedule as scenario YAML writes it: durations as `NNNms` strings."""
    return [{k: (f"{v}ms" if k in TIMED_FIELDS else v) for k, v in f.items()} for f in faults]
