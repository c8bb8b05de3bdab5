"""The bad-input corpus (issue 15): every mistake is one message naming file, line and field,
exit 2, no traceback, in bounded time and memory.

- tests/badinput/*.yaml: one mistake per file. Line 1 says what it is, line 2 what rig must
  answer: `# expect: LINE $.path: start of the message`. Each file is validated in this process;
  then all of them together in one child process whose CPU time and peak RSS are measured.
- CLI_CASES below: what cannot be a file in the corpus (a FIFO, /dev/zero, a 1.4 MB list of
  100,000 brokers, command-line values), each run in a child process and measured the same way.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rig.cli import app
from tests.conftest import ROOT

CORPUS = sorted((ROOT / "tests" / "badinput").glob("*.yaml"))
EXPECT = re.compile(r"# expect: (\d+) (\$\S*): (.+)")
MAX_SECONDS = 10.0  # CPU time (user + system) of one case
MAX_RSS = 500 << 20  # peak resident memory of the process that refuses it
HANG_SECONDS = 60.0  # wall clock: a case that takes this long is hanging, however busy the box
runner = CliRunner()


@dataclass(frozen=True)
class Measured:
    returncode: int
    stderr: str
    cpu_s: float
    wall_s: float
    max_rss: int  # bytes


def _limits() -> None:
    # A regression must fail the test, not take the machine down with it.
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    resource.setrlimit(resource.RLIMIT_CPU, (int(HANG_SECONDS), int(HANG_SECONDS)))


# `python -m rig ARGS`, writing the process's own peak RSS (VmHWM, in kB) to the file named
# by RIG_TEST_PEAK_RSS as it exits. Linux keeps ru_maxrss across fork and exec, so the rusage of
# a child forked from a large test worker reports the worker's size, not rig's; VmHWM belongs to
# the memory map the exec made.
_PEAK_RSS_WRAPPER = """
import atexit, os, runpy, sys
def _peak():
    with open("/proc/self/status") as status:
        kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(os.environ["RIG_TEST_PEAK_RSS"], "w") as out:
        out.write(kb)
atexit.register(_peak)
sys.argv = ["rig", *sys.argv[1:]]
runpy.run_module("rig", run_name="__main__", alter_sys=True)
"""


def measure(args: list[str], tmp_path: Path) -> Measured:
    """Run `python -m rig ARGS` in a child process; its own CPU time and peak RSS."""
    err_path = tmp_path / "stderr.txt"
    peak_path = tmp_path / "peak-rss.txt"
    peak_path.unlink(missing_ok=True)
    env = {**os.environ, "RIG_TEST_PEAK_RSS": str(peak_path)}
    with open(os.devnull, "wb") as out, open(err_path, "wb") as err:
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-c", _PEAK_RSS_WRAPPER, *args], stdout=out,
                                 stderr=err, stdin=subprocess.DEVNULL, preexec_fn=_limits,
                                 cwd=tmp_path, env=env)
        timer = threading.Timer(HANG_SECONDS, child.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(child.pid, 0)  # this child's own usage
        finally:
            timer.cancel()
        child.returncode = os.waitstatus_to_exitcode(status)
    # A child killed before its exit handlers ran has no figure: count it as over any limit.
    peak_kb = int(peak_path.read_text()) if peak_path.exists() else 1 << 40
    return Measured(child.returncode, err_path.read_text("utf-8", "replace"),
                    usage.ru_utime + usage.ru_stime, time.perf_counter() - started,
                    peak_kb * 1024)


def _expected(path: Path) -> tuple[int, str, str]:
    match = EXPECT.fullmatch(path.read_text("utf-8").splitlines()[1])
    assert match, f"{path.name}: line 2 must be `# expect: LINE $.path: message`"
    return int(match.group(1)), match.group(2), match.group(3)


def test_the_corpus_covers_the_issue() -> None:
    assert len(CORPUS) + len(CLI_CASES) >= 60 and len(CORPUS) >= 60


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_each_bad_file_is_one_message_with_file_line_and_field(path: Path) -> None:
    line, json_path, message = _expected(path)
    started = time.process_time()
    result = runner.invoke(app, ["validate", str(path)])
    assert time.process_time() - started < MAX_SECONDS
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    [only] = result.output.strip().splitlines()
    assert only.startswith(f"{path}:{line}: {json_path}: {message}"), only


def test_the_whole_corpus_is_refused_within_time_and_memory(tmp_path: Path) -> None:
    run = measure(["validate", *map(str, CORPUS)], tmp_path)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert [line.split(":", 1)[0] for line in lines] == list(map(str, CORPUS))
    assert run.cpu_s < MAX_SECONDS and run.max_rss < MAX_RSS, run


# -- what cannot be a file of the corpus ------------------------------------------------------
BASE = (ROOT / "tests" / "badinput" / "duration-zero.yaml").read_text("utf-8").replace(
    "duration: 0s", "duration: 30s")
LAUGHS = "[" + ", ".join(["&a [" + ", ".join(["lol"] * 9) + "]"] + ["*a"] * 8) + "]"
for _level in range(8):
    LAUGHS = f"&x{_level} [" + ", ".join([LAUGHS] + [f"*x{_level}"] * 8) + "]"


def _write(name: str, text: str | bytes) -> Callable[[Path], str]:
    def make(tmp: Path) -> str:
        path = tmp / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        return str(path)

    return make


def _fifo(tmp: Path) -> str:
    os.mkfifo(tmp / "scenario.fifo")
    return str(tmp / "scenario.fifo")


def _brokers(count: int) -> str:
    listed = "\n".join(f"    - {{id: {i}}}" for i in range(count))
    return re.sub(r"  brokers:\n(    - .*\n)+", lambda _: f"  brokers:\n{listed}\n", BASE)


def _grid(n: int) -> list[str]:
    values = ",".join(str(v) for v in range(1, n + 1))
    return ["--grid", f"seed={values}", "--grid", f"topics.0.partitions={values}",
            "--grid", f"cluster.config.num.replica.fetchers={values}"]


@dataclass(frozen=True)
class CliCase:
    name: str
    args: Callable[[Path], list[str]]
    starts: str  # the message starts so ({FILE} is the file the case made)
    says: str  # and says this
    child: bool = True  # measured in a child process; else run in this one (cheap cases)


CLI_CASES = [
    CliCase("dev-zero", lambda t: ["validate", "/dev/zero"],
            "/dev/zero: $: ", "is not a regular file"),
    CliCase("fifo", lambda t: ["validate", _fifo(t)], "{FILE}: $: ", "is not a regular file"),
    CliCase("directory", lambda t: ["validate", str(t)], "{FILE}: $: ", "is a directory",
            child=False),
    CliCase("two-mib-file", lambda t: ["validate", _write("big.yaml", BASE + "#" * (2 << 20))(t)],
            "{FILE}: $: ", "rig reads scenario files of at most 1,048,576 bytes"),
    CliCase("100k-brokers", lambda t: ["validate", _write("b.yaml", _brokers(100_000))(t)],
            "{FILE}: $: ", "rig reads scenario files of at most"),
    CliCase("10001-brokers", lambda t: ["validate", _write("b.yaml", _brokers(10_001))(t)],
            "{FILE}:7: $.cluster.brokers: ", "lists 10,001 items; at most 10,000"),
    CliCase("not-utf8", lambda t: ["validate", _write("l.yaml", b"name: caf\xe9\n")(t)],
            "{FILE}: $: ", "is not UTF-8 text", child=False),
    CliCase("nul-bytes", lambda t: ["validate", _write("n.yaml", "name: a\x00\n")(t)],
            "{FILE}: $: ", "holds NUL bytes", child=False),
    CliCase("set-billion-laughs",
            lambda t: ["validate", _write("s.yaml", BASE)(t), "--set", f"description={LAUGHS}"],
            "--set description=&x7 [", "$.description: the value is not accepted: the "
            "document holds more than 10,000 values"),
    CliCase("set-400-digit-duration",
            lambda t: ["validate", _write("s.yaml", BASE)(t), "--set", "duration=" + "9" * 400],
            "--set duration=9999", "characters): $.duration: '9999", child=False),
    CliCase("set-million-hours",
            lambda t: ["validate", _write("s.yaml", BASE)(t), "--set", "duration=1000000h"],
            "{FILE}:19: $.workload.producers[0].rate: ", "would produce about 3.6e11 records "
            "in 1000000h", child=False),
    CliCase("seed-negative", lambda t: ["run", _write("s.yaml", BASE)(t), "--seed", "-1"],
            "--seed: $.seed: ", "must be between 0 and", child=False),
    CliCase("variant-unknown", lambda t: ["run", _write("s.yaml", BASE)(t), "--variant", "v8"],
            "{FILE}:", "$.variants: no variant named v8; variants: v6, v7", child=False),
    CliCase("sweep-million-points",
            lambda t: ["sweep", _write("s.yaml", BASE)(t), *_grid(100)],
            "error: --grid: ", "is 1,000,000 runs; a sweep runs at most 10,000"),
    CliCase("protocol-partitions-1e9",
            lambda t: ["protocol", "fetch", "--version", "7", "--partitions", "1000000000"],
            "error: --partitions ", "must be between 0 and 200,000"),
    CliCase("protocol-records-bytes-1e12",
            lambda t: ["protocol", "fetch", "--version", "7", "--partitions", "1",
                       "--response", "--records-bytes", "1000000000000"],
            "error: --records-bytes ", "rig builds responses of at most"),
    CliCase("protocol-decode-dev-zero",
            lambda t: ["protocol", "fetch", "--decode", "/dev/zero"],
            "error: --decode /dev/zero: ", "is not a regular file", child=False),
    CliCase("assign-partitions-1e8",
            lambda t: ["assign", "--brokers", "0,1,2", "--partitions", "100000000",
                       "--replication-factor", "2"],
            "error: --partitions ", "must be between 1 and 1,000,000"),
]


@pytest.mark.parametrize("case", CLI_CASES, ids=[c.name for c in CLI_CASES])
def test_each_bad_argument_is_one_message_within_time_and_memory(case: CliCase,
                                                                 tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    args = case.args(work)
    if case.child:
        run = measure(args, tmp_path)
    else:
        started = time.process_time()
        result = runner.invoke(app, args)
        assert result.exception is None or isinstance(result.exception, SystemExit)
        run = Measured(result.exit_code, result.output, time.process_time() - started, 0, 0)
    made = next((a for a in args if a.startswith(str(work))), "")
    assert run.returncode == 2, run
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    [only] = run.stderr.strip().splitlines()
    assert only.startswith(case.starts.replace("{FILE}", made)), only
    assert case.says in only, only
    assert run.cpu_s < MAX_SECONDS and run.max_rss < MAX_RSS, run
