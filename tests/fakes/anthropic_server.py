"""A fake Anthropic Messages API server for tests and benchmarks.

It is a real HTTP server (stdlib ``ThreadingHTTPServer`` on 127.0.0.1, a free port) that
speaks the Messages API with real SSE framing, so the real ``anthropic`` SDK and Margin's real
provider run against it unchanged. Tests script the replies in order and read back what was
sent::

    with FakeAnthropic() as fake:
        fake.add(Reply.text("Hello there"))
        fake.add(Reply.tool_use("search_book", {"query": "cat"}))
        fake.add(Reply.error(529, "overloaded_error", "Overloaded"))
        ... run the code with base_url=fake.url ...
        assert fake.requests[0].body["model"] == "claude-test"

Every request pops the next scripted reply; when the script is empty the server answers 500
with a message saying so (a test that asks more than it scripted fails loudly).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes.citations import search_result_citation

__all__ = ["FakeAnthropic", "RecordedRequest", "Reply", "search_result_citation"]


@dataclass
class TextBlock:
    text: str
    citations: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ToolUseBlock:
    name: str
    input: dict[str, Any]
    id: str = ""


@dataclass
class Reply:
    """One scripted answer to one request."""

    blocks: list[TextBlock | ToolUseBlock] = field(default_factory=list)
    stop_reason: str = "end_turn"
    usage: dict[str, int] = field(
        default_factory=lambda: {"input_tokens": 100, "output_tokens": 20}
    )
    chunk_chars: int = 12
    tokens_per_second: float | None = None  # pace text deltas (one delta ≈ one token)
    delay_before: float = 0.0
    # after the headers, before the first event: a local server reading the prompt
    first_event_delay: float = 0.0
    stall_after_chars: int | None = None  # then silence for ``stall_s`` mid-stream
    stall_s: float = 0.0
    # faults
    status: int = 200
    error_type: str = ""
    error_message: str = ""
    retry_after: float | None = None
    stream_error_after_chars: int | None = None  # send an `error` event after this many chars
    cut_after_chars: int | None = None  # close the connection mid-stream
    hang: bool = False
    malformed: bool = False

    @classmethod
    def text(cls, text: str, **kw: Any) -> Reply:
        citations = kw.pop("citations", [])
        return cls(blocks=[TextBlock(text, citations)], **kw)

    @classmethod
    def tool_use(cls, name: str, input: dict[str, Any], *, text: str = "", **kw: Any) -> Reply:
        blocks: list[TextBlock | ToolUseBlock] = [TextBlock(text)] if text else []
        blocks.append(ToolUseBlock(name, input))
        return cls(blocks=blocks, stop_reason="tool_use", **kw)

    @classmethod
    def tools(cls, *calls: tuple[str, dict[str, Any]], text: str = "", **kw: Any) -> Reply:
        blocks: list[TextBlock | ToolUseBlock] = [TextBlock(text)] if text else []
        blocks.extend(ToolUseBlock(n, i) for n, i in calls)
        return cls(blocks=blocks, stop_reason="tool_use", **kw)

    @classmethod
    def error(
        cls, status: int, error_type: str, message: str = "", *, retry_after: float | None = None
    ) -> Reply:
        return cls(
            status=status,
            error_type=error_type,
            error_message=message or error_type,
            retry_after=retry_after,
        )

    @classmethod
    def stream_error(
        cls, text: str = "", error_type: str = "overloaded_error", message: str = "Overloaded"
    ) -> Reply:
        return cls(
            blocks=[TextBlock(text)],
            error_type=error_type,
            error_message=message,
            stream_error_after_chars=len(text),
        )

    @classmethod
    def cut(cls, text: str) -> Reply:
        return cls(
            blocks=[TextBlock(text + " and more that never arrives")], cut_after_chars=len(text)
        )

    @classmethod
    def hanging(cls) -> Reply:
        return cls(hang=True)

    @classmethod
    def garbage(cls) -> Reply:
        return cls(malformed=True)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float
    first_byte_at: float | None = None
    last_byte_at: float | None = None  # when the server last wrote to the stream
    closed_by_client_at: float | None = None  # the client hung up before the stream ended


class FakeAnthropic:
    def __init__(self, models: list[str] | None = None) -> None:
        self.script: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self.models = models if models is not None else ["claude-test", "claude-other"]
        # when the script is empty: a function of the request body (for concurrent clients)
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self._lock = threading.Lock()
        self._counter = 0
        self._stop = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                fake._record(self, {})
                if self.path.startswith("/v1/models"):
                    data = [
                        {
                            "type": "model",
                            "id": m,
                            "display_name": m,
                            "created_at": "2025-01-01T00:00:00Z",
                        }
                        for m in fake.models
                    ]
                    self._json(
                        200,
                        {
                            "data": data,
                            "has_more": False,
                            "first_id": data[0]["id"] if data else None,
                            "last_id": data[-1]["id"] if data else None,
                        },
                    )
                else:
                    self._json(
                        404,
                        {
                            "type": "error",
                            "error": {"type": "not_found_error", "message": "no such path"},
                        },
                    )

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                record = fake._record(self, body)
                with fake._lock:
                    reply = fake.script.popleft() if fake.script else None
                if reply is None and fake.responder is not None:
                    reply = fake.responder(body)
                if reply is None:
                    self._json(
                        500,
                        {
                            "type": "error",
                            "error": {
                                "type": "api_error",
                                "message": "fake server: no scripted reply left",
                            },
                        },
                    )
                    return
                fake._serve(self, reply, record, body)

            def _json(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # a short poll: closing waits for the next poll (0.5 s by default, on every test)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    # lifecycle ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # scripting ---------------------------------------------------------------------------

    def add(self, *replies: Reply) -> FakeAnthropic:
        with self._lock:
            self.script.extend(replies)
        return self

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.startswith("/v1/messages")]

    def _record(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> RecordedRequest:
        record = RecordedRequest(
            handler.command,
            handler.path,
            {k.lower(): v for k, v in handler.headers.items()},
            body,
            time.perf_counter(),
        )
        with self._lock:
            self.requests.append(record)
        return record

    # serving -----------------------------------------------------------------------------

    def _serve(self, h: Any, reply: Reply, record: RecordedRequest, body: dict[str, Any]) -> None:
        if reply.delay_before:
            time.sleep(reply.delay_before)
        if reply.hang:
            self._stop.wait(60)
            return
        if reply.status != 200:
            headers = (
                {"retry-after": str(reply.retry_after)} if reply.retry_after is not None else {}
            )
            headers["x-should-retry"] = "false" if reply.status in (400, 401, 403, 404) else "true"
            h._json(
                reply.status,
                {
                    "type": "error",
                    "error": {"type": reply.error_type, "message": reply.error_message},
                },
                headers,
            )
            return
        stream = bool(body.get("stream"))
        self._counter += 1
        msg_id = f"msg_{self._counter:04d}"
        model = str(body.get("model", "claude-test"))
        if not stream:
            content = []
            for i, block in enumerate(reply.blocks):
                if isinstance(block, TextBlock):
                    content.append({"type": "text", "text": block.text})
                else:
                    content.append(
                        {
                            "type": "tool_use",
                            "id": block.id or f"toolu_{self._counter:04d}_{i}",
                            "name": block.name,
                            "input": block.input,
                        }
                    )
            h._json(
                200,
                {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": content,
                    "stop_reason": reply.stop_reason,
                    "stop_sequence": None,
                    "usage": reply.usage,
                },
            )
            return
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("cache-control", "no-cache")
        h.send_header("connection", "close")
        h.end_headers()
        h.close_connection = True
        if reply.malformed:
            h.wfile.write(b"event: message_start\ndata: {not json at all\n\n")
            h.wfile.flush()
            return
        pace = 1.0 / reply.tokens_per_second if reply.tokens_per_second else 0.0
        sent_chars = 0
        if reply.first_event_delay and self._stop.wait(reply.first_event_delay):
            return

        def send(event: str, data: dict[str, Any]) -> None:
            payload = f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()
            if record.first_byte_at is None:
                record.first_byte_at = time.perf_counter()
            h.wfile.write(payload)
            h.wfile.flush()
            record.last_byte_at = time.perf_counter()

        usage = dict(reply.usage)
        start_usage = {
            "input_tokens": usage.get("input_tokens", 0),
            "output_tokens": 1,
            "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0),
            "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
        }
        try:
            send(
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": msg_id,
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": start_usage,
                    },
                },
            )
            for index, block in enumerate(reply.blocks):
                if isinstance(block, TextBlock):
                    start_block: dict[str, Any] = {"type": "text", "text": ""}
                    if block.citations:
                        start_block["citations"] = []
                    send(
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": start_block,
                        },
                    )
                    text = block.text
                    for pos in range(0, len(text), max(1, reply.chunk_chars)):
                        piece = text[pos : pos + reply.chunk_chars]
                        if (
                            reply.stream_error_after_chars is not None
                            and sent_chars >= reply.stream_error_after_chars
                        ):
                            break
                        if (
                            reply.cut_after_chars is not None
                            and sent_chars >= reply.cut_after_chars
                        ):
                            h.wfile.flush()
                            h.connection.shutdown(socket.SHUT_RDWR)
                            return
                        if (
                            reply.stall_after_chars is not None
                            and sent_chars >= reply.stall_after_chars
                            and reply.stall_s
                        ):
                            if self._stop.wait(reply.stall_s):
                                return
                            reply.stall_s = 0.0
                        send(
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "text_delta", "text": piece},
                            },
                        )
                        sent_chars += len(piece)
                        if pace:
                            time.sleep(pace)
                    if reply.stream_error_after_chars is not None:
                        send(
                            "error",
                            {
                                "type": "error",
                                "error": {"type": reply.error_type, "message": reply.error_message},
                            },
                        )
                        return
                    for citation in block.citations:
                        send(
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "citations_delta", "citation": citation},
                            },
                        )
                    send("content_block_stop", {"type": "content_block_stop", "index": index})
                else:
                    tool_id = block.id or f"toolu_{self._counter:04d}_{index}"
                    send(
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": {
                                "type": "tool_use",
                                "id": tool_id,
                                "name": block.name,
                                "input": {},
                            },
                        },
                    )
                    raw = json.dumps(block.input)
                    half = len(raw) // 2
                    for part in (raw[:half], raw[half:]):
                        send(
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": part},
                            },
                        )
                    send("content_block_stop", {"type": "content_block_stop", "index": index})
            if reply.stream_error_after_chars is not None and not reply.blocks:
                send(
                    "error",
                    {
                        "type": "error",
                        "error": {"type": reply.error_type, "message": reply.error_message},
                    },
                )
                return
            send(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": usage.get("output_tokens", 0)},
                },
            )
            send("message_stop", {"type": "message_stop"})
        except (BrokenPipeError, ConnectionResetError, OSError):
            record.closed_by_client_at = time.perf_counter()
            return
