"""A committed offset carries the leader epoch of the record before it (OffsetCommit v6, 2.1+
clients, KIP-320), and a member resuming from it takes that epoch as its position's
(ConsumerCoordinator.refreshCommittedOffsetsIfNeeded → SubscriptionState.seekUnvalidated), so a
2.3+ member validates the resumed position against the leader before fetching, whatever its
metadata's leader epoch; without a committed epoch it fetches unvalidated."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from rig.cluster.log import Log
from rig.cluster.offsets import OffsetStore
from rig.protocol.records import Batch
from rig.scenario.model import ConsumerSpec
from rig.workload import offsets as offsets_module
from rig.workload.offsets import Committer

KEY = ("t", 0)
RELEASE = {8: "2.0", 9: "2.1", 11: "2.3"}  # the release whose consumer sends Fetch v8, v9, v11


class _Member:
    def __init__(self, version: int) -> None:
        self.cluster = SimpleNamespace(
            config=SimpleNamespace(offsets_topic_num_partitions=50), brokers={2: None},
            offset_store=None, sim=SimpleNamespace(after=lambda _us, _fn: None),
            send=lambda _src, _dst, _nbytes, deliver: deliver(),
            log=SimpleNamespace(emit=lambda *_a, **_k: None),
            variant=SimpleNamespace(kafka=RELEASE[version]))
        self.spec = ConsumerSpec(group="g", topic="t", commit="poll")
        self.node = self.client_id = "consumer-g-0"
        self.version = version
        self.assigned = [KEY]
        self.positions = {KEY: 30}
        self.position_epochs: dict[Any, int | None] = {KEY: 3}
        self.leader_epochs = {KEY: 3}
        self.sought: list[Any] = []
        # (its OffsetFetcher: a reset it was waiting for when the group resumed)
        self.offsets = SimpleNamespace(resetting={KEY: "out-of-range"})

    def seek(self, key: Any) -> None:
        self.sought.append(key)


@pytest.mark.parametrize(("version", "epoch"), [(8, -1), (9, 3), (11, 3)])
def test_a_commit_carries_the_positions_epoch_from_2_1(monkeypatch: pytest.MonkeyPatch,
                                                       version: int, epoch: int) -> None:
    sent: list[dict[Any, tuple[int, int]]] = []

    def commit(_broker: Any, _store: Any, _group: str, offsets: dict[Any, tuple[int, int]],
               _reply: Callable[[int], None]) -> None:
        sent.append(offsets)

    monkeypatch.setattr(offsets_module, "handle_offset_commit", commit)
    member = _Member(version)
    committer = Committer(member)
    committer.coordinator = 2
    committer.commit()
    assert sent == [{KEY: (30, epoch)}]


@pytest.mark.parametrize(("committed", "position_epoch", "revalidated"),
                         [((20, 1), 1, True), ((20, -1), None, False)])
def test_a_resumed_position_takes_the_committed_epoch(
        monkeypatch: pytest.MonkeyPatch, committed: tuple[int, int],
        position_epoch: int | None, revalidated: bool) -> None:
    monkeypatch.setattr(offsets_module, "handle_offset_fetch",
                        lambda _broker, _store, _group: (0, {KEY: committed}))
    member = _Member(11)
    committer = Committer(member)
    committer.coordinator = 2
    committer._resume()
    assert member.positions[KEY] == 20 and member.sought == [KEY]
    assert member.position_epochs[KEY] == position_epoch
    assert member.offsets.resetting == {}  # a seek: the pending reset's answer is dropped
    # With a committed epoch the leader epoch known is forgotten, so the seek validates the
    # position against the leader the metadata names (rig.workload.consumer: a new epoch →
    # OffsetFetcher.validate).
    assert (KEY not in member.leader_epochs) is revalidated


def test_the_coordinator_loads_each_offset_with_its_epoch() -> None:
    store = OffsetStore()
    log = Log()
    batch = store.commit_batch(0, "g", {KEY: (30, 3), ("t", 1): (7, -1)}, 0.0)
    log.append(Batch(0, batch.count, 0, batch.size, batch.producer, batch.sequence, 0.0,
                     batch.keys), 0.0)
    assert store.load(log, "g", below=log.log_end_offset) == {KEY: (30, 3), ("t", 1): (7, -1)}
