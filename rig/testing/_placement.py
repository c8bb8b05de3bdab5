"""The placement contract, checked on standard clusters: valid assignments, no fenced leader,
refusals only when Kafka would refuse, and the same result from the same seed."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rig.scenario.model import BrokerSpec, TopicSpec
from rig.strategies import registry
from rig.strategies.placement.base import PlacementError, check_assignment, check_leaders
from rig.testing._common import ConformanceError, Report, create, static_problems

PARTITION_COUNTS = (1, 3, 8, 50)
MAX_REPLICATION_FACTOR = 4
SEEDS = (0, 1, 42)


@dataclass(frozen=True)
class StandardCluster:
    """A cluster the kit places topics on."""

    label: str
    brokers: tuple[BrokerSpec, ...]


def _cluster(label: str, racks: str | None = None, ids: Sequence[int] | None = None,
             fenced: Sequence[int] = ()) -> StandardCluster:
    """`racks` is one letter per broker (None: no racks); `ids` default to 0..n-1."""
    n = len(racks) if racks is not None else len(ids or ())
    ids = list(ids) if ids is not None else list(range(n))
    return StandardCluster(label, tuple(
        BrokerSpec(broker, racks[i] if racks is not None else None, broker in fenced)
        for i, broker in enumerate(ids)))


STANDARD_CLUSTERS: tuple[StandardCluster, ...] = (
    _cluster("1 broker", ids=[0]),
    _cluster("3 brokers, no racks", ids=[0, 1, 2]),
    _cluster("5 brokers, no racks, sparse ids", ids=[1001, 3, 42, 7, 17]),
    _cluster("6 brokers in 3 racks", racks="aabbcc"),
    _cluster("6 brokers in 2 uneven racks", racks="aaaabb"),
    _cluster("7 brokers in 3 uneven racks", racks="aaabbbc"),
    _cluster("9 brokers in 3 interleaved racks", racks="abcabcabc"),
    _cluster("12 brokers in 4 racks", racks="aaabbbcccddd"),
    _cluster("6 brokers in 3 racks, broker 2 fenced", racks="aabbcc", fenced=[2]),
    _cluster("5 brokers, no racks, 2 fenced", ids=[0, 1, 2, 3, 4], fenced=[0, 3]),
    _cluster("4 brokers in 2 racks, rack b fenced", racks="aabb", fenced=[2, 3]),
    _cluster("3 brokers, all fenced", ids=[0, 1, 2], fenced=[0, 1, 2]),
)


def _topics(brokers: Sequence[BrokerSpec]) -> list[TopicSpec]:
    top = min(len(brokers), MAX_REPLICATION_FACTOR)
    return [TopicSpec(f"t{p}x{rf}", p, rf) for rf in range(1, top + 1) for p in PARTITION_COUNTS]


def _refusal_allowed(brokers: Sequence[BrokerSpec], topic: TopicSpec) -> bool:
    # Kafka refuses when every broker is fenced; a strategy that leaves fenced brokers out (as
    # ZooKeeper-era Kafka did) may also refuse when too few unfenced brokers remain.
    unfenced = sum(not b.fenced for b in brokers)
    return unfenced == 0 or topic.replication_factor > unfenced


def _run(cls: Any, options: dict[str, Any], cluster: StandardCluster, seed: int,
         problems: list[str]) -> list[Any] | None:
    """Place every topic on `cluster` with one instance and one rng, as a variant does."""
    instance, trouble = create("placement", cls, options)
    if instance is None:
        problems.extend(trouble)
        return None
    rng = random.Random(seed)
    results: list[Any] = []
    for topic in _topics(cluster.brokers):
        plural = "s" if topic.partitions != 1 else ""
        case = (f"[{cluster.label}; {topic.partitions} partition{plural}, "
                f"RF {topic.replication_factor}]")
        try:
            raw = instance.assign(cluster.brokers, topic, rng)
        except PlacementError as exc:
            if not _refusal_allowed(cluster.brokers, topic):
                problems.append(f"{case} refused a placement Kafka would make: {exc}")
            results.append(("refused", str(exc)))
            continue
        except Exception as exc:
            problems.append(f"{case} raised {registry.describe_exception(exc)}")
            results.append(("raised", type(exc).__name__))
            continue
        try:
            assignment = [tuple(replicas) for replicas in raw]
        except TypeError:
            problems.append(f"{case} returned {type(raw).__name__}, not a list of replica lists")
            results.append(("bad", repr(raw)))
            continue
        found = (check_assignment(assignment, cluster.brokers, topic)
                 or check_leaders(assignment, cluster.brokers))
        if found:  # the first problem of each topic: enough to see the pattern
            more = f" (and {len(found) - 1} more in this topic)" if len(found) > 1 else ""
            problems.append(f"{case} {found[0]}{more}")
        results.append(assignment)
    return results


def check_placement(cls: Any, **options: Any) -> Report:
    """Check a placement strategy class against the placement contract; raise ConformanceError
    listing every problem, or return what was checked.

    On each standard cluster (no racks, even and uneven racks, sparse ids, fenced brokers) it
    places topics of 1–50 partitions and replication factors up to 4 with one instance and one
    `random.Random(seed)`, as a variant does, for three seeds; then again with a fresh instance,
    the same seed and the global `random` reseeded: the assignments must be equal.
    """
    problems = static_problems("placement", cls)
    if problems:
        raise ConformanceError("placement", cls, problems)
    report = Report("placement", str(getattr(cls, "name", cls.__qualname__)))
    for cluster in STANDARD_CLUSTERS:
        for seed in SEEDS:
            random.seed(seed)
            first = _run(cls, options, cluster, seed, problems)
            random.seed(seed + 1000)  # a strategy drawing from the global random diverges here
            again = _run(cls, options, cluster, seed, [])
            if first is not None and again is not None and first != again:
                diverged = next(i for i, (a, b) in enumerate(zip(first, again, strict=True))
                                if a != b)
                topic = _topics(cluster.brokers)[diverged]
                problems.append(f"[{cluster.label}; seed {seed}] not deterministic: placing "
                                f"topic {topic.name} again with a fresh instance and the same "
                                "rng seed gave another result (take all randomness from `rng`, "
                                "never from the global random, set order or the clock)")
        report.cases.append(f"{cluster.label}: {len(_topics(cluster.brokers))} topics, "
                            f"seeds {', '.join(map(str, SEEDS))}")
    if problems:
        raise ConformanceError("placement", cls, problems)
    return report
