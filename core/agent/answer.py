"""One answer as it forms: agent events in, the answer's state out.

The CLI and the chat pane both fold a run's events into an ``AnswerState`` (the text so
far, the activity line, page citations, the passages the tools returned, usage, the outcome),
so what an answer "is" is decided once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
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
    SpoilerHidden,
    TextDelta,
    ToolCallRecord,
    ToolFinished,
    ToolStarted,
    UsageReport,
)
from core.agent.types import CitationRef, Passage, Usage, Withheld

_MARK = re.compile(r"⟪hidden:(\d+)⟫")
MODEL_WITHHELD = "(a sentence was withheld here: it named something from later in the book)"


def marker(index: int) -> str:
    """Where a held-back sentence stands in an answer's text."""
    return f"⟪hidden:{index}⟫"


# the no-model reply folds here: its answer above, the passages below (passages_reply)
FOLD_LINE = "**The passages**"
UNSUPPORTED_NOTICE = "This part is not from the pages you have read"
# a sentence no passage the model was given says (a small model's invention): never told as a
# spoiler, which would say the book holds it later
UNGROUNDED_NOTICE = "Hidden: not from the book (no passage the model read says this)"


def notice_text(item: Withheld) -> str:
    if item.reason == "unsupported":
        return UNSUPPORTED_NOTICE
    if item.reason == "ungrounded":
        return UNGROUNDED_NOTICE
    return f"Hidden: this part mentions something from after p. {item.read_to}"


def fill_hidden(
    text: str,
    withheld: Iterable[Withheld],
    *,
    reveal: bool | set[int] = False,
    notice: Callable[[Withheld], str] | None = None,
) -> str:
    """``text`` with each marker replaced: by the hidden sentence when revealed (all, or the
    given indexes), else by ``notice(item)`` (a plain notice by default)."""
    items = {w.index: w for w in withheld}

    def one(match: re.Match[str]) -> str:
        item = items.get(int(match.group(1)))
        if item is None:
            return ""
        if reveal is True or (isinstance(reveal, set) and item.index in reveal):
            return item.text
        return notice(item) if notice is not None else f"[{notice_text(item)}.] "

    return _MARK.sub(one, text)


def for_model(text: str) -> str:
    """The answer as later turns replay it: held-back sentences stay out."""
    return _MARK.sub(MODEL_WITHHELD + " ", text)


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
    withheld: list[Withheld] = field(default_factory=list)

    def apply(self, event: AgentEvent) -> None:
        """Fold one event into the answer."""
        if isinstance(event, RunStarted):
            self.run_id = event.run_id
            self.model = event.model
            self.provider = event.provider
            self.strategy = event.strategy
        elif isinstance(event, TextDelta):
            self.text += event.text
            self.activity = ""  # the tool line is over once the answer is being written
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
        elif isinstance(event, SpoilerHidden):
            self.withheld.append(event.withheld)
            self.text += marker(event.withheld.index)
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
            for w in result.withheld:
                if w not in self.withheld:
                    self.withheld.append(w)
            for c in result.citations:
                if c not in self.citations:
                    self.citations.append(c)
            if isinstance(event, RunFailed):
                self.error = event.error

    @property
    def finished(self) -> bool:
        return self.status != "running"
