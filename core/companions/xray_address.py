"""Names said only in dialogue, and whom they are said to (X-Ray, issue 39, item 9).

Some people are called by a first name only by the people around them, never by the
narrator: in *Pride and Prejudice* the narrator writes "Mrs. Hurst" and "Mr. Bingley", their
sisters say "Louisa" and "Charles". A reply that opens on such a name is said to the person
who spoke just before: "Mrs. Hurst thought the same, and added— “She has nothing …”" then
"“She did indeed, Louisa. …”"; "“It is amazing to me,” said Bingley, …" then "“My dear
Charles, what do you mean?”".

``address_votes`` reads that evidence from the pages read only (the caller passes pages
1..read_to): one vote (name said, speaker addressed) per reply. A name the narrator also
uses ("Mary wished to say something") names someone of its own and gets no vote: in a room
of several people a reply may turn to a third one, and the narrator's use shows that one is
a person the book calls by that name. For the same reason a reply said by someone the pages
do not name ("cried the two young Cratchits") gives no vote.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

SPEECH = (
    "said|cried|replied|added|observed|answered|continued|returned|exclaimed|asked|"
    "rejoined|whispered|resumed|began|says|said"
)
_QUOTE = re.compile(r"“[^”]*(?:”|$)")
_DASHED = ("—", ":")
_SENTENCE = re.compile(r"(?<=[.!?])(?<!Mr\.)(?<!Mrs\.)(?<!Dr\.)(?<!St\.)\s+")


def paragraphs(texts: Sequence[tuple[int, str]]) -> list[str]:
    """The paragraphs of the pages, in order (a letter's "> " marks left out)."""
    out: list[str] = []
    for _, text in texts:
        for line in text.split("\n"):
            line = line.strip().lstrip(">").strip()
            if line:
                out.append(line)
    return out


def narration(paragraph: str) -> str:
    """The paragraph without what is said in it."""
    return _QUOTE.sub(" … ", paragraph)


def _said(paragraph: str) -> str:
    return " ".join(m.group(0) for m in _QUOTE.finditer(paragraph))


def _names_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    ordered = sorted({n for n in names if n[:1].isupper()}, key=len, reverse=True)
    if not ordered:
        return None
    return re.compile(r"(?<![\w’'])(" + "|".join(re.escape(n) for n in ordered) + r")(?![\w-])")


def speaker(paragraph: str, before: str, known: re.Pattern[str]) -> str | None:
    """The known name that says ``paragraph`` ("said Bingley", "Miss Bingley cried"), or
    the one first named in the last sentence told just before it when that ends on a dash or
    a colon
    ("Mrs. Hurst thought the same, and added—"); None when it does not say."""
    told = narration(paragraph)
    for m in known.finditer(told):
        near = told[max(0, m.start() - 14) : m.end() + 14]
        if re.search(
            rf"\b({SPEECH})\s+{re.escape(m.group(1))}|{re.escape(m.group(1))}\s+({SPEECH})\b", near
        ):
            return m.group(1)
    alone = paragraph.startswith("“") and told.strip(" …") == ""  # speech, nothing told
    if alone and not before.startswith("“") and before.rstrip().endswith(_DASHED):
        last = _SENTENCE.split(before.strip())[-1]
        found = [m.group(1) for m in known.finditer(last)]
        return found[0] if found else None
    return None


def vocatives(paragraph: str, names: set[str]) -> list[str]:
    """Single-word names said to someone in ``paragraph``'s speech: "…, Louisa." "My dear
    Charles, …" "“Lizzy, …"."""
    said = _said(paragraph)
    out = []
    for name in names:
        n = re.escape(name)
        if re.search(
            rf"[,;]\s+{n}(?=\s*[,.!?;”])|(?:“|[.!?]\s+){n}(?=,)|\b(?:[Dd]ear|[Oo]h!?)\s+{n}(?=\s*[,.!?”])",
            said,
        ):
            out.append(name)
    return out


def address_votes(texts: Sequence[tuple[int, str]], names: Iterable[str]) -> list[tuple[str, str]]:
    """(name said, name of the speaker it is said to) for each reply of the pages ``texts``
    that opens on a single-word name the narrator never uses; see the module's docstring."""
    known = _names_pattern(names)
    if known is None:
        return []
    pars = paragraphs(texts)
    told = "\n".join(narration(p) for p in pars)
    singles = {
        n
        for n in {m.group(1) for m in known.finditer("\n".join(_said(p) for p in pars))}
        if " " not in n and not re.search(rf"(?<![\w’']){re.escape(n)}(?![\w-])", told)
    }
    if not singles:
        return []
    votes: list[tuple[str, str]] = []
    for i in range(1, len(pars)):
        reply, spoken = pars[i], pars[i - 1]
        if not (reply.startswith("“") and spoken.startswith("“")):
            continue
        said_by = speaker(spoken, pars[i - 2] if i >= 2 else "", known)
        answer = speaker(reply, spoken, known)
        if said_by is None or answer == said_by:
            continue
        if answer is None and re.search(rf"\b({SPEECH})\b", narration(reply)):
            continue  # said by someone unnamed ("cried the two young Cratchits"): in a
            # room of several, the name may be said to a third one ("Hide, Martha, hide!")
        votes += [(name, said_by) for name in vocatives(reply, singles) if name != said_by]
    return votes
