"""Safe YAML loading that remembers the line of every value and rejects duplicate keys.

The result is plain data (dict/list/scalars) plus a `Lines` map from JSON paths to 1-based line
numbers, so every later check can say `FILE:LINE: $.path: message`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rig.errors import Problem, ScenarioError

PathKey = tuple[str | int, ...]

_PLAIN_COLLECTIONS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


def json_path(path: PathKey) -> str:
    """`("topics", 0, "name")` → `$.topics[0].name`; keys that are not identifiers are quoted."""
    out = ["$"]
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif part.replace("_", "a").isalnum() and not part[:1].isdigit():
            out.append(f".{part}")
        else:
            out.append(f"[{part!r}]")
    return "".join(out)


@dataclass
class Lines:
    """Where each value of a document came from: path → (file, line)."""

    by_path: dict[PathKey, tuple[str, int | None]] = field(default_factory=dict)

    def locate(self, path: PathKey, default_file: str) -> tuple[str, int | None]:
        """The file and line of `path`, or of its nearest located ancestor."""
        probe = tuple(path)
        while True:
            found = self.by_path.get(probe)
            if found is not None:
                return found
            if not probe:
                return default_file, None
            probe = probe[:-1]

    def drop(self, prefix: PathKey) -> None:
        """Forget the locations of everything below `prefix` (a value that was replaced)."""
        n = len(prefix)
        for path in [p for p in self.by_path if p[:n] == prefix and len(p) > n]:
            del self.by_path[path]


@dataclass
class Document:
    """A loaded YAML document: its data, the file it came from and where each value sits."""

    data: Any
    file: str
    lines: Lines

    def problem(self, path: PathKey, message: str) -> Problem:
        file, line = self.lines.locate(path, self.file)
        return Problem(file, line, json_path(path), message)


def _to_python(node: yaml.Node, path: PathKey, file: str, lines: Lines,
               problems: list[Problem], constructor: yaml.constructor.SafeConstructor) -> Any:
    lines.by_path[path] = (file, node.start_mark.line + 1)
    if isinstance(node, yaml.CollectionNode) and node.tag not in _PLAIN_COLLECTIONS:
        problems.append(Problem(file, node.start_mark.line + 1, json_path(path),
                                f"the tag {node.tag!r} is not allowed: rig reads plain YAML"))
        return None
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        constructor.flatten_mapping(node)  # resolves YAML merge keys (<<) the safe way
        for key_node, value_node in node.value:
            key = constructor.construct_object(key_node, deep=True)
            if not isinstance(key, str | int) or isinstance(key, bool):
                problems.append(Problem(file, key_node.start_mark.line + 1, json_path(path),
                                        f"keys must be strings, got {key!r}"))
                continue
            key = str(key) if not isinstance(key, str) else key
            if key in result:
                first = lines.by_path.get((*path, key), (file, None))[1]
                problems.append(Problem(file, key_node.start_mark.line + 1,
                                        json_path((*path, key)),
                                        f"duplicate key {key!r} (first given on line {first})"))
                continue
            child = (*path, key)
            result[key] = _to_python(value_node, child, file, lines, problems, constructor)
            lines.by_path[child] = (file, key_node.start_mark.line + 1)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_to_python(item, (*path, i), file, lines, problems, constructor)
                for i, item in enumerate(node.value)]
    return constructor.construct_object(node, deep=True)


def parse_yaml(text: str, file: str) -> Document:
    """Parse one YAML document with the safe loader; raise ScenarioError on any problem."""
    try:
        loader = yaml.SafeLoader(text)
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise ScenarioError([Problem(file, line, "$", f"not valid YAML: {exc.problem}")]) from None
    except yaml.YAMLError as exc:
        raise ScenarioError([Problem(file, None, "$", f"not valid YAML: {exc}")]) from None
    if root is None:
        raise ScenarioError([Problem(file, 1, "$", "the file is empty")])
    lines = Lines()
    problems: list[Problem] = []
    constructor = yaml.SafeLoader("")
    try:
        data = _to_python(root, (), file, lines, problems, constructor)
    except yaml.constructor.ConstructorError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise ScenarioError([Problem(file, line, "$", f"not valid YAML: {exc.problem}")]) from None
    if problems:
        raise ScenarioError(problems)
    return Document(data, file, lines)


def load_yaml_file(path: Path) -> Document:
    """Read and parse `path`; a missing or unreadable file is a ScenarioError too."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError([Problem(str(path), None, "$", "no such file")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError([Problem(str(path), None, "$", f"cannot read: {exc}")]) from None
    return parse_yaml(text, str(path))
