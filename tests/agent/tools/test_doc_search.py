"""search_docs over the bundled help, and the BM25 ranking under it."""

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools.bm25 import BM25, snippet, tokenize
from botpsy_agent.tools.doc_search import bundled_passages, search_docs, split_passages

from .conftest import call


def test_the_collection_is_bundled_and_split_into_passages():
    passages = bundled_passages()
    documents = {passage.document for passage in passages}
    assert len(documents) >= 15
    assert all(passage.text and passage.title for passage in passages)


@pytest.mark.parametrize("query, document", [
    ("export calendar ics file", "calendar"),
    ("is my data uploaded to a server", "privacy"),
    ("why must I approve actions", "confirmations"),
    ("convert gallons imperial", "unit-conversion"),
    ("reminder due time", "todos-and-reminders"),
    ("which python modules can be imported", "run-python"),
    ("turn on internet access fetch", "network-access"),
    ("webgpu unavailable slow", "troubleshooting"),
])
def test_questions_find_the_right_document(ctx, query, document):
    results = call(search_docs, ctx, query=query)
    assert document in [result["document"] for result in results[:2]]
    assert results == sorted(results, key=lambda result: -result["score"])


def test_results_carry_titles_sections_and_text(ctx):
    top = call(search_docs, ctx, query="free slots meeting", limit=1)[0]
    assert (top["document"], top["section"]) == ("calendar", "Finding free time")
    assert "working hours" in top["text"]


def test_unknown_words_find_nothing_and_empty_queries_are_refused(ctx):
    assert call(search_docs, ctx, query="xylophone zebra") == []
    with pytest.raises(ToolError, match="search query is empty"):
        call(search_docs, ctx, query=" ")
    assert search_docs.untrusted_output and not search_docs.side_effects


def test_split_passages_needs_a_title():
    assert [p.section for p in split_passages("d", "# T\nintro\n## A\na text\n## B\nb text")] == ["", "A", "B"]
    with pytest.raises(ValueError, match="must start with a '# ' title"):
        split_passages("d", "no title")


def test_bm25_prefers_rare_terms_and_shorter_documents():
    documents = [tokenize(text) for text in (
        "the cat sat on the mat", "a cat and a dog and a bird and a fish and a horse", "dogs bark loudly")]
    index = BM25(documents)
    assert [i for i, _ in index.top(tokenize("cat"), 5)] == [0, 1]
    assert [i for i, _ in index.top(tokenize("dog"), 5)] == [2, 1]    # "dogs" stems to "dog"
    assert index.top(tokenize("elephant"), 5) == []


def test_snippet_centres_on_the_match():
    text = "start " + "filler " * 100 + "needle here " + "tail " * 100
    piece = snippet(text, tokenize("needle"), width=80)
    assert "needle" in piece and piece.startswith("…") and piece.endswith("…")
