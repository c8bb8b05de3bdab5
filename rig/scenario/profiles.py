"""Kafka version profiles: the defaults and the version rules a scenario gets from `kafka: "X.Y"`.

Every rule that changed across releases is one row of `RULES` (rig.scenario.version_rules):
what it switches, its value from each release that changed it, and Kafka's source for the
change. A profile is the value of every row at its version; README's version table is
rig.scenario.version_table's (tests/test_readme.py keeps the two the same). A variant can still
pick a strategy by hand: the profile chooses only the defaults and the rules the brokers
themselves follow.

A profile is the X.Y.0 release: a fix back-ported to a patch release (KAFKA-10706 in 2.6.1,
KAFKA-12751 in 2.7.2 and 2.8.1) counts from the next minor release that shipped it. One
exception: 2.8's truncation on fetch is 2.8.1's (2.8.0's KAFKA-13141 is not modelled).

The follower Fetch version follows inter.broker.protocol.version exactly as Kafka's
ReplicaFetcherThread chooses it (0.8.2 → v0; 0.9 → v1; 0.10 → v2; 0.10.1 → v3; 1.0 → v5,
which is v6 on the wire; 1.1 → v7; … 3.9 → v17;
4.1 → v18: MetadataVersion.fetchRequestVersion, IBP_4_1_IV1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rig.scenario.version_rules import RULES, release_key

VERSIONS = ("0.8.2", "0.9", "0.10", "0.11", "1.0", "1.1", "2.0", "2.1", "2.3", "2.4", "2.5",
            "2.7", "2.8", "3.0", "3.1", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0",
            "4.1", "4.2")

# inter.broker.protocol.version (lowest version that switched) → follower Fetch version.
FETCH_VERSION_BY_IBP = (("4.1", 18), ("3.9", 17), ("3.7", 16), ("3.5", 15), ("3.1", 13),
                         ("2.7", 12), ("2.3", 11), ("2.1", 10), ("2.0", 8), ("1.1", 7), ("0.11", 5),
                         ("0.10.1", 3), ("0.10", 2), ("0.9", 1), ("0.8.2", 0))
# The first Fetch version of a consumer (and broker) that validates its position against a new
# leader's log: 2.3's, which brought OffsetsForLeaderEpoch v3 (KAFKA-7747, KIP-320).
POSITION_VALIDATION_FETCH_VERSION = 11


def older(version: str, than: str) -> bool:
    """Whether release `version` comes before release `than`."""
    return release_key(version) < release_key(than)


def fetch_version_for_ibp(ibp: str) -> int:
    """The Fetch version a follower sends under inter.broker.protocol.version `ibp`."""
    for since, fetch_version in FETCH_VERSION_BY_IBP:
        if release_key(ibp) >= release_key(since):
            return fetch_version
    raise ValueError(f"inter.broker.protocol.version {ibp} is older than rig models (0.8.2)")


@dataclass(frozen=True)
class Profile:
    """The defaults and version rules of one Kafka release (one value per row of RULES)."""

    version: str
    replica_lag_time_max_ms: int
    zookeeper_session_timeout_ms: int
    replication: str  # the default replication strategy (how a new follower truncates)
    truncation_on_fetch: bool  # 2.8+ (KAFKA-10554)
    truncate_epochs_at_log_end: bool  # 2.7+ (KAFKA-10706; also 2.6.1)
    out_of_range_halts: bool  # before 2.1 (KAFKA-7414)
    out_of_range_restarts_log: bool  # before 0.9.0.1 (KAFKA-2143)
    timestamp_based_segments: bool  # 0.10.1+ (KIP-33)
    retention_below_high_watermark: bool  # 0.11+ (KAFKA-5634, 0.11.0.1)
    retention_log_start_when_compacted: bool  # 2.1+ (KAFKA-7400)
    retention_log_start_first: bool  # 3.0+ (KAFKA-12177)
    isr: str  # the default ISR strategy (lag-messages 0.8, lag-time-only 0.9–2.0, KAFKA-7152)
    isr_kafka_4485: bool  # 0.10.2+
    unclean_leader_election_enable: bool  # default true before 0.11 (KIP-106)
    message_format: int  # the magic the brokers write: 0 (0.8–0.9), 1 (0.10), 2 (0.11+)
    epoch_end_before_first_known: str  # "undefined" (1.x) or "first-start" (2.0+)
    epoch_start_at_election: bool  # 2.1+ (KAFKA-7415)
    consumer_leader_epoch: bool  # 2.3+ consumers: ListOffsets and Fetch (KIP-320, KAFKA-7747)
    offset_not_available: bool  # 2.2+ (KIP-207)
    isr_rejoin_needs_epoch_start: bool  # 2.1+
    failed_read_resets_follower: bool  # before 2.4 (KAFKA-8400)
    hw_on_follower_leo_change: bool  # 2.4+ (KAFKA-8841)
    fetch_leader_epoch_checked: bool  # 2.1+ (KIP-320)
    follower_refetch_on_new_epoch: str  # "never" (before 2.0), "beyond-next" (2.0), "any" (2.1+)
    isr_update: str  # zookeeper-write before IBP 2.7, alter-isr-every-50ms 2.7, alter-isr 2.8+
    alter_isr_takes_same_version: bool  # 3.0+ (KAFKA-12751; also 2.7.2, 2.8.1)
    hw_on_alter_isr_response: bool  # 3.1+ (KAFKA-13091)
    alter_partition_ineligible: bool  # 3.3+ (KIP-841), ZooKeeper controller and leaders
    election_order: str  # "isr-order" before 1.1, "assignment-order" from 1.1
    controller_detects_bounce: bool  # 2.2+ (KIP-380 broker epochs)
    registration_waits_for_old_session: bool  # 0.8.2 only
    rack_aware_assignment: bool  # 3.5+ clients (KIP-881)
    client_leader_discovery: bool  # 3.7+ clients (KIP-951, KAFKA-15415)
    metadata_keeps_newer_epoch: bool  # 2.3+ clients (KAFKA-7738)
    retry_backoff_max_ms: int  # 3.7+: 1000 (KIP-580); before, the constant 100
    metadata_leader_not_available_asks: bool  # 2.3+ clients (KAFKA-7831)
    metadata_disconnect_fails_update: bool  # 2.5+ clients (KAFKA-8933)
    hw_holds_below_min_isr: bool  # 3.7+
    effective_min_isr: bool  # 3.7+
    controller: str  # the default controller kind: zookeeper up to 3.9, kraft from 4.0
    controllers: str  # the controller kinds a variant may choose, ", "-joined
    eligible_leader_replicas_enable: bool  # KIP-966 default: 4.1+
    leader_epoch_bump_on_shrink: bool  # before metadata version 3.6 (KAFKA-15021)
    broker_epoch_checks: bool  # 3.5+ (KIP-903)
    elect_fenced_last_known_leader: bool  # before 4.1 (KAFKA-19522)
    kraft_unclean_election: bool  # 3.9+ (KAFKA-12670)
    raft_pre_vote: bool  # KIP-996: 4.0+
    raft_check_quorum: bool  # KAFKA-15489: 3.7+
    kraft_noop_records: bool  # KIP-835: 3.3+
    heartbeat_retry_timeout_half_session: bool  # KAFKA-14392: 3.4+
    reconnect_backoff_max_ms: int  # 0.11+: 1000 (KIP-144); before, the constant 50
    connection_setup_timeout_ms: int | None  # 2.7+: 10 s (KIP-601); before, none
    connection_setup_timeout_max_ms: int | None  # 2.7: 127 s; 2.8+: 30 s

    @property
    def fetch_version(self) -> int:
        return fetch_version_for_ibp(self.version)

    @property
    def isr_options(self) -> dict[str, Any]:
        """The options of the default ISR strategy at this release (a strategy a variant names
        keeps its own). 0.8.2's Partition.getOutOfSyncReplicas calls a follower stuck when its
        LEO has not been updated for the lag time whatever its offset (0.8.0–0.8.1 asked only
        of followers behind the leader): `lag-messages` runs with stuck_only_behind off. The
        lag-time rules before KAFKA-4485 (0.9–0.10.1) run with kafka_4485 off."""
        if self.isr == "lag-messages":
            return {"stuck_only_behind": False}
        return {} if self.isr_kafka_4485 else {"kafka_4485": False}

    def accepts_controller(self, kind: str) -> bool:
        """Whether a variant of this release may run controller `kind` (a plugin's name is
        not the profile's business; only the built-ins are tied to releases)."""
        if kind not in ("zookeeper", "kraft"):
            return True
        return kind in self.controllers.split(", ")


def profile(version: str) -> Profile:
    if version not in VERSIONS:
        raise ValueError(f"unknown kafka profile {version!r}; known: {', '.join(VERSIONS)}")
    return Profile(version=version, **{rule.field: rule.at(version) for rule in RULES})


def ibp_rule(field: str, ibp: str) -> Any:
    """The value of RULES' row `field` at inter.broker.protocol.version `ibp` (a rule that
    follows the IBP, as the follower Fetch version does, not the release)."""
    return next(rule for rule in RULES if rule.field == field).at(ibp)


def ibp_capped(field: str, kafka: str, ibp: str) -> Any:
    """RULES' row `field` for release `kafka` run at inter.broker.protocol.version `ibp`: the
    release's value, or the IBP's where the IBP is older (a rolling upgrade's first step: the
    brokers speak, write and truncate as that release did)."""
    return ibp_rule(field, ibp if older(ibp, kafka) else kafka)


DEFAULT_PROFILE = "3.9"
