"""A sweep's or fuzz session's output folder follows `rig run`'s promotion rules (issue 15):
a mount point is filled in place, a symlink is followed, an earlier session is kept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.search.outdir import prepare_out


def _finish(out: Path) -> None:
    (out / "sweep.json").write_text("{}")
    (out / "runs").mkdir()


def test_a_mount_point_keeps_the_earlier_sweep_inside(tmp_path: Path,
                                                      mount: Callable[..., Path]) -> None:
    out = mount(tmp_path / "out")
    assert prepare_out(out, "sweep.json", "sweep") is None
    _finish(out)
    previous = prepare_out(out, "sweep.json", "sweep")
    assert previous is not None and previous.parent == out
    assert (previous / "sweep.json").exists() and (previous / "runs").is_dir()
    assert [p.name for p in out.iterdir() if not p.name.startswith(".")] == [previous.name]
    _finish(out)
    again = prepare_out(out, "sweep.json", "sweep")  # the kept one stays where it is
    assert again is not None and (again / "sweep.json").exists() and previous.exists()


def test_a_symlinked_out_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    prepare_out(link, "sweep.json", "sweep")
    _finish(link)
    previous = prepare_out(link, "sweep.json", "sweep")
    assert link.is_symlink() and real.is_dir() and not any(real.iterdir())
    assert previous is not None and (previous / "sweep.json").exists()
