"""HTML for the conversation view: questions, Markdown answers, page chips, sources, the trace.

Answers are Markdown from the model; raw HTML in them is escaped (markdown-it with
``html=False``), so nothing a model or a book says can inject markup or fetch anything.
Colours come from the widget's ``QPalette`` (``Colours.from_palette``), so a dark theme stays
legible. Every function here is pure: the pane caches what they return per message.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import quote

from PySide6.QtGui import QColor, QPalette

from core.agent.answer import FOLD_LINE, AnswerState, fill_hidden, notice_text
from core.agent.pricing import estimate_cost
from core.agent.types import CitationRef, Passage, Withheld
from core.labels import QUOTE_CLOSE, QUOTE_OPEN, Labels, pages_label, printed_pages
from desktop.accessibility import contrast
from desktop.chat.app_links import app_link, model_text, only_app_links
from desktop.chat.passage_chips import passage_chips

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

MIN_CONTRAST = 4.6  # WCAG AA asks 4.5 : 1 of small text; rounding of #rrggbb takes the rest

# markdown_it loads with the first answer, not before the window shows
_md: MarkdownIt | None = None

NOT_CHECKED = "Not checked against the book"
QUICK_LABELS = {
    "explain": "Explain",
    "define": "Define",
    "summarize": "Summarize",
    "translate": "Translate",
}


def _readable(text: QColor, base: QColor, t: float, backgrounds: list[str]) -> str:
    """``text`` moved up to ``t`` of the way towards ``base``, but no further than keeps a
    contrast of 4.5 : 1 (WCAG AA, with a margin) on each of ``backgrounds``."""
    while t > 0 and min(contrast(_mix(text, base, t), b) for b in backgrounds) < MIN_CONTRAST:
        t -= 0.02
    return _mix(text, base, max(0.0, t))


def _mix(a: QColor, b: QColor, t: float) -> str:
    """``a`` moved ``t`` of the way towards ``b``, as #rrggbb."""
    r = round(a.red() + (b.red() - a.red()) * t)
    g = round(a.green() + (b.green() - a.green()) * t)
    bl = round(a.blue() + (b.blue() - a.blue()) * t)
    return f"#{r:02x}{g:02x}{bl:02x}"


@dataclass(frozen=True)
class Colours:
    text: str = "#1d1d1f"
    muted: str = "#6b6b70"
    question_bg: str = "#eef3fb"
    quote: str = "#4a4a50"
    code_bg: str = "#f2f2f4"
    chip_bg: str = "#fff1c1"
    chip_fg: str = "#5b4300"
    link: str = "#1a5fb4"
    error: str = "#b3261e"
    warn: str = "#8a5a00"

    @classmethod
    def from_palette(cls, palette: QPalette) -> Colours:
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        accent = palette.color(QPalette.ColorRole.Highlight)
        link = palette.color(QPalette.ColorRole.Link)
        window = palette.color(QPalette.ColorRole.Window)
        dark = base.lightness() < 128
        question_bg = _mix(base, accent, 0.16 if dark else 0.10)
        amber = QColor("#e0b030")
        red = QColor("#ff8a80" if dark else "#b3261e")
        return cls(
            text=text.name(),
            # speaker labels and "Sources" on the page, on a question, and the token meter on
            # the window colour: dimmer than the text, never below AA
            muted=_readable(text, base, 0.42, [base.name(), question_bg, window.name()]),
            question_bg=question_bg,
            quote=_mix(text, base, 0.22),
            code_bg=_mix(base, text, 0.08),
            chip_bg=_mix(base, amber, 0.30 if dark else 0.35),
            chip_fg=_mix(text, amber, 0.15) if dark else "#5b4300",
            link=link.name() if not dark else _mix(link, QColor("white"), 0.35),
            error=red.name(),
            warn=_mix(text, amber, 0.55 if dark else 0.35),
        )


def css(c: Colours) -> str:
    return f"""
body {{ color: {c.text}; }}
p {{ margin-top: 4px; margin-bottom: 6px; line-height: 135%; }}
li {{ line-height: 135%; }}
a {{ color: {c.link}; }}
.q {{ background-color: {c.question_bg}; margin-top: 0px; margin-bottom: 0px;
      padding: 0px; }}
.qtext {{ margin-bottom: 6px; }}
.who {{ color: {c.muted}; font-size: small; font-weight: bold; }}
.sel {{ color: {c.quote}; font-style: italic; }}
.meta {{ color: {c.muted}; font-size: small; }}
.err {{ color: {c.error}; }}
.hint {{ color: {c.text}; }}
.warn {{ color: {c.warn}; font-size: small; }}
.hidden {{ color: {c.warn}; font-style: italic; }}
.chip {{ background-color: {c.chip_bg}; color: {c.chip_fg}; text-decoration: none; }}
.status {{ color: {c.warn}; font-size: small; font-style: italic; }}
blockquote {{ color: {c.quote}; margin-left: 14px; font-style: italic; }}
pre {{ background-color: {c.code_bg}; font-family: monospace; }}
code {{ background-color: {c.code_bg}; font-family: monospace; }}
"""


# Qt lays a long unbroken word or a long table out in time that grows with its square: an
# answer shows at most this much at once (a stored answer can hold 200,000 characters; the
# rest is behind "Show all", drawn a piece per event-loop turn)
SHOWN_CHARS = 12_000
SHOWN_LINES = 80
_LONG_WORD = re.compile(r"[^\s`]{160,}")


def _soft_breaks(match: re.Match[str]) -> str:
    word = match.group(0)
    return "\u200b".join(word[i : i + 80] for i in range(0, len(word), 80))


def markdown(text: str) -> str:
    """HTML for Markdown ``text``; words longer than a line get places to break (U+200B).
    Only links the app made itself are live (issue 46 item 2): every link the Markdown writes
    is plain text unless it goes to the web (http, https, mailto); the app's own links are
    written as ``app_link`` tokens and made into links here, after the Markdown is rendered,
    so no text a model writes can become one."""
    global _md
    if _md is None:  # markdown_it loads on first use, after the window's first paint
        from markdown_it import MarkdownIt

        _md = MarkdownIt(
            "commonmark", {"html": False, "linkify": False, "typographer": False}
        ).enable("table")
    rendered = str(_md.render(_LONG_WORD.sub(_soft_breaks, text)))
    return only_app_links(rendered)


def cut_at(text: str, chars: int = SHOWN_CHARS, lines: int = SHOWN_LINES) -> int:
    """Where to cut ``text`` so the part shown stays quick to draw (``len(text)`` when it
    fits): at most ``chars`` characters and ``lines`` lines, at a line end when there is one."""
    end = min(len(text), chars)
    pos = -1
    for _ in range(lines):
        pos = text.find("\n", pos + 1, end)
        if pos < 0:
            break
    else:
        end = pos
    if end >= len(text):
        return len(text)
    line_end = text.rfind("\n", 0, end)
    return line_end if line_end > end // 2 else end


_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")


def pieces(text: str) -> list[str]:
    """``text`` in pieces of at most ``SHOWN_CHARS``/``SHOWN_LINES``, drawn one at a time; a
    table cut between pieces repeats its header, so every piece draws as a table."""
    out: list[str] = []
    header = ""
    while text:
        end = cut_at(text) or len(text)
        piece, text = text[:end], text[end:]
        if header and piece.lstrip("\n").startswith("|"):
            piece = header + piece.lstrip("\n")
        out.append(piece)
        lines = piece.splitlines()
        for i in range(len(lines) - 1, 0, -1):
            if _TABLE_RULE.match(lines[i]) and lines[i - 1].lstrip().startswith("|"):
                header = f"{lines[i - 1]}\n{lines[i]}\n"
                break
            if not lines[i].lstrip().startswith("|"):
                header = ""
                break
    return out


def short_quote(text: str, limit: int = 60) -> str:
    words = " ".join(text.split())
    if len(words) <= limit:
        return words
    return words[: limit - 1].rsplit(" ", 1)[0] + "…"


def quick_action_text(action: str, text: str, page: int, labels: Labels = ()) -> str:
    """A quick action as the reader would say it: "Explain · “I had seen…” (p. 3)", or
    "(p. 40 in print)" in a book with printed page numbers."""
    label = QUICK_LABELS.get(action, action.capitalize())
    return f"{label} · “{short_quote(text)}” ({chip_text(page, page, labels)[0]})"


def cite_href(book_id: int, first: int, last: int, quote_text: str, at: int = -1) -> str:
    where = f"&at={at}" if at >= 0 else ""  # the quote's offset in the page: that one is marked
    return f"margin-cite:{book_id}/{first}-{last}?q={quote(quote_text[:300], safe='')}{where}"


def chip_text(first: int, last: int, labels: Labels = ()) -> tuple[str, str]:
    """What a page chip says and the start of its tooltip: the printed page when the book
    has one ("p. 40 in print", with Margin's "p. 7" in the tooltip), else "p. 7"."""
    printed = printed_pages(first, last, labels)
    return (
        (printed, f"Margin's {pages_label(first, last)}: ")
        if printed
        else (pages_label(first, last), "")
    )


def selection_page_name(page: int | None, labels: Labels = ()) -> int | str | None:
    """How the reader's quoted selection names its page (after "p. "): Margin's number, or
    "40 in print" in a book with printed page numbers."""
    printed = printed_pages(page, page, labels) if page else ""
    return html.escape(printed.removeprefix("p. ")) if printed else page


def page_chip(c: CitationRef, labels: Labels = ()) -> str:
    # the book's own words when the store found them (marked exactly), else the model's
    href = cite_href(c.book_id, c.first_page, c.last_page, c.exact or c.quoted_text, c.start)
    text, where = chip_text(c.first_page, c.last_page, labels)
    title = html.escape(where + c.quoted_text[:200])
    return f'<a class="chip" href="{href}" title="{title}">&nbsp;{html.escape(text)}&nbsp;</a>'


def question_html(text: str, selection_text: str | None, selection_page: int | str | None) -> str:
    """The reader's message: a tinted block, the quoted passage on its own line."""
    body = html.escape(text).replace("\n", "<br>")
    sel = ""
    if selection_text and short_quote(selection_text) not in text:
        short = selection_text if len(selection_text) < 300 else selection_text[:297] + "…"
        sel = f'<p class="sel">“{html.escape(" ".join(short.split()))}” — p. {selection_page}</p>'
    # tinted paragraphs, not a table: a table's frame puts U+FDD0/U+FDD1 markers into the
    # text a screen reader reads
    sel = sel.replace('<p class="sel">', '<p class="q sel">')
    return (
        '<p class="q who" style="margin-top: 14px; margin-bottom: 0px;">You</p>'
        f'{sel}<p class="q qtext">{body}</p>'
    )


def _with_notices(text: str, key: str, withheld: list[Withheld], revealed: Collection[int]) -> str:
    def notice(item: Withheld) -> str:
        return f"*{notice_text(item)}* — {app_link(f'reveal/{key}/{item.index}', 'Show anyway')} "

    return fill_hidden(text, withheld, reveal=set(revealed), notice=notice)


def grounded(view: AnswerState) -> bool:
    """Whether the model saw any book text for this answer."""
    return bool(
        view.tool_calls
        or view.passages
        or view.strategy == "always-retrieve"
        or view.provider == "passages"
    )


def shown_text(view: AnswerState, revealed: Collection[int] = ()) -> str:
    """The answer's Markdown with a notice (and a Show anyway link) for each held-back
    sentence, or the sentence itself once revealed. Only the notices' links are live once
    rendered (``markdown``): the model's own links are plain text, whatever they hold."""
    if not view.withheld:
        return model_text(view.text)
    safe = [replace(w, text=model_text(w.text)) for w in view.withheld]
    return _with_notices(model_text(view.text), view.key, safe, revealed)


def settled_length(text: str) -> int:
    """How much of a streaming answer is finished Markdown blocks: up to its last blank line
    outside a code fence. Those blocks are rendered once; only the rest is repainted."""
    end = 0
    fenced = False
    pos = 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        elif not stripped and not fenced and pos < len(text):
            end = pos
    return end


WHO_ANSWER = '<p class="who">Margin</p>'
# an answer made with no model connected says so: passages, not a model's words
WHO_PASSAGES = '<p class="who">Passages, no model</p>'


def who_html(view: AnswerState) -> str:
    """Who answered: Margin (a model), or passages found with no model connected."""
    return WHO_PASSAGES if view.provider == "passages" else WHO_ANSWER


def answer_html(
    view: AnswerState,
    *,
    expanded: Collection[str] = (),
    last: bool = False,
    revealed: Collection[int] = (),
    body: str | None = None,
    full: bool = False,
    labels: Labels = (),
) -> str:
    """An answer: its text (or ``body``, the unsettled tail while it streams; the first
    ``SHOWN_CHARS`` and a Show all link unless ``full``), its state, error, grounding label,
    page chips and links."""
    key = view.key
    text = shown_text(view, revealed) if body is None else body
    parts = [who_html(view)] if body is None else []
    end = len(text) if full else cut_at(text)
    if not full and view.status != "running" and (fold := text.find(FOLD_LINE)) > 0:
        end = min(end, fold)  # the no-model reply: its answer first, the passages folded
    if text:
        body_html = markdown(text[:end])
        if view.provider == "passages":
            body_html = passage_chips(body_html, view.citations, lambda c: page_chip(c, labels))
        parts.append(body_html)
    if end < len(text):
        more = f"Showing {end:,} of {len(text):,} characters."
        if view.status == "running":
            parts.append(f'<p class="status">{more} The rest shows when the answer ends.</p>')
        else:
            parts.append(
                f'<p class="status">{more} <a href="margin-action:all/{key}">Show all</a></p>'
            )
    if view.status == "running":
        activity = view.activity or ("Writing…" if view.text.strip() else "Thinking…")
        parts.append(f'<p class="status">{html.escape(activity)}</p>')
    elif view.status == "stopped":
        parts.append('<p class="status">Stopped.</p>')
    elif view.status == "interrupted":
        parts.append('<p class="status">Interrupted.</p>')
    elif view.status == "unfinished":
        parts.append(
            '<p class="status">Not finished: another Margin window may still be writing it, '
            f'or Margin closed first. <a href="margin-action:retry/{key}">Retry</a></p>'
        )
    if view.error is not None and view.status != "running":
        hint = (
            f' <span class="hint">{html.escape(view.error.hint)}</span>' if view.error.hint else ""
        )
        action = (
            '<a href="margin-action:settings">Open settings</a>'
            if view.error.code in ("bad_key", "permission", "model_not_found")
            else f'<a href="margin-action:retry/{key}">Retry</a>'
        )
        parts.append(
            f'<p><span class="err">{html.escape(view.error.message)}</span>{hint} {action}</p>'
        )
    elif view.status == "interrupted":
        parts.append(
            '<p><span class="err">Margin was closed before this answer finished.</span> '
            f'<a href="margin-action:retry/{key}">Retry</a></p>'
        )
    if view.status == "complete" and view.text and not grounded(view):
        parts.append(
            f'<p class="warn">{NOT_CHECKED}: the model answered without looking at the book. '
            f'<a href="margin-action:ground/{key}">Answer from the book</a>'
            + (
                # small local models often never call tools: offer the strategy that searches
                ' · <a href="margin-action:settings">Always search the book first…</a>'
                if view.provider == "local"
                else ""
            )
            + "</p>"
        )
    chips = source_refs(view)
    if chips:
        parts.append(
            f'<p class="meta">Sources: {" ".join(page_chip(c, labels) for c in chips)}</p>'
        )
    if view.status != "running":
        links = [f'<a href="margin-action:copy/{key}">Copy</a>']
        links.append(f'<a href="margin-action:speak/{key}">Read aloud</a>')
        if last:
            links.append('<a href="margin-action:regenerate">Regenerate</a>')
        if view.tool_calls or view.passages:
            word = "Hide" if "s" + key in expanded else "Show"
            links.append(f'<a href="margin-action:sources/{key}">{word} sources</a>')
        word = "Hide" if "t" + key in expanded else "Show"
        links.append(f'<a href="margin-action:trace/{key}">{word} trace</a>')
        parts.append(f'<p class="meta">{" · ".join(links)}</p>')
    if "s" + key in expanded:
        parts.append(sources_html(view, labels))
    if "t" + key in expanded:
        parts.append(trace_html(view))
    return "".join(parts)


def source_refs(view: AnswerState) -> list[CitationRef]:
    """The page chips of an answer: what it cited (natively, or by the ``[p. N]`` labels core
    turned into citations), merged by page range."""
    seen: set[tuple[int, int]] = set()
    out: list[CitationRef] = []
    for c in view.citations:
        if (c.first_page, c.last_page) not in seen:
            seen.add((c.first_page, c.last_page))
            out.append(c)
    return out


def _passage_quote(p: Passage) -> str:
    raw = p.quote or " ".join(p.text.split())[:200]
    return raw.replace(QUOTE_OPEN, "").replace(QUOTE_CLOSE, "").strip()


def unique_passages(passages: list[Passage]) -> list[Passage]:
    seen: set[tuple[int, int, str]] = set()
    out = []
    for p in passages:
        k = (p.first_page, p.last_page, _passage_quote(p))
        if k not in seen:
            seen.add(k)
            out.append(p)
    return out


def sources_html(view: AnswerState, labels: Labels = ()) -> str:
    rows = []
    for call in view.tool_calls:
        args = call.arguments
        if call.name == "search_book":
            query = html.escape(str(args.get("query", "")))
            rows.append(f"<li>Searched for “{query}”: {html.escape(call.summary)}</li>")
        elif call.name == "read_pages":
            rows.append(f"<li>Read {html.escape(call.summary)}</li>")
        else:
            rows.append(f"<li>{html.escape(call.name)}: {html.escape(call.summary)}</li>")
    for p in unique_passages(view.passages):
        words = _passage_quote(p)
        if len(words) > 160 or not p.quote:  # shown shorter; the link keeps the exact quote
            cut = words[:160].rsplit(" ", 1)[0]
            words = cut + "…" if cut != words else words
        href = cite_href(p.book_id, p.first_page, p.last_page, _passage_quote(p))
        rows.append(
            f'<li><a class="chip" href="{href}">&nbsp;{html.escape(chip_text(p.first_page, p.last_page, labels)[0])}'
            f"&nbsp;</a> “{html.escape(words)}”</li>"
        )
    return f'<ul class="meta">{"".join(rows) or "<li>No book text was used.</li>"}</ul>'


def trace_html(view: AnswerState) -> str:
    rows = []
    for call in view.tool_calls:
        mark = " (error)" if call.is_error else ""
        rows.append(
            f"<li>step {call.step}: {html.escape(call.name)} — {html.escape(call.summary)}"
            f"{mark}, {call.duration_ms:.0f} ms</li>"
        )
    usage = view.usage
    if usage is not None:
        cost = estimate_cost(view.model, usage) if view.model else None
        money = f", about ${cost:.4f}" if cost else ""
        rows.append(
            f"<li>tokens: {usage.input_tokens} in, {usage.output_tokens} out, "
            f"{usage.cache_read_tokens} from cache, {usage.cache_write_tokens} written to "
            f"cache{money}</li>"
        )
    if view.model:
        rows.append(
            f"<li>{html.escape(view.provider)} · {html.escape(view.model)} · "
            f"{html.escape(view.strategy)}</li>"
        )
    return f'<ul class="meta">{"".join(rows) or "<li>No steps recorded.</li>"}</ul>'
