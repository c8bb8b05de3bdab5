"""The accumulator's queues as the Sender walks them: only the partitions holding a batch, in
the order their first batch was queued (the order rig's logs have always had), whatever was
emptied or put back since."""

from __future__ import annotations

from rig.workload.accumulator import BatchQueues, OpenBatch


def _batch(sequence: int) -> OpenBatch:
    return OpenBatch(1, 100, sequence, 0.0)


def test_held_partitions_keep_the_order_of_their_first_batch() -> None:
    queues = BatchQueues()
    for partition in (3, 0, 2):
        queues.append(("t", partition), _batch(partition))
    queues.popleft(("t", 3))
    assert queues.held() == [("t", 0), ("t", 2)]
    # Emptied and queued again, partition 3 keeps its first place (not the end of the order).
    queues.append(("t", 3), _batch(4))
    queues.append(("t", 1), _batch(5))
    assert queues.held() == [("t", 3), ("t", 0), ("t", 2), ("t", 1)]
    assert queues.ordered([("t", 1), ("t", 2), ("t", 3)]) == [("t", 3), ("t", 2), ("t", 1)]


def test_a_retried_batch_goes_back_to_the_head() -> None:
    queues = BatchQueues()
    key = ("t", 0)
    first, second = _batch(0), _batch(1)
    queues.append(key, first)
    queues.append(key, second)
    assert queues.popleft(key) is first
    queues.appendleft(key, first)
    assert queues.head(key) is first
    assert [queues.popleft(key), queues.popleft(key)] == [first, second]


def test_an_emptied_queue_is_not_held() -> None:
    queues = BatchQueues()
    assert not queues
    key = ("t", 0)
    queues.append(key, _batch(0))
    assert queues and queues.head(key) is not None
    queues.popleft(key)
    assert not queues
    assert queues.head(key) is None
    assert queues.held() == []


def test_the_oldest_head_is_the_oldest_batch_at_any_head() -> None:
    queues = BatchQueues()
    assert queues.oldest_head_ms() is None
    queues.append(("t", 0), OpenBatch(1, 100, 0, 30.0))
    queues.append(("t", 1), OpenBatch(1, 100, 1, 10.0))
    queues.append(("t", 1), OpenBatch(1, 100, 2, 5.0))  # behind a head: not looked at
    assert queues.oldest_head_ms() == 10.0
    queues.popleft(("t", 1))
    assert queues.oldest_head_ms() == 5.0
    queues.appendleft(("t", 0), OpenBatch(1, 100, 3, 1.0))  # a retried batch, back at the head
    assert queues.oldest_head_ms() == 1.0
