"""fetch_url refuses until the user enables network access; then it returns page text."""

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools.web_fetch import fetch_url, html_to_text

from .conftest import call, make_context

PAGE = ("<!DOCTYPE html><html><head><title>T</title><style>p{}</style><script>steal()</script></head>"
        "<body><h1>Weather</h1><p>Sunny &amp; warm</p><ul><li>Mon</li><li>Tue</li></ul></body></html>")


def recording_fetch(pages):
    requested = []

    async def fetch(url):
        requested.append(url)
        return pages[url]
    return fetch, requested


def test_refuses_while_network_access_is_off():
    fetch, requested = recording_fetch({"https://example.org/": PAGE})
    ctx = make_context(allow_network=False, fetch=fetch)
    with pytest.raises(ToolError, match="network access is off: the user must enable fetch_url"):
        call(fetch_url, ctx, url="https://example.org/")
    assert requested == []


def test_returns_visible_text_when_allowed():
    fetch, requested = recording_fetch({"https://example.org/": PAGE, "https://example.org/a.txt": "plain text"})
    ctx = make_context(allow_network=True, fetch=fetch)
    answer = call(fetch_url, ctx, url=" https://example.org/ ")
    assert answer == {"url": "https://example.org/", "text": "Weather\nSunny & warm\nMon\nTue"}
    assert call(fetch_url, ctx, url="https://example.org/a.txt")["text"] == "plain text"
    assert requested == ["https://example.org/", "https://example.org/a.txt"]


def test_long_pages_are_truncated_with_a_note():
    fetch, _ = recording_fetch({"https://example.org/big": "x" * 30_000})
    answer = call(fetch_url, make_context(allow_network=True, fetch=fetch), url="https://example.org/big")
    assert len(answer["text"]) == 20_000 and "30000" in answer["truncated"]


@pytest.mark.parametrize("url, message", [
    ("file:///etc/passwd", "only http:// and https://"), ("javascript:alert(1)", "only http"),
    ("", "URL is empty"), ("https://" + "a" * 2001, "longer than"),
])
def test_bad_urls_are_refused_before_anything_else(url, message):
    fetch, requested = recording_fetch({})
    with pytest.raises(ToolError, match=message):
        call(fetch_url, make_context(allow_network=True, fetch=fetch), url=url)
    assert requested == []


def test_fetch_failures_become_tool_errors():
    async def failing(url):
        raise OSError("connection refused")
    with pytest.raises(ToolError, match="fetching https://example.org/ failed: connection refused"):
        call(fetch_url, make_context(allow_network=True, fetch=failing), url="https://example.org/")


def test_is_a_side_effect_with_untrusted_output():
    assert fetch_url.side_effects and fetch_url.untrusted_output


def test_html_to_text_skips_scripts_and_styles():
    assert "steal" not in html_to_text(PAGE) and "p{}" not in html_to_text(PAGE)
