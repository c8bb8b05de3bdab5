"""A variant's clients (the `workload` section): producers (rate, bursts, keys, partitioner,
acks, sizes) and consumer groups (fetch settings, offset commits, racks, the assignor), each
checked against the topics and the brokers' racks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rig import units
from rig.scenario import profiles
from rig.scenario.model import (
    BrokerConfig,
    ConsumerSpec,
    ProducerSpec,
    SizeDist,
    StrategyRef,
    TopicSpec,
)
from rig.scenario.problems import Collector, UnitReader
from rig.scenario.source import PathKey


def _size_dist(raw: Any) -> SizeDist:
    if isinstance(raw, dict) and "uniform" in raw:
        low, high = (units.size_bytes(v) for v in raw["uniform"])
        return SizeDist("uniform", low, high)
    if isinstance(raw, dict) and "normal" in raw:
        return SizeDist("normal", units.size_bytes(raw["normal"]["mean"]),
                        units.size_bytes(raw["normal"]["stddev"]))
    return SizeDist("fixed", units.size_bytes(raw))


def _client_racks(raw: dict[str, Any], at: PathKey, racks: set[str], out: Collector
                  ) -> tuple[str, ...]:
    """A client's `rack` (client.rack): one rack or a list; each must be a broker's rack (a
    zone no broker is in is a typo here: nothing could be same-zone with it)."""
    given = raw.get("rack")
    if given is None:
        return ()
    listed = (given,) if isinstance(given, str) else tuple(given)
    for i, rack in enumerate(listed):
        if rack not in racks:
            where = (*at, "rack") if isinstance(given, str) else (*at, "rack", i)
            out.add(where, f"rack {rack!r} is not a rack of this cluster's brokers (racks: "
                    f"{', '.join(sorted(racks)) or 'none: give the brokers racks first'})")
    return listed


def read_producers(data: dict[str, Any], topics: Sequence[TopicSpec],
                   out: Collector, racks: set[str]) -> tuple[ProducerSpec, ...]:
    by_name = {t.name: t for t in topics}
    result = []
    for i, raw in enumerate(data.get("workload", {}).get("producers", [])):
        at: PathKey = ("workload", "producers", i)
        topic = by_name.get(raw["topic"])
        if topic is None:
            out.add((*at, "topic"), f"no topic named {raw['topic']!r} (topics: "
                    f"{', '.join(by_name)})")
            continue
        u = UnitReader(raw, at, out)
        rate, on, off = raw.get("rate", 1000), 0, 0
        if isinstance(rate, dict):
            burst = UnitReader(rate["bursty"], (*at, "rate", "bursty"), out)
            rate = rate["bursty"]["rate"]
            on, off = burst.get("on", units.duration_ms), burst.get("off", units.duration_ms)
            if on <= 0:
                out.add((*at, "rate"), "a burst needs on > 0")
        keys, key_count, zipf_s = "none", 0, 1.0
        raw_keys = raw.get("keys", "none")
        if isinstance(raw_keys, dict) and "uniform" in raw_keys:
            keys, key_count = "uniform", raw_keys["uniform"]
        elif isinstance(raw_keys, dict):
            keys, key_count = "zipf", raw_keys["zipf"]["keys"]
            zipf_s = raw_keys["zipf"].get("s", 1.0)
        partitioner: Any = raw.get("partitioner", "murmur2" if keys != "none" else "sticky")
        explicit = 0
        if isinstance(partitioner, dict):
            partitioner, explicit = "explicit", partitioner["explicit"]
            if explicit >= topic.partitions:
                out.add((*at, "partitioner"), f"partition {explicit} does not exist: "
                        f"{topic.name} has {topic.partitions}")
        if partitioner == "murmur2" and keys == "none":
            out.add((*at, "partitioner"), "murmur2 partitions by key, but this producer sends "
                    "no keys: choose keys, or round-robin / sticky")
        acks = {"all": -1}.get(raw.get("acks", "all"), raw.get("acks", "all"))
        result.append(ProducerSpec(
            name=raw.get("name", f"producer-{i}"), topic=topic.name, rate=float(rate),
            burst_on_ms=on, burst_off_ms=off,
            record_size=u.get("record_size", _size_dist, 100) or SizeDist("fixed", 0),
            key_size=u.get("key_size", units.size_bytes, 16), keys=keys, key_count=key_count,
            zipf_s=zipf_s, partitioner=partitioner, explicit_partition=explicit, acks=int(acks),
            linger_ms=u.get("linger", units.duration_ms, "5ms"),
            batch_size=u.get("batch_size", units.size_bytes, "16KiB"),
            retries=raw.get("retries", 2_147_483_647),
            request_timeout_ms=u.get("request_timeout", units.duration_ms, "30s"),
            delivery_timeout_ms=u.get("delivery_timeout", units.duration_ms, "2m"),
            start_ms=u.get("start", units.duration_ms, 0),
            stop_ms=u.get("stop", units.duration_ms),
            count=raw.get("count"),
            rack=next(iter(_client_racks(raw, at, racks, out)), None)))
    return tuple(result)


def read_consumers(data: dict[str, Any], topics: Sequence[TopicSpec], config: BrokerConfig,
                   strategies: dict[str, StrategyRef], out: Collector,
                   racks: set[str], kafka: str) -> tuple[ConsumerSpec, ...]:
    by_name = {t.name: t for t in topics}
    groups: dict[str, int] = {}
    result = []
    for i, raw in enumerate(data.get("workload", {}).get("consumers", [])):
        at: PathKey = ("workload", "consumers", i)
        if raw["topic"] not in by_name:
            out.add((*at, "topic"), f"no topic named {raw['topic']!r} (topics: "
                    f"{', '.join(by_name)})")
            continue
        count = raw.get("groups", 1)
        names = [raw["group"]] if count == 1 else [
            f"{raw['group']}-{n:0{len(str(count))}d}" for n in range(1, count + 1)]
        for name in names:
            if name in groups:
                out.add((*at, "group"), f"group {name!r} is defined twice (also "
                        f"workload.consumers[{groups[name]}])")
                break
            groups[name] = i
        version = raw.get("fetch_version")
        session = strategies.get("fetch_session")
        if (session is not None and session.name == "incremental"
                and version is not None and version < 7):  # the cluster's: checked once
            out.add((*at, "fetch_version"), "incremental fetch sessions need Fetch v7 or later")
        u = UnitReader(raw, at, out)
        start_ms = u.get("start_at", units.duration_ms, 0)
        ramp_ms = u.get("ramp", units.duration_ms, 0)
        fetch_max_wait_ms = u.get("fetch_max_wait", units.duration_ms, "500ms")
        fetch_min_bytes = u.get("fetch_min_bytes", units.size_bytes, 1)
        max_partition_fetch_bytes = u.get("max_partition_fetch_bytes", units.size_bytes, "1MiB")
        fetch_max_bytes = u.get("fetch_max_bytes", units.size_bytes, "50MiB")
        lag_sample_ms = u.get("lag_sample", units.duration_ms, "1s")
        auto_commit_interval_ms = u.get("auto_commit_interval", units.duration_ms, "5s")
        metadata_max_age_ms = u.get("metadata_max_age", units.duration_ms, "5m")
        client_racks = _client_racks(raw, at, racks, out)
        assignor = raw.get("assignment", "range")
        rack_aware = raw.get("rack_aware_assignment")
        if rack_aware and assignor != "range":
            out.add((*at, "rack_aware_assignment"), f"the {assignor} assignor is not rack-aware "
                    "in Kafka (KIP-881 made range and the sticky assignors rack-aware): use "
                    "assignment: range, or leave rack_aware_assignment out")
        if rack_aware is None:
            rack_aware = profiles.profile(kafka).rack_aware_assignment
        for n, name in enumerate(names):
            result.append(ConsumerSpec(
                group=name, topic=raw["topic"], members=raw.get("members", 1),
                assignment=assignor, start=raw.get("start", "latest"),
                fetch_version=version,
                fetch_max_wait_ms=fetch_max_wait_ms, fetch_min_bytes=fetch_min_bytes,
                max_partition_fetch_bytes=max_partition_fetch_bytes,
                fetch_max_bytes=fetch_max_bytes,
                start_ms=start_ms + ramp_ms * n // len(names),
                lag_sample_ms=lag_sample_ms,
                commit=raw.get("commit", "none"),
                auto_commit_interval_ms=auto_commit_interval_ms,
                racks=client_racks, metadata_max_age_ms=metadata_max_age_ms,
                rack_aware_assignment=rack_aware and assignor == "range"))
    return tuple(result)
