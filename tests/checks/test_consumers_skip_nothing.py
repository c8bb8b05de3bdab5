"""The consumers-skip-nothing check on a final log it is handed: what counts as skipped (a
committed batch between a group's first read and the end of its last one that it never read)
and what does not (before its first read, after its last one, or read by identity)."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, cast

from rig.checks import ConsumersSkipNothing, Status
from rig.cluster.final_state import FinalState

KEY = ("t", 0)


class _Leader:
    """A final leader whose log holds one-record batches at offsets 0..9 (identity (7, o)),
    committed below `hw`."""

    def __init__(self, hw: int):
        self.high_watermark = hw

    def batches(self) -> Iterator[tuple[int, int, tuple[int, int]]]:
        for offset in range(10):
            yield offset, offset + 1, (7, offset)


def _final(hw: int = 10) -> FinalState:
    leader = _Leader(hw)
    partition = SimpleNamespace(leader=1, final_leader=lambda: leader)
    return cast(FinalState, SimpleNamespace(partitions={KEY: partition}))


def _read(check: ConsumersSkipNothing, group: str, *offsets: int) -> None:
    batches: list[Any] = [[o, o + 1, 7, o] for o in offsets]
    check.observe({"event": "consumer.read", "group": group, "client": f"{group}-0",
                   "topic": KEY[0], "partition": KEY[1], "t_ms": 1.0, "batches": batches})


def test_a_gap_between_reads_is_skipped_records() -> None:
    check = ConsumersSkipNothing()
    _read(check, "g", 2, 3)
    _read(check, "g", 7, 8)  # 4, 5 and 6 never read
    found = check.finish(_final())
    assert check.result().status is Status.FAILED
    ((name, details),) = found[:1]
    assert name == "consumer.skipped"
    assert (details["offset"], details["end_offset"], details["records"],
            details["batches"]) == (4, 7, 3, 3)


def test_before_the_first_read_and_after_the_last_is_not_skipped() -> None:
    check = ConsumersSkipNothing()
    _read(check, "g", 3, 4, 5)  # started at 3 (start: latest); lags behind 6..9 at the end
    assert check.finish(_final()) == []
    assert check.result().status is Status.OK


def test_a_batch_read_out_of_order_or_by_another_group_counts_once_per_group() -> None:
    check = ConsumersSkipNothing()
    _read(check, "a", 0, 1, 2)
    _read(check, "a", 0)  # a reset back to 0 (earliest): its last read ends at 1
    _read(check, "b", 0, 2)  # group b skipped 1
    check.finish(_final())
    (violation,) = check.violations
    assert (violation["group"], violation["offset"], violation["records"]) == ("b", 1, 1)


def test_only_committed_batches_are_judged() -> None:
    check = ConsumersSkipNothing()
    _read(check, "g", 0, 9)
    check.finish(_final(hw=5))  # 1..4 committed and unread; 5..8 above the final HW
    assert check.violations[0]["records"] == 4
