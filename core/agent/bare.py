"""An answer with no words: empty, or only a page label ("[pp. 30–31]"). Small local models
write such answers; shown as they are, they look complete. The run marks them
(``stop_reason = "empty_answer"``), says so, and answers with what the book says instead: the
no-model reply made from the passages the model was given, the reader free to ask again."""

from __future__ import annotations

import re

from core.agent.answer import _MARK
from core.agent.events import Notice, TextDelta
from core.agent.grounding import LABEL
from core.agent.loop import AgentLoop
from core.agent.providers.base import StreamCitation, StreamText
from core.agent.providers.passages import HEADER, PassagesProvider
from core.agent.types import (
    CitationRef,
    Passage,
    Passages,
    Question,
    TurnRequest,
    UserMessage,
)

EMPTY_STOP = "empty_answer"
NOTICE = "The model gave no answer in words; showing what the book says instead."
NOTE = (
    "*(The model gave no answer in words{label}. Here is what the passages it was given say; "
    "press Retry to ask again.)*"
)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
LABEL_WORDS = 1  # "See [p. 3]", "Sources: [pp. 30–31]": a label with this few words is bare


def is_bare(answer: str) -> bool:
    """True when ``answer`` has no words, or only a page label and a word or two ("Yes." or
    "Fine." alone is an answer)."""
    words = len(_WORD.findall(_MARK.sub(" ", LABEL.sub(" ", answer))))
    return words == 0 or (words <= LABEL_WORDS and LABEL.search(answer) is not None)


async def offer_passages(loop: AgentLoop, question: Question) -> bool:
    """When the run's answer is bare, mark it and add the passages reply. True when it did."""
    state = loop.state
    if state.withheld or state.repeating or not is_bare(state.answer):
        return False
    step = state.step
    loop.sink.emit(Notice(NOTICE, step))
    label = ", only a page label" if LABEL.search(state.answer) else ""
    text, cites = await passages_reply(state.passages, question)
    piece = ("\n\n" if state.answer.strip() else "") + NOTE.format(label=label) + "\n\n" + text
    state.texts.append(piece)
    loop.sink.emit(TextDelta(piece, step))
    for ref in cites:
        loop.text.cite(ref, step)
    state.stop_reason = EMPTY_STOP
    return True


async def passages_reply(
    passages: list[Passage] | tuple[Passage, ...], question: Question
) -> tuple[str, list[CitationRef]]:
    """The no-model reply for ``passages`` (without its "no model is connected" header)."""
    request = TurnRequest(
        "passages", "", (UserMessage((question, Passages(tuple(passages)))),), (), 0
    )
    parts: list[str] = []
    cites: list[CitationRef] = []
    async for event in PassagesProvider().stream_turn(request):
        if isinstance(event, StreamText):
            parts.append(event.text)
        elif isinstance(event, StreamCitation):
            cites.append(event.citation)
    text = "".join(parts)
    if text.startswith(HEADER):
        text = text[len(HEADER) :].lstrip()
    return text, cites
