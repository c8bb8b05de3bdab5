"""Byte accounting for the simulation: the codec's fast size path, memoized and cross-checked.

Every distinct message shape is sized once by the fast path; the first `verify` distinct shapes
of a run are also really encoded, and a size that differs from the encoder's is a bug in rig
(InternalError), so the numbers in a run are the encoder's.
"""

from __future__ import annotations

from rig.errors import InternalError
from rig.protocol import (
    RequestShape,
    ResponseShape,
    ResponseTopicShape,
    encode_fetch_request,
    encode_fetch_response,
    materialize_request,
    materialize_response,
    request_body_size,
    request_header_size,
    response_body_size,
    response_header_size,
    wire_size,
)

Sizes = tuple[int, int, int]  # body, header, wire (size prefix + header + body)

# Idle rounds repeat a few shapes for ever; under traffic nearly every response has a shape of
# its own. The memo starts again when it holds this many, so memory stays bounded however
# long the run (a size is the same computed twice: no figure depends on the memo).
SHAPES_KEPT = 1 << 14


class Meter:
    def __init__(self, verify: int = 256):
        self.verify_budget = verify
        self.verified = 0
        self._requests: dict[tuple[RequestShape, str], Sizes] = {}
        self._responses: dict[ResponseShape, Sizes] = {}
        self._idle: dict[tuple[int, tuple[tuple[str, int], ...]], Sizes] = {}

    def request(self, shape: RequestShape, client_id: str) -> Sizes:
        key = (shape, client_id)
        sizes = self._requests.get(key)
        if sizes is None:
            body = request_body_size(shape)
            if self.verified < self.verify_budget:
                self._check("request", shape, body,
                            len(encode_fetch_request(materialize_request(shape), shape.version)))
            header = request_header_size(shape.version, client_id)
            if len(self._requests) >= SHAPES_KEPT:
                self._requests.clear()
            sizes = self._requests[key] = (body, header, wire_size(header, body))
        return sizes

    def response(self, shape: ResponseShape) -> Sizes:
        sizes = self._responses.get(shape)
        if sizes is None:
            body = response_body_size(shape)
            if self.verified < self.verify_budget:
                self._check("response", shape, body,
                            len(encode_fetch_response(materialize_response(shape), shape.version)))
            header = response_header_size(shape.version)
            if len(self._responses) >= SHAPES_KEPT:
                self._responses.clear()
            sizes = self._responses[shape] = (body, header, wire_size(header, body))
        return sizes

    def idle_response(self, version: int, runs: tuple[tuple[str, int], ...]) -> Sizes:
        """The sizes of a full response without records (every partition idle) to a request
        whose partitions form topic `runs`: an idle round's, the same round after round, kept
        here by its runs without building its shape again. With no runs, an incremental
        response that lists nothing (an idle session's round)."""
        key = (version, runs)
        sizes = self._idle.get(key)
        if sizes is None:
            if len(self._idle) >= SHAPES_KEPT:
                self._idle.clear()
            sizes = self._idle[key] = self.response(ResponseShape(version, tuple(
                ResponseTopicShape(topic, idle=n) for topic, n in runs)))
        return sizes

    def _check(self, what: str, shape: object, fast: int, encoded: int) -> None:
        if fast != encoded:
            raise InternalError(f"fetch {what} size path says {fast} bytes but the encoder "
                                f"wrote {encoded} for {shape}")
        self.verified += 1
