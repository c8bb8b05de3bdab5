"""What makes fuzz runs cheap must not change what they run: a case compiled once and given its
faults equals the case written to YAML and loaded; a HashingSink digests exactly the bytes of the
event log a run writes; a run's digest does not depend on the process (PYTHONHASHSEED)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rig.events.log import HashingSink
from rig.scenario.load import load_scenario
from rig.scenario.source import load_yaml_file
from rig.search.bounds import fuzz_bounds, merged_variant
from rig.search.cases import case_document, compiler, dump_case
from rig.search.draw import draw_run
from rig.search.parallel import Tally
from rig.simulate import simulate
from tests.conftest import ROOT

SCENARIO = ROOT / "scenarios" / "fuzz-replication.yaml"


KRAFT = ROOT / "scenarios" / "fuzz-kraft.yaml"


@pytest.mark.parametrize(("scenario", "variant"), [
    (SCENARIO, "hw-truncation"), (SCENARIO, "leader-epoch"),
    (KRAFT, "kraft-4.1-elr"), (KRAFT, "kraft-3.9")])
def test_a_compiled_case_equals_the_case_written_and_loaded(scenario: Path, variant: str,
                                                            tmp_path: Path) -> None:
    doc = load_yaml_file(scenario)
    loaded = load_scenario(scenario, only_variants=[variant]).variants[0]
    bounds = fuzz_bounds(doc, merged_variant(doc.data, variant), loaded)
    compiled = compiler(doc.data, variant)
    drawn = []
    for index in range(40):
        faults, seed = draw_run(bounds, 5, index)
        drawn += faults
        path = tmp_path / f"case-{index}.yaml"
        path.write_text(dump_case(case_document(doc.data, variant, faults, seed)), "utf-8")
        assert compiled.variant(faults, seed) == load_scenario(path).variants[0], index
    if scenario == KRAFT:  # the quorum's nodes and its failover were among the cases
        assert any(f.get("controller") == "active" for f in drawn)
        assert any(n in (3, 4, 5) for f in drawn for g in f.get("groups", ()) for n in g)


def test_a_hashing_sink_digests_the_bytes_of_the_written_log(tmp_path: Path) -> None:
    doc = load_yaml_file(SCENARIO)
    bounds = fuzz_bounds(doc, merged_variant(doc.data, "hw-truncation"))
    faults, seed = draw_run(bounds, 0, 1)
    spec = compiler(doc.data, "hw-truncation").variant(faults, seed)
    log = tmp_path / "events.jsonl"
    written = simulate(spec, log, scenario="fuzz-replication")
    sink = HashingSink()
    digested = simulate(spec, tmp_path / "never.jsonl", scenario="fuzz-replication",
                        sink=sink)  # type: ignore[arg-type]
    data = log.read_bytes()
    assert not (tmp_path / "never.jsonl").exists()
    assert sink.hexdigest() == hashlib.sha256(data).hexdigest() and sink.bytes == len(data)
    assert sink.last_line == data.splitlines(keepends=True)[-1]
    assert written.events == digested.events
    case = compiler(doc.data, "hw-truncation").run(faults, seed, 1)
    assert case.events_sha256 == sink.hexdigest() and case.events == written.events


CHILD = """
import sys
from pathlib import Path
from rig.scenario.source import load_yaml_file
from rig.search.bounds import fuzz_bounds, merged_variant
from rig.search.parallel import Job, run_one
doc = load_yaml_file(Path(sys.argv[1]))
bounds = fuzz_bounds(doc, merged_variant(doc.data, "hw-truncation"))
print(run_one(Job(doc.data, "hw-truncation", bounds, 0), 2).events_sha256)
"""


@pytest.mark.slow
def test_a_run_does_not_depend_on_the_hash_seed() -> None:
    digests = set()
    for hash_seed in ("1", "2"):
        proc = subprocess.run([sys.executable, "-c", CHILD, str(SCENARIO)], cwd=ROOT,
                              capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": hash_seed})
        digests.add(proc.stdout.strip())
    assert len(digests) == 1 and len(digests.pop()) == 64


def test_a_tally_folds_runs_in_order_only() -> None:
    from rig.search.cases import CaseResult

    tally = Tally(until_violation=True)
    assert not tally.add(CaseResult(0, 1, [], events_sha256="a"))
    with pytest.raises(ValueError, match="run 2 folded after 0"):
        tally.add(CaseResult(2, 1, []))
    assert tally.add(CaseResult(1, 1, [], failed=["no-acked-loss"], events_sha256="b"))
    assert tally.done == 2 and tally.stopped_by == "violation" and tally.found is not None
    other = Tally()
    other.add(CaseResult(0, 1, [], events_sha256="a"))
    other.add(CaseResult(1, 1, [], failed=["no-acked-loss"], events_sha256="b"))
    assert other.runs_sha256 == tally.runs_sha256 and other.stopped_by == "runs"
