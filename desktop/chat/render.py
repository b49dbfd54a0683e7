"""HTML for the conversation view: Markdown answers, page chips, sources, the trace.

Answers are Markdown from the model; raw HTML in them is escaped (markdown-it with
``html=False``), so nothing a model or a book says can inject markup or fetch anything.
"""

from __future__ import annotations

import html
from urllib.parse import quote

from markdown_it import MarkdownIt

from core.agent.answer import AnswerState
from core.agent.pricing import estimate_cost
from core.agent.types import CitationRef
from core.labels import QUOTE_CLOSE, QUOTE_OPEN

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    "table"
)

CSS = """
body { font-size: 10.5pt; }
.q { background: #eef3fb; color: #1d1d1f; padding: 6px; margin-top: 10px; }
.sel { color: #555; font-style: italic; margin: 2px 0 4px 8px; }
.a { margin: 4px 0 8px 0; }
.meta { color: #777; font-size: 9pt; }
.err { color: #b3261e; }
.chip { background: #fff1c1; color: #5b4300; text-decoration: none; padding: 0 3px; }
.status { color: #8a5a00; font-size: 9pt; }
blockquote { color: #444; margin-left: 10px; }
"""


def markdown(text: str) -> str:
    return _md.render(text)


def page_chip(c: CitationRef) -> str:
    label = (
        f"p. {c.first_page}" if c.first_page == c.last_page else f"pp. {c.first_page}–{c.last_page}"
    )
    href = f"margin-cite:{c.book_id}/{c.first_page}-{c.last_page}?q={quote(c.quoted_text[:200])}"
    return f'<a class="chip" href="{href}" title="{html.escape(c.quoted_text[:200])}">{label}</a>'


def question_html(text: str, selection_text: str | None, selection_page: int | None) -> str:
    sel = ""
    if selection_text:
        short = selection_text if len(selection_text) < 300 else selection_text[:297] + "…"
        sel = f'<div class="sel">“{html.escape(short)}” — p. {selection_page}</div>'
    return f'<div class="q">{sel}{html.escape(text).replace(chr(10), "<br>")}</div>'


def answer_html(view: AnswerState, *, expanded: set[str], last: bool) -> str:
    parts = [f'<div class="a">{markdown(view.text) if view.text else ""}</div>']
    if view.status == "running":
        parts.append(f'<p class="status">{html.escape(view.activity or "Thinking…")}</p>')
    elif view.status == "stopped":
        parts.append('<p class="status">Stopped.</p>')
    elif view.status == "interrupted":
        parts.append(
            '<p class="status">Interrupted: Margin closed before this answer finished.</p>'
        )
    if view.error is not None and view.status != "running":
        hint = f" {html.escape(view.error.hint)}" if view.error.hint else ""
        action = (
            '<a href="margin-action:settings">Open settings</a>'
            if view.error.code in ("bad_key", "permission", "model_not_found")
            else f'<a href="margin-action:retry/{view.key}">Retry</a>'
        )
        parts.append(f'<p class="err">{html.escape(view.error.message)}{hint} {action}</p>')
    if view.citations:
        chips = " ".join(page_chip(c) for c in view.citations)
        parts.append(f"<p>Sources: {chips}</p>")
    if view.status != "running":
        links = [f'<a href="margin-action:copy/{view.key}">Copy</a>']
        if last:
            links.append('<a href="margin-action:regenerate">Regenerate</a>')
        if view.tool_calls or view.passages:
            links.append(
                f'<a href="margin-action:sources/{view.key}">{"Hide" if "s" + view.key in expanded else "Show"} sources</a>'
            )
        links.append(
            f'<a href="margin-action:trace/{view.key}">{"Hide" if "t" + view.key in expanded else "Show"} trace</a>'
        )
        parts.append(f'<p class="meta">{" · ".join(links)}</p>')
    if "s" + view.key in expanded:
        parts.append(sources_html(view))
    if "t" + view.key in expanded:
        parts.append(trace_html(view))
    return "".join(parts)


def sources_html(view: AnswerState) -> str:
    rows = []
    for call in view.tool_calls:
        args = call.arguments
        if call.name == "search_book":
            rows.append(
                f"<li>Searched for “{html.escape(str(args.get('query', '')))}”: {html.escape(call.summary)}</li>"
            )
        elif call.name == "read_pages":
            rows.append(f"<li>Read {html.escape(call.summary)}</li>")
        else:
            rows.append(f"<li>{html.escape(call.name)}: {html.escape(call.summary)}</li>")
    for passage in view.passages:
        quote = " ".join(passage.text.split())
        quote = quote if len(quote) <= 160 else quote[:159] + "…"
        snippet = html.escape(quote).replace(QUOTE_OPEN, "<b>").replace(QUOTE_CLOSE, "</b>")
        rows.append(f'<li class="meta">{passage.label}: {snippet}</li>')
    return f'<ul class="meta">{"".join(rows) or "<li>No tools were used.</li>"}</ul>'


def trace_html(view: AnswerState) -> str:
    rows = []
    for call in view.tool_calls:
        mark = " (error)" if call.is_error else ""
        rows.append(
            f"<li>step {call.step}: {html.escape(call.name)} — {html.escape(call.summary)}{mark}, {call.duration_ms:.0f} ms</li>"
        )
    usage = view.usage
    if usage is not None:
        cost = estimate_cost(view.model, usage) if view.model else None
        money = f", about ${cost:.4f}" if cost else ""
        rows.append(
            f"<li>tokens: {usage.input_tokens} in, {usage.output_tokens} out, {usage.cache_read_tokens} from cache, "
            f"{usage.cache_write_tokens} written to cache{money}</li>"
        )
    return f'<ul class="meta">{"".join(rows) or "<li>No steps recorded.</li>"}</ul>'
