"""Shrinking: ddmin keeps only the faults a failure needs; numbers get smaller and rounder."""

from __future__ import annotations

from typing import Any

from rig.search.shrink import ddmin, shrink, shrink_numbers

LOW = {"at": 1000, "restart_after": 100, "heal_after": 100}


def _faults(n: int) -> list[dict[str, Any]]:
    return [{"kind": "crash", "broker": i, "at": 1000 + 997 * i, "restart_after": 4321}
            for i in range(n)]


def test_ddmin_finds_the_two_faults_that_matter() -> None:
    def fails(faults: list[dict[str, Any]]) -> bool:
        brokers = {f["broker"] for f in faults}
        return {2, 5} <= brokers

    assert [f["broker"] for f in ddmin(_faults(8), fails)] == [2, 5]


def test_ddmin_keeps_everything_when_everything_is_needed() -> None:
    faults = _faults(3)
    assert ddmin(faults, lambda fs: len(fs) == 3) == faults


def test_numbers_shrink_to_the_bound_or_the_threshold() -> None:
    faults = [{"kind": "crash", "broker": 0, "at": 7321, "restart_after": 5555}]

    def fails(fs: list[dict[str, Any]]) -> bool:
        return fs[0]["restart_after"] >= 2345  # any time fails; long restarts only

    shrunk = shrink_numbers(faults, fails, LOW)
    assert shrunk[0]["at"] == 1000
    assert 2345 <= shrunk[0]["restart_after"] < 2600


def test_shrink_respects_its_budget() -> None:
    calls = []

    def fails(fs: list[dict[str, Any]]) -> bool:
        calls.append(1)
        return len(fs) == 6  # every fault needed: ddmin tries many subsets

    result = shrink(_faults(6), fails, LOW, budget=5)
    assert len(calls) == 5 and result.attempts == 5
