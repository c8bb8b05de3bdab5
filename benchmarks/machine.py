"""How fast this machine runs CPython's interpreter loop right now: printed before and after
the engine and fuzz benchmarks' figures, so that figures measured on different machines, or on
one machine at different times, are not mistaken for a change in rig. On the twenty-seventh
session's machine the loop below took anywhere from 0.51 to 1.79 CPU s, minute to minute
(25 loops in a row after a fuzz benchmark: 1.09–1.78 s); the seed hour gave 69k events per CPU s
in a slow hour and 102k in a fast minute, the same code (docs/benchmarks.md). A long
measurement (a fuzz session, the suite) runs at the slow end: 36–39 simulated s per CPU s in
both, against 107 on the previous session's machine.

Run alone: python benchmarks/machine.py
"""

from __future__ import annotations

import os
import sys
import time

ADDITIONS = 10_000_000


def additions_cpu_s(repeats: int = 3) -> float:
    """Best CPU seconds of `s += i` for i in range(ADDITIONS) (one interpreter loop, no
    allocation that survives)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        total = 0
        for i in range(ADDITIONS):
            total += i
        best = min(best, time.process_time() - started)
    return best


def describe() -> str:
    """The interpreter, the cores and the loop's time, as one line."""
    return (f"python {sys.version.split()[0]} ({sys.executable}), {os.cpu_count()} cores; "
            f"{ADDITIONS // 1_000_000}M additions in {additions_cpu_s():.2f} CPU s (best of 3: "
            "the machine's speed, to compare figures from different machines)")


if __name__ == "__main__":
    print(describe())
