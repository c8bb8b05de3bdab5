"""The points of a sweep: `--grid key.path=v1,v2,...` options crossed with seeds.

A grid key is a `--set` path (list items by index: `topics.0.partitions`); each value is YAML,
so `1s`, `100`, `true` and `[0, 1]` mean what they mean in a scenario file. Commas inside
brackets or braces do not split values.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from rig.errors import ScenarioError, UserError
from rig.scenario.overrides import short
from rig.scenario.source import parse_value

MAX_RUNS = 10_000  # runs in one sweep: each is a whole simulation and a run directory


class GridError(UserError, ValueError):
    """A `--grid` option that cannot be read."""


@dataclass(frozen=True)
class Axis:
    key: str
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Point:
    """One run of a sweep: a value for every axis, and a seed."""

    index: int
    params: dict[str, Any]
    seed: int

    def sets(self) -> list[str]:
        """The `--set` assignments that make this point (JSON is YAML, so values round-trip)."""
        return [f"{key}={orjson.dumps(value).decode()}" for key, value in self.params.items()]


def _split(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts]


def parse_axis(text: str) -> Axis:
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or not raw.strip():
        raise GridError(f"--grid {text!r}: expected key.path=value1,value2,…")
    parts = _split(raw)
    if len(parts) > MAX_RUNS:
        raise GridError(f"--grid {key}: {len(parts):,} values; a sweep runs at most "
                        f"{MAX_RUNS:,}: split it into several sweeps")
    values = []
    for part in parts:
        if not part:
            raise GridError(f"--grid {text!r}: an empty value (two commas in a row?)")
        try:
            values.append(parse_value(part, f"--grid {key}"))
        except ScenarioError as exc:
            raise GridError(f"--grid {key}: {short(part)} is not accepted: "
                            f"{exc.problems[0].message}") from None
    if len(set(map(repr, values))) != len(values):
        raise GridError(f"--grid {text!r}: a value is given twice")
    return Axis(key, tuple(values))


def parse_grid(texts: Sequence[str]) -> list[Axis]:
    if not texts:
        raise GridError("give at least one --grid key.path=value1,value2,…")
    axes = [parse_axis(t) for t in texts]
    keys = [a.key for a in axes]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise GridError(f"--grid names {', '.join(twice)} more than once")
    return axes


def check_runs(axes: Sequence[Axis], seeds: int) -> int:
    """The number of runs of the grid × `seeds`; GridError when it is more than MAX_RUNS.

    Counted before anything is built, so a grid of a million points is refused at once.
    """
    runs = math.prod(len(a.values) for a in axes) * seeds
    if runs > MAX_RUNS:
        sizes = " × ".join(f"{len(a.values)} ({a.key})" for a in axes)
        raise GridError(f"--grid: {sizes} × {seeds} seeds is {runs:,} runs; a sweep runs at "
                        f"most {MAX_RUNS:,}: split it into several sweeps over parts of the grid")
    return runs


def points(axes: Sequence[Axis], seeds: Sequence[int]) -> list[Point]:
    """The cross product, the first axis varying slowest and the seed fastest."""
    check_runs(axes, len(seeds))
    combos = itertools.product(*(a.values for a in axes))
    out: list[Point] = []
    for combo in combos:
        for seed in seeds:
            params = {a.key: v for a, v in zip(axes, combo, strict=True)}
            out.append(Point(len(out), params, seed))
    return out
