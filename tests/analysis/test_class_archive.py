"""The class-data-sharing archive of Spark's JVM: which options the driver gets, and when the
background process that makes the archive is started (rig.analysis.class_archive)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from rig.analysis import class_archive


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("RIG_SPARK_CDS", raising=False)
    return tmp_path / "rig" / "spark-cds"


@pytest.fixture
def java(tmp_path: Path) -> str:
    binary = tmp_path / "jdk" / "bin" / "java"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n", encoding="utf-8")
    return str(binary)


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Popen calls, recorded instead of run."""
    calls: list[dict[str, Any]] = []

    class Child:
        pid = os.getpid()  # a live pid: the lock it writes is not stale

    def popen(args: list[str], **kwargs: Any) -> Child:
        calls.append({"args": args, **kwargs})
        return Child()

    monkeypatch.setattr(subprocess, "Popen", popen)
    return calls


def test_no_archive_yet_means_no_option(cache: Path, java: str) -> None:
    assert class_archive.jvm_options(java) == []


def test_an_archive_is_mapped_and_the_jvm_logs_to_its_stderr(cache: Path, java: str) -> None:
    path = class_archive.archive_path(java)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    options = class_archive.jvm_options(java)
    assert options[0] == f"-XX:SharedArchiveFile={path}"
    assert "-Xlog:disable" in options and "-Xlog:all=warning:stderr" in options


def test_turned_off_means_none_used_and_none_made(cache: Path, java: str,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  spawned: list[dict[str, Any]]) -> None:
    path = class_archive.archive_path(java)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    monkeypatch.setenv("RIG_SPARK_CDS", "off")
    assert class_archive.jvm_options(java) == []
    path.unlink()
    assert class_archive.start_training(java) is False
    assert spawned == []


def test_the_training_process_writes_where_it_is_told(cache: Path, java: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIG_SPARK_CDS", "train:/somewhere/x.partial")
    assert class_archive.jvm_options(java)[0] == "-XX:ArchiveClassesAtExit=/somewhere/x.partial"
    assert class_archive.start_training(java) is False  # it never starts another


def test_one_trainer_at_a_time_and_none_once_made(cache: Path, java: str,
                                                  spawned: list[dict[str, Any]]) -> None:
    assert class_archive.start_training(java) is True
    assert class_archive.start_training(java) is False  # the first one holds the lock
    (call,) = spawned
    path = class_archive.archive_path(java)
    assert call["args"][-3:] == ["rig.commands.train_class_archive", str(path), java]
    assert call["start_new_session"] is True  # detached: the user's command returns at once
    assert call["env"]["RIG_SPARK_CDS"] == ""
    path.with_suffix(".training").unlink()
    path.write_bytes(b"archive")
    assert class_archive.start_training(java) is False
    assert len(spawned) == 1


def test_a_dead_trainers_lock_is_taken_over(cache: Path, java: str,
                                            spawned: list[dict[str, Any]]) -> None:
    lock = class_archive.archive_path(java).with_suffix(".training")
    lock.parent.mkdir(parents=True)
    lock.write_text("999999999 0", encoding="utf-8")  # no such pid, and long ago
    assert class_archive.start_training(java) is True
    assert len(spawned) == 1


def test_another_java_or_pyspark_gets_another_archive(tmp_path: Path, cache: Path,
                                                      java: str) -> None:
    other = tmp_path / "jdk21" / "bin" / "java"
    other.parent.mkdir(parents=True)
    other.write_text("#!/bin/sh\n", encoding="utf-8")
    assert class_archive.archive_path(java) != class_archive.archive_path(str(other))
    assert class_archive.archive_path(java) == class_archive.archive_path(java)
