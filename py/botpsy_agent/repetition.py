"""A model stuck writing the same piece again and again, seen while it writes.

Small models fall into loops that only the token limit ends: Qwen2.5-Coder-0.5B wrote a note's
text as "Ravi agreed to agree to agree to agree ..." and a run of the same two calls line after
line, 1,024 tokens each, about two minutes of a person's wait for nothing (the task suite's
records, bench/tasks-done.md). The guard watches the end of what the model wrote so far; once it
is one piece repeated over a long enough span, the agent stops the generation.

Only a long span counts (MIN_SPAN characters, and at least MIN_COPIES copies of a longer
piece), so a short run that a reply may mean ("ha ha ha", a rule of a few dozen dashes, a table's
`|---|`) goes on.
"""

from __future__ import annotations

from dataclasses import dataclass

# A loop's piece is at most this long (two call lines of a Hermes reply are ~150 characters).
MAX_PIECE = 400
# The repeated span (the piece's copies after the first) is at least this many characters...
MIN_SPAN = 240
# ...and holds at least this many copies of the piece in all.
MIN_COPIES = 4
WINDOW = MAX_PIECE * MIN_COPIES + 1


@dataclass(frozen=True)
class Loop:
    """The piece the text ends repeating, and how many whole copies of it end the text."""

    piece: str
    copies: int

    def natural_start(self) -> int:
        """Where in the piece a line, else a sentence, else a word starts (0 when none does): the
        text's end cut the piece anywhere ("ree to ag"), a person reads it from there ("to agree")."""
        size = len(self.piece)
        around = self.piece * 3  # the middle copy, with the copies before and after it
        for start_after in ("\n", ". ", "! ", "? ", " "):
            for index in range(size, 2 * size):
                if around[index - len(start_after):index] == start_after and not around[index].isspace():
                    return index - size
        return 0

    def describe(self, limit: int = 40) -> str:
        """The piece from its natural start, whitespace made single, quoted, shortened."""
        start = self.natural_start()
        text = " ".join((self.piece[start:] + self.piece[:start]).split())
        if not text:
            return "blank space"
        return '"' + (text if len(text) <= limit else text[:limit - 1] + "…") + '"'


def loop_at_end(text: str) -> Loop | None:
    """The loop `text` ends in, or None. The shortest piece is reported ("ab" rather than "abab")."""
    tail = text[-WINDOW:]
    last = len(tail) - 1
    for size in range(1, min(MAX_PIECE, len(tail) // MIN_COPIES) + 1):
        if tail[last] != tail[last - size]:
            continue
        span = max(MIN_SPAN, size * (MIN_COPIES - 1))
        if span + size > len(tail):
            continue
        if tail[-span:] == tail[-span - size:-size]:
            piece = tail[-size:]
            copies = 1
            while copies * size + size <= len(tail) and tail[-(copies + 1) * size:-copies * size] == piece:
                copies += 1
            return Loop(piece, copies)
    return None


class RepetitionGuard:
    """Fed a generation's chunks in order; says when the text so far ends in a loop. It keeps only
    the window it needs, so each chunk costs the same however long the generation runs."""

    def __init__(self):
        self.tail = ""
        self.loop: Loop | None = None

    def feed(self, chunk: str) -> bool:
        """True once the text fed so far ends in a loop (the generation should stop)."""
        if self.loop is None and chunk:
            self.tail = (self.tail + chunk)[-WINDOW:]
            self.loop = loop_at_end(self.tail)
        return self.loop is not None


def before_the_loop(text: str, loop: Loop) -> str:
    """`text` up to the end of the loop's first whole copy, read from its natural start ("Hello!
    Hello again. " of "Hello! Hello again. Hello again. Hel")."""
    size = len(loop.piece)
    if not text.endswith(loop.piece):
        return text
    start = len(text) - size
    while start > 0 and text[start - 1] == text[start - 1 + size]:
        start -= 1  # the text repeats with the loop's period from `start` on
    first = start + (loop.natural_start() - (start - (len(text) - size))) % size
    return text[:first + size] if first + size <= len(text) else text[:start + size]
