"""``AgentService``: what the window and the CLI use to talk about books.

It owns the wiring: which provider (Claude, a local server, or passages mode) from the
settings and the key, which loop strategy, the tools, the context strategy and the
conversations store. The app object (``core.app.Margin``) builds one. Importing this module
does not import the ``anthropic`` SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from concurrent.futures import Executor
from pathlib import Path
from typing import Any, cast

from core.agent.chat import ChatWithBook
from core.agent.context import BookContext
from core.agent.events import AgentEvent
from core.agent.probe import PROBE_FILE, ProbeStore, ToolProbe, probe_key, probe_tools
from core.agent.providers.base import ChatProvider
from core.agent.providers.passages import PassagesProvider
from core.agent.spoilers import SpoilerIndexCache
from core.agent.strategies import pick_strategy
from core.agent.tools import ToolBox, default_tools
from core.agent.types import Question, Selection, Usage
from core.api_key import api_key_known, get_api_key, known_api_key
from core.errors import LLMCode, LLMError, MarginError
from core.paths import Paths
from core.search import BookSearch
from core.settings import Settings, load_settings
from core.store.conversations import ConversationInfo, Conversations, MessageRecord
from core.store.library import Library

log = logging.getLogger("margin.agent")
ProviderFactory = Callable[[Settings, str | None], ChatProvider]

__all__ = [
    "AgentService",
    "ConversationInfo",
    "MessageRecord",
    "Question",
    "Selection",
    "make_provider",
]


def make_provider(
    settings: Settings, api_key: str | None, *, max_retries: int = 2, timeout: float = 120.0
) -> ChatProvider:
    kind = settings.effective_provider(bool(api_key))
    if kind == "passages":
        return PassagesProvider()
    from core.agent.providers.anthropic import AnthropicProvider

    return AnthropicProvider(
        api_key=api_key,
        model=settings.model,
        base_url=settings.effective_base_url(),
        local=kind == "local",
        timeout=timeout,
        max_retries=max_retries,
        stream_idle_s=settings.limits.stream_idle_s,
        first_event_s=settings.limits.local_deadline_s if kind == "local" else None,
    )


class AgentService:
    def __init__(
        self,
        library: Library,
        paths: Paths,
        settings: Settings | None = None,
        *,
        provider_factory: ProviderFactory | None = None,
        tools: ToolBox | None = None,
        retry_delay: float = 1.0,
        conversations: Conversations | None = None,
        search: BookSearch | None = None,
        executor: Executor | None = None,
    ) -> None:
        self.library = library
        self.paths = paths
        self._settings = settings if settings is not None else load_settings(paths)
        self._factory = provider_factory or make_provider
        self.executor = executor
        self.tools = tools or default_tools(executor)
        self.conversations = conversations or Conversations(library.db)
        self.search = search or BookSearch(library.db)
        self.retry_delay = retry_delay
        self.spoilers = SpoilerIndexCache()
        self._provider: ChatProvider | None = None
        self._provider_key: tuple[Settings, str | None] | None = None
        self.probes = ProbeStore(Path(paths.config) / PROBE_FILE)

    # settings and provider ----------------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self._settings

    def update_settings(self, settings: Settings) -> None:
        self._settings = settings
        self._provider = None  # the next question uses the new settings

    def provider(self) -> ChatProvider:
        key = get_api_key()
        marker = (self._settings, key)
        if self._provider is None or self._provider_key != marker:
            provider = self._factory(self._settings, key)
            if hasattr(provider, "retry_delay"):
                provider.retry_delay = self.retry_delay
            self._provider = provider
            self._provider_key = marker
        return self._provider

    def mode(self) -> str:
        """ "anthropic", "local" or "passages": what a question asked now would use (the
        keyring is not read for it: while it is unread, as if no key were stored)."""
        return self._settings.effective_provider(bool(known_api_key()))

    # conversations --------------------------------------------------------------------

    def create_conversation(self, book_id: int, title: str = "") -> ConversationInfo:
        conversation = self.conversations.create(book_id, title)
        # a library from before ids were never reused may hold a deleted conversation's log
        # under this id: the new conversation starts its own
        self.paths.event_log(conversation.id).unlink(missing_ok=True)
        return conversation

    def list_conversations(self, book_id: int) -> list[ConversationInfo]:
        return self.conversations.list_for_book(book_id)

    def get_conversation(self, conversation_id: int) -> ConversationInfo:
        return self.conversations.get(conversation_id)

    def rename_conversation(self, conversation_id: int, title: str) -> ConversationInfo:
        return self.conversations.rename(conversation_id, title)

    def delete_conversation(self, conversation_id: int) -> None:
        """Delete a conversation with its event log."""
        self.conversations.delete(conversation_id)
        self.paths.event_log(conversation_id).unlink(missing_ok=True)

    def history(self, conversation_id: int) -> list[MessageRecord]:
        return self.conversations.history(conversation_id)

    def conversation_usage(self, conversation_id: int) -> tuple[Usage, float | None]:
        return self.conversations.usage(conversation_id)

    def recover_interrupted(self) -> int:
        return self.conversations.recover_interrupted()

    def last_question(self, conversation_id: int) -> Question | None:
        return self.conversations.last_question(conversation_id)

    # asking ---------------------------------------------------------------------------

    def spoiler_check_skipped(self, provider: str) -> str:
        """A sentence when the spoiler check runs without its model check for ``provider``
        ("" when it runs whole, or when there is no model to check)."""
        settings = self._settings
        if not settings.spoiler_safe or provider == "passages" or settings.verifies_with(provider):
            return ""
        return (
            "the spoiler check read this answer's words only; its model check was skipped "
            '(spoiler_verify = "auto" turns it off for local models; set it to true to use it).'
        )

    def tool_probe(self, settings: Settings | None = None) -> ToolProbe | None:
        """What the one-time probe found about the model in ``settings`` (None: not probed)."""
        settings = settings or self._settings
        kind = settings.effective_provider(bool(get_api_key()))
        return self.probes.get(probe_key(kind, settings.effective_base_url(), settings.model))

    async def strategy_for(self, provider: ChatProvider, asked: str | None = None) -> str:
        """The loop strategy a question uses. "auto" (the default): Claude and models that make
        real tool calls search the book themselves; a local model that does not (probed once,
        ``core.agent.probe``) gets the strategy that searches first."""
        name = asked or self._settings.strategy
        if provider.name == "passages":
            return "tool-use"  # passages mode always searches through the tool loop
        if name != "auto":
            return name
        if provider.name != "local":
            return "tool-use"
        key = probe_key(provider.name, getattr(provider, "base_url", ""), provider.model)
        probe = self.probes.get(key)
        if probe is None:
            search = next((s for s in self.tools.specs() if s.name == "search_book"), None)
            if search is None:
                return "always-retrieve"
            try:
                probe = await probe_tools(provider, search)
            except LLMError as err:  # the question itself will say what is wrong
                log.info("tool probe failed: %s", err.message)
                return "always-retrieve"
            self.probes.put(key, probe)
        return probe.strategy

    def _chat(self, provider: ChatProvider, name: str) -> ChatWithBook:
        return ChatWithBook(
            provider=provider,
            tools=self.tools,
            strategy=pick_strategy(name),
            context=BookContext(),
            conversations=self.conversations,
            library=self.library,
            search=self.search,
            limits=self._settings.limits,
            event_logs=Path(self.paths.event_logs),
            spoiler_safe=self._settings.spoiler_safe,
            executor=self.executor,
            spoiler_cache=self.spoilers,
            spoiler_verify=self._settings.verifies_with(provider.name),
            local_reading=self._settings.local_reading,
        )

    async def ask(
        self,
        conversation_id: int,
        text: str | Question,
        *,
        selection: Selection | None = None,
        strategy: str | None = None,
        stop: asyncio.Event | None = None,
        spoilers_until: int | None = None,
    ) -> AsyncIterator[AgentEvent]:
        question = text if isinstance(text, Question) else Question(text, selection)
        if not api_key_known():  # the keyring may prompt: read it on a worker, not here
            await asyncio.to_thread(get_api_key)
        provider = self.provider()
        chat = self._chat(provider, await self.strategy_for(provider, strategy))
        events = chat.run(conversation_id, question, stop=stop, spoilers_until=spoilers_until)
        async with contextlib.aclosing(cast(AsyncGenerator[AgentEvent], events)):
            async for event in events:
                yield event

    async def regenerate(
        self,
        conversation_id: int,
        *,
        strategy: str | None = None,
        stop: asyncio.Event | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Ask the last question again; the previous attempt (question, answer, tool calls)
        is removed so the history holds only the new one."""
        question = self.conversations.last_question(conversation_id)
        if question is None:
            raise MarginError(
                "nothing_to_regenerate", "This conversation has no question to ask again."
            )
        self.conversations.delete_last_run(conversation_id)
        async for event in self.ask(conversation_id, question, strategy=strategy, stop=stop):
            yield event

    async def test_connection(self, settings: Settings, api_key: str | None) -> str:
        return await test_connection(settings, api_key)

    async def list_models(self, settings: Settings, api_key: str | None) -> list[str]:
        return await list_models(settings, api_key)


async def _with_server[T](
    settings: Settings, api_key: str | None, use: Callable[[Any], Awaitable[T]]
) -> T:
    """Run ``use`` with a provider for ``settings`` (no retries, a short timeout), then close
    it."""
    from core.agent.providers.anthropic import AnthropicProvider

    provider = make_provider(settings, api_key, max_retries=0, timeout=15.0)
    assert isinstance(provider, AnthropicProvider)
    try:
        return await use(provider)
    finally:
        await provider.aclose()


async def test_connection(settings: Settings, api_key: str | None) -> str:
    """A sentence saying whether the server in ``settings`` answers with ``api_key``."""
    kind = settings.effective_provider(bool(api_key))
    if kind == "passages":
        if settings.provider == "anthropic" and not api_key:
            raise LLMError(
                LLMCode.BAD_KEY,
                "There is no API key to test.",
                hint="Paste your key from console.anthropic.com first.",
            )
        return "Passages mode needs no connection: answers are passages from the book."
    return await _with_server(settings, api_key, lambda p: p.test_connection())


async def list_models(settings: Settings, api_key: str | None) -> list[str]:
    """The models the server in ``settings`` offers ([] in passages mode)."""
    if settings.effective_provider(bool(api_key)) == "passages":
        return []
    return await _with_server(settings, api_key, lambda p: p.list_models())
