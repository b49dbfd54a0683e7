"""``AgentService``: the one object the window and the CLI use to talk about books.

It owns the wiring: which provider (Claude, a local server, or passages mode) from the
settings and the key, which loop strategy, the tools, the context strategy and the
conversation repository. Importing this module does not import the ``anthropic`` SDK.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from core.agent.chat import ChatWithBook
from core.agent.context import BookContext, Selection
from core.agent.events import AgentEvent, Usage
from core.agent.providers.base import ChatProvider
from core.agent.providers.offline import PassagesProvider
from core.agent.repository import ConversationInfo, ConversationRepository, MessageRecord
from core.agent.strategies import pick_strategy
from core.agent.tools import ToolRegistry, default_tools
from core.errors import LLMCode, LLMError
from core.paths import Paths
from core.settings import Settings, get_api_key, load_settings
from core.store import models as m
from core.store.library import Library

ProviderFactory = Callable[[Settings, str | None], ChatProvider]

__all__ = ["AgentService", "ConversationInfo", "MessageRecord", "Selection", "make_provider"]


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
    )


class AgentService:
    def __init__(
        self,
        library: Library,
        paths: Paths,
        settings: Settings | None = None,
        *,
        provider_factory: ProviderFactory | None = None,
        tools: ToolRegistry | None = None,
        retry_delay: float = 1.0,
    ) -> None:
        self.library = library
        self.paths = paths
        self._settings = settings if settings is not None else load_settings(paths)
        self._factory = provider_factory or make_provider
        self.tools = tools or default_tools()
        self.repo = ConversationRepository(library.db)
        self.retry_delay = retry_delay
        self._provider: ChatProvider | None = None
        self._provider_key: tuple[Settings, str | None] | None = None

    # settings and provider ----------------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self._settings

    def update_settings(self, settings: Settings) -> None:
        self._settings = settings
        self._provider = (
            None  # the next question uses the new settings (old client closes with its runs)
        )

    def provider(self) -> ChatProvider:
        key = get_api_key()
        marker = (self._settings, key)
        if self._provider is None or self._provider_key != marker:
            self._provider = self._factory(self._settings, key)
            self._provider_key = marker
        return self._provider

    def mode(self) -> str:
        """ "anthropic", "local" or "passages": what a question asked now would use."""
        return self._settings.effective_provider(bool(get_api_key()))

    # conversations --------------------------------------------------------------------

    def create_conversation(self, book_id: int, title: str = "") -> ConversationInfo:
        return self.repo.create(book_id, title)

    def list_conversations(self, book_id: int) -> list[ConversationInfo]:
        return self.repo.list_for_book(book_id)

    def get_conversation(self, conversation_id: int) -> ConversationInfo:
        return self.repo.get(conversation_id)

    def rename_conversation(self, conversation_id: int, title: str) -> ConversationInfo:
        return self.repo.rename(conversation_id, title)

    def delete_conversation(self, conversation_id: int) -> None:
        self.repo.delete(conversation_id)

    def history(self, conversation_id: int) -> list[MessageRecord]:
        return self.repo.history(conversation_id)

    def conversation_usage(self, conversation_id: int) -> tuple[Usage, float | None]:
        return self.repo.usage(conversation_id)

    def recover_interrupted(self) -> int:
        return self.repo.recover_interrupted()

    # asking ---------------------------------------------------------------------------

    def _chat(self, strategy: str | None) -> ChatWithBook:
        provider = self.provider()
        name = strategy or self._settings.strategy
        if provider.name == "passages":
            name = "tool-use"  # passages mode always searches through the tool loop
        return ChatWithBook(
            provider=provider,
            tools=self.tools,
            strategy=pick_strategy(name),
            context=BookContext(),
            repository=self.repo,
            library=self.library,
            limits=self._settings.limits,
            spoiler_safe=self._settings.spoiler_safe,
            retry_delay=self.retry_delay,
        )

    def ask(
        self,
        conversation_id: int,
        text: str,
        *,
        selection: Selection | None = None,
        strategy: str | None = None,
        stop: asyncio.Event | None = None,
    ) -> AsyncIterator[AgentEvent]:
        return self._chat(strategy).run(conversation_id, text, selection, stop=stop)

    async def regenerate(
        self, conversation_id: int, *, stop: asyncio.Event | None = None
    ) -> AsyncIterator[AgentEvent]:
        """Ask the last question again; the previous attempt (question, answer, tool calls)
        is removed so the history holds only the new one."""
        last = self.repo.last_question(conversation_id)
        if last is None:
            from core.errors import MarginError

            raise MarginError(
                "nothing_to_regenerate", "This conversation has no question to ask again."
            )
        text, selection_text, selection_page = last
        run = (
            m.Run.select()
            .where(m.Run.conversation == conversation_id)
            .order_by(m.Run.id.desc())
            .first()
        )
        if run is not None:
            with self.library.db.atomic():
                m.Message.delete().where(m.Message.run == run.id).execute()
                m.Run.delete().where(m.Run.id == run.id).execute()
        selection = (
            Selection(selection_text, selection_page) if selection_text and selection_page else None
        )
        async for event in self.ask(conversation_id, text, selection=selection, stop=stop):
            yield event

    async def test_connection(self, settings: Settings, api_key: str | None) -> str:
        kind = settings.effective_provider(bool(api_key))
        if kind == "passages":
            if settings.provider == "anthropic" and not api_key:
                raise LLMError(
                    LLMCode.BAD_KEY,
                    "There is no API key to test.",
                    hint="Paste your key from console.anthropic.com first.",
                )
            return "Passages mode needs no connection: answers are passages from the book."
        from core.agent.providers.anthropic import AnthropicProvider

        provider = make_provider(settings, api_key, max_retries=0, timeout=15.0)
        assert isinstance(provider, AnthropicProvider)
        try:
            return await provider.test_connection()
        finally:
            await provider.aclose()

    async def list_models(self, settings: Settings, api_key: str | None) -> list[str]:
        if settings.effective_provider(bool(api_key)) == "passages":
            return []
        from core.agent.providers.anthropic import AnthropicProvider

        provider = make_provider(settings, api_key, max_retries=0, timeout=15.0)
        assert isinstance(provider, AnthropicProvider)
        try:
            return await provider.list_models()
        finally:
            await provider.aclose()
