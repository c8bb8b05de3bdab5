"""KRaft 3.6+'s HW rule (KAFKA-15021, Partition.maybeIncrementLeaderHW): a caught-up follower
outside the maximal ISR holds the HW back only while shouldWaitForReplicaToJoinIsr, which asks
the full isReplicaIsrEligible (not fenced, not shutting down, and the broker epoch of its latest
fetch -1 or its registration's) at every HW computation; 3.3–3.5 ask only whether it is caught
up."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from rig.cluster.kraft.broker_lifecycle import BrokerLifecycle
from rig.cluster.kraft.metadata_publisher import BrokerMetadataPublisher
from rig.cluster.log import Batch, Log
from rig.cluster.replica import Replica, Role
from rig.engine.rng import Streams
from rig.strategies.isr.base import FollowerProgress


def leader(fetched_epoch: int) -> Replica:
    replica = Replica(("t", 0), 0, (0, 1, 2), Log(), 0, role=Role.LEADER, leader=0,
                      isr=(0, 1), leader_epoch=1)
    replica.log.append(Batch(0, 10, 1, 100, producer=1, sequence=0), 0.0)
    replica.followers[1] = FollowerProgress(10, 1000.0, 1000.0, 10)
    # Follower 2 is caught up as of 1 s (within the lag time) but 4 records behind, outside
    # the ISR; its latest fetch carried broker epoch `fetched_epoch`.
    replica.followers[2] = FollowerProgress(6, 1000.0, 1000.0, 6, broker_epoch=fetched_epoch)
    return replica


def image(fenced: bool = False) -> BrokerMetadataPublisher:
    published = BrokerMetadataPublisher(None, None)
    published.epochs = {0: 3, 1: 5, 2: 4}  # broker 2's registration: epoch 4
    if fenced:
        published.fenced.add(2)
    return published


@pytest.mark.parametrize(("fetched_epoch", "fenced", "hw"), [
    (4, False, 6),   # eligible: it holds the HW at its log end
    (-1, False, 6),  # a fetch without an epoch (before v15) passes
    (9, False, 10),  # a fetch from another incarnation than the image's registration: not
    (4, True, 10),   # fenced: not
])
def test_every_hw_computation_asks_full_eligibility(fetched_epoch: int, fenced: bool,
                                                    hw: int) -> None:
    published = image(fenced)
    replica = leader(fetched_epoch)

    def eligible(broker: int, epoch: int) -> bool:
        return not published.ineligible(broker, epoch)

    assert replica.candidate_hw(2000.0, 30_000, 1, False, eligible) == hw
    # Without the rule (3.3–3.5) a caught-up follower holds the HW whatever it is.
    assert replica.candidate_hw(2000.0, 30_000, 1, False) == 6


@pytest.mark.parametrize(("bump", "installed"), [(True, False), (False, True)])
def test_the_lifecycle_installs_the_rule_from_3_6(bump: bool, installed: bool) -> None:
    rm = SimpleNamespace(hw_eligible=None)
    broker = SimpleNamespace(id=1, config=SimpleNamespace(leader_epoch_bump_on_shrink=bump,
                                                           broker_session_timeout_ms=9000),
                             replica_manager=rm)
    plane = SimpleNamespace(streams=Streams(1))
    life = BrokerLifecycle(plane, broker)
    life.epochs = {2: 4}
    assert (rm.hw_eligible is not None) is installed
    if installed:
        assert rm.hw_eligible(2, 4) and rm.hw_eligible(2, -1) and not rm.hw_eligible(2, 9)
