"""What `rig protocol fetch` builds: the user's options checked into an `Example`, and the Fetch
request and response a Kafka replica fetcher (or a consumer) and its leader would send for it,
with Kafka's defaults."""

from __future__ import annotations

from dataclasses import dataclass

from rig.errors import UserError
from rig.protocol import (
    FETCH_VERSIONS,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchResponsePartition,
    FetchResponseTopic,
    FetchTopic,
    ForgottenTopic,
)
from rig.protocol.sizes import topic_id

MiB = 1 << 20
# Kafka's defaults: replica.fetch.wait.max.ms / fetch.max.wait.ms, *.min.bytes, the per-partition
# limit (replica.fetch.max.bytes / max.partition.fetch.bytes) and the response limit
# (replica.fetch.response.max.bytes for followers, fetch.max.bytes for consumers).
MAX_WAIT_MS = 500
MIN_BYTES = 1
PARTITION_MAX_BYTES = 1 * MiB
FOLLOWER_MAX_BYTES = 10 * MiB
CONSUMER_MAX_BYTES = 50 * MiB
DEFAULT_SESSION_ID = 1  # what an example session is called when --session-id is not given
# Bounds of what the command builds in memory: more partitions than one fetcher lists in any
# real cluster, and records well above Kafka's fetch.max.bytes (50 MiB).
MAX_PARTITIONS = 200_000
MAX_RECORDS_BYTES = 256 << 20
SPOKEN = f"{FETCH_VERSIONS[0]}–{FETCH_VERSIONS[-1]}"  # the Fetch versions rig speaks
SPOKEN_V = f"v{FETCH_VERSIONS[0]}–v{FETCH_VERSIONS[-1]}"

@dataclass(frozen=True, slots=True)
class Example:
    """What the user asked for, checked: the inputs of one request and its response."""

    version: int
    topic: str
    partitions: int
    incremental: bool
    changed: int
    forgotten: int
    replica_id: int
    session_id: int
    session_epoch: int
    rack_id: str
    records_bytes: int

    @property
    def listed(self) -> range:
        """Partition numbers the request lists: all for a full fetch, the changed ones else."""
        return range(self.changed if self.incremental else self.partitions)

    @property
    def follower(self) -> bool:
        return self.replica_id >= 0

    def session_kind(self) -> str:
        sid, epoch = self.session_id, self.session_epoch
        if self.version < 7:
            return f"sessionless full fetch (Fetch v{self.version} predates KIP-227 sessions)"
        if epoch > 0:
            return f"incremental fetch in session {sid}, epoch {epoch}"
        if sid == 0:
            return ("full fetch asking for a new session (session 0, epoch 0)" if epoch == 0
                    else "sessionless full fetch (session 0, epoch -1)")
        return (f"full fetch closing session {sid} and asking for a new one (epoch 0)"
                if epoch == 0 else f"full fetch closing session {sid}, no new session (epoch -1)")

    def response_session_id(self) -> int:
        if self.version < 7 or self.session_epoch < 0:
            return 0
        return self.session_id or DEFAULT_SESSION_ID  # a full fetch's answer names the new one


def build_request(ex: Example) -> FetchRequest:
    """The request a Kafka replica fetcher (or, with replica_id < 0, a consumer) sends."""
    tid = topic_id(ex.topic)
    parts = tuple(FetchPartition(
        partition=p,
        current_leader_epoch=0,
        fetch_offset=0,
        last_fetched_epoch=-1,  # an empty log has no epoch yet
        log_start_offset=0 if ex.follower else -1,  # consumers send -1
        partition_max_bytes=PARTITION_MAX_BYTES) for p in ex.listed)
    forgotten = tuple(range(ex.partitions, ex.partitions + ex.forgotten))
    return FetchRequest(
        replica_id=ex.replica_id,
        max_wait_ms=MAX_WAIT_MS,
        min_bytes=MIN_BYTES,
        max_bytes=FOLLOWER_MAX_BYTES if ex.follower else CONSUMER_MAX_BYTES,
        isolation_level=0,
        session_id=ex.session_id,
        session_epoch=ex.session_epoch,
        topics=(FetchTopic(ex.topic, tid, parts),) if parts else (),
        forgotten_topics=(ForgottenTopic(ex.topic, tid, forgotten),) if forgotten else (),
        rack_id=ex.rack_id,
    )


def build_response(ex: Example) -> FetchResponse:
    """The leader's answer: every requested partition for a full fetch, the changed ones for an
    incremental one; each idle (empty records) or carrying `records_bytes` placeholder bytes."""
    parts = tuple(FetchResponsePartition(
        partition_index=p,
        high_watermark=0,
        last_stable_offset=0,
        log_start_offset=0,
        records=bytes(ex.records_bytes)) for p in ex.listed)
    topics = (FetchResponseTopic(ex.topic, topic_id(ex.topic), parts),) if parts else ()
    return FetchResponse(session_id=ex.response_session_id(), responses=topics)


def check_example(version: int | None, topic: str, partitions: int | None, incremental: bool,
             changed: int | None, forgotten: int | None, response: bool,
             records_bytes: int | None, replica_id: int, session_id: int | None,
             session_epoch: int | None, rack_id: str) -> Example:
    if version is None:
        raise UserError(f"--version is required (a Fetch version, {SPOKEN})")
    if version not in FETCH_VERSIONS:
        raise UserError(f"--version {version}: rig speaks Fetch {SPOKEN_V}")
    if partitions is None:
        raise UserError("--partitions is required (how many partitions the fetcher fetches)")
    if not 0 <= partitions <= MAX_PARTITIONS:
        raise UserError(f"--partitions must be between 0 and {MAX_PARTITIONS:,} (got "
                        f"{partitions:,})")
    if (changed is not None or forgotten is not None) and not incremental:
        raise UserError("--changed and --forgotten describe an incremental fetch: add "
                        "--incremental")
    changed, forgotten = changed or 0, forgotten or 0
    if not 0 <= changed <= partitions:
        raise UserError(f"--changed must be between 0 and --partitions {partitions} "
                        f"(got {changed})")
    if not 0 <= forgotten <= MAX_PARTITIONS:
        raise UserError(f"--forgotten must be between 0 and {MAX_PARTITIONS:,} (got "
                        f"{forgotten:,})")
    if records_bytes is not None and not response:
        raise UserError("--records-bytes sizes a response: add --response")
    records_bytes = records_bytes or 0
    if records_bytes < 0:
        raise UserError(f"--records-bytes must be ≥ 0 (got {records_bytes})")
    listed = changed if incremental else partitions
    if records_bytes * listed > MAX_RECORDS_BYTES:
        raise UserError(f"--records-bytes {records_bytes:,} × {listed:,} partitions is "
                        f"{records_bytes * listed:,} bytes of records; rig builds responses of "
                        f"at most {MAX_RECORDS_BYTES:,} (Kafka's fetch.max.bytes is 50 MiB)")
    if version < 7:
        if incremental:
            raise UserError(f"Fetch v{version} has no sessions (KIP-227 starts at v7): "
                            "--incremental needs --version 7 or later")
        if session_id is not None or session_epoch is not None:
            raise UserError(f"Fetch v{version} has no session fields: --session-id and "
                            "--session-epoch need --version 7 or later")
        sid, epoch = 0, -1
    elif incremental:
        sid = DEFAULT_SESSION_ID if session_id is None else session_id
        epoch = 1 if session_epoch is None else session_epoch
        if sid == 0 or epoch < 1:
            raise UserError(f"an incremental fetch names its session (id ≠ 0) and an epoch ≥ 1 "
                            f"(got session {sid}, epoch {epoch})")
    else:
        sid = 0 if session_id is None else session_id
        epoch = 0 if session_epoch is None else session_epoch
        if epoch > 0:
            raise UserError(f"--session-epoch {epoch} > 0 makes an incremental fetch: add "
                            "--incremental (a full fetch has epoch 0 or -1)")
        if epoch < -1:
            raise UserError(f"--session-epoch must be ≥ -1 (got {epoch})")
    return Example(version, topic, partitions, incremental, changed, forgotten, replica_id,
                   sid, epoch, rack_id, records_bytes)

