"""A one-time probe of tool calling, per provider, server and model (issue 40).

Small local models often never make a real tool call: asked to search, they answer from memory
(SmolLM2) or write the call as text (Qwen2.5-Coder). The strategy must suit the model, and the
reader should not need to know which one. So the first question asked of a model (with the
strategy set to "auto") first sends one short request offering ``search_book`` and asking to
use it; the outcome is kept in ``model_probes.json`` next to the settings, shown in Settings,
and decides the strategy: real tool calls → ``tool-use``, anything else → ``always-retrieve``
(Margin searches first and hands the model the passages).
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.agent.providers.base import ChatProvider
from core.agent.text_calls import text_tool_calls
from core.agent.types import Question, ToolSpec, TurnRequest, TurnResult, UserMessage
from core.errors import LLMError
from core.prompts import load_prompt

log = logging.getLogger("margin.agent")
PROBE_FILE = "model_probes.json"
NATIVE, TEXT, NONE = "native", "text", "none"
SAYS = {
    NATIVE: "makes real tool calls: it searches the book itself",
    TEXT: "writes its tool calls as text: Margin searches first and gives it the passages",
    NONE: "does not call tools: Margin searches first and gives it the passages",
}


@dataclass(frozen=True)
class ToolProbe:
    calls: str  # NATIVE | TEXT | NONE
    checked: str  # the day, ISO
    seconds: float

    @property
    def strategy(self) -> str:
        return "tool-use" if self.calls == NATIVE else "always-retrieve"

    def sentence(self, model: str) -> str:
        return f"{model} {SAYS.get(self.calls, SAYS[NONE])} (checked {self.checked})."


def probe_key(provider: str, base_url: str, model: str) -> str:
    return f"{provider} {base_url.rstrip('/')} {model}"


class ProbeStore:
    """The probes' outcomes, a small JSON file in the config folder (no API key in it)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _all(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, key: str) -> ToolProbe | None:
        raw = self._all().get(key)
        if not isinstance(raw, dict):
            return None
        try:
            return ToolProbe(str(raw["calls"]), str(raw["checked"]), float(raw["seconds"]))
        except (TypeError, KeyError, ValueError):
            return None

    def put(self, key: str, probe: ToolProbe) -> None:
        data = self._all()
        data[key] = asdict(probe)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.path)


async def probe_tools(provider: ChatProvider, search: ToolSpec) -> ToolProbe:
    """Ask ``provider`` once to use ``search``: how it calls tools. Raises ``LLMError`` when
    the server does not answer (nothing is learnt then)."""
    request = TurnRequest(
        provider.model,
        load_prompt("tool_probe_system").strip(),
        (UserMessage((Question(load_prompt("tool_probe").strip()),)),),
        (search,),
        200,
    )
    started = time.monotonic()
    result: TurnResult | None = None
    async for event in provider.stream_turn(request):
        if isinstance(event, TurnResult):
            result = event
    if result is None:
        raise LLMError("bad_response", f"{provider.where} sent no answer to a short test.")
    if result.message.calls:
        calls = NATIVE
    elif text_tool_calls(result.message.text, {search.name}):
        calls = TEXT
    else:
        calls = NONE
    today = datetime.date.today().isoformat()
    probe = ToolProbe(calls, today, round(time.monotonic() - started, 1))
    log.info("tool probe of %s: %s in %.1f s", provider.model, calls, probe.seconds)
    return probe
