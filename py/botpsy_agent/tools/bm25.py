"""Okapi BM25 ranking over small in-memory collections (notes, bundled documents)."""

from __future__ import annotations

import math
import re
from collections import Counter

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
STOPWORDS = frozenset(
    "a an and are as at be by can do does for from has have how i in is it its me my of on or "
    "that the their then there these this to was what when where which who why will with you your".split())


def _stem(word: str) -> str:
    """A deliberately light stemmer: plurals and a few suffixes, so "notes" finds "note"."""
    for suffix, replacement in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + replacement
    return word


def tokenize(text: str) -> list[str]:
    """Lower-cased, lightly stemmed words without stopwords."""
    return [_stem(word) for word in _WORD.findall(text.lower()) if word not in STOPWORDS]


class BM25:
    """Index documents (lists of tokens) once; score queries against all of them."""

    def __init__(self, documents: list[list[str]], k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = k1, b
        self.term_counts = [Counter(document) for document in documents]
        self.lengths = [len(document) for document in documents]
        self.average_length = (sum(self.lengths) / len(documents)) if documents else 0.0
        frequencies = Counter(term for counts in self.term_counts for term in counts)
        total = len(documents)
        self.idf = {term: math.log(1 + (total - count + 0.5) / (count + 0.5))
                    for term, count in frequencies.items()}

    def scores(self, query: list[str]) -> list[float]:
        """One score per document; 0 for documents sharing no term with the query."""
        results = []
        for counts, length in zip(self.term_counts, self.lengths):
            score = 0.0
            norm = self.k1 * (1 - self.b + self.b * length / self.average_length) if self.average_length else self.k1
            for term in set(query):
                frequency = counts.get(term, 0)
                if frequency:
                    score += self.idf[term] * frequency * (self.k1 + 1) / (frequency + norm)
            results.append(score)
        return results

    def top(self, query: list[str], limit: int) -> list[tuple[int, float]]:
        """(document index, score) of the best matches, best first; only positive scores."""
        ranked = sorted(((score, -index) for index, score in enumerate(self.scores(query)) if score > 0),
                        reverse=True)
        return [(-negative_index, score) for score, negative_index in ranked[:limit]]


def snippet(text: str, query: list[str], width: int = 240) -> str:
    """The part of `text` around the first query word, about `width` characters."""
    flat = " ".join(text.split())
    positions = [match.start() for match in _WORD.finditer(flat.lower())
                 if _stem(match.group()) in set(query)]
    if len(flat) <= width:
        return flat
    start = max(0, (positions[0] if positions else 0) - width // 3)
    if start:
        start = flat.find(" ", start) + 1 or start
    piece = flat[start:start + width].rsplit(" ", 1)[0]
    return ("…" if start else "") + piece + ("…" if start + len(piece) < len(flat) else "")
