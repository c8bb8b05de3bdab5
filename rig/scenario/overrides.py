"""Overrides: `--set key.path=value` on the command line and variants over the base scenario.

Maps merge key by key; lists and scalars replace. A path through a list uses the index
(`topics.0.partitions=100`). Locations are merged too, so errors in an override point at it.
"""

from __future__ import annotations

import copy
from typing import Any

from rig.errors import Problem, ScenarioError
from rig.scenario.source import Document, Lines, PathKey, json_path, parse_value

# Keys whose value is a map in the scenario format: `--set` creates them when absent.
MAP_KEYS = frozenset({"cluster", "config", "network", "cross_rack", "strategies", "protocol",
                      "workload", "options", "limits", "fuzz"})


def deep_merge(base: Any, override: Any, lines: Lines, override_lines: Lines,
               at: PathKey = ()) -> Any:
    """Merge `override` into a copy of `base`; update `lines` so merged values keep their origin."""
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            child = (*at, key)
            if key in merged:
                merged[key] = deep_merge(merged[key], value, lines, override_lines, child)
            else:
                merged[key] = copy.deepcopy(value)
                _take_lines(lines, override_lines, child)
            located = override_lines.by_path.get(child)
            if located is not None:
                lines.by_path[child] = located
        return merged
    lines.drop(at)
    _take_lines(lines, override_lines, at)
    return copy.deepcopy(override)


def _take_lines(lines: Lines, override_lines: Lines, at: PathKey) -> None:
    n = len(at)
    for path, where in override_lines.by_path.items():
        if path[:n] == at:
            lines.by_path[path] = where


class AssignmentError(ValueError):
    """A `--set` that cannot be applied: where (the option, a JSON path) and why."""

    def __init__(self, origin: str, path: str, message: str):
        super().__init__(f"{origin}: {path}: {message}")
        self.origin, self.path, self.message = origin, path, message


def origin_of(text: str, option: str = "--set") -> str:
    """How messages name one `--set KEY=VALUE`: as given, or cut when it is long."""
    return f"{option} {text}" if len(text) <= 80 else (
        f"{option} {text[:60]}… ({len(text):,} characters)")


def parse_assignment(text: str, option: str = "--set") -> tuple[list[str | int], Any]:
    """`topics.0.partitions=100` → (["topics", 0, "partitions"], 100); the value is YAML, read
    with the scenario loader's bounds (no tags, a small alias budget, a nesting limit)."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise AssignmentError(origin_of(text, option), "$", "expected key.path=value")
    path: list[str | int] = [int(p) if p.isdigit() else p for p in key.strip().split(".")]
    if not raw.strip():
        return path, ""
    try:
        value = parse_value(raw, f"{option} {key.strip()}")
    except ScenarioError as exc:
        raise AssignmentError(origin_of(text, option), json_path(tuple(path)),
                              f"the value is not accepted: {exc.problems[0].message}") from None
    return path, value


def short(text: str, limit: int = 80) -> str:
    """`text` quoted, cut to `limit` characters: a message never echoes a huge value."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"… ({len(text):,} chars)"


def apply_sets(doc: Document, assignments: list[str]) -> Document:
    """Apply `--set` assignments to the base document; every problem is reported at once.

    At each map, a key that exists is followed; otherwise the rest of the path is one key, so
    Kafka's dotted config names work: `cluster.config.replica.fetch.wait.max.ms=1s`.
    """
    data = copy.deepcopy(doc.data)
    lines = Lines(dict(doc.lines.by_path))
    problems: list[Problem] = []
    for text in assignments:
        origin = origin_of(text)
        try:
            path, value = parse_assignment(text)
        except AssignmentError as exc:
            problems.append(Problem(exc.origin, None, exc.path, exc.message))
            continue
        target: Any = data
        walked: list[str | int] = []
        while True:
            part, rest = path[len(walked)], path[len(walked) + 1:]
            if isinstance(target, list):
                if not isinstance(part, int) or not 0 <= part < len(target):
                    problems.append(Problem(origin, None, json_path(tuple(walked)),
                                            f"there is no list item {part} here"))
                    break
                if not rest:
                    target[part] = value
                    lines.by_path[(*walked, part)] = (origin, None)
                    break
                target, walked = target[part], [*walked, part]
            elif isinstance(target, dict):
                if rest and str(part) not in target and str(part) in MAP_KEYS:
                    target[str(part)] = {}
                if rest and str(part) in target and isinstance(target[str(part)], dict | list):
                    target, walked = target[str(part)], [*walked, str(part)]
                    continue
                key = ".".join(str(p) for p in path[len(walked):])
                target[key] = value
                lines.by_path[(*walked, key)] = (origin, None)
                break
            else:
                problems.append(Problem(origin, None, json_path(tuple(walked)),
                                        "this value is neither a map nor a list"))
                break
    if problems:
        raise ScenarioError(problems)
    return Document(data, doc.file, lines)
