"""Find strategies by kind and name: rig's built-ins and installed plugins, one mechanism.

Every strategy is an entry point in the group `rig.<kind>` (`rig.placement`, `rig.replication`,
`rig.isr`, `rig.fetch_session`, `rig.compaction`): rig declares its built-ins in its own
pyproject.toml exactly as a third-party package does (as pytest lists its default plugins).
The built-ins are also described with their kind (rig.strategies.kinds), so that a source tree
that was never pip-installed, or whose install metadata predates a built-in, still finds them;
a test keeps the two equal.

Loading checks a class against its kind's contract (class attributes, Protocol version, methods
and their parameters) and reports every problem at once in one PluginError naming the plugin,
its kind and where it came from (pluggy's hook validation does the same for hooks).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib.metadata import Distribution, EntryPoint, entry_points
from typing import Any

from rig._version import __version__
from rig.errors import PluginError
from rig.scenario.model import STRATEGY_KINDS
from rig.strategies import conformance
from rig.strategies.kinds import KINDS

# Read from each kind's one description (rig.strategies.kinds): its built-ins and its default
# (the methods, class attributes and Protocol versions: rig.strategies.conformance).
BUILTIN: dict[str, dict[str, str]] = {name: dict(kind.builtins) for name, kind in KINDS.items()}
DEFAULTS: dict[str, str | None] = {name: kind.default for name, kind in KINDS.items()}

BUILT_IN = "built-in"
PATH = "a module:Class path"  # the origin of a strategy named by path in a scenario
TEST = "rig.testing"  # the origin of a class registered for the length of a test
RIG_DISTRIBUTION = "rig"


@dataclass(frozen=True)
class Registered:
    """One strategy the registry can load: where its class is and who provides it."""

    kind: str
    name: str
    target: str  # module:attribute
    origin: str  # BUILT_IN, "<distribution> <version>", PATH or TEST
    distribution: str | None = None
    version: str | None = None

    @property
    def builtin(self) -> bool:
        return self.origin == BUILT_IN


@dataclass(frozen=True)
class Ignored:
    """An entry point the registry did not take (a built-in's name, or a name taken twice)."""

    kind: str
    name: str
    target: str
    origin: str
    reason: str


@dataclass(frozen=True)
class _Scan:
    found: Mapping[str, Mapping[str, Registered]]
    ignored: tuple[Ignored, ...]


# Classes registered for the length of a `temporarily` block: kind → name → (entry, class).
_temporary: dict[str, dict[str, tuple[Registered, type]]] = {kind: {} for kind in STRATEGY_KINDS}


def _canonical(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()  # PEP 503 normalisation


@cache  # (emptied with the scan by refresh)
def _identity(dist: Distribution) -> tuple[str, str]:
    metadata = dist.metadata  # parsed once: Distribution.name and .version each parse it all
    return metadata["Name"], metadata["Version"]  # (rig's holds the README: 5 ms a parse)


def _distribution(ep: EntryPoint) -> tuple[str | None, str | None]:
    return _identity(ep.dist) if ep.dist is not None else (None, None)


def _is_rig(ep: EntryPoint) -> bool:
    name = _distribution(ep)[0]
    return name is not None and _canonical(name) == RIG_DISTRIBUTION


@cache
def _scan() -> _Scan:
    found: dict[str, dict[str, Registered]] = {}
    ignored: list[Ignored] = []
    every = entry_points()  # one pass over the installed packages for all kinds
    for kind in STRATEGY_KINDS:
        # Sorted so that which of two packages claiming one name wins never depends on the
        # order of sys.path or of the file system.
        eps = sorted(every.select(group=f"rig.{kind}"),
                     key=lambda ep: (_distribution(ep)[0] or "", ep.name, ep.value))
        table: dict[str, Registered] = {}
        for ep in eps:
            if _is_rig(ep):
                dist, version = _distribution(ep)
                table[ep.name] = Registered(kind, ep.name, ep.value, BUILT_IN, dist, version)
        # The in-code table wins for rig's own names: an editable install's metadata can be
        # older than the source tree it points at.
        for name, target in BUILTIN.get(kind, {}).items():
            table[name] = Registered(kind, name, target, BUILT_IN, RIG_DISTRIBUTION, __version__)
        for ep in eps:
            if _is_rig(ep):
                continue
            dist, version = _distribution(ep)
            origin = f"{dist} {version}" if dist else "an unknown package"
            taken = table.get(ep.name)
            if taken is not None:
                reason = ("a built-in has this name, and plugins cannot shadow built-ins"
                          if taken.builtin else f"{taken.origin} already provides this name")
                ignored.append(Ignored(kind, ep.name, ep.value, origin, reason))
                continue
            table[ep.name] = Registered(kind, ep.name, ep.value, origin, dist, version)
        found[kind] = table
    return _Scan(found, tuple(ignored))


def refresh() -> None:
    """Forget the entry points seen so far (after installing a plugin into a running process)."""
    _scan.cache_clear()
    _identity.cache_clear()


def _check_kind(kind: str) -> None:
    if kind not in STRATEGY_KINDS:
        raise PluginError(f"unknown strategy kind {kind!r}; kinds: {', '.join(STRATEGY_KINDS)}")


def _table(kind: str) -> dict[str, Registered]:
    _check_kind(kind)
    table = dict(_scan().found[kind])
    for name, (registered, _cls) in _temporary[kind].items():
        table.setdefault(name, registered)
    return table


def available() -> dict[str, dict[str, Registered]]:
    """Every registered strategy, by kind then name: built-ins first, then plugins, each sorted."""
    result = {}
    for kind in STRATEGY_KINDS:
        table = _table(kind)
        result[kind] = {name: table[name] for name in known_names(kind)}
    return result


def ignored() -> tuple[Ignored, ...]:
    """Entry points that were not registered, with the reason (shown by `rig plugins`)."""
    return _scan().ignored


def known_names(kind: str) -> list[str]:
    """The names a scenario may use for `kind`: rig's built-ins first, then plugins, sorted."""
    table = _table(kind)
    return sorted(table, key=lambda name: (not table[name].builtin, name))


def lookup(kind: str, name: str, *, allow_paths: bool = False) -> Registered:
    """Where the strategy a scenario calls `name` comes from; PluginError if there is none."""
    registered = _table(kind).get(name)
    if registered is not None:
        return registered
    if ":" in name:
        if not allow_paths:
            raise PluginError(
                f"{kind} strategy {name!r} is a code path: loading code named in a scenario "
                "file executes that code, so rig does it only when you pass "
                "--allow-plugin-paths (or install the plugin so it has a registered name)")
        return Registered(kind, name, name, PATH)
    known = ", ".join(known_names(kind)) or "none yet in this rig version"
    raise PluginError(f"unknown {kind} strategy {name!r}; known: {known}")


def origin_of(kind: str, name: str) -> str:
    """Who provides strategy `name` of `kind`, for messages ("built-in", a package, a path)."""
    registered = _table(kind).get(name) if kind in STRATEGY_KINDS else None
    if registered is not None:
        return registered.origin
    return PATH if ":" in name else "an unregistered class"


def _where(exc: BaseException) -> str:
    """` (at file:line)` of the innermost frame of `exc`, so a plugin author knows where."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f" (at {exc.filename}:{exc.lineno})"
    frames = traceback.extract_tb(exc.__traceback__)
    return f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""


def describe_exception(exc: BaseException) -> str:
    """`Type: message (at file:line)`: an exception a plugin raised, in one line."""
    return f"{type(exc).__name__}: {exc}{_where(exc)}"


def _label(registered: Registered) -> str:
    if registered.origin in (PATH, TEST):
        return f"{registered.kind} strategy {registered.name!r} (from {registered.origin})"
    return (f"{registered.kind} strategy {registered.name!r} ({registered.target}, from "
            f"{registered.origin})")


def _import(registered: Registered) -> Any:
    temporary = _temporary[registered.kind].get(registered.name)
    if temporary is not None and temporary[0] == registered:
        return temporary[1]
    module_name, _, attr = registered.target.partition(":")
    if not module_name or not attr:
        raise PluginError(f"{_label(registered)}: {registered.target!r} is not of the form "
                          "module:Class")
    if registered.origin == PATH and os.getcwd() not in sys.path:
        # As `python -m` and uvicorn do: a path the user allowed is looked up from where they
        # are, even when the `rig` console script put only its own folder on sys.path.
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # a plugin may raise anything while importing
        raise PluginError(f"{_label(registered)}: importing {module_name} failed: "
                          f"{describe_exception(exc)}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PluginError(f"{_label(registered)}: {module_name} has no {attr!r}") from None
    return obj


def conformance_problems(kind: str, cls: Any, registered: Registered | None = None) -> list[str]:
    """Everything that keeps `cls` from being a strategy of `kind` (empty when it conforms):
    rig.strategies.conformance's checks, and for an installed plugin its name attribute against
    the name it is registered as."""
    _check_kind(kind)
    named = (registered.name if registered is not None and registered.origin not in (PATH, TEST)
             else None)
    return conformance.problems(kind, cls, named)


def load_registered(registered: Registered) -> type:
    """The class of `registered`, checked against its kind's contract."""
    cls = _import(registered)
    problems = conformance_problems(registered.kind, cls, registered)
    if problems:
        raise PluginError(f"{_label(registered)} does not fit the {registered.kind} Protocol: "
                          + "; ".join(problems))
    return cls


def load(kind: str, name: str, *, allow_paths: bool = False) -> type:
    """The class registered as `name` for `kind` (or at `module:Class` if paths are allowed)."""
    return load_registered(lookup(kind, name, allow_paths=allow_paths))


def instantiate(kind: str, name: str, options: dict[str, Any], *, allow_paths: bool = False) -> Any:
    """A new instance of strategy `name`, created with the scenario's `options`."""
    registered = lookup(kind, name, allow_paths=allow_paths)
    cls = load_registered(registered)
    try:
        return cls(**options)
    except Exception as exc:  # a plugin's constructor may raise anything
        raise PluginError(f"{_label(registered)} rejected its options {options}: "
                          f"{describe_exception(exc)}") from None


@contextmanager
def temporarily(kind: str, cls: type, name: str | None = None) -> Iterator[str]:
    """Register `cls` as a strategy of `kind` inside the block; yields the name to use.

    This is how rig.testing runs a class that is not installed. The default name is the class's
    dotted path, which no entry point can take; a taken name raises PluginError.
    """
    name = name or f"{cls.__module__}.{cls.__qualname__}"
    if name in _table(kind):
        raise PluginError(f"{kind} strategy name {name!r} is taken")
    registered = Registered(kind, name, f"{cls.__module__}:{cls.__qualname__}", TEST)
    _temporary[kind][name] = (registered, cls)
    try:
        yield name
    finally:
        _temporary[kind].pop(name, None)
