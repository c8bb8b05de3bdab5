"""Safe YAML loading that remembers the line of every value and rejects duplicate keys.

The result is plain data (dict/list/scalars) plus a `Lines` map from JSON paths to 1-based line
numbers, so every later check can say `FILE:LINE: $.path: message`.
"""

from __future__ import annotations

import os
import stat
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
    raw: bytes = b""  # the bytes read, for the scenario's hash

    def problem(self, path: PathKey, message: str) -> Problem:
        file, line = self.lines.locate(path, self.file)
        return Problem(file, line, json_path(path), message)


class Bounds:
    """What the loader accepts at most: the file, the nesting, the nodes an alias may expand to.

    A scenario file is a few kilobytes; these bounds are far above any real one and keep a
    hostile or mistaken input (a "billion laughs" of nested aliases, `/dev/zero`, a FIFO, a
    thousand nested brackets) to one clear error instead of gigabytes of memory or a hang.
    """

    FILE_BYTES = 1 << 20  # 1 MiB: shipped scenarios are 1–4 KiB
    DEPTH = 64  # nested maps and lists; a scenario needs about 8
    NODES = 200_000  # values built, aliases expanded: a "billion laughs" stops here


class _Budget:
    """Counts the values built from one document (an alias counts its whole expansion)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def spend(self, node: yaml.Node, file: str, path: PathKey) -> None:
        self.used += 1
        if self.used > self.limit:
            raise ScenarioError([Problem(
                file, node.start_mark.line + 1, json_path(path),
                f"the document holds more than {self.limit:,} values once its aliases are "
                "expanded; rig refuses it (a scenario needs a few hundred)")])


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader with a limit on nesting: its composer recurses once per level."""

    depth_limit = Bounds.DEPTH

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > self.depth_limit:
                mark = self.peek_event().start_mark
                raise _TooDeep(mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _TooDeep(Exception):
    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def _to_python(node: yaml.Node, path: PathKey, file: str, lines: Lines,
               problems: list[Problem], constructor: yaml.constructor.SafeConstructor,
               budget: _Budget) -> Any:
    budget.spend(node, file, path)
    lines.by_path[path] = (file, node.start_mark.line + 1)
    if isinstance(node, yaml.CollectionNode) and node.tag not in _PLAIN_COLLECTIONS:
        problems.append(Problem(file, node.start_mark.line + 1, json_path(path),
                                f"the tag {node.tag!r} is not allowed: rig reads plain YAML"))
        return None
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        constructor.flatten_mapping(node)  # resolves YAML merge keys (<<) the safe way
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                problems.append(Problem(file, key_node.start_mark.line + 1, json_path(path),
                                        "keys must be strings, not maps or lists"))
                continue
            key = constructor.construct_object(key_node, deep=True)
            if isinstance(key, bool) and key_node.style is None:
                key = key_node.value  # YAML 1.1 reads `on:`/`off:`/`yes:` keys as booleans
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
            result[key] = _to_python(value_node, child, file, lines, problems, constructor,
                                     budget)
            lines.by_path[child] = (file, key_node.start_mark.line + 1)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_to_python(item, (*path, i), file, lines, problems, constructor, budget)
                for i, item in enumerate(node.value)]
    return constructor.construct_object(node, deep=True)


def parse_yaml(text: str, file: str, *, nodes: int = Bounds.NODES) -> Document:
    """Parse one YAML document with the safe loader; raise ScenarioError on any problem.

    Nesting deeper than `Bounds.DEPTH` and more than `nodes` values (aliases expanded) are
    refused before they cost more than a few milliseconds.
    """
    try:
        loader = _BoundedLoader(text)
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
    except _TooDeep as exc:
        raise ScenarioError([Problem(file, exc.line, "$", f"nested more than {Bounds.DEPTH} "
                                     "levels deep; a scenario needs far fewer")]) from None
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
        data = _to_python(root, (), file, lines, problems, constructor, _Budget(nodes))
    except yaml.constructor.ConstructorError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else None
        raise ScenarioError([Problem(file, line, "$", f"not valid YAML: {exc.problem}")]) from None
    if problems:
        raise ScenarioError(problems)
    return Document(data, file, lines)


def parse_value(text: str, origin: str, *, nodes: int = 10_000) -> Any:
    """One YAML value given on the command line (`--set`, `--grid`), with the loader's bounds.

    `origin` names the option in messages; a value is small, so its budget is too.
    """
    return parse_yaml(text, origin, nodes=nodes).data


def read_limited(path: Path, limit: int, what: str = "files") -> bytes:
    """The bytes of `path`, a regular file of at most `limit` bytes; ValueError saying what is
    wrong otherwise (missing, unreadable, a directory, a FIFO or device, too large).

    Opened without blocking, so a FIFO is refused instead of waiting for a writer, and a
    device such as /dev/zero is refused instead of read forever.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ValueError("no such file") from None
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ValueError("is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"is not a regular file (a FIFO, socket or device?); rig reads "
                             f"{what} from regular files only")
        if info.st_size > limit:
            raise ValueError(f"is {info.st_size:,} bytes; rig reads {what} of at most "
                             f"{limit:,} bytes")
        chunks, size = [], 0
        while size <= limit:  # a file that grows while we read still stops at the limit
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise ValueError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise ValueError(f"is more than {limit:,} bytes; rig reads {what} of at most "
                         f"{limit:,} bytes")
    return b"".join(chunks)


def read_bounded(path: Path, limit: int = Bounds.FILE_BYTES) -> bytes:
    """`read_limited` for a scenario file: a problem is a ScenarioError naming the file."""
    try:
        return read_limited(path, limit, "scenario files")
    except ValueError as exc:
        raise ScenarioError([Problem(str(path), None, "$", str(exc))]) from None


def load_yaml_file(path: Path) -> Document:
    """Read and parse `path`; a missing, unreadable, oversized or special file is a
    ScenarioError too."""
    raw = read_bounded(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError([Problem(str(path), None, "$", f"is not UTF-8 text (byte "
                                     f"{exc.start}): a scenario is a YAML text file")]) from None
    if "\x00" in text:
        raise ScenarioError([Problem(str(path), None, "$", "holds NUL bytes: a scenario is a "
                                     "YAML text file")])
    doc = parse_yaml(text, str(path))
    doc.raw = raw
    return doc
