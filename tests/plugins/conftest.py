"""Fixtures for plugin tests: fake installed distributions (a module plus a real `*.dist-info`
with entry points on sys.path, found by importlib.metadata like any installed package)."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rig.strategies import registry

Install = Callable[..., None]
WriteModule = Callable[[str, str], str]


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    """install(dist, version, entry_points={group: {name: target}}, modules={name: source})."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    written: list[str] = []

    def install_(dist: str, version: str = "1.0", *,
                 entry_points: dict[str, dict[str, str]] | None = None,
                 modules: dict[str, str] | None = None) -> None:
        for name, source in (modules or {}).items():
            (site / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
            written.append(name)
        info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n",
                                       encoding="utf-8")
        (info / "entry_points.txt").write_text("".join(
            f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in eps.items())
            + "\n" for group, eps in (entry_points or {}).items()), encoding="utf-8")
        registry.refresh()

    yield install_
    for name in written:
        sys.modules.pop(name, None)
    registry.refresh()  # rescanned lazily, after monkeypatch has taken the site off sys.path


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WriteModule]:
    """module(name, source): an importable module (for module:Class paths); returns its name."""
    folder = tmp_path / "modules"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    written: list[str] = []

    def write(name: str, source: str) -> str:
        (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)
