"""`rig protocol fetch`: the seed's figures from the encoder, sizes that agree with the fast size
path for every version, byte-exact hex dumps, decode round trips and one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rig.cli import app
from rig.protocol import (
    FETCH_VERSIONS,
    RequestShape,
    ResponsePartitionShape,
    ResponseShape,
    ResponseTopicShape,
    request_body_size,
    request_header_size,
    response_body_size,
    response_header_size,
)
from tests.conftest import ROOT

runner = CliRunner()
VERSIONS = list(FETCH_VERSIONS)
SESSION_VERSIONS = [v for v in VERSIONS if v >= 7]


def fetch(*args: object) -> Any:
    return runner.invoke(app, ["protocol", "fetch", *map(str, args)])


def fetch_json(*args: object) -> dict[str, Any]:
    result = fetch(*args, "--json")
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.output)
    return doc


def figure(output: str, name: str) -> int:
    match = re.search(rf"^  {name} bytes +(\d+)", output, re.M)
    assert match, output
    return int(match.group(1))


@pytest.mark.parametrize(("args", "body"), [
    (["--version", 6], 12031),  # Kafka 1.0: every request lists all 500 partitions
    (["--version", 7], 12043),  # Kafka 1.1: the full fetch that creates the session
    (["--version", 7, "--incremental"], 33),  # then nothing changed: 33 bytes
])
def test_the_seed_figures_come_from_the_encoder(args: list[Any], body: int) -> None:
    result = fetch(*args, "--topic", "test", "--partitions", 500)
    assert result.exit_code == 0, result.output
    assert figure(result.output, "body") == body
    header = figure(result.output, "header")
    assert header == 2 + 2 + 4 + 2 + len("broker-1-fetcher-0")  # request header v1
    assert figure(result.output, "wire") == 4 + header + body


def test_idle_responses_of_the_seed() -> None:
    assert fetch_json("--version", 6, "--partitions", 500, "--response")["body_bytes"] == 19018
    assert fetch_json("--version", 7, "--partitions", 500, "--incremental",
                      "--response")["body_bytes"] == 14


@pytest.mark.parametrize("version", VERSIONS)
def test_request_sizes_agree_with_the_size_path_at_every_version(version: int) -> None:
    doc = fetch_json("--version", version, "--partitions", 300, "--topic", "orders")
    assert doc["body_bytes"] == request_body_size(RequestShape(version, (("orders", 300),)))
    assert doc["header_bytes"] == request_header_size(version, "broker-1-fetcher-0")
    assert doc["wire_bytes"] == 4 + doc["header_bytes"] + doc["body_bytes"]
    assert doc["header_version"] == (2 if version >= 12 else 1)
    if version >= 7:
        doc = fetch_json("--version", version, "--partitions", 300, "--topic", "orders",
                         "--incremental", "--changed", 3, "--forgotten", 130)
        shape = RequestShape(version, (("orders", 3),), (("orders", 130),))
        assert doc["body_bytes"] == request_body_size(shape)


@pytest.mark.parametrize("version", VERSIONS)
def test_response_sizes_agree_with_the_size_path_at_every_version(version: int) -> None:
    idle = fetch_json("--version", version, "--partitions", 200, "--response")
    shape = ResponseShape(version, (ResponseTopicShape("test", idle=200),))
    assert idle["body_bytes"] == response_body_size(shape)
    assert idle["header_bytes"] == response_header_size(version)
    busy = fetch_json("--version", version, "--partitions", 50, "--response",
                      "--records-bytes", 16384)
    parts = tuple(ResponsePartitionShape(records=16384) for _ in range(50))
    assert busy["body_bytes"] == response_body_size(
        ResponseShape(version, (ResponseTopicShape("test", partitions=parts),)))


def test_defaults_are_a_kafka_replica_fetchers_and_a_consumer_differs() -> None:
    doc = fetch_json("--version", 11, "--partitions", 2)
    body = doc["body"]
    assert (body["replica_id"], body["max_wait_ms"], body["min_bytes"], body["max_bytes"]) == (
        1, 500, 1, 10 * 2**20)
    assert [p["partition_max_bytes"] for p in body["topics"][0]["partitions"]] == [2**20] * 2
    assert doc["header"]["client_id"] == "broker-1-fetcher-0" and doc["fetcher"] == "follower"
    consumer = fetch_json("--version", 11, "--partitions", 2, "--replica-id", -1)
    assert consumer["body"]["max_bytes"] == 50 * 2**20
    assert consumer["header"]["client_id"] == "consumer-1"
    assert fetch_json("--version", 11, "--partitions", 1, "--replica-id", 3, "--client-id",
                      "x")["header"]["client_id"] == "x"


def test_incremental_requests_list_changed_and_forgotten_partitions() -> None:
    body = fetch_json("--version", 12, "--partitions", 10, "--incremental", "--changed", 2,
                      "--forgotten", 3, "--session-id", 77, "--session-epoch", 9)["body"]
    assert (body["session_id"], body["session_epoch"]) == (77, 9)
    assert [p["partition"] for p in body["topics"][0]["partitions"]] == [0, 1]
    assert body["forgotten_topics"] == [{"topic": "test", "partitions": [10, 11, 12]}]


def _roundtrip(tmp_path: Path, *args: Any) -> None:
    out = tmp_path / "message.bin"
    encoded = fetch_json(*args, "--out", out)
    response = ["--response"] if "--response" in args else []
    version = args[args.index("--version") + 1]
    data = out.read_bytes()
    assert len(data) == encoded["wire_bytes"]
    framed = fetch_json("--decode", out, "--version", version, *response)
    assert framed["format"] == "framed" and framed["body"] == encoded["body"]
    assert framed["header"] == encoded["header"]
    assert (framed["body_bytes"], framed["wire_bytes"]) == (encoded["body_bytes"], len(data))
    body_only = tmp_path / "body.bin"
    body_only.write_bytes(data[4 + encoded["header_bytes"]:])
    bare = fetch_json("--decode", body_only, "--version", version, *response)
    assert bare["format"] == "body" and bare["body"] == encoded["body"]
    as_hex = tmp_path / "message.hex"
    as_hex.write_text("\n".join(data[i:i + 30].hex() for i in range(0, len(data), 30)) + "\n")
    assert fetch_json("--decode", as_hex, *response, "--version", version)["body"] == (
        encoded["body"])


@pytest.mark.parametrize("version", VERSIONS)
def test_every_version_round_trips_through_out_and_decode(version: int, tmp_path: Path) -> None:
    _roundtrip(tmp_path, "--version", version, "--partitions", 20, "--topic", "t-é",
               "--rack-id", "rack-a", "--correlation-id", 42)
    _roundtrip(tmp_path, "--version", version, "--partitions", 3, "--response",
               "--records-bytes", 100)
    if version >= 7:
        _roundtrip(tmp_path, "--version", version, "--partitions", 20, "--incremental",
                   "--changed", 4, "--forgotten", 2)
    if version >= 15:  # the replica id travels in the tagged ReplicaState
        _roundtrip(tmp_path, "--version", version, "--partitions", 2, "--replica-id", 5)


def _dump_bytes(output: str) -> bytes:
    """The bytes column of an annotated dump, in order."""
    rows = re.findall(r"^[0-9a-f]{6}  ((?:[0-9a-f]{2} ?){1,16})", output, re.M)
    return bytes.fromhex("".join(rows).replace(" ", ""))


@pytest.mark.parametrize("version", VERSIONS)
def test_the_hex_dump_shows_every_byte_and_labels_every_field(version: int,
                                                             tmp_path: Path) -> None:
    out = tmp_path / "m.bin"
    args = ["--version", version, "--partitions", 3, "--out", out, "--hex"]
    result = fetch(*args)
    assert result.exit_code == 0, result.output
    assert _dump_bytes(result.output) == out.read_bytes()
    assert "header.client_id = \"broker-1-fetcher-0\"" in result.output
    assert re.search(r"topics\[0\]\.partitions\[2\]\.partition_max_bytes = 1048576$",
                     result.output, re.M)
    if version >= 15:
        assert "ReplicaState<tag 1> = tag 1, 13 bytes" in result.output
        assert "ReplicaState.replica_id = 1" in result.output
    else:
        assert re.search(r"^000021  00 00 00 01 +replica_id = 1$", result.output, re.M) or (
            version < 12 and re.search(r"^000020  00 00 00 01 +replica_id = 1$", result.output,
                                       re.M))
    if version >= 13:
        assert re.search(r"topics\[0\]\.topic_id = [0-9a-f-]{36}$", result.output, re.M)
    # The JSON form tiles the message: spans are contiguous and cover every byte.
    spans = fetch_json(*args)["hex"]
    assert spans[0]["offset"] == 0
    assert all(a["offset"] + a["length"] == b["offset"] for a, b in pairwise(spans))
    assert spans[-1]["offset"] + spans[-1]["length"] == len(out.read_bytes())
    assert bytes.fromhex("".join(s["hex"] for s in spans)) == out.read_bytes()


def test_long_records_are_elided_in_the_dump_but_written_whole(tmp_path: Path) -> None:
    out = tmp_path / "r.bin"
    result = fetch("--version", 12, "--partitions", 1, "--response", "--records-bytes", 5000,
                   "--hex", "--out", out)
    assert "records = 5000 bytes" in result.output
    assert "bytes not shown (--out FILE writes every byte)" in result.output
    assert len(out.read_bytes()) == figure(result.output, "wire")


def test_decode_with_hex_prints_the_annotated_dump(tmp_path: Path) -> None:
    out = tmp_path / "m.bin"
    fetch("--version", 7, "--partitions", 2, "--out", out)
    result = fetch("--decode", out, "--hex")
    assert result.exit_code == 0, result.output
    # 4 size + 28 header + 91 body (25 fixed + topics 4 + "test" 6 + 4 + 2 × 24 + forgotten 4)
    assert result.output.startswith("Fetch v7 request, 123 bytes (size prefix + header + body)")
    assert _dump_bytes(result.output) == out.read_bytes()


@pytest.mark.parametrize(("args", "message"), [
    (["--version", 6, "--partitions", 5, "--incremental"], "Fetch v6 has no sessions"),
    (["--version", 7, "--partitions", 5, "--changed", 1], "add --incremental"),
    (["--version", 7, "--partitions", 5, "--incremental", "--changed", 6], "--changed must be"),
    (["--version", 7, "--partitions", 5, "--records-bytes", 3], "add --response"),
    (["--version", 7], "--partitions is required"),
    (["--partitions", 5], "--version is required"),
    (["--version", 19, "--partitions", 5], "rig speaks Fetch v0–v18"),
    (["--version", 7, "--partitions", 5, "--session-epoch", 4], "add --incremental"),
    (["--version", 7, "--partitions", 5, "--incremental", "--session-id", 0],
     "names its session"),
    (["--version", 6, "--partitions", 5, "--session-id", 3], "no session fields"),
    (["--version", 7, "--partitions", 1, "--replica-id", 2**31], "out of range"),
])
def test_bad_arguments_are_one_line_and_exit_2(args: list[Any], message: str) -> None:
    result = fetch(*args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_bad_bytes_are_one_clear_line_exit_2_without_traceback(tmp_path: Path) -> None:
    good = tmp_path / "good.bin"
    fetch("--version", 12, "--partitions", 40, "--out", good)
    data = good.read_bytes()
    cases = {
        "cut.bin": (data[:-7], [], "frame: the size prefix says"),
        "cut-body.bin": (data[40:-7], ["--version", 12], "FetchRequest v12: $."),
        "garbage.bin": (b"\xff" * 64, ["--version", 9], "FetchRequest v9"),
        "empty.bin": (b"", ["--version", 9], "truncated"),
        "odd.hex": (b"0a0b0", ["--version", 9], "odd number of digits"),
    }
    for name, (content, args, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        proc = subprocess.run([sys.executable, "-m", "rig", "protocol", "fetch", "--decode",
                               str(path), *map(str, args)],
                              capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 2, (name, proc.stdout, proc.stderr)
        assert proc.stdout == "" and "Traceback" not in proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (name, lines)
    wrong = fetch("--decode", good, "--version", 11)
    assert wrong.exit_code == 2 and "the request header says Fetch v12" in wrong.output
    forced = fetch("--decode", good, "--version", 12, "--body")
    assert forced.exit_code == 2 and "error: " in forced.output
    assert fetch("--decode", good, "--framed", "--body").exit_code == 2
    assert fetch("--decode", tmp_path / "missing.bin", "--version", 7).exit_code == 2
    response = fetch("--decode", good, "--response")
    assert response.exit_code == 2 and "--version is required to decode a response" in (
        response.output)
