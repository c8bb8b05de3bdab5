"""one-leader-per-epoch sees every epoch a broker leads at: a change of leader
(replica.become_leader) and a leader kept at a new epoch (replica.epoch_changed, role leader)."""

from __future__ import annotations

from typing import Any

from rig.checks.safety import OneLeaderPerEpoch
from rig.events import names


def _event(name: str, broker: int, epoch: int, **fields: Any) -> dict[str, Any]:
    return {"event": name, "t_ms": 1.0, "topic": "t", "partition": 0, "broker": broker,
            "epoch": epoch, **fields}


def test_a_re_elected_leader_and_another_broker_at_its_epoch_is_a_violation() -> None:
    check = OneLeaderPerEpoch()
    check.observe(_event(names.REPLICA_BECOME_LEADER, 0, 1))
    check.observe(_event(names.REPLICA_EPOCH_CHANGED, 1, 2, role="leader", leader=1))
    check.observe(_event(names.REPLICA_EPOCH_CHANGED, 0, 2, role="follower", leader=1))
    assert check.count == 0  # a follower of epoch 2 leads nothing
    check.observe(_event(names.REPLICA_BECOME_LEADER, 2, 2))
    assert check.count == 1
    assert check.violations[0]["brokers"] == [1, 2] and check.violations[0]["epoch"] == 2
