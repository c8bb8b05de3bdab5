"""A client's metadata requests in time (rig.workload.metadata_updater, Kafka's Metadata and
NetworkClient.DefaultMetadataUpdater): one open at a time, the next no sooner than the backoff
after the last answer or failure; from 3.7 (KIP-580) a backoff that grows over answers that
name nothing new; a broken connection asks for an update, and from 2.5 (KAFKA-8933) fails the
request open to it."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from rig.backoff import ExponentialBackoff
from rig.engine import Simulation
from rig.events import names
from rig.scenario.load import load_scenario
from rig.workload.metadata_updater import MetadataUpdater
from tests.cluster.simulated import checked_run, named

MS = 1000


class Client:
    """A client whose requests reach broker 1 and are answered `rtt_ms` later (or never)."""

    def __init__(self, max_ms: int = 100, disconnect_fails: bool = True, rtt_ms: float = 1,
                 answer: bool = True):
        self.sim = Simulation()
        self.sent: list[float] = []
        self.rtt_us = int(rtt_ms * MS)
        self.answer = answer
        self.progress = False
        self.still_needed = False
        self.updater = MetadataUpdater(
            self.sim, ExponentialBackoff(100, max_ms, random.Random(7)), 30_000,
            disconnect_fails, self._send)

    def _send(self, request: object) -> int:
        self.sent.append(self.sim.now_us / MS)
        if self.answer:
            self.sim.after(self.rtt_us, lambda: self._answer(request))
        return 1

    def _answer(self, request: object) -> None:
        if self.updater.is_open(request):
            self.updater.answered(self.progress, self.still_needed)

    def at(self, ms: float, action: Callable[[], None]) -> None:
        self.sim.at(int(ms * MS), action)

    def run(self, ms: float) -> None:
        self.sim.run(int(ms * MS))


def test_requests_while_one_is_open_send_nothing_more_and_the_next_waits_the_backoff() -> None:
    client = Client()
    for t in (0, 0.5, 0.9, 1.5, 50, 100.9):
        client.at(t, client.updater.request_update)
    client.run(1_000)
    # 0: sent at once (nothing answered yet); 0.5, 0.9: one is open; its answer at 1 ms clears
    # the need; 1.5 and 50 need one again: it goes 100 ms after the answer, at 101 ms.
    assert client.sent == [0, 101]


def test_a_need_that_never_ends_asks_once_per_backoff_not_once_per_round_trip() -> None:
    """Before: rig asked again as soon as an answer came (rack-failure's producer sent
    350,000 metadata requests in a 40 s outage)."""
    client = Client()
    client.still_needed = True  # every answer names a partition without a leader (2.3+)
    client.updater.request_update()
    client.run(1_000)
    assert client.sent == [0, 101, 202, 303, 404, 505, 606, 707, 808, 909]


def test_from_3_7_answers_that_name_nothing_new_double_the_wait_up_to_the_maximum() -> None:
    client = Client(max_ms=1000)
    client.still_needed = True
    client.updater.request_update()
    client.run(10_000)
    gaps = [b - a for a, b in zip(client.sent, client.sent[1:], strict=False)]
    # the answer's round trip (1 ms), then 100, 200, 400, 800, 1000 … ms, each ±20 %
    for n, gap in enumerate(gaps):
        term = min(100 * 2 ** n, 1000)
        assert 0.8 * term <= gap - 1 <= 1.2 * term, (n, gaps)
    assert len(gaps) >= 8


def test_an_answer_that_names_a_newer_epoch_starts_the_doubling_again() -> None:
    client = Client(max_ms=1000)
    client.still_needed = True
    client.updater.request_update()
    client.run(2_000)
    client.progress = True  # (a newer leader epoch: equivalentResponseCount back to 0)
    client.run(4_000)
    client.progress = False
    before = len(client.sent)
    client.run(4_300)
    # after the progress answer the wait is retry.backoff.ms again (±20 %), not 1000 ms
    assert len(client.sent) - before >= 2


@pytest.mark.parametrize("fails", [False, True])
def test_a_broken_connection_with_a_request_open(fails: bool) -> None:
    client = Client(disconnect_fails=fails, answer=False)
    client.updater.request_update()  # open to broker 1 at 0, never answered
    client.at(5, lambda: client.updater.connection_reset(1))
    client.run(1_000)
    if fails:  # 2.5+: a failed update, sent again retry.backoff.ms after it
        assert client.sent[:2] == [0, 105]
    else:  # before: the lost request is sent again at once
        assert client.sent[:2] == [0, 5]


@pytest.mark.parametrize("fails", [False, True])
def test_any_broken_connection_asks_for_metadata(fails: bool) -> None:
    client = Client(disconnect_fails=fails)
    client.at(500, lambda: client.updater.connection_reset(2))
    client.run(1_000)
    assert client.sent == [500]


def test_from_2_5_a_broken_connection_fails_an_update_that_was_due() -> None:
    """handleServerDisconnect's isUpdateDue: needed, allowed, not yet sent (the client's poll
    had not come round): the disconnect counts as a failed attempt."""
    clients = {fails: Client(disconnect_fails=fails) for fails in (False, True)}
    for client in clients.values():
        client.updater.request_update()  # sent at 0, answered at 1
        client.run(200)
        client.updater.requested = True  # (an update needed, allowed since 101 ms)
        client.updater.connection_reset(2)
        client.run(1_000)
    assert clients[False].sent == [0, 200]
    assert clients[True].sent == [0, 300]


def test_a_request_that_times_out_is_a_broken_connection() -> None:
    client = Client(answer=False)
    client.updater.request_update()
    client.run(31_000)
    assert client.sent == [0, 30_100]  # request.timeout.ms, then the backoff after the failure


# A rack's brokers crash for 10 s; with racks ignored some partitions keep both replicas there
# and stay offline (unclean election off): the producer's keyed records keep a batch waiting
# for each of them, and every answer names no leader for them (rack-failure, shorter, with
# crashes: their machines refuse the producer's connections at once, where machines without
# power would leave its requests waiting request.timeout.ms; rig.cluster.connection_states).
OUTAGE = """
name: offline-partitions-metadata
seed: 11
duration: 20s
kafka: "{kafka}"
cluster:
  brokers:
    - {{id: 0, rack: a}}
    - {{id: 1, rack: a}}
    - {{id: 2, rack: b}}
    - {{id: 3, rack: b}}
    - {{id: 4, rack: c}}
    - {{id: 5, rack: c}}
  config: {{replica.lag.time.max.ms: 10s, zookeeper.session.timeout.ms: 6s}}
network: {{latency: 200us, cross_rack: {{latency: 1ms}}}}
topics:
  - {{name: events, partitions: 24, replication_factor: 2}}
workload:
  producers:
    - {{name: app, topic: events, rate: 200, keys: {{uniform: 1000}}, acks: 1, linger: 20ms}}
faults:
  - {{kind: crash, broker: 2, at: 5s, restart_after: 10s}}
  - {{kind: crash, broker: 3, at: 5s, restart_after: 10s}}
variants:
  rack-unaware:
    strategies:
      placement: {{name: kafka, options: {{start_index: 0, rack_aware: false}}}}
"""


@pytest.mark.parametrize(("kafka", "low", "high"), [("2.4", 55, 75), ("3.7", 12, 30)])
def test_a_producer_waiting_on_offline_partitions_asks_once_per_backoff(
        kafka: str, low: int, high: int, write_scenario: Callable[[str, str], Path],
        tmp_path: Path) -> None:
    scenario = load_scenario(write_scenario(OUTAGE.format(kafka=kafka), "s.yaml"))
    events, _ = checked_run(scenario.variants[0], tmp_path, "offline-partitions-metadata")
    assert named(events, names.PARTITION_OFFLINE), "no partition went offline: no case left"
    asked = sum(e["messages"] for e in named(events, names.NET_TRAFFIC)
                if e["src"] == "producer-app" and e["kind"] == "control")
    # 2.4: one request per retry.backoff.ms (100 ms) while the partitions are offline (the
    # election at 10 s to the restart at 15 s, about 50), and before the election one after
    # each failed connection to the dead leaders, whose attempts space out from 50 ms to 1 s
    # (reconnect.backoff.max.ms, KIP-144; rig.cluster.client_connections): 64 in all (101
    # when rig's producer sent its batches to the dead leaders and asked after each refusal).
    # 3.7 (KIP-580): 100, 200, 400, 800, then 1000 ms apart, ±20 %. Before that, rig asked
    # again at each answer: 14,897 requests.
    assert low <= asked <= high



# Broker 1's partitions (replication factor 1) have no live replica for 10 s: the consumer's
# fetches to it are refused, then (after the ZooKeeper session) every answer names no leader.
CONSUMER_OUTAGE = """
name: offline-partitions-consumer
seed: 3
duration: 15s
kafka: "{kafka}"
cluster:
  brokers: 3
  config: {{zookeeper.session.timeout.ms: 6s}}
topics:
  - {{name: t, partitions: 6, replication_factor: 1}}
workload:
  consumers:
    - {{group: g, topic: t, start: earliest}}
faults:
  - {{kind: crash, broker: 1, at: 2s, restart_after: 10s}}
"""


@pytest.mark.parametrize(("kafka", "low", "high"), [("2.4", 95, 110), ("3.7", 12, 30)])
def test_a_consumer_waiting_on_offline_partitions_asks_once_per_backoff(
        kafka: str, low: int, high: int, write_scenario: Callable[[str, str], Path],
        tmp_path: Path) -> None:
    """The consumer's metadata is timed as the producer's (ConsumerMetadata is the same
    Metadata class): a refused fetch, a partition without a leader, each asks for an update;
    the request goes once per backoff."""
    scenario = load_scenario(write_scenario(CONSUMER_OUTAGE.format(kafka=kafka), "s.yaml"))
    events, _ = checked_run(scenario.variants[0], tmp_path, "offline-partitions-consumer")
    assert named(events, names.PARTITION_OFFLINE), "no partition went offline: no case left"
    member = scenario.variants[0].consumers[0].member_node(0)
    asked = sum(e["messages"] for e in named(events, names.NET_TRAFFIC)
                if e["src"] == member and e["kind"] == "control")
    # 2.4: one request per retry.backoff.ms over the 10 s; 3.7 (KIP-580): the wait doubles up
    # to 1 s. Before, rig asked a retry.backoff.ms after each answer in every release: 99.
    assert low <= asked <= high
