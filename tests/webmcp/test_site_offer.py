"""`botpsy-web build-site --webmcp`: a site owner turns the WebMCP offer on for the visitors of their
built site (the page's checkbox then starts checked: tests/webmcp/test_offer_to_browser_agents.py);
without the flag the built page is the repository's, byte for byte."""

import json

import pytest

from botpsy_web import REPO_ROOT
from botpsy_web.cli import main
from botpsy_web.site.build import WEBMCP_OFFER_TAG, SiteBuildError, with_webmcp_offer


def test_build_site_with_webmcp_marks_the_page_and_without_it_leaves_it_alone(tmp_path, agent_bundle):
    assert main(["build-site", str(tmp_path / "offer"), "--webmcp"]) == 0
    page = (tmp_path / "offer" / "site" / "index.html").read_bytes()
    assert page.count(WEBMCP_OFFER_TAG) == 1 and page.index(WEBMCP_OFFER_TAG) < page.index(b"<title>")
    assert page.replace(b"\n  " + WEBMCP_OFFER_TAG, b"") == (REPO_ROOT / "index.html").read_bytes()
    assert json.loads((tmp_path / "offer" / "build.json").read_text())["offer_webmcp"] is True

    assert main(["build-site", str(tmp_path / "plain")]) == 0
    assert (tmp_path / "plain" / "site" / "index.html").read_bytes() == (REPO_ROOT / "index.html").read_bytes()


def test_a_page_without_one_charset_tag_is_refused_by_name():
    with pytest.raises(SiteBuildError, match="meta charset"):
        with_webmcp_offer(b"<html><head><title>x</title></head></html>")
