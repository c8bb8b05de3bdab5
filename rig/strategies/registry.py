"""Find strategies by kind and name: rig's built-ins and installed plugins, one mechanism.

A strategy is named `module:Class`. Built-ins are listed here (as pytest lists its default
plugins); third-party packages declare entry points in the groups `rig.placement`,
`rig.replication`, `rig.isr`, `rig.fetch_session` and `rig.compaction`. Loading checks the class
against its kind's Protocol and reports every problem at once, naming the plugin.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from typing import Any

from rig.errors import PluginError
from rig.scenario.model import STRATEGY_KINDS

BUILTIN: dict[str, dict[str, str]] = {
    "placement": {
        "kafka": "rig.strategies.placement.kafka:KafkaPlacement",
        "explicit": "rig.strategies.placement.explicit:ExplicitPlacement",
    },
    "fetch_session": {
        "sessionless": "rig.strategies.fetch_session.sessionless:Sessionless",
        "incremental": "rig.strategies.fetch_session.incremental:Incremental",
    },
    "replication": {},
    "isr": {},
    "compaction": {},
}

# The default of each kind; kinds whose default is None are not modelled by this rig version.
DEFAULTS: dict[str, str | None] = {
    "placement": "kafka",
    "fetch_session": "incremental",
    "replication": None,
    "isr": None,
    "compaction": None,
}

# The methods each kind must provide: name → parameter names after `self`.
REQUIRED_METHODS: dict[str, dict[str, tuple[str, ...]]] = {
    "placement": {"assign": ("brokers", "topic", "rng")},
    "fetch_session": {"new_client": (), "new_cache": ("broker", "slots", "rng")},
    "replication": {},
    "isr": {},
    "compaction": {},
}


@dataclass(frozen=True)
class Registered:
    kind: str
    name: str
    target: str  # module:attribute
    origin: str  # "built-in" or the distribution that provides it


@cache
def available() -> dict[str, dict[str, Registered]]:
    """Every registered strategy, by kind then name; plugins cannot shadow built-ins."""
    found: dict[str, dict[str, Registered]] = {}
    for kind in STRATEGY_KINDS:
        table = {name: Registered(kind, name, target, "built-in")
                 for name, target in BUILTIN[kind].items()}
        for ep in entry_points(group=f"rig.{kind}"):
            if ep.name in table:
                continue
            dist = ep.dist.name if ep.dist is not None else "unknown package"
            table[ep.name] = Registered(kind, ep.name, ep.value, dist)
        found[kind] = dict(sorted(table.items()))
    return found


def known_names(kind: str) -> list[str]:
    return list(available()[kind])


def _import(target: str, kind: str, label: str) -> Any:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise PluginError(f"{kind} strategy {label}: {target!r} is not of the form module:Class")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a plugin may raise anything at import
        raise PluginError(f"{kind} strategy {label}: importing {module_name} failed: "
                          f"{type(exc).__name__}: {exc}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise PluginError(f"{kind} strategy {label}: {module_name} has no {attr!r}") from None


def conformance_problems(kind: str, cls: Any) -> list[str]:
    """What `cls` lacks to be a strategy of `kind` (empty when it conforms)."""
    problems = []
    if not inspect.isclass(cls):
        return [f"{cls!r} is not a class"]
    for attr in ("name", "description"):
        if not isinstance(getattr(cls, attr, None), str):
            problems.append(f"class attribute {attr!r} (a str) is missing")
    for method, params in REQUIRED_METHODS[kind].items():
        func = getattr(cls, method, None)
        if not callable(func):
            problems.append(f"method {method}({', '.join(params)}) is missing")
            continue
        got = [p for p in inspect.signature(func).parameters if p != "self"]
        if got != list(params):
            problems.append(f"method {method} takes ({', '.join(got)}), "
                            f"expected ({', '.join(params)})")
    return problems


def load(kind: str, name: str, *, allow_paths: bool = False) -> type:
    """The class registered as `name` for `kind` (or at `module:Class` if paths are allowed)."""
    registered = available()[kind].get(name)
    if registered is None:
        if ":" in name:
            if not allow_paths:
                raise PluginError(
                    f"{kind} strategy {name!r} is a code path; loading code named in a scenario "
                    "file executes it, so rig does so only with --allow-plugin-paths")
            registered = Registered(kind, name, name, "path")
        else:
            known = ", ".join(known_names(kind)) or "none yet in this rig version"
            raise PluginError(f"unknown {kind} strategy {name!r}; known: {known}")
    cls = _import(registered.target, kind, repr(name))
    problems = conformance_problems(kind, cls)
    if problems:
        raise PluginError(f"{kind} strategy {name!r} ({registered.target}, from "
                          f"{registered.origin}) does not fit its Protocol: " + "; ".join(problems))
    return cls


def instantiate(kind: str, name: str, options: dict[str, Any], *, allow_paths: bool = False) -> Any:
    cls = load(kind, name, allow_paths=allow_paths)
    try:
        return cls(**options)
    except TypeError as exc:
        raise PluginError(f"{kind} strategy {name!r} rejected its options {options}: "
                          f"{exc}") from None
