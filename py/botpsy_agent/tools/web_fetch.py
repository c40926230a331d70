"""fetch_url: off unless the user allowed network access; every call is a side effect
(the user confirms it) and its output is untrusted (a third party wrote it).

In the browser, ctx.fetch does not fetch from the agent worker, whose policy allows our own
origin only: it asks the page, which fetches only a URL the person approved in its dialog, in a
frame allowed to reach that URL's origin alone (web/agent/confirmed-fetch.js). So even code that
took over this worker cannot send anything elsewhere without a visible yes."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlsplit

from botpsy_agent.tooling import ToolContext, ToolError, tool

MAX_URL_CHARS = 2000
MAX_TEXT_CHARS = 20_000
_SKIPPED_TAGS = {"script", "style", "noscript", "template", "svg", "head"}
_BLOCK_TAGS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "pre", "hr"}


class _TextExtractor(HTMLParser):
    """Visible text of an HTML page, one block per line."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in _SKIPPED_TAGS:
            self.skipping += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in _SKIPPED_TAGS and self.skipping:
            self.skipping -= 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    extractor = _TextExtractor()
    extractor.feed(html)
    extractor.close()
    lines = (" ".join(line.split()) for line in "".join(extractor.parts).splitlines())
    return "\n".join(line for line in lines if line)


def looks_like_html(text: str) -> bool:
    head = text[:1000].lstrip().lower()
    return head.startswith(("<!doctype html", "<html")) or "<body" in head or "<p>" in head


def check_url(url: str) -> str:
    cleaned = url.strip() if isinstance(url, str) else ""
    if not cleaned:
        raise ToolError("the URL is empty")
    if len(cleaned) > MAX_URL_CHARS:
        raise ToolError(f"the URL is longer than {MAX_URL_CHARS} characters")
    parts = urlsplit(cleaned)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ToolError(f"only http:// and https:// URLs can be fetched, got {cleaned!r}")
    return cleaned


@tool(side_effects=True, untrusted_output=True)
async def fetch_url(ctx: ToolContext, url: str) -> dict:
    """Fetch a web page and return its text. Works only if the user enabled network access.

    Args:
        url: The http:// or https:// address to fetch.
    """
    address = check_url(url)
    if not ctx.settings.allow_network:
        raise ToolError("network access is off: the user must enable fetch_url (network access) "
                        "in the settings first")
    try:
        body = await ctx.fetch(address)
    except ToolError:
        raise
    except Exception as error:
        raise ToolError(f"fetching {address} failed: {error}") from None
    text = html_to_text(body) if looks_like_html(body) else body
    answer = {"url": address, "text": text[:MAX_TEXT_CHARS]}
    if len(text) > MAX_TEXT_CHARS:
        answer["truncated"] = f"showing {MAX_TEXT_CHARS} of {len(text)} characters"
    return answer
