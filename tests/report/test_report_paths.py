"""Output paths: names from user text are safe, nothing lands outside its folder, no clobbering."""

from __future__ import annotations

from pathlib import Path

import pytest

from rig.errors import RunDirError
from rig.report.paths import child_path, href, resolve_out, safe_name, write_text_atomic


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("fetch-sessions", "fetch-sessions"),
        ("../../etc/passwd", "etc-passwd"),
        ("..", "run"),
        ("a b/c\\d", "a-b-c-d"),
        (".hidden", "hidden"),
        ("<script>", "script"),
        ("", "run"),
    ],
)
def test_safe_name(text: str, name: str) -> None:
    assert safe_name(text) == name


def test_long_names_are_cut_but_stay_distinct() -> None:
    a, b = safe_name("x" * 300 + "a"), safe_name("x" * 300 + "b")
    assert len(a) <= 120 and len(b) <= 120 and a != b


@pytest.mark.parametrize("name", ["..", ".", "../x.html", "a/b.html", "/etc/x", "", "x\0y"])
def test_child_path_refuses_escapes(tmp_path: Path, name: str) -> None:
    with pytest.raises(RunDirError):
        child_path(tmp_path, name)


def test_child_path_refuses_a_symlink_out(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "link.html").symlink_to(tmp_path / "elsewhere.html")
    with pytest.raises(RunDirError):
        child_path(tmp_path / "out", "link.html")
    assert child_path(tmp_path / "out", "ok.html") == tmp_path / "out" / "ok.html"


def test_resolve_out(tmp_path: Path) -> None:
    assert resolve_out(None, tmp_path, "a.html") == tmp_path / "a.html"
    assert resolve_out(tmp_path, Path("reports"), "a.html") == tmp_path / "a.html"
    assert resolve_out(tmp_path / "f.html", Path("reports"), "a.html") == tmp_path / "f.html"


def test_never_replaces_a_file_rig_did_not_write(tmp_path: Path) -> None:
    mine = tmp_path / "notes.html"
    mine.write_text("<p>my notes</p>", encoding="utf-8")
    with pytest.raises(RunDirError):
        write_text_atomic(mine, "<html>")
    assert mine.read_text(encoding="utf-8") == "<p>my notes</p>"
    with pytest.raises(RunDirError):
        write_text_atomic(tmp_path, "<html>")  # a folder
    page = tmp_path / "r.html"
    write_text_atomic(page, '<meta name="generator" content="rig 0.1.0">one')
    write_text_atomic(page, '<meta name="generator" content="rig 0.1.0">two')  # rig's own: ok
    assert page.read_text(encoding="utf-8").endswith("two")
    assert oct(page.stat().st_mode & 0o777) == "0o644"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_href_is_relative_and_never_a_scheme(tmp_path: Path) -> None:
    page = tmp_path / "reports" / "index.html"
    assert href(page, tmp_path / "reports" / "a" / "report.html") == "a/report.html"
    assert href(page, tmp_path / "b c" / "report.html") == "../b%20c/report.html"
    assert href(page, tmp_path / "reports" / "javascript:alert(1)" / "r.html").startswith(
        "javascript%3Aalert")
