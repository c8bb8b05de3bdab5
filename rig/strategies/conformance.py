"""What a strategy class must have to be loaded as its kind, checked before it runs: its class
attributes, the version of the kind's Protocol it implements, and its methods with their
parameters, each read from the kind's one description (rig.strategies.kinds). pluggy validates
hook implementations the same way when they are registered; behaviour is for rig.testing and
the run-time guard (rig.strategies.guard)."""

from __future__ import annotations

import inspect
from typing import Any

from rig._version import __version__
from rig.strategies.base import FIRST_API_VERSION, api_version_of
from rig.strategies.kinds import KINDS

REQUIRED_METHODS: dict[str, dict[str, tuple[str, ...]]] = {
    name: kind.required_methods for name, kind in KINDS.items()}
REQUIRED_ATTRS: dict[str, dict[str, type]] = {
    name: kind.required_attrs for name, kind in KINDS.items()}
API_VERSIONS: dict[str, tuple[int, ...]] = {
    name: kind.api_versions for name, kind in KINDS.items()}


def _signature_problem(cls: type, method: str, expected: tuple[str, ...]) -> str | None:
    wanted = f"{method}({', '.join(expected)})"
    raw = inspect.getattr_static(cls, method, None)
    func = getattr(cls, method, None)
    if raw is None or not callable(func):
        return f"method {wanted} is missing"
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return None  # a callable Python cannot introspect (a C function): nothing to compare
    params = list(signature.parameters.values())
    positional_kinds = (inspect.Parameter.POSITIONAL_ONLY,
                        inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if (not isinstance(raw, (staticmethod, classmethod)) and params
            and params[0].kind in positional_kinds):
        params = params[1:]  # `self`
    kinds = {p.kind for p in params}
    if {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD} <= kinds and all(
            p.kind not in positional_kinds for p in params):
        return None  # (*args, **kwargs) takes anything
    positional = [p for p in params if p.kind in positional_kinds]
    names = tuple(p.name for p in positional[:len(expected)])
    if names != expected:
        got = ", ".join(str(p) for p in params)
        return f"method {method} takes ({got}), expected {wanted}"
    extra = [p.name for p in params[len(expected):]
             if p.default is inspect.Parameter.empty
             and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    if extra:
        return (f"method {method} also requires ({', '.join(extra)}), which rig never passes: "
                "give them defaults")
    return None


def problems(kind: str, cls: Any, registered_as: str | None = None) -> list[str]:
    """Everything that keeps `cls` from being a strategy of `kind` (empty when it conforms);
    `registered_as`: the name an installed package's entry point gives it.

    Checks what can be checked without running it: the class attributes, the Protocol version
    and the methods with their parameters. Behaviour is for rig.testing and the run-time guard.
    """
    if not inspect.isclass(cls):
        return [f"{cls!r} is not a class"]
    problems = []
    for attr in ("name", "description"):
        if not isinstance(getattr(cls, attr, None), str):
            problems.append(f"class attribute {attr!r} (a str) is missing")
    name = getattr(cls, "name", None)
    if registered_as is not None and isinstance(name, str) and name != registered_as:
        problems.append(f"its name attribute is {name!r} but it is registered as "
                        f"{registered_as!r}: make them equal")
    version = api_version_of(cls)
    supported = API_VERSIONS.get(kind, (FIRST_API_VERSION,))
    if not isinstance(version, int) or isinstance(version, bool):
        problems.append(f"class attribute 'api_version' must be an int (got {version!r})")
    elif version not in supported:
        problems.append(
            f"it implements version {version} of the {kind} Protocol, but rig {__version__} "
            f"drives version {', '.join(map(str, supported))}: install a release of the plugin "
            f"made for this one, or a rig that drives version {version}")
    for attr, kind_of in REQUIRED_ATTRS.get(kind, {}).items():
        value = getattr(cls, attr, None)
        if not isinstance(value, kind_of) or isinstance(value, bool):
            problems.append(f"class attribute {attr!r} (a {kind_of.__name__}) is missing")
    for method, params in REQUIRED_METHODS.get(kind, {}).items():
        problem = _signature_problem(cls, method, params)
        if problem:
            problems.append(problem)
    return problems
