"""Frozen copy of ``core.search.cjk.grams`` (version 1) for the migration that creates and
fills ``cjk_index`` (``core.store.migrations._cjk_index``). Never changed with the live code."""

from __future__ import annotations

import re

_RUN_CHARS = (
    "\u3005\u3007\u303b\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\uac00-\ud7a3"
    "\U00020000-\U0003134f"
)
RUN = re.compile(f"[{_RUN_CHARS}]+")


def grams(text: str) -> str:
    def cut(match: re.Match[str]) -> str:
        run = match.group(0)
        return " " + " ".join([*(run[i : i + 2] for i in range(len(run) - 1)), run[-1]]) + " "

    return RUN.sub(cut, text)
