"""Compaction benchmark: clean one partition of 10 million records over 1 million keys.

Run: python benchmarks/compaction.py [--only NAME] [--records N] [--keys K]. Each case runs in a
fresh process so its peak RSS is its own. The log is built in memory first (1,000-record
batches of 100-byte records, 64 MiB segments, keys spread evenly), then the kafka-cleaner
strategy cleans it pass by pass until the log is no longer cleanable; the figures are the
cleaning's wall time, the passes, and the process's peak RSS (and how much of it the log
itself takes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = {
    # name: (log.cleaner.dedupe.buffer.size, threads, target wall seconds, target peak MiB)
    "default-128MiB": (128 << 20, 1, 60.0, 1536),
    "16MiB-partial-passes": (16 << 20, 1, 120.0, 1536),
}

CHILD = """
import json, resource, sys, time
from array import array
from rig.cluster.log import Batch, Log
from rig.cluster.storage import apply_pass
from rig.strategies.compaction.base import CleanerSettings, CleaningConfig, CompactedLog
from rig.strategies.compaction.kafka_cleaner import KafkaCleaner

buffer, threads, records, keys = (int(a) for a in sys.argv[1:5])
PER_BATCH, RECORD = 1000, 100
started = time.perf_counter()
log = Log(segment_bytes=64 << 20)
step = 2654435761 % keys or 1  # a fixed stride: every key appears records / keys times
for base in range(0, records, PER_BATCH):
    ids = array("i", [(i * step) % keys for i in range(base, base + PER_BATCH)])
    log.append(Batch(base, PER_BATCH, 0, 61 + PER_BATCH * RECORD, 0, base, 0.0, ids), 0.0)
log.append(Batch(records, 1, 0, 161, 0, records, 0.0, array("i", [0])), 0.0)
# Roll: the last batch alone in the active segment (the cleaner never touches it).
log.segments[-1].size = log.segment_bytes
log.append(Batch(records + 1, 1, 0, 161, 0, records + 1, 0.0, array("i", [1])), 0.0)
built_s = time.perf_counter() - started
built_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
cleaner = KafkaCleaner()
settings = CleanerSettings(threads=threads, dedupe_buffer_bytes=buffer)
config = CleaningConfig(segment_bytes=64 << 20)
passes = []
started = time.perf_counter()
while True:
    chosen = cleaner.select([CompactedLog("t", 0, log, config, log.log_end_offset)], 0.0)
    if chosen is None:
        break
    plan = cleaner.clean(chosen, settings, 0.0)
    apply_pass(log, plan)
    passes.append({"keys_mapped": plan.keys_mapped, "map_full": plan.map_full,
                   "records_removed": plan.records_removed})
clean_s = time.perf_counter() - started
print(json.dumps({
    "records": records, "keys": keys, "batches": len(log.batches),
    "segments_after": len(log.segments), "build_s": built_s, "clean_s": clean_s,
    "passes": passes, "records_left": sum(b.records for b in log.batches),
    "rss_after_build_mib": built_rss,
    "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "map_capacity": cleaner.map_capacity(settings)}))
"""


def run_case(name: str, records: int, keys: int) -> dict[str, object]:
    buffer, threads, target_s, target_mib = CASES[name]
    proc = subprocess.run([sys.executable, "-c", CHILD, str(buffer), str(threads), str(records),
                           str(keys)], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed:\n{proc.stderr}")
    result: dict[str, object] = json.loads(proc.stdout)
    result["ok"] = (float(result["clean_s"]) <= target_s  # type: ignore[arg-type]
                    and float(result["peak_rss_mib"]) <= target_mib)  # type: ignore[arg-type]
    result["target"] = f"clean ≤ {target_s:g} s, peak RSS ≤ {target_mib} MiB"
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(CASES))
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--keys", type=int, default=1_000_000)
    args = parser.parse_args()
    failed = False
    for name in [args.only] if args.only else list(CASES):
        started = time.perf_counter()
        r = run_case(name, args.records, args.keys)
        passes = r["passes"]
        assert isinstance(passes, list)
        print(f"{name}: {r['records']:,} records over {r['keys']:,} keys; "
              f"{len(passes)} pass(es) mapping {[p['keys_mapped'] for p in passes]} keys "
              f"(map capacity {r['map_capacity']:,}); cleaned in {r['clean_s']:.2f} s "
              f"(log built in {r['build_s']:.2f} s); {r['records_left']:,} records left; "
              f"peak RSS {r['peak_rss_mib']:.0f} MiB ({r['rss_after_build_mib']:.0f} MiB "
              f"after building the log); {'ok' if r['ok'] else 'SLOW'} [{r['target']}] "
              f"({time.perf_counter() - started:.1f} s in all)")
        failed |= not r["ok"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
