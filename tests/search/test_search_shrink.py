"""Shrinking: ddmin keeps only the faults a failure needs; numbers get smaller and rounder; the
result is proven 1-minimal (each fault dropped once, every such run passing) or says it is not."""

from __future__ import annotations

from itertools import combinations
from typing import Any

from rig.search.shrink import ddmin, one_minimal, shrink, shrink_numbers

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
    # The search stops after 5 runs; the proof then drops each of the 6 faults once (all pass).
    assert result.budget_exhausted and result.searched == 6
    assert result.one_minimal_runs == 6 and result.one_minimal and len(result.faults) == 6
    assert len(calls) == 5 + 6 and result.attempts == 11


def _one_minimal_by_brute_force(faults: list[dict[str, Any]], fails: Any) -> bool:
    return fails(faults) and not any(
        fails(list(rest)) for rest in combinations(faults, len(faults) - 1))


def test_a_search_cut_short_is_not_1_minimal_until_the_proof_pass_makes_it_so() -> None:
    # Planted: the failure needs brokers 2 and 5 (any time); a budget of 2 stops ddmin after its
    # first two complements (each half alone passes), so the search keeps all 8 faults.
    def fails(fs: list[dict[str, Any]]) -> bool:
        return {2, 5} <= {f["broker"] for f in fs}

    faults = _faults(8)
    searched = ddmin(faults, _limited(fails, 2))
    assert len(searched) == 8 and not _one_minimal_by_brute_force(searched, fails)

    calls: list[int] = []

    def counted(fs: list[dict[str, Any]]) -> bool:
        calls.append(len(fs))
        return fails(fs)

    result = shrink(faults, counted, LOW, budget=2)
    assert result.budget_exhausted and result.searched == 8
    assert [f["broker"] for f in result.faults] == [2, 5]
    assert result.one_minimal and _one_minimal_by_brute_force(result.faults, fails)
    assert result.attempts == len(calls) == 2 + result.one_minimal_runs
    # The proof's last two runs are the two one-fault drops of the result, both passing.
    assert calls[-2:] == [1, 1]


def _limited(fails: Any, budget: int) -> Any:
    left = [budget]

    def call(fs: list[dict[str, Any]]) -> bool:
        left[0] -= 1
        return left[0] >= 0 and bool(fails(fs))

    return call


def test_the_proof_says_so_when_it_runs_out_of_runs() -> None:
    def fails(fs: list[dict[str, Any]]) -> bool:
        return any(f["broker"] == 0 for f in fs)

    kept, proven, runs = one_minimal(_faults(5), fails, limit=2)
    assert not proven and runs == 2
    kept, proven, runs = one_minimal(_faults(5), fails, limit=100)
    assert proven and [f["broker"] for f in kept] == [0]
    # Drops of faults 0.. : dropping 0 passes, dropping 1 fails (taken, start over), and so on.
    assert runs == 2 * 4 + 1


def test_a_1_minimal_search_result_is_proven_with_one_run_per_fault() -> None:
    def fails(fs: list[dict[str, Any]]) -> bool:
        return {2, 5} <= {f["broker"] for f in fs}

    result = shrink(_faults(8), fails, LOW)
    assert not result.budget_exhausted and result.one_minimal
    assert result.searched == 2 and result.one_minimal_runs == 2
