"""KIP-903 (AlterPartition v3, metadata version 3.5+): the ISR a KRaft leader proposes carries
each member's broker epoch, and the controller refuses a member whose registered epoch is no
longer that one (a broker that restarted since the leader last heard from it) with
INELIGIBLE_REPLICA (ReplicationControlManagerTest.testAlterPartitionShouldRejectBrokersWith
StaleEpoch; Partition.addBrokerEpochToIsr)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from rig.cluster.kraft.alter_partition_manager import AlterPartitionManager, _isr_epochs
from rig.cluster.kraft.metadata_publisher import BrokerMetadataPublisher
from rig.cluster.kraft.replication_control import AlterPartitionRequest
from rig.cluster.log import Log
from rig.cluster.messages import FetchRequestMsg, topic_runs
from rig.cluster.partition import FetchState
from rig.cluster.replica import Replica
from rig.cluster.zookeeper import PartitionState
from rig.engine import Simulation
from rig.engine.rng import Streams
from rig.events import names
from rig.protocol.errors import INELIGIBLE_REPLICA, NONE
from rig.strategies.isr.base import FollowerProgress
from tests.cluster.test_broker_unit import KEY, FakeFetcher, Fixture
from tests.cluster.test_kraft_controller import beat, part, running


def test_a_replica_that_restarted_since_the_leader_saw_its_epoch_is_ineligible() -> None:
    host, c = running([(0, 1, 2)], brokers=3)
    key = ("foo", 0)
    stale = c.registrations[2].epoch  # what leader 0 saw in 2's fetches before it died
    while not c.registrations[2].fenced:  # 2 goes silent and is fenced: ISR (0, 1)
        host.sim.run(host.sim.now_us + 2000_000)
        beat(c, 0)
        beat(c, 1)
    assert part(c, 0).isr == (0, 1)
    got: list[tuple[int, int]] = []
    c.register(2, 1, stale, lambda error, epoch: got.append((error, epoch)))
    fresh = got[0][1]
    assert got[0][0] == NONE and fresh > stale
    beat(c, 2)  # caught up with the log: unfenced
    assert not c.registrations[2].fenced

    def alter(epoch_of_2: int) -> int:
        now = part(c, 0)
        answers: list[int] = []
        c.alter_partition(AlterPartitionRequest(
            key, 0, c.registrations[0].epoch, now.leader_epoch, now.partition_epoch, (0, 1, 2),
            (c.registrations[0].epoch, c.registrations[1].epoch, epoch_of_2)),
            lambda error, p: answers.append(error))
        return answers[0]

    changes = len(host.named(names.PARTITION_CHANGE))
    assert alter(stale) == INELIGIBLE_REPLICA  # 107: the old incarnation's epoch
    assert part(c, 0).isr == (0, 1) and len(host.named(names.PARTITION_CHANGE)) == changes
    assert alter(fresh) == NONE  # its fetches since the restart carry the new one
    assert part(c, 0).isr == (0, 1, 2)


def test_the_leader_sends_its_own_epoch_and_each_followers_from_its_latest_fetch() -> None:
    replica = Replica(("t", 0), 0, (0, 1, 2), Log(), 0)
    replica.followers[1] = FollowerProgress(broker_epoch=7)
    replica.followers[2] = FollowerProgress()  # fetched without ReplicaState: not known
    assert _isr_epochs(0, 5, replica, (0, 1, 2)) == (5, 7, -1)
    assert _isr_epochs(0, 5, replica, (0, 3)) == (5, -1)  # never fetched


@pytest.mark.parametrize("kept", [True, False])
def test_the_leader_keeps_each_followers_broker_epoch_from_its_fetches(kept: bool) -> None:
    # Partition.updateFollowerFetchState → Replica.updateFetchStateOrThrow(brokerEpoch), from
    # 3.5 (KIP-903). Switched by the release, not the Fetch version: a 3.3/3.4 leader that a
    # forced protocol.fetch_version 15 sends epochs keeps none (-1, which every check passes).
    one = Fixture(broker_epoch_checks=kept)
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 0, (0, 1, 2))})
    keys = {KEY: None}

    def fetch(epoch: int) -> None:
        client = one.sessions.new_client()
        one.broker.on_fetch(FetchRequestMsg(
            FakeFetcher(1), 15, client.next_request(keys, keys, 15), keys, topic_runs(keys),
            {KEY: FetchState(0, current_leader_epoch=one.broker.replicas[KEY].leader_epoch)},
            0, 1, replica_epoch=epoch))

    fetch(4)
    replica = one.broker.replica_manager.replicas[KEY]
    assert replica.followers[1].broker_epoch == (4 if kept else -1)
    fetch(11)  # restarted and registered again
    assert replica.followers[1].broker_epoch == (11 if kept else -1)


@pytest.mark.parametrize(("kafka", "kept"), [("3.4", False), ("3.5", True), ("4.1", True)])
def test_the_profile_switches_the_epoch_checks_whatever_fetch_version_is_forced(
        write_scenario: Any, kafka: str, kept: bool) -> None:
    from rig.scenario.load import load_scenario

    [variant] = load_scenario(write_scenario(f"""
name: e
duration: 1s
kafka: "{kafka}"
cluster: {{brokers: 3}}
strategies: {{controller: kraft}}
protocol: {{fetch_version: 15}}
topics: [{{name: t, partitions: 1, replication_factor: 3}}]
""", "s.yaml")).variants
    assert (variant.config.fetch_version, variant.config.broker_epoch_checks) == (15, kept)


class _Plane:
    """A KRaft control plane as a leader's AlterPartitionManager sees it: one broker's image,
    a controller that records what it is asked."""

    def __init__(self, image: BrokerMetadataPublisher) -> None:
        self.lifecycles = {0: image}
        self.quorum = False
        self.asked: list[AlterPartitionRequest] = []
        self.log = SimpleNamespace(emit=lambda event, **fields: None)
        self.variant = SimpleNamespace(kafka="3.9")
        # What the leader's channel to the controller reads: the controller's node alive, a
        # clock, a 0.5 ms link.
        self.brokers: dict[int, Any] = {}
        self.voters: tuple[int, ...] = ()
        self.streams = Streams(0)
        self.cluster = SimpleNamespace(
            sim=Simulation(), streams=self.streams, variant=self.variant,
            network=SimpleNamespace(round_trip_us=lambda a, b: 1000, cuts={},
                                    base_link=lambda a, b: SimpleNamespace(latency_us=500)))

    def node_alive(self, node: Any) -> bool:
        return True

    def watch_connections(self, client: Any) -> None:
        pass

    def at_controller(self, node: Any) -> Any:
        return SimpleNamespace(alter_partition=lambda request, answer: self.asked.append(request))

    def send(self, src: Any, dst: Any, nbytes: int, deliver: Any, **kwargs: Any) -> None:
        deliver()  # to the controller, which records the request and answers nothing


@pytest.mark.parametrize(("fetched_epoch", "proposed"), [(9, False), (-1, True), (4, True)])
def test_from_3_5_the_leader_proposes_no_follower_whose_fetch_epoch_is_not_its_image_s(
        fetched_epoch: int, proposed: bool) -> None:
    image = BrokerMetadataPublisher(None, None)
    image.epoch = 3
    image.epochs = {0: 3, 1: 5, 2: 4}  # broker 2's registration as this leader's image has it
    image.known = 0
    plane = _Plane(image)
    replica = Replica(KEY, 0, (0, 1, 2), Log(), 0)
    replica.isr = (0, 1)
    # Broker 2 restarted and registered at epoch 9; its fetches carry it (Fetch v15
    # ReplicaState, KIP-903) before the leader's image has the new registration. 3.3–3.4
    # fetch with v13–v14: no epoch (-1), which passes.
    replica.followers[2] = FollowerProgress(broker_epoch=fetched_epoch)
    broker = SimpleNamespace(id=0, incarnation=1, now_ms=0.0, schedule=lambda *args: None,
                             alive=True, config=SimpleNamespace(
                                 inter_broker_protocol_version="3.9",
                                 controller_socket_timeout_ms=30_000))
    AlterPartitionManager(plane).change_isr(broker, replica, (0, 1, 2), expand=[2])
    # Partition.isReplicaIsrEligible → isBrokerEpochIsrEligible (KAFKA-14617, 3.5): the
    # fetched epoch must be -1 or the image's.
    assert [r.new_isr for r in plane.asked] == ([(0, 1, 2)] if proposed else [])
    assert (replica.pending_isr is not None) is proposed
