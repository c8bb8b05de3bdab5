"""`python -m rig.commands.train_class_archive ARCHIVE JAVA`: make the class-data-sharing archive
of Spark's JVM (rig.analysis.class_archive starts it, detached, when a process ran Spark without
one). Not a `rig` command: nobody needs to call it."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from rig.analysis.class_archive import train_into

# The training run: a small scenario through simulation and every analysis stage, so the archive
# holds the classes a real analysis loads, not only the start-up's.
_SCENARIO = """\
name: class-archive-training
seed: 1
duration: 8s
kafka: "2.4"
cluster: {brokers: 3, config: {min.insync.replicas: 2}}
topics: [{name: t, partitions: 6, replication_factor: 3}]
workload:
  producers: [{name: app, topic: t, rate: 200, acks: all}]
  consumers: [{group: g, topic: t, members: 2}]
faults: [{kind: crash, broker: 2, at: 2s, restart_after: 3s}]
variants:
  v6: {protocol: {fetch_version: 6}, strategies: {fetch_session: sessionless}}
  v7: {protocol: {fetch_version: 7}, strategies: {fetch_session: incremental}}
"""


def _train(path: Path) -> int:
    """Run the training scenario with the archive written at the JVM's exit; move it into
    place once the JVM has exited cleanly. Returns the exit code."""
    from pyspark import SparkContext

    from rig import pipeline
    from rig.analysis.spark import stop_spark
    from rig.progress import Progress

    lock = path.with_suffix(".training")
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial")
    train_into(partial)
    try:
        with tempfile.TemporaryDirectory(prefix="rig-cds-") as folder:
            scenario = Path(folder) / "training.yaml"
            scenario.write_text(_SCENARIO, encoding="utf-8")
            pipeline.run(scenario, pipeline.RunOptions(out=Path(folder) / "run", report=False,
                                                       command="train_class_archive"),
                         Progress(quiet=True))
            stop_spark()
            gateway = SparkContext._gateway
            if gateway is None:
                return 1
            gateway.shutdown()
            proc = gateway.proc
            proc.stdin.close()  # the JVM exits on its stdin's end, and writes the archive
            code = proc.wait(timeout=1800)
        if code != 0 or not partial.is_file() or partial.stat().st_size == 0:
            return 1
        os.replace(partial, path)
        return 0
    finally:
        partial.unlink(missing_ok=True)
        lock.unlink(missing_ok=True)


if __name__ == "__main__":
    os.nice(10)  # a background chore: the user's own work goes first
    sys.exit(_train(Path(sys.argv[1])))
