"""The no-model reply, answer first (issue 40, item 8): is the answer before the fold, and how
long is the part before it?

Thirty questions written for this evaluation, apart from the project's sets
(tests/bench/data/search_eval.json and the bench questions): each with a phrase of the book that
answers it. A question goes the reader's way (``AgentService`` in passages mode, the book read to
the end) and the judge reads the reply up to ``FOLD_LINE`` (where the chat pane folds it):
*answer first* when the phrase (folded: case, punctuation, curly quotes) is there. Also: words
before the fold (median, most), and the same judge on the whole reply.

Twenty more questions on two books the thirty do not touch (``HELD_OUT``) are reported apart:
they were never used to tune the lead.

Results (2026-11-29, session 5): answer before the fold 17 → 20 of 30 (held out 3 → 5 of 20),
words before the fold median 106 → 171, most 148 → 230 (under 250): each lead now comes with the
two sentences after it (alone: 19/30, held out 6/20) and a sentence gains 0.3 of its previous
sentence's telling words (AFTER_TELLING: 0.6 gave 19/30 and 6/20). Tried and left out on this
set: weighing the question's frame words ("name", "say", "kind") less, a bonus for a number
after "how many" or a name after "who", for words the question does not have, windows of two or
three sentences scored as one, 3 leads (20/30, 7/20, but more than "one or two sentences"); the
sentence encoder reading every sentence of the six passages instead of 24 changed nothing.
Run: PYTHONPATH=$PWD .venv/bin/python tests/bench/eval_no_model_lead.py [--misses]
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "books"

# (book, question, a phrase of the book that answers it)
QUESTIONS: list[tuple[str, str, str]] = [
    ("alice", "What words are on the label of the little bottle Alice finds?", "DRINK ME"),
    ("alice", "What is written on the little cake in the glass box?", "EAT ME"),
    ("alice", "What is the caterpillar on the mushroom smoking?", "hookah"),
    ("alice", "What will one side of the mushroom do to Alice?", "grow taller"),
    ("alice", "What is there too much of in the Duchess's soup?", "pepper"),
    ("alice", "What does the Duchess's baby turn into?", "pig"),
    ("alice", "Where does the Cat say the Hatter lives?", "lives a Hatter"),
    ("alice", "Why is it always tea-time at the Hatter's table?", "always six o'clock"),
    ("alice", "Who is asleep between the March Hare and the Hatter?", "Dormouse"),
    ("alice", "What riddle does the Hatter ask Alice?", "raven like a writing-desk"),
    ("alice", "Why are the gardeners painting the roses?", "red rose-tree"),
    ("alice", "What does Alice use as a mallet in the croquet game?", "flamingo"),
    ("alice", "What are the balls in the Queen's croquet game?", "hedgehogs"),
    ("alice", "What is the name of Alice's cat at home?", "Dinah"),
    ("alice", "What does Alice see on the walls as she falls down the hole?", "cupboards"),
    ("alice", "What jar does Alice take off a shelf while falling?", "ORANGE MARMALADE"),
    ("alice", "What does the Mock Turtle say he once was?", "a real Turtle"),
    ("alice", "What dance do the Gryphon and the Mock Turtle show Alice?", "Lobster Quadrille"),
    ("alice", "Who is accused of stealing the tarts?", "Knave"),
    ("alice", "What is the Hatter's watch wrong by?", "two days wrong"),
    ("alice", "What did the Hatter put into the watch to mend it?", "best butter"),
    ("meta", "What has Gregor become when he wakes up?", "vermin"),
    ("meta", "What picture hangs on the wall of Gregor's room?", "fur boa"),
    ("meta", "Who comes from Gregor's firm to find out why he is late?", "chief clerk"),
    ("meta", "What does Gregor's father throw at him?", "apple"),
    ("meta", "Who rents rooms in the family's flat?", "three gentlemen"),
    ("meta", "What time does Gregor's alarm clock show when he wakes?", "half past six"),
    ("meta", "What do the parents think of for Grete at the end?", "good husband"),
    ("meta", "What does the charwoman call Gregor?", "dung-beetle"),
    ("meta", "Where does the family go on the tram after Gregor's death?", "open country"),
]
# Held out (issue 40, session 3): written after the lead was tuned on the set above, on books it
# does not cover, and never used to tune it: the gain is checked here, reported apart.
HELD_OUT: list[tuple[str, str, str]] = [
    ("carol", "How long has Marley been dead when the story begins?", "seven years"),
    ("carol", "What is the name of Scrooge's clerk?", "Bob Cratchit"),
    ("carol", "What does Scrooge see in the knocker of his door?", "Marley's face"),
    ("carol", "Who was Scrooge's master when he was an apprentice?", "Fezziwig"),
    ("carol", "What does Scrooge ask the gentlemen collecting for the poor?", "prisons"),
    ("carol", "How many spirits does Marley say will haunt Scrooge?", "three spirits"),
    ("carol", "What does Tiny Tim say at the Christmas dinner?", "God bless us every one"),
    ("carol", "What are the two children under the robe of the second Spirit?", "Ignorance"),
    ("carol", "What does Scrooge say of Christmas to his nephew?", "Humbug"),
    ("carol", "What is Scrooge eating by the fire before Marley's ghost comes?", "gruel"),
    ("carol", "What does Scrooge send the boy to buy on Christmas morning?", "prize turkey"),
    ("carol", "What does Scrooge promise Bob Cratchit after Christmas?", "raise your salary"),
    ("carol", "Which storybook hero does the boy Scrooge see at the window?", "Ali Baba"),
    ("carol", "What is the name of Scrooge's little sister?", "little Fan"),
    ("carol", "Who buys the things stolen from the dead man?", "old Joe"),
    ("holmes", "What work does the Red-headed League give Jabez Wilson?", "Encyclopedia"),
    ("holmes", "What kind of snake is the speckled band?", "swamp adder"),
    ("holmes", "Where was the blue carbuncle found?", "its crop"),
    ("holmes", "Who asks Holmes to get back the photograph from Irene Adler?", "King of Bohemia"),
    ("holmes", "What is the name of the pawnbroker with red hair?", "Jabez Wilson"),
]
BOOKS = {
    "alice": "alice_in_wonderland.epub",
    "meta": "metamorphosis.epub",
    "carol": "a_christmas_carol.epub",
    "holmes": "the_adventures_of_sherlock_holmes.epub",
}


def fold(text: str) -> str:
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return " ".join(re.sub(r"[^\w']+", " ", text.lower()).split())


async def main(misses: bool) -> int:
    os.environ.setdefault("MARGIN_HOME", tempfile.mkdtemp(prefix="margin-eval-"))
    from core.agent.answer import FOLD_LINE
    from core.agent.events import RunFinished
    from core.agent.providers.passages_reply import words_before_fold
    from core.agent.service import AgentService
    from core.books.importer import import_book
    from core.paths import resolve_paths
    from core.settings import Settings
    from core.store.library import Library

    paths = resolve_paths().ensure()
    library = Library.open(paths)
    ids = {}
    for key, name in BOOKS.items():
        book = import_book(library, FIXTURES / name).book
        library.set_read_to(book.id, book.page_count)
        ids[key] = book.id
    service = AgentService(library, paths, Settings(provider="passages"))
    for name, questions in (
        ("own set, written apart from the project's", QUESTIONS),
        ("held out: other books, never tuned on", HELD_OUT),
    ):
        first = whole = 0
        words: list[int] = []
        for key, question, phrase in questions:
            conv = service.create_conversation(ids[key])
            events = [e async for e in service.ask(conv.id, question)]
            end = events[-1]
            assert isinstance(end, RunFinished), end
            reply = end.result.answer
            head = reply.split(FOLD_LINE, 1)[0]
            hit = fold(phrase) in fold(head)
            first += hit
            whole += fold(phrase) in fold(reply)
            words.append(words_before_fold(reply))
            if misses and not hit:
                print(f"MISS {question!r} ({phrase!r}):\n{head}\n")
        n = len(questions)
        print(f"questions: {n} ({name})")
        print(f"  answer before the fold: {first}/{n}; anywhere in the reply: {whole}/{n}")
        print(
            f"  words before the fold: median {statistics.median(words):.0f}, most {max(words)}, "
            f"over 250: {sum(w > 250 for w in words)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main("--misses" in sys.argv)))
