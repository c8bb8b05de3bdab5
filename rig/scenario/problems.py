"""The problems of one scenario document, collected as the loader finds them: each located at
the key where the user wrote it (a variant's own override under `$.variants.<name>…`), each
reported once however many variants repeat it; and the unit values of one item, converted with
every bad one reported at its own key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rig.errors import Problem
from rig.scenario.source import Document, PathKey, json_path


class Collector:
    """Problems of one document, deduplicated across variants.

    While a variant is checked, `doc` is its merged document; a problem about a value that the
    variant itself sets is reported under `$.variants.<name>…`, where the user wrote it.
    """

    def __init__(self, doc: Document):
        self.doc = doc
        self.problems: list[Problem] = []
        self.variant: str | None = None
        self.override: Any = None

    def add(self, path: PathKey, message: str) -> None:
        file, line = self.doc.lines.locate(path, self.doc.file)
        shown = path
        if self.variant is not None and holds(self.override, path):
            shown = ("variants", self.variant, *path)
        problem = Problem(file, line, json_path(shown), message)
        if problem not in self.problems:
            self.problems.append(problem)


def holds(data: Any, path: PathKey) -> bool:
    """Whether `data` (a variant's override) sets the value at `path` or one above it."""
    node = data
    for part in path:
        if isinstance(node, list) and isinstance(part, int):
            if not 0 <= part < len(node):
                return False
            node = node[part]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return False
    return True


class UnitReader:
    """Converts the unit values of one scenario item, each bad one reported at its own key."""

    def __init__(self, raw: dict[str, Any], at: PathKey, out: Collector):
        self.raw, self.at, self.out = raw, at, out

    def get(self, key: str, convert: Callable[[Any], Any], default: Any = None) -> Any:
        """`convert(raw[key])`, or of `default` when the key is absent; None when neither is
        given. A value that does not convert is reported and read as 0."""
        value = self.raw.get(key, default)
        if value is None:
            return None
        try:
            return convert(value)
        except ValueError as exc:
            self.out.add((*self.at, key), str(exc))
            return 0
