"""`rig plugins`: every strategy of every kind, where it comes from, and what it does."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
import typer


def _entries() -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """kind → {default, api_versions, strategies}, and the entry points that were ignored."""
    from rig.errors import PluginError
    from rig.strategies import conformance, registry
    from rig.strategies.base import FIRST_API_VERSION, api_version_of

    kinds: dict[str, dict[str, Any]] = {}
    for kind, table in registry.available().items():
        strategies = []
        for name, registered in table.items():
            entry: dict[str, Any] = {
                "name": name, "origin": registered.origin, "builtin": registered.builtin,
                "distribution": registered.distribution, "version": registered.version,
                "target": registered.target, "default": registry.DEFAULTS.get(kind) == name}
            try:
                cls = registry.load_registered(registered)
            except PluginError as error:
                entry.update(ok=False, problem=str(error), description=None, api_version=None)
            else:
                description = str(getattr(cls, "description", "")).strip().splitlines()
                entry.update(ok=True, problem=None,
                             description=description[0] if description else "",
                             api_version=api_version_of(cls))
            strategies.append(entry)
        kinds[kind] = {"default": registry.DEFAULTS.get(kind),
                       "api_versions": list(conformance.API_VERSIONS.get(kind,
                                                                      (FIRST_API_VERSION,))),
                       "strategies": strategies}
    ignored = [{"kind": i.kind, "name": i.name, "target": i.target, "origin": i.origin,
                "reason": i.reason} for i in registry.ignored()]
    return kinds, ignored


def plugins(
    json_: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the strategies of every kind, built-in and installed, with origin and description.

    Exit 2 when an installed strategy cannot be loaded (its line says why).
    """
    kinds, ignored = _entries()
    broken = [s for kind in kinds.values() for s in kind["strategies"] if not s["ok"]]
    if json_:
        from rig._version import __version__

        typer.echo(orjson.dumps({"rig_version": __version__, "kinds": kinds, "ignored": ignored},
                                option=orjson.OPT_INDENT_2).decode())
    else:
        rows = [s for kind in kinds.values() for s in kind["strategies"]]
        name_width = max((len(s["name"]) for s in rows), default=0) + 2
        origin_width = max((len(s["origin"]) for s in rows), default=0) + 2
        for kind, info in kinds.items():
            typer.echo(kind)
            if not info["strategies"]:
                typer.echo("  (none in this rig version)")
            for s in info["strategies"]:
                text = (s["description"] + ("  [default]" if s["default"] else "") if s["ok"]
                        else f"BROKEN: {s['problem']}")
                typer.echo(f"  {s['name']:<{name_width}}{s['origin']:<{origin_width}}{text}")
        for i in ignored:
            typer.echo(f"ignored: {i['kind']} strategy {i['name']!r} ({i['target']}) from "
                       f"{i['origin']}: {i['reason']}", err=True)
    if broken:
        raise typer.Exit(2)
