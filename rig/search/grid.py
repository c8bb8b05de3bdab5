"""The points of a sweep: `--grid key.path=v1,v2,...` options crossed with seeds.

A grid key is a `--set` path (list items by index: `topics.0.partitions`); each value is YAML,
so `1s`, `100`, `true` and `[0, 1]` mean what they mean in a scenario file. Commas inside
brackets or braces do not split values.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import yaml

from rig.errors import UserError


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
    values = []
    for part in _split(raw):
        if not part:
            raise GridError(f"--grid {text!r}: an empty value (two commas in a row?)")
        try:
            values.append(yaml.safe_load(part))
        except yaml.YAMLError:
            raise GridError(f"--grid {text!r}: {part!r} is not a valid YAML value") from None
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


def points(axes: Sequence[Axis], seeds: Sequence[int]) -> list[Point]:
    """The cross product, the first axis varying slowest and the seed fastest."""
    combos = itertools.product(*(a.values for a in axes))
    out: list[Point] = []
    for combo in combos:
        for seed in seeds:
            params = {a.key: v for a, v in zip(axes, combo, strict=True)}
            out.append(Point(len(out), params, seed))
    return out
