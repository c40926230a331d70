"""What a person sees of an answer: Markdown (headings, lists, tables, links, code with a
Copy button, quotes, emphasis) rendered by markdown-it and cleaned by DOMPurify, on the app
page under its real Content-Security-Policy, through the chat view the app itself uses.

The model's text is attacker-written: raw HTML, script and event-handler tricks,
javascript:/data: links and images from other origins must all come out as inert text.
While an answer streams in, half-written syntax must never turn into markup that the next
token takes away again."""

import random
import re

import pytest
from playwright.sync_api import expect

# A rich answer, the kind a real model writes (ATX headings, tables with a delimiter row).
RICH_ANSWER = """# Plan for the trip

Here is **what to pack** and *why*, with `inline code`, ~~no~~ and a [map](https://maps.example.org/trip?day=1).

1. First item
2. Second item with **bold**
   - nested bullet
3. Third

| Item | Weight (kg) | Note |
|:-----|------:|:---:|
| Tent | 2.5 | *light* |
| Stove | 0.4 | `gas` |

> A quote with a [mail link](mailto:guide@example.org).

```python
def total(items):
    return sum(i.weight for i in items)  # `not code` [x](y) **not bold**
```

---

Numbers: 1.5 litres, 5 * 3 = 15, snake_case_name, ~/path, and a half-written ** that never closes.
Last line with https://example.org/page and **bold at the end**"""

SETUP = """async () => {
    const { ChatView } = await import('/web/ui/chat-view.js');
    window.markdown = await import('/web/ui/markdown.js');
    window.violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    window.chatView = new ChatView(document.getElementById('chat-log'));
    // Streams `pieces` through the app's own AssistantTurn; after each piece, the element
    // names in the answer, in document order. Returns those snapshots and the answer element.
    window.streamAnswer = (pieces, { finish = true } = {}) => {
        const turn = chatView.startAssistantTurn();
        const shapes = [];
        const answer = () => turn.element.querySelector('.answer');
        const shape = () => [...answer().querySelectorAll('*')].map((node) => node.nodeName.toLowerCase());
        for (const piece of pieces) { turn.appendText(piece); shapes.push(shape()); }
        if (finish) { turn.finish(); shapes.push(shape()); }
        window.lastTurn = turn;
        return shapes;
    };
    window.pwned = [];
}"""


@pytest.fixture(scope="module")
def app_page(browser, open_guarded_page, app_server):
    """The app page (no model: the renderer needs none) with the chat view driven from the test."""
    context, page, guard = open_guarded_page(browser, app_server, service_workers="block",
                                             viewport={"width": 1100, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(f"{app_server}/")
    page.evaluate(SETUP)
    page.guard = guard
    yield page
    context.close()
    guard.assert_clean()


@pytest.fixture(autouse=True)
def fresh_records(app_page):
    """Each test starts with no CSP violations and no payload run recorded."""
    app_page.evaluate("() => { window.violations = []; window.pwned = []; }")


def answer_of_last_turn(page):
    return page.locator(".message.assistant").last.locator(".answer")


def stream(page, pieces, finish=True):
    return page.evaluate("([pieces, finish]) => streamAnswer(pieces, {finish})", [pieces, finish])


def tokens(text):
    """Word, space and single-punctuation pieces: '**' and '```' arrive one character at a time."""
    return re.findall(r"\s+|\w+|[^\w\s]", text)


def test_an_answer_renders_headings_lists_tables_quotes_emphasis_and_code(app_page):
    page = app_page
    stream(page, [RICH_ANSWER])
    answer = answer_of_last_turn(page)
    assert answer.get_by_role("heading", level=1).inner_text() == "Plan for the trip"
    assert answer.locator("p strong").first.inner_text() == "what to pack"
    assert answer.locator("p em").first.inner_text() == "why"
    assert answer.locator("p > code").inner_text() == "inline code"
    assert answer.locator("p s").inner_text() == "no"
    assert answer.locator("ol > li").count() == 3
    assert answer.locator("ol > li ul > li").inner_text() == "nested bullet"
    table = answer.get_by_role("table")
    assert table.locator("th").all_inner_texts() == ["Item", "Weight (kg)", "Note"]
    assert table.locator("tbody tr").count() == 2
    assert table.locator("tbody td").nth(1).evaluate("(td) => getComputedStyle(td).textAlign") == "right"
    assert table.locator("tbody td em").inner_text() == "light"
    assert answer.locator("blockquote a").get_attribute("href") == "mailto:guide@example.org"
    code = answer.locator("pre.code-block code")
    assert code.get_attribute("class") == "language-python"
    assert code.inner_text() == ("def total(items):\n    return sum(i.weight for i in items)"
                                 "  # `not code` [x](y) **not bold**")
    assert answer.locator(".code-frame .code-language").inner_text() == "python"
    assert answer.locator("hr").count() == 1
    last = answer.locator("p").last
    assert last.locator("strong").inner_text() == "bold at the end"
    assert last.get_by_role("link").get_attribute("href") == "https://example.org/page"
    assert "5 * 3 = 15, snake_case_name, ~/path, and a half-written ** that never closes" in answer.inner_text()
    assert page.evaluate("window.violations") == []


def test_copy_button_copies_the_code_and_says_copied(app_page):
    page = app_page
    stream(page, ["Run this:\n\n```sh\nnpm ci --ignore-scripts\necho done\n```\n"])
    button = answer_of_last_turn(page).locator(".code-frame button")
    expect(button).to_have_accessible_name("Copy")
    button.click()
    expect(button).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == "npm ci --ignore-scripts\necho done"
    expect(button).to_have_text("Copy", timeout=5000)


def test_a_link_shows_where_it_goes_and_opens_a_new_tab_without_opener(app_page, app_server):
    page = app_page
    stream(page, [f"See [the manual]({app_server}/static/icons/botpsy.svg), "
                  "[https://bank.example](https://evil.example/login) and <https://plain.example/a>."])
    answer = answer_of_last_turn(page)
    manual = answer.get_by_role("link", name=re.compile("^the manual"))
    host = app_server.split("//")[1]
    assert manual.get_attribute("title") == f"{app_server}/static/icons/botpsy.svg"
    assert manual.locator(".link-target").inner_text() == host
    assert manual.get_attribute("target") == "_blank"
    assert set(manual.get_attribute("rel").split()) == {"noopener", "noreferrer"}
    # Text that names one site over a link to another: the real host is shown beside it.
    disguised = answer.get_by_role("link", name="https://bank.example")
    assert disguised.locator(".link-target").inner_text() == "evil.example"
    # A link whose text is its address needs no label.
    plain = answer.get_by_role("link", name="https://plain.example/a")
    assert plain.locator(".link-target").count() == 0 and plain.get_attribute("target") == "_blank"
    with page.context.expect_page() as opened:
        manual.click()
    tab = opened.value
    tab.wait_for_load_state()
    assert tab.url == f"{app_server}/static/icons/botpsy.svg"
    assert tab.evaluate("window.opener") is None
    tab.close()


@pytest.mark.parametrize("source", [
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](&#106;avascript:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click](vbscript:msgbox(1))",
    "[click](file:///etc/passwd)",
    "[click](/models/index.json)",
    "[click](#top)",
    "<javascript:alert(1)>",
])
def test_only_http_and_mailto_targets_become_links(app_page, source):
    page = app_page
    stream(page, [f"Try {source} now."])
    answer = answer_of_last_turn(page)
    assert answer.locator("a").count() == 0
    assert "click" in answer.inner_text() or "javascript" in answer.inner_text()


def test_markdown_images_become_links_and_nothing_is_fetched(app_page, app_server):
    page = app_page
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    stream(page, ["A cat: ![a cat](https://images.example/cat.png?leak=notes) and "
                  f"![logo]({app_server}/static/icons/botpsy.svg?from=answer) and ![x](data:image/png;base64,AAAA)"])
    answer = answer_of_last_turn(page)
    page.wait_for_timeout(300)
    assert answer.locator("img, svg, picture, object, embed").count() == 0
    cat = answer.get_by_role("link", name=re.compile("^Image: a cat"))
    assert cat.get_attribute("href") == "https://images.example/cat.png?leak=notes"
    assert cat.locator(".link-target").inner_text() == "images.example"
    assert "![x](data:image/png;base64,AAAA)" in answer.inner_text()
    assert not [url for url in requested if "cat.png" in url or "from=answer" in url], requested


# Each payload sets window.pwned (or calls it) if anything in it ever runs.
XSS_CORPUS = [
    "<script>window.pwned.push('script')</script>",
    "<img src=x onerror=\"window.pwned.push('img')\">",
    "<svg onload=\"window.pwned.push('svg')\"><script>window.pwned.push('svg-script')</script></svg>",
    "<math><mtext><table><mglyph><style><img src=x onerror=\"window.pwned.push('math')\"></style></mglyph></table></mtext></math>",
    "<iframe srcdoc=\"<script>parent.pwned.push('iframe')</script>\"></iframe>",
    "<a href=\"javascript:window.pwned.push('a')\">click</a>",
    "<details open ontoggle=\"window.pwned.push('details')\">x</details>",
    "<style>body{background:url(https://evil.example/bg)}</style>",
    "<form action=\"https://evil.example\"><button>go</button></form>",
    "[x](javascript:window.pwned.push('md-link'))",
    "[x](javascript&#58;window.pwned.push('entity-link'))",
    "![x](x\" onerror=\"window.pwned.push('md-img'))",
    "[x](https://ok.example \"title\\\" onmouseover=\\\"window.pwned.push('title')\")",
    "```\"><img src=x onerror=\"window.pwned.push('fence-info')\">\ncode\n```",
    "&lt;script&gt;window.pwned.push('entities')&lt;/script&gt; &#x3C;img src=x onerror=alert(1)&#x3E;",
    "<noscript><p title=\"</noscript><img src=x onerror=\"window.pwned.push('noscript')\">\"></noscript>",
    "| a |\n|---|\n| <img src=x onerror=\"window.pwned.push('cell')\"> |",
    "`<img src=x onerror=\"window.pwned.push('code')\">`",
]
INERT_CHECK = """(answer) => {
    const bad = [];
    for (const node of answer.querySelectorAll('*')) {
        const name = node.nodeName.toLowerCase();
        if (['script', 'img', 'svg', 'math', 'iframe', 'style', 'form', 'details', 'object', 'embed', 'noscript',
             'input', 'textarea', 'link', 'meta', 'base'].includes(name)) bad.push(`element ${name}`);
        for (const attribute of node.attributes) {
            if (/^on|^style$|^src|^srcdoc$|^action$/i.test(attribute.name)) bad.push(`${name}[${attribute.name}]`);
            if (attribute.name === 'href' && !/^(https?:\\/\\/|mailto:)/i.test(attribute.value)) bad.push(`href ${attribute.value}`);
        }
    }
    return bad;
}"""


@pytest.mark.parametrize("payload", XSS_CORPUS)
def test_raw_html_and_script_tricks_render_as_inert_text(app_page, payload):
    page = app_page
    for pieces in ([payload], tokens(payload)):  # at once, and as it would stream
        stream(page, pieces)
        answer = answer_of_last_turn(page)
        assert answer.evaluate(INERT_CHECK) == []
    page.wait_for_timeout(100)  # an onerror or onload would have fired by now
    assert page.evaluate("window.pwned") == []
    assert page.evaluate("window.violations") == []  # nothing even reached the CSP
    if payload.startswith("<script>"):
        assert "<script>window.pwned.push('script')</script>" in answer.inner_text()  # shown, as text


def test_the_sanitizer_alone_refuses_html_a_markdown_parser_bug_would_let_through(app_page):
    """The second line of defence: DOMPurify's allow-list, given hostile HTML directly (as if
    markdown-it had let it through). Its parse reports the handlers to the CSP (blocked, not
    run); on the real path markdown-it escapes them first and no report happens (above)."""
    page = app_page
    extra = ['<p style="color:red" class="notice error" data-x="1" aria-label="fake">styled</p>',
             '<a href="https://ok.example" onclick="pwned.push(1)" class="md-image" target="_top">ok</a>',
             '<a href="javascript:pwned.push(2)">js</a>', '<pre><code class="language-py onerror">x</code></pre>',
             '<table><tr><td class="align-right" style="x">cell</td></tr></table>',
             '<input value="x">', '<video src="x"></video>', '<p><img src="https://images.example/x.png"></p>']
    results = page.evaluate("""(pieces) => pieces.map((html) => {
        const box = document.createElement('div');
        for (const {node} of markdown.sanitizedBlocks(html)) box.append(node);
        return box.innerHTML;
    })""", XSS_CORPUS + extra)
    page.wait_for_timeout(100)
    assert page.evaluate("window.pwned") == []
    shown = "".join(results)
    for forbidden in ("<script", "<img", "<svg", "<math", "<iframe", "<style", "<form", "<input", "<video",
                      "onerror", "onclick", "onload", "ontoggle", "style=", "javascript:", "data-x", "aria-label",
                      "target=", "notice", "language-py onerror", "srcdoc"):
        assert forbidden not in shown, (forbidden, results)
    by_piece = dict(zip(extra, results[len(XSS_CORPUS):]))
    assert by_piece[extra[0]] == "<p>styled</p>"
    assert by_piece[extra[1]] == '<a href="https://ok.example" class="md-image">ok</a>'
    assert by_piece[extra[2]] == "<a>js</a>"
    assert by_piece[extra[3]] == "<pre><code>x</code></pre>"
    assert 'class="align-right"' in by_piece[extra[4]]


# Streams each text character by character into a MarkdownView; returns the texts where an
# element count dropped between two renders, or where the end differs from a one-shot render.
FLICKER_CHECK = """async (texts) => {
    const { MarkdownView } = await import('/web/ui/streaming-markdown.js');
    const failures = [];
    for (const text of texts) {
        const box = document.createElement('div');
        const view = new MarkdownView(box);
        const counts = () => {
            const found = {};
            for (const node of box.querySelectorAll('*')) found[node.nodeName] = (found[node.nodeName] || 0) + 1;
            return found;
        };
        let before = {};
        for (let end = 1; end <= text.length + 1; end += 1) {
            if (end <= text.length) view.update(text.slice(0, end)); else view.finish();
            const now = counts();
            const dropped = Object.keys(before).filter((name) => (now[name] || 0) < before[name]);
            if (dropped.length) { failures.push({ text: text.slice(0, end), dropped }); break; }
            before = now;
        }
        const once = document.createElement('div');
        once.append(markdown.renderMarkdown(text));
        if (once.innerHTML !== box.innerHTML) failures.push({ text, differs: true });
    }
    return failures;
}"""


def element_counts(shape):
    counts = {}
    for name in shape:
        counts[name] = counts.get(name, 0) + 1
    return counts


def assert_no_markup_comes_and_goes(shapes):
    """Across successive renders, no element type disappears once shown, and no count drops."""
    for before, after, index in zip(shapes, shapes[1:], range(1, len(shapes))):
        was, now = element_counts(before), element_counts(after)
        dropped = {name: (count, now.get(name, 0)) for name, count in was.items() if now.get(name, 0) < count}
        assert not dropped, f"render {index} took away {dropped}"


def test_streaming_never_shows_markup_that_the_next_token_takes_away(app_page):
    page = app_page
    shapes = stream(page, tokens(RICH_ANSWER))  # through the app's own chat view
    assert_no_markup_comes_and_goes(shapes)
    streamed = answer_of_last_turn(page).inner_html()
    stream(page, [RICH_ANSWER])
    assert streamed == answer_of_last_turn(page).inner_html(), "streaming ends where a one-shot render does"
    assert page.evaluate("window.violations") == []


def test_streaming_character_by_character_never_takes_markup_away(app_page):
    assert app_page.evaluate(FLICKER_CHECK, [RICH_ANSWER]) == []


@pytest.mark.parametrize("text, held_back", [
    ("Some text\n\n```python\nprint('x')", None),  # an unclosed fence is code, and stays code
    ("Some **bold", "strong"),
    ("Use `npm ci", "code"),
    ("Read [the docs](htt", "a"),
    ("Here *it", "em"),
    ("Then\n\n1.", "ol"),
    ("Then\n\n#", "h1"),
    ("Then\n\n-", "ul"),
    ("Title\n-", "h2"),
    ("| a | b |\n|---|", "table"),
    ("| a | b |\n|---|---|\n| 1 | 2 |\n| 3", None),
])
def test_half_written_syntax_stays_text_until_it_is_complete(app_page, text, held_back):
    page = app_page
    shapes = stream(page, tokens(text), finish=False)
    if held_back:
        assert held_back not in shapes[-1], f"{held_back} shown before its syntax was complete: {shapes[-1]}"
    assert_no_markup_comes_and_goes(shapes)
    answer = answer_of_last_turn(page)
    # Nothing the model wrote is hidden: the part not yet rendered is shown as it was written.
    shown = answer.evaluate("(node) => node.textContent")
    for word in re.findall(r"\w+", text):
        assert word in shown
    if text.endswith("print('x')"):
        assert answer.locator("pre code").inner_text() == "print('x')"
    if text.endswith("| 3"):
        assert answer.locator("tbody tr").count() == 1


@pytest.mark.parametrize("text", [
    "Intro line\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter.",
    "- one\n- two\n\n- three, now a loose list\n",
    "1. a\n\n   ```js\n   let x = [1, 2];\n   ```\n2. b",
    "> quote line one\ncontinued lazily\n\n> second",
    "Text with a literal [1] and `code` then **bold** and more words here.",
])
def test_other_shapes_stream_without_flicker_and_end_as_a_one_shot_render(app_page, text):
    page = app_page
    shapes = stream(page, list(text))
    assert_no_markup_comes_and_goes(shapes)
    streamed = answer_of_last_turn(page).inner_html()
    stream(page, [text])
    assert streamed == answer_of_last_turn(page).inner_html()


# What random answers are made of: inline pieces (closed and unclosed syntax, literal
# brackets and stars) and whole blocks. Left out: a line of "-" or "=" under a paragraph
# (a setext heading) and a table without a leading "|", the two shapes that only the line
# after them decides (the known limits in web/ui/streaming-markdown.js).
FUZZ_PIECES = ["**bold**", "*em*", "_u_", "`code`", "[link](https://a.example/x)", "https://b.example/y", "~~s~~",
               "snake_case", "5 * 3", "[1]", "a | b", "# Head", "## Sub", "- item", "1. one", "2. two", "> quote",
               "```py", "x = [1, 2]", "word", "more words here", "![img](https://c.example/i.png)", "<b>html</b>",
               "&amp;", "\\*esc\\*", "**unclosed", "`open", "   - nested", "text:", "1.5 litres", "***", "__x__"]
FUZZ_BLOCKS = ["| a | b |\n|---|---|\n| 1 | `2` |", "```js\nlet x = [1];\n```", "1. one\n2. **two**", "> quote\n> more"]
def random_answers(seed, count):
    rng = random.Random(seed)
    answers = []
    for _ in range(count):
        lines = []
        for _ in range(rng.randint(2, 8)):
            if rng.random() < 0.15:
                lines += ["", rng.choice(FUZZ_BLOCKS), ""]
            else:
                lines.append(" ".join(rng.choice(FUZZ_PIECES) for _ in range(rng.randint(1, 4))))
            if rng.random() < 0.3:
                lines.append("")
        answers.append("\n".join(lines))
    return answers


def test_random_answers_stream_character_by_character_without_flicker(app_page):
    failures = app_page.evaluate(FLICKER_CHECK, random_answers(seed=26, count=40))
    assert failures == [], failures[:3]


def test_finished_blocks_keep_their_nodes_while_the_answer_goes_on(app_page):
    """A person can press Copy on a finished code block (or select text) while the rest streams."""
    page = app_page
    page.evaluate("""() => {
        const turn = chatView.startAssistantTurn();
        turn.appendText("First paragraph.\\n\\n```js\\nlet a = 1;\\n```\\n\\nThen ");
        window.keptTurn = turn;
        window.keptNodes = [...turn.element.querySelectorAll('.answer p, .answer .code-frame, .answer button')];
    }""")
    page.locator(".message.assistant").last.get_by_role("button", name="Copy").click()
    expect(page.locator(".message.assistant").last.get_by_role("button", name="Copied")).to_be_visible()
    still_there = page.evaluate("""() => {
        for (const word of ['more ', 'words ', 'arrive ', '**here**.']) keptTurn.appendText(word);
        return keptNodes.map((node) => node.isConnected);
    }""")
    assert still_there == [True, True, True]
    assert page.locator(".message.assistant").last.get_by_role("button", name="Copied").count() == 1
