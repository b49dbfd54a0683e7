"""The Messages API through the official SDK: Claude, or a local server that speaks it
(Ollama ≥ 0.14, llama.cpp's server). ``wire`` renders and parses, ``errors`` explains.

``import anthropic`` takes seconds, so it happens on first use in a worker thread, never at
import time of this module and never on the event loop.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from core.agent.providers.anthropic import wire
from core.agent.providers.anthropic.errors import map_error
from core.agent.providers.base import (
    ProviderEvent,
    StreamCitation,
    StreamRetry,
    StreamText,
)
from core.agent.types import TurnRequest, TurnResult
from core.errors import LLMCode, LLMError
from core.log import register_secret

log = logging.getLogger("margin.provider")

_sdk: Any = None
_importer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="margin-sdk-import")


_WARM_EVENTS: list[dict[str, Any]] = [
    {
        "type": "message_start",
        "message": {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    },
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "text", "text": "", "citations": []},
    },
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a"}},
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {
            "type": "citations_delta",
            "citation": {
                "type": "search_result_location",
                "source": "s",
                "title": "t",
                "cited_text": "c",
                "search_result_index": 0,
                "start_block_index": 0,
                "end_block_index": 0,
            },
        },
    },
    {"type": "content_block_stop", "index": 0},
    {
        "type": "content_block_start",
        "index": 1,
        "content_block": {"type": "tool_use", "id": "t", "name": "n", "input": {}},
    },
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": "{}"},
    },
    {"type": "content_block_stop", "index": 1},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 2},
    },
    {"type": "message_stop"},
]


def _import_and_warm() -> Any:
    """Import the SDK and run its stream-event parsing once: pydantic builds its validators on
    first use (about 80 ms), which would otherwise happen on the event loop at the first answer."""
    sdk = importlib.import_module("anthropic")
    try:
        from anthropic._models import construct_type
        from anthropic.lib.streaming._messages import accumulate_event, build_events
        from anthropic.types import RawMessageStreamEvent

        snapshot: Any = None
        buffers: dict[int, bytes] = {}
        for raw in _WARM_EVENTS:
            event: Any = construct_type(type_=RawMessageStreamEvent, value=raw)
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=buffers)
            build_events(event=event, message_snapshot=snapshot)
    except Exception as exc:  # internals may move between SDK versions; only speed is lost
        log.debug("SDK warm-up skipped: %s", exc)
    return sdk


async def load_sdk() -> Any:
    """Import the SDK off the event loop (once), on a plain thread of our own: the loop's
    default executor may be Qt threads that must not outlive the application."""
    global _sdk
    if _sdk is None:
        loop = asyncio.get_running_loop()
        _sdk = await loop.run_in_executor(_importer, _import_and_warm)
    return _sdk


MAX_RETRY_WAIT_S = 5.0  # a server asking to wait longer is reported at once, not waited for


def _client_class(sdk: Any) -> Any:
    """The SDK's client, except that it does not retry when the server asks for a wait longer
    than ``MAX_RETRY_WAIT_S`` (the SDK would sleep for it, however long): the reader is told
    "try again in …" at once instead."""

    class Client(sdk.AsyncAnthropic):
        def _should_retry(self, response: Any) -> bool:
            try:
                wait = self._parse_retry_after_header(response.headers)
            except Exception:
                wait = None
            if wait is not None and wait > MAX_RETRY_WAIT_S:
                return False
            return bool(super()._should_retry(response))

    return Client


class _StreamLoop:
    """An event loop on a daemon thread of its own, where the SDK reads the stream and turns
    its server-sent events into objects (most of a streaming answer's CPU): the caller's
    loop — the window's UI thread — only receives the finished events, in batches."""

    _lock = threading.Lock()
    _shared: _StreamLoop | None = None

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="margin-stream", daemon=True).start()

    @classmethod
    def get(cls) -> _StreamLoop:
        with cls._lock:
            if cls._shared is None:
                cls._shared = _StreamLoop()
            return cls._shared


_END = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


async def _relay(source: AsyncIterator[Any], where: asyncio.AbstractEventLoop) -> Any:
    """Run ``source`` on the stream thread's loop and yield its items on this loop: each wake
    of this loop hands over everything that arrived meanwhile (one call, not one per event).
    Leaving early (cancelled, or the consumer stops) cancels ``source`` there."""
    here = asyncio.get_running_loop()
    items: deque[Any] = deque()
    ready = asyncio.Event()
    pending = False
    lock = threading.Lock()

    def wake() -> None:
        nonlocal pending
        with lock:
            pending = False
        ready.set()

    def push(item: Any) -> None:
        nonlocal pending
        items.append(item)
        with lock:
            if pending:
                return
            pending = True
        try:
            here.call_soon_threadsafe(wake)
        except RuntimeError:  # the asking loop is closed (the window went away): no one waits
            pass

    async def produce() -> None:
        try:
            async for item in source:
                push(item)
        except BaseException as exc:  # re-raised on the caller's loop
            push(_Failed(exc))
            if not isinstance(exc, Exception):
                raise
        finally:
            push(_END)

    future = asyncio.run_coroutine_threadsafe(produce(), where)
    try:
        while True:
            await ready.wait()
            ready.clear()
            while items:
                item = items.popleft()
                if item is _END:
                    return
                if isinstance(item, _Failed):
                    raise item.error
                yield item
    finally:
        # no await here: a generator closed by the garbage collector cannot wait. The stream
        # thread's loop cancels the SDK's stream and closes its connection on its own.
        future.cancel()


class AnthropicProvider:
    """``name`` is "anthropic" for Claude and "local" for a compatible local server.

    Retries live here and only here: the SDK retries failed HTTP requests (``max_retries``);
    an overload reported *inside* a 200 stream (which the SDK cannot retry) is retried once
    when nothing was shown yet."""

    # the SDK's stream runs on a thread of its own (``_StreamLoop``); False: on the caller's
    # loop (the benchmark compares the two)
    stream_on_thread = True

    def __init__(
        self,
        *,
        api_key: str | None,
        model: str,
        base_url: str = "",
        local: bool = False,
        timeout: float = 120.0,
        max_retries: int = 2,
        stream_idle_s: float = 60.0,
        retry_delay: float = 1.0,
        first_event_s: float | None = None,
    ) -> None:
        """``stream_idle_s``: the longest silence once the answer streams. ``first_event_s``:
        how long the server may take to read the prompt after its headers came (a local
        server sends its first event only then: 40 s for 1,450 tokens on two cores); the
        idle limit by default, as Claude's API starts at once."""
        self.name = "local" if local else "anthropic"
        self.model = model
        self.base_url = base_url
        self.supports_citations = not local
        self.bills_tokens = not local
        self.retry_delay = retry_delay
        self._api_key = api_key or ("local" if local else None)
        register_secret(api_key)  # the log never shows it, whatever its form
        self._timeout = timeout
        self._max_retries = max_retries
        self._idle = stream_idle_s
        self._first = max(stream_idle_s, first_event_s or 0.0)
        if local:  # one HTTP read may wait as long as the prompt's reading
            timeout = max(timeout, self._first)
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        if local:
            self.where = (
                f"the local model server at {base_url}" if base_url else "the local model server"
            )
        elif base_url and "anthropic.com" not in base_url:
            self.where = f"the server at {base_url}"
        else:
            self.where = "Claude's API"

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicProvider(name={self.name!r}, model={self.model!r}, base_url={self.base_url!r})"

    def _error(self, exc: BaseException) -> LLMError:
        return map_error(exc, where=self.where, sdk=_sdk, secret=self._api_key)

    async def client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is not None and self._client_loop is not loop:
            self._client = None  # its connections belong to an event loop that is gone
        if self._client is None:
            sdk = await load_sdk()
            kwargs: dict[str, Any] = {
                "api_key": self._api_key,
                "timeout": self._timeout,
                "max_retries": self._max_retries,
            }
            if self.base_url:
                kwargs["base_url"] = self.base_url
            # building the client loads the TLS certificates (tens of milliseconds): off the loop
            client = await loop.run_in_executor(_importer, lambda: _client_class(sdk)(**kwargs))
            if self._client is None:
                self._client = client
                self._client_loop = loop
        return self._client

    async def warm(self) -> None:
        """The SDK imported and the client built where the answers' streams use it (the
        stream thread's loop), before the first question rather than on its way."""
        await load_sdk()
        if self.stream_on_thread:
            where = _StreamLoop.get().loop
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self.client(), where))
        else:
            await self.client()

    async def aclose(self) -> None:
        if self._client is not None:
            client, where, self._client = self._client, self._client_loop, None
            try:
                if where is not None and where is not asyncio.get_running_loop():
                    # its connections belong to the stream thread's loop: closed there
                    await asyncio.wrap_future(
                        asyncio.run_coroutine_threadsafe(client.close(), where)
                    )
                else:
                    await client.close()
            except Exception:
                pass

    async def stream_turn(self, request: TurnRequest) -> AsyncIterator[ProviderEvent]:
        attempt = 0
        while True:
            shown = False
            if self.stream_on_thread:
                events = _relay(self._stream_once(request), _StreamLoop.get().loop)
            else:
                events = self._stream_once(request)
            try:
                try:
                    async for event in events:
                        if isinstance(event, StreamText):
                            shown = True
                        yield event
                finally:
                    # cancelled or left early (Stop, a looping answer): the stream and its
                    # connection close now, so the server stops generating
                    await events.aclose()
                return
            except LLMError as err:
                if shown or attempt > 0 or err.code != LLMCode.OVERLOADED:
                    raise
            attempt += 1
            yield StreamRetry(f"{self.where} is overloaded; trying again…")
            await asyncio.sleep(self.retry_delay)

    async def _stream_once(self, request: TurnRequest) -> AsyncGenerator[ProviderEvent]:
        client = await self.client()
        kwargs = wire.render_request(request, citations=self.supports_citations, model=self.model)
        try:
            async with client.messages.stream(**kwargs) as stream:
                iterator = stream.__aiter__()
                wait = self._first  # headers came; the server may still be reading the prompt
                try:
                    while True:
                        try:
                            event = await asyncio.wait_for(iterator.__anext__(), wait)
                        except StopAsyncIteration:
                            break
                        wait = self._idle
                        kind = event.type
                        if kind == "text":
                            if event.text:
                                yield StreamText(wire.valid_text(event.text))
                        elif kind == "citation":
                            c = event.citation
                            ref = wire.citation(
                                getattr(c, "source", ""), getattr(c, "cited_text", "")
                            )
                            if ref is not None:
                                yield StreamCitation(ref)
                finally:
                    # close the SDK's stream generator here, inside this task: left to the
                    # garbage collector it would be finalised outside any event loop
                    closer = getattr(iterator, "aclose", None)
                    if closer is not None:
                        try:
                            await closer()
                        except Exception:
                            pass
                message = await stream.get_final_message()
        except asyncio.CancelledError:
            raise
        except LLMError:
            raise
        except Exception as exc:
            log.info("provider error: %s", type(exc).__name__)
            raise self._error(exc) from exc
        if message.stop_reason is None:
            # the connection closed before the server said the message was complete
            raise LLMError(
                LLMCode.BAD_RESPONSE,
                f"{self.where} stopped sending the answer before it was finished.",
                hint="Press Retry; if it keeps happening, check your connection.",
            )
        blocks = [b.model_dump(mode="json", exclude_none=True) for b in message.content]
        yield TurnResult(
            wire.parse_content(blocks),
            wire.stop_reason(message.stop_reason),
            wire.usage(message.usage),
        )

    async def list_models(self) -> list[str]:
        client = await self.client()
        try:
            page = await client.models.list(limit=100)
            return [m.id for m in page.data]
        except Exception as exc:
            sdk = _sdk
            if sdk is not None and isinstance(exc, sdk.NotFoundError):
                return []
            raise self._error(exc) from exc

    async def test_connection(self) -> str:
        """A short sentence when the server answers with this key and model."""
        try:
            models = await self.list_models()
        except LLMError as err:
            if err.code in (
                LLMCode.BAD_KEY,
                LLMCode.PERMISSION,
                LLMCode.UNREACHABLE,
                LLMCode.TIMEOUT,
            ):
                raise
            models = []
        if models:
            known = "" if self.model in models else f" (note: '{self.model}' is not in its list)"
            return f"Connected to {self.where}: {len(models)} models available{known}."
        client = await self.client()
        try:
            await client.messages.create(
                model=self.model, max_tokens=1, messages=[{"role": "user", "content": "ping"}]
            )
        except Exception as exc:
            raise self._error(exc) from exc
        return f"Connected to {self.where}; the model '{self.model}' answers."
