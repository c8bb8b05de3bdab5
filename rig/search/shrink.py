"""Shrinking a failing fault schedule to a small one that still fails, proven 1-minimal.

First delta debugging (Zeller's ddmin) over the list of faults: drop chunks while the failure
stays. Then each fault's times and durations are made smaller (its lower bound, else a binary
search towards it, rounded to 100 ms), and ddmin once more. `fails` decides; this search calls
it at most `budget` times, so shrinking always ends.

A search cut short by its budget need not be 1-minimal, so a last pass proves it: each remaining
fault is dropped once and the run repeated; a drop that still fails is taken and the pass starts
over. The result is 1-minimal (no single fault can go) only when every such run passed; the pass
has its own allowance, enough to finish unless the caller caps it, and says when it ran out.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from rig.search.draw import TIMED_FIELDS, Fault

Predicate = Callable[[list[Fault]], bool]


@dataclass
class Shrunk:
    faults: list[Fault]
    attempts: int  # calls of `fails`: the search's and the 1-minimality pass's
    one_minimal: bool = False  # every run with one fault of `faults` dropped passed
    one_minimal_runs: int = 0  # calls of the 1-minimality pass (included in `attempts`)
    searched: int = 0  # how many faults the budgeted search left, before the last pass
    budget_exhausted: bool = False  # the search stopped because its budget was spent


class _Budget:
    def __init__(self, fails: Predicate, budget: int):
        self.fails, self.left, self.attempts, self.refused = fails, budget, 0, 0

    def __call__(self, faults: list[Fault]) -> bool:
        if self.left <= 0:
            self.refused += 1  # the search wanted this run: it is cut short
            return False
        self.left -= 1
        self.attempts += 1
        return self.fails(faults)


def ddmin(faults: list[Fault], fails: Predicate) -> list[Fault]:
    """A 1-minimal sublist of `faults` for which `fails` holds (it must hold for `faults`)."""
    n = 2
    while len(faults) >= 2:
        size = -(-len(faults) // n)
        chunks = [faults[i:i + size] for i in range(0, len(faults), size)]
        for i in range(len(chunks)):
            complement = [f for j, chunk in enumerate(chunks) if j != i for f in chunk]
            if fails(complement):
                faults, n = complement, max(n - 1, 2)
                break
        else:
            if n >= len(faults):
                break
            n = min(len(faults), 2 * n)
    if len(faults) == 1 and fails([]):
        return []
    return faults


def shrink_numbers(faults: list[Fault], fails: Predicate, low: dict[str, int],
                   steps: int = 7) -> list[Fault]:
    """Make each timed field smaller while `fails` holds; `low[field]` is its lower bound.

    A field goes to its bound if that still fails; otherwise a binary search finds a smaller
    value that fails, rounded up to a whole 100 ms when that fails too (easier to read).
    """
    faults = copy.deepcopy(faults)
    for index in range(len(faults)):
        for name in TIMED_FIELDS:
            if name not in faults[index]:
                continue

            def with_value(value: int, name: str = name, index: int = index) -> list[Fault]:
                trial = copy.deepcopy(faults)
                trial[index][name] = value
                return trial

            original = value = faults[index][name]
            bottom = low[name]
            if value > bottom and fails(with_value(bottom)):
                value = bottom
            elif value > bottom:
                passing = bottom  # the search keeps fails(value) and not fails(passing)
                for _ in range(steps):
                    middle = (passing + value) // 2
                    if middle in (passing, value):
                        break
                    if fails(with_value(middle)):
                        value = middle
                    else:
                        passing = middle
                rounded = -(-value // 100) * 100
                if value < rounded < original and fails(with_value(rounded)):
                    value = rounded
            faults[index][name] = value
    return faults


def one_minimal(faults: list[Fault], fails: Predicate,
                limit: int) -> tuple[list[Fault], bool, int]:
    """Drop each fault once and run again; take a drop that still fails and start over.

    Returns (faults, proven, runs): `proven` when, for the faults returned, every one-fault drop
    was run and passed; False when `limit` runs were spent first.
    """
    runs, index = 0, 0
    while index < len(faults):
        if runs >= limit:
            return faults, False, runs
        trial = faults[:index] + faults[index + 1:]
        runs += 1
        if fails(trial):
            faults, index = trial, 0
        else:
            index += 1
    return faults, True, runs


def shrink(faults: list[Fault], fails: Predicate, low: dict[str, int],
           budget: int = 120, verify: Predicate | None = None,
           proof_budget: int | None = None) -> Shrunk:
    """Drop faults, then shrink times and durations, with at most `budget` calls of `fails`;
    then prove the result 1-minimal with `verify` (default `fails`).

    `verify` is the same judgement as `fails` without any cache: the proof repeats its runs.
    The proof takes at most n(n+1)/2 runs for n faults left (n when nothing more can go, the
    usual case); by default it may take them all, so it always ends with a proof.
    `proof_budget` caps it (the result then says whether the proof was completed).
    """
    counted = _Budget(fails, budget)
    smaller = ddmin(list(faults), counted)
    smaller = shrink_numbers(smaller, counted, low)
    smaller = ddmin(smaller, counted)  # a shorter fault may have made another one unneeded
    searched = len(smaller)
    ordered = sorted(smaller, key=lambda f: f["at"])  # as a scenario lists them, if that fails
    extra = 0
    if ordered != smaller:
        extra = 1
        if (verify or fails)(ordered):
            smaller = ordered
    limit = len(smaller) * (len(smaller) + 1) // 2 if proof_budget is None else proof_budget
    smaller, proven, runs = one_minimal(smaller, verify or fails, limit)
    return Shrunk(smaller, counted.attempts + extra + runs, proven, runs, searched,
                  counted.refused > 0)
