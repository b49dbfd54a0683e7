"""The Messages API through the official SDK: Claude, or a local server that speaks it
(Ollama ≥ 0.14, llama.cpp's server).

``import anthropic`` takes seconds, so it happens on first use in a worker thread, never at
import time of this module and never on the event loop.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from core.agent.events import Usage
from core.agent.providers.base import (
    ProviderEvent,
    StreamCitation,
    StreamText,
    TurnRequest,
    TurnResult,
)
from core.errors import LLMCode, LLMError

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


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _error_type(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            return str(err.get("type", ""))
        return str(body.get("type", ""))
    return ""


def map_error(exc: BaseException, *, where: str) -> LLMError:
    """An SDK exception as a sentence for people with a code from the taxonomy."""
    sdk = _sdk
    text = str(getattr(exc, "message", "") or exc)
    if sdk is not None:
        if isinstance(exc, sdk.AuthenticationError):
            return LLMError(
                LLMCode.BAD_KEY,
                f"{where} did not accept the API key.",
                hint="Check the key in Settings (it starts with sk-ant-).",
            )
        if isinstance(exc, sdk.PermissionDeniedError):
            return LLMError(
                LLMCode.PERMISSION,
                f"{where} says this key may not use that model or feature.",
                hint="Check your plan and the model in Settings.",
            )
        if isinstance(exc, sdk.NotFoundError):
            return LLMError(
                LLMCode.MODEL_NOT_FOUND,
                f"{where} does not know the model you chose.",
                hint="Pick another model in Settings.",
            )
        if isinstance(exc, sdk.RateLimitError):
            wait = _retry_after(exc)
            when = f" Try again in {wait:.0f} seconds." if wait else " Try again in a minute."
            return LLMError(
                LLMCode.RATE_LIMITED,
                f"{where} is limiting how fast you can ask.{when}",
                hint="Wait a little, then press Retry.",
                retry_after=wait,
            )
        if isinstance(exc, sdk.APITimeoutError):
            return LLMError(
                LLMCode.TIMEOUT,
                f"{where} took too long to answer.",
                hint="Try again; if it keeps happening, check your connection or the server.",
            )
        if isinstance(exc, sdk.APIConnectionError):
            return LLMError(
                LLMCode.UNREACHABLE,
                f"Margin cannot reach {where}.",
                hint="Check your internet connection, or that the local server is running and the address in Settings is right.",
            )
        if isinstance(exc, sdk.BadRequestError):
            lowered = text.lower()
            if (
                "too long" in lowered
                or ("context" in lowered and "window" in lowered)
                or "too many tokens" in lowered
            ):
                return LLMError(
                    LLMCode.CONTEXT_TOO_LONG,
                    "This conversation has become too long for the model.",
                    hint="Start a new conversation.",
                )
            return LLMError(
                LLMCode.BAD_RESPONSE,
                f"{where} rejected the request ({text[:200]}).",
                hint="Try again; if it persists, report it with the log file.",
            )
        if isinstance(exc, sdk.APIStatusError):
            status = getattr(exc, "status_code", 0)
            etype = _error_type(exc)
            if etype == "overloaded_error" or status == 529:
                return LLMError(
                    LLMCode.OVERLOADED,
                    f"{where} is overloaded right now.",
                    hint="Wait a moment and press Retry.",
                )
            if etype == "rate_limit_error":
                return LLMError(
                    LLMCode.RATE_LIMITED,
                    f"{where} is limiting how fast you can ask.",
                    hint="Wait a little, then press Retry.",
                    retry_after=_retry_after(exc),
                )
            if status >= 500 or etype == "api_error":
                return LLMError(
                    LLMCode.UNEXPECTED,
                    f"{where} had an internal error.",
                    hint="Try again in a moment.",
                )
            return LLMError(
                LLMCode.BAD_RESPONSE,
                f"{where} answered with an error ({status} {etype or text[:120]}).",
                hint="Try again; if it persists, report it with the log file.",
            )
        if isinstance(exc, sdk.APIError):
            return LLMError(
                LLMCode.BAD_RESPONSE,
                f"{where} sent an answer Margin could not understand.",
                hint="Try again.",
            )
    if isinstance(exc, TimeoutError):
        return LLMError(
            LLMCode.TIMEOUT,
            f"{where} stopped sending the answer.",
            hint="Try again; if it keeps happening, check your connection or the server.",
        )
    if isinstance(exc, ValueError):
        return LLMError(
            LLMCode.BAD_RESPONSE,
            f"{where} sent an answer Margin could not understand.",
            hint="Try again.",
        )
    return LLMError(
        LLMCode.UNEXPECTED,
        f"Something unexpected went wrong talking to {where}.",
        hint="Try again; the details are in the log file.",
    )


def _usage(u: Any) -> Usage:
    if u is None:
        return Usage()
    return Usage(
        input_tokens=int(getattr(u, "input_tokens", 0) or 0),
        output_tokens=int(getattr(u, "output_tokens", 0) or 0),
        cache_read_tokens=int(getattr(u, "cache_read_input_tokens", 0) or 0),
        cache_write_tokens=int(getattr(u, "cache_creation_input_tokens", 0) or 0),
    )


def _block_to_dict(block: Any) -> dict[str, Any]:
    data: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    kind = data.get("type")
    if kind == "text":
        return {
            "type": "text",
            "text": data.get("text", ""),
            **({"citations": data["citations"]} if data.get("citations") else {}),
        }
    if kind == "tool_use":
        return {
            "type": "tool_use",
            "id": data["id"],
            "name": data["name"],
            "input": data.get("input") or {},
        }
    return data


class AnthropicProvider:
    """``name`` is "anthropic" for Claude and "local" for a compatible local server."""

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
    ) -> None:
        self.name = "local" if local else "anthropic"
        self.model = model
        self.base_url = base_url
        self.supports_citations = not local
        self.bills_tokens = not local
        self._api_key = api_key or ("local" if local else None)
        self._timeout = timeout
        self._max_retries = max_retries
        self._idle = stream_idle_s
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self.where = "the local model server" if local else "Claude's API"

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicProvider(name={self.name!r}, model={self.model!r}, base_url={self.base_url!r})"

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
            client = await loop.run_in_executor(_importer, lambda: sdk.AsyncAnthropic(**kwargs))
            if self._client is None:
                self._client = client
                self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            try:
                await self._client.close()
            except Exception:
                pass
            self._client = None

    async def stream_turn(self, request: TurnRequest) -> AsyncIterator[ProviderEvent]:
        client = await self.client()
        kwargs: dict[str, Any] = {
            "model": request.model or self.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": request.messages,
        }
        if request.tools:
            kwargs["tools"] = request.tools
            if request.tool_choice:
                kwargs["tool_choice"] = request.tool_choice
        try:
            async with client.messages.stream(**kwargs) as stream:
                iterator = stream.__aiter__()
                try:
                    while True:
                        try:
                            event = await asyncio.wait_for(iterator.__anext__(), self._idle)
                        except StopAsyncIteration:
                            break
                        kind = event.type
                        if kind == "text":
                            if event.text:
                                yield StreamText(event.text)
                        elif kind == "citation":
                            c = event.citation
                            yield StreamCitation(
                                source=str(getattr(c, "source", "") or ""),
                                title=str(getattr(c, "title", "") or ""),
                                cited_text=str(getattr(c, "cited_text", "") or ""),
                            )
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
        except TimeoutError as exc:
            raise map_error(exc, where=self.where) from exc
        except Exception as exc:
            log.info("provider error: %s: %s", type(exc).__name__, exc)
            raise map_error(exc, where=self.where) from exc
        if message.stop_reason is None:
            # the connection closed before the server said the message was complete
            raise LLMError(
                LLMCode.BAD_RESPONSE,
                f"{self.where} stopped sending the answer before it was finished.",
                hint="Press Retry; if it keeps happening, check your connection.",
            )
        yield TurnResult(
            content=[_block_to_dict(b) for b in message.content],
            stop_reason=str(message.stop_reason or "end_turn"),
            usage=_usage(message.usage),
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
            raise map_error(exc, where=self.where) from exc

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
            raise map_error(exc, where=self.where) from exc
        return f"Connected to {self.where}; the model '{self.model}' answers."
