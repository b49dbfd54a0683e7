"""One answer as it forms: agent events in, the answer's state out.

The CLI and the chat pane both fold a run's events into an ``AnswerState`` (the text so
far, the activity line, page citations, the passages the tools returned, usage, the outcome),
so what an answer "is" is decided once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.agent.events import (
    AgentEvent,
    Citation,
    ErrorInfo,
    Notice,
    RunCancelled,
    RunFailed,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolCallRecord,
    ToolFinished,
    ToolStarted,
    UsageReport,
)
from core.agent.types import CitationRef, Passage, Usage


@dataclass
class AnswerState:
    key: str = ""  # the pane's key: message id, or "live-<conversation>"
    text: str = ""
    status: str = "running"  # running | complete | stopped | failed | interrupted
    activity: str = ""
    citations: list[CitationRef] = field(default_factory=list)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    usage: Usage | None = None
    model: str = ""
    provider: str = ""
    strategy: str = ""
    run_id: int | None = None
    error: ErrorInfo | None = None
    retry_text: str = ""

    def apply(self, event: AgentEvent) -> None:
        """Fold one event into the answer."""
        if isinstance(event, RunStarted):
            self.run_id = event.run_id
            self.model = event.model
            self.provider = event.provider
            self.strategy = event.strategy
        elif isinstance(event, TextDelta):
            self.text += event.text
        elif isinstance(event, ToolStarted):
            self.activity = f"{event.description}…"
        elif isinstance(event, ToolFinished):
            self.activity = f"{self.activity.rstrip('.…')}… {event.summary}"
            self.tool_calls.append(
                ToolCallRecord(
                    event.tool_use_id,
                    event.name,
                    dict(event.detail.get("arguments", {}))
                    or ({"query": event.detail["query"]} if "query" in event.detail else {}),
                    event.summary,
                    event.is_error,
                    event.duration_ms,
                    event.step,
                )
            )
            if "query" in event.detail:
                self.queries.append(str(event.detail["query"]))
            self.passages.extend(event.passages)
        elif isinstance(event, Citation):
            if event.citation not in self.citations:
                self.citations.append(event.citation)
        elif isinstance(event, UsageReport):
            self.usage = event.usage if self.usage is None else self.usage + event.usage
        elif isinstance(event, Notice):
            self.activity = event.text
            self.notices.append(event.text)
        elif isinstance(event, RunFinished | RunCancelled | RunFailed):
            result = event.result
            self.status = result.status
            self.activity = ""
            if result.answer:
                self.text = result.answer
            for c in result.citations:
                if c not in self.citations:
                    self.citations.append(c)
            if isinstance(event, RunFailed):
                self.error = event.error

    @property
    def finished(self) -> bool:
        return self.status != "running"
