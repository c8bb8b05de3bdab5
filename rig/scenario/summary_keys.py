"""The keys summary.json can hold, declared once, so `rig validate` can check expectations.

An expectation names a dotted path into summary.json; a path that no run can produce would only
show, after the whole run, as UNKNOWN. `check` refuses it before the run, with the nearest key
as a suggestion. The declaration is kept true by a test that walks the summaries of real runs
(tests/scenario/test_summary_keys.py): every key they hold must be declared here, with its kind.

Leaves are kinds: NUMBER (null when not measured), BOOL, STRING, or LIST / MAP, whose insides
are free. A "*" key stands for any name (a variant, a consumer group, a check).

A path is dotted; a part that holds a dot itself (a variant named `zk-2.4`) is written in double
quotes, `variants."zk-2.4".produce.acked`, or with the dot escaped: `variants.zk-2\\.4.produce`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

NUMBER, BOOL, STRING, LIST, MAP = "number", "bool", "string", "list", "map"
ANY = "*"

# The traffic ledger's classes (rig.analysis.traffic.CLASSES; the analysis is not imported here).
_TRAFFIC_CLASSES = ("produce", "replication", "catch_up", "consumer_fetch", "fetch_overhead",
                    "control")
_BYTES = {"total": NUMBER, "min": NUMBER, "max": NUMBER, "p50": NUMBER}
_SPREAD = {"min": NUMBER, "p50": NUMBER, "max": NUMBER}
_FETCH_ROLE = {
    "requests": NUMBER, "responses": NUMBER, "full_requests": NUMBER,
    "incremental_requests": NUMBER, "request_bytes": _BYTES, "response_bytes": _BYTES,
    "wire_request_bytes": _BYTES, "wire_response_bytes": _BYTES,
    "first_request_bytes": NUMBER, "request_bytes_per_second": NUMBER,
    "response_bytes_per_second": NUMBER,
}
_VARIANT: dict[str, Any] = {
    "fetch": {"follower": _FETCH_ROLE, "consumer": _FETCH_ROLE},
    # rig.analysis.fetch_refusals: partitions refused, by Kafka's error name
    "fetch_refusals": {"follower": {ANY: NUMBER}, "consumer": {ANY: NUMBER}},
    "produce": dict.fromkeys(("acked", "acked_batches", "acked_all", "errors", "acked_lost",
                              "acked_all_lost"), NUMBER),
    "replication": dict.fromkeys((
        "leader_elections", "unclean_elections", "elr_elections", "last_known_leader_elections",
        "isr_shrinks", "isr_expands",
        "truncated_records", "leader_epoch_truncations", "diverging_epoch_truncations",
        "diverged_partitions", "broker_halts", "failed_starts", "fenced_fetches",
        "under_replicated_partition_seconds",
        "offline_partition_seconds", "max_recovery_seconds", "faults", "max_detection_seconds",
        "catch_up_bytes", "under_min_isr_partition_seconds", "full_truncations"), NUMBER) | {
        "max_ack_stall_ms": _SPREAD, "visibility_delay_ms": _SPREAD,
        # rig.analysis.availability: a broker's crash to its fencing (ZooKeeper: session expiry)
        "fencing_delay_ms": _SPREAD,
        # rig.analysis.replication: per fault, by its index in the scenario's faults
        "by_fault": {ANY: {
            "kind": STRING, "inject_ms": NUMBER, "ack_stall_ms": NUMBER, "isr_exit_ms": NUMBER,
            "visibility_delay_ms": _SPREAD, "detection_seconds": NUMBER,
            "recovery_seconds": NUMBER}}},
    # rig.analysis.replication: KRaft's controller quorum (cluster.controllers)
    # and reassignments (KIP-455): NEW_LEADER_ELECTED answers, completion elections, replicas
    "controller": dict.fromkeys(("elections", "brokers_fenced", "max_leaderless_ms",
                                 "max_metadata_stale_ms", "new_leader_elected",
                                 "reassignment_elections", "replicas_created",
                                 "replicas_deleted"), NUMBER),
    "sessions": {
        "created": NUMBER, "evicted": NUMBER,
        "errors": {"session_id_not_found": NUMBER, "invalid_session_epoch": NUMBER},
        "max_sessions_per_broker": NUMBER, "final_sessions": NUMBER,
        "sessionless_full_fetches": {"consumer": NUMBER, "follower": NUMBER},
    },
    "isr": {
        **dict.fromkeys(("shrinks", "expands", "shrinks_by_leader", "shrinks_by_controller",
                         "notifications", "max_metadata_staleness_ms",
                         "stale_partition_seconds"), NUMBER),
        "shrink_delay_ms": _SPREAD, "propagation_delay_ms": _SPREAD,
        "propagation_delay_by_writer_ms": {"leader": _SPREAD, "controller": _SPREAD},
    },
    "consumers": dict.fromkeys(("max_lag", "consumed", "offset_resets", "skipped"), NUMBER),
    "storage": {
        **dict.fromkeys((
            "cleaner_passes", "partial_passes", "aborted_passes", "records_removed",
            "tombstones_removed", "cleaner_bytes_read", "cleaner_bytes_written",
            "max_keys_mapped", "max_dirty_ratio", "final_dirty_ratio", "final_log_bytes",
            "final_compacted_log_bytes", "final_segments", "segments_deleted", "lookups"),
            NUMBER),
        "lookup_bytes_scanned": _SPREAD,
    },
    "offsets": {
        **dict.fromkeys(("commits", "commit_errors", "coordinator_failovers", "resumes",
                         "duplicates"), NUMBER),
        "groups": {ANY: {"offsets_partition": NUMBER, "coordinators": LIST}},
    },
    "checks": {
        "ok": BOOL, "status": STRING, "violations": LIST, "expected_by_scenario": BOOL,
        "checks": {ANY: {"status": STRING, "note": STRING}},
        "sizes_verified_by_encoder": NUMBER,
    },
    "simulation": {"events": NUMBER, "steps": NUMBER, "wall_seconds": NUMBER},
    # rig.analysis.traffic: bytes by class and zone scope, and what the cross-zone ones cost
    "traffic": {cls: {"same_zone_bytes": NUMBER, "cross_zone_bytes": NUMBER}
                for cls in _TRAFFIC_CLASSES},
    "cost": {"usd_per_month": NUMBER, "usd_total": NUMBER,
             "by_class": dict.fromkeys(_TRAFFIC_CLASSES, NUMBER),
             "prices": {"profile": STRING, "out_usd_per_gb": NUMBER, "in_usd_per_gb": NUMBER,
                        "broker_to_broker_free": BOOL}},
}
SUMMARY: dict[str, Any] = {
    "scenario": STRING, "seed": NUMBER, "rig_version": STRING, "scenario_sha256": STRING,
    "variants": {ANY: _VARIANT},
    "expectations": LIST,
    "timings": {"spark_start_seconds": NUMBER, "parse_seconds": NUMBER,
                "stages": {ANY: NUMBER}, "analysis_seconds": NUMBER},
}


def split_path(path: str) -> list[str]:
    """The parts of a dotted path: a part in double quotes, or a dot after a backslash, keeps
    its dots. ValueError for an unterminated quote."""
    parts: list[str] = []
    part: list[str] = []
    i, n = 0, len(path)
    while i < n:
        c = path[i]
        if c == "\\" and i + 1 < n:
            part.append(path[i + 1])
            i += 2
        elif c == '"' and not part:
            end = path.find('"', i + 1)
            if end < 0:
                raise ValueError(f"{path!r} has a quote that is not closed")
            part.append(path[i + 1:end])
            i = end + 1
            if i < n and path[i] != ".":
                raise ValueError(f"{path!r}: a quoted part must end at a dot")
        elif c == ".":
            parts.append("".join(part))
            part = []
            i += 1
        else:
            part.append(c)
            i += 1
    parts.append("".join(part))
    return parts


def path_parts(path: str) -> list[str]:
    """`split_path`, or for a path it refuses (reported by `check`) its plain dotted parts."""
    try:
        return split_path(path)
    except ValueError:
        return path.split(".")


def quote_part(name: str) -> str:
    """`name` as one part of a dotted path (quoted when it holds a dot)."""
    return f'"{name}"' if "." in name else name


def kind_of(path: Sequence[str], tree: Mapping[str, Any] = SUMMARY) -> str | None:
    """The kind of the value at `path` (a leaf kind, or "object" for a map of declared keys);
    None when no summary holds that key."""
    node: Any = tree
    for part in path:
        if not isinstance(node, Mapping):
            return node if node in (LIST, MAP) else None  # free insides
        if part in node:
            node = node[part]
        elif ANY in node:
            node = node[ANY]
        else:
            return None
    return node if isinstance(node, str) else "object"


def leaves(tree: Mapping[str, Any] = SUMMARY, prefix: tuple[str, ...] = ()
           ) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every declared leaf: (path, kind), "*" standing for any name."""
    for key, node in tree.items():
        if isinstance(node, Mapping):
            yield from leaves(node, (*prefix, key))
        else:
            yield (*prefix, key), node


def check(path: str, variants: Sequence[str] | None) -> tuple[str | None, str | None]:
    """(a problem with `path` or None, the kind of value it names or None); `variants` are the
    scenario's variant names, None when they are not known (not checked then)."""
    try:
        parts = split_path(path)
    except ValueError as e:
        return str(e), None
    if (parts[0] == "variants" and variants is not None
            and (len(parts) < 2 or parts[1] not in variants)):
        dotted = next((v for v in variants if "." in v and ".".join(parts[1:]).startswith(
            v + ".")), None)
        hint = (f"; a variant name with a dot is quoted: variants.{quote_part(dotted)}."
                f"{'.'.join(parts[1 + dotted.count('.') + 1:])}" if dotted else "")
        return (f"{path!r} names no variant of this scenario (variants: "
                f"{', '.join(variants)}){hint}", None)
    kind = kind_of(parts)
    if kind is None:
        name = parts[1] if parts[0] == "variants" and len(parts) > 1 else ""
        known = [".".join(name if p == ANY and i == 1 and name else p for i, p in enumerate(leaf))
                 for leaf, _ in leaves()]
        close = difflib.get_close_matches(path, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else (
            "; summary.json holds scenario, seed, variants.<name>.{fetch, produce, replication, "
            "sessions, isr, consumers, storage, offsets, checks, simulation} and expectations")
        return f"{path!r} is not a key of summary.json{hint}", None
    if kind == "object":
        return (f"{path!r} is a group of metrics, not one value: name one of its keys "
                f"({', '.join(_children(parts))})", None)
    return None, kind


def check_variant_path(path: str) -> str | None:
    """A problem with `path` as a key of every variant's summary entry (what `report.headline`
    names, without `variants.<name>.`), or None. A group of keys is refused like a key no
    summary holds: the report shows one value per cell."""
    parts = path.split(".")
    kind = kind_of(["variants", ANY, *parts])
    if kind is None:
        known = [".".join(leaf[2:]) for leaf, _ in leaves() if leaf[:2] == ("variants", ANY)]
        close = difflib.get_close_matches(path, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else (
            "; a variant's summary holds fetch, produce, replication, sessions, isr, "
            "consumers, storage, offsets, checks and simulation")
        return f"{path!r} is not a key of a variant's summary (summary.json variants.<name>){hint}"
    if kind == "object":
        return (f"{path!r} is a group of metrics, not one value: name one of its keys "
                f"({', '.join(_children(['variants', ANY, *parts]))})")
    return None


def _children(parts: Sequence[str]) -> list[str]:
    node: Any = SUMMARY
    for part in parts:
        node = node[part] if part in node else node[ANY]
    return sorted(node)
