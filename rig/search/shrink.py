"""Shrinking a failing fault schedule to a small one that still fails.

First delta debugging (Zeller's ddmin) over the list of faults: drop chunks while the failure
stays. Then each fault's times and durations are made smaller and rounder (binary search towards
the lower bound, then whole seconds or tenths). `fails` decides; it is called at most `budget`
times, so shrinking always ends.
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
    attempts: int


class _Budget:
    def __init__(self, fails: Predicate, budget: int):
        self.fails, self.left, self.attempts = fails, budget, 0

    def __call__(self, faults: list[Fault]) -> bool:
        if self.left <= 0:
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


def _smaller_values(value: int, low: int) -> list[int]:
    """Candidates below `value`, the simplest first: the lower bound, then round numbers."""
    out = [low]
    for unit in (1000, 100):
        rounded = max(low, value // unit * unit)
        if rounded not in out:
            out.append(rounded)
    return [v for v in out if v < value]


def shrink_numbers(faults: list[Fault], fails: Predicate, low: dict[str, int],
                   steps: int = 6) -> list[Fault]:
    """Make each timed field smaller while `fails` holds; `low[field]` is its lower bound."""
    faults = copy.deepcopy(faults)
    for index in range(len(faults)):
        for name in TIMED_FIELDS:
            if name not in faults[index]:
                continue

            def with_value(value: int, name: str = name, index: int = index) -> list[Fault]:
                trial = copy.deepcopy(faults)
                trial[index][name] = value
                return trial

            value, bottom = faults[index][name], low[name]
            for candidate in _smaller_values(value, bottom):
                if fails(with_value(candidate)):
                    value = candidate
                    break
            else:
                # Binary search between the bound (passes) and the value (fails).
                passing = bottom
                for _ in range(steps):
                    middle = (passing + value) // 2
                    if middle in (passing, value):
                        break
                    if fails(with_value(middle)):
                        value = middle
                    else:
                        passing = middle
            faults[index][name] = value
    return faults


def shrink(faults: list[Fault], fails: Predicate, low: dict[str, int],
           budget: int = 120) -> Shrunk:
    """Drop faults, then shrink times and durations; at most `budget` calls of `fails`."""
    counted = _Budget(fails, budget)
    smaller = ddmin(list(faults), counted)
    smaller = shrink_numbers(smaller, counted, low)
    smaller = ddmin(smaller, counted)  # a shorter fault may have made another one unneeded
    return Shrunk(sorted(smaller, key=lambda f: f["at"]), counted.attempts)
