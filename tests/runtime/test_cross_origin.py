"""The runtime embedded from another origin (the widget's case): a page on origin B starts the
model worker from a blob module that imports web/runtime from origin A, and generates."""

EMBEDDED_RUN = """
async ({runtimeOrigin, folderUrl}) => {
  const {ModelClient} = await import(runtimeOrigin + "/web/runtime/model-client.js");
  const source = `import ${JSON.stringify(runtimeOrigin + "/web/runtime/model-worker.js")};`;
  const workerUrl = URL.createObjectURL(new Blob([source], {type: "text/javascript"}));
  const client = new ModelClient({workerUrl});
  try {
    const info = await client.load(folderUrl, {backend: "wasm", dtype: "fp32"});
    const tokens = [];
    for await (const chunk of client.generate("Hello there", {maxTokens: 3, stopOnEos: false})) tokens.push(chunk.tokenId);
    return {pageOrigin: location.origin, isolated: crossOriginIsolated, threads: info.threads, tokens};
  } finally {
    client.terminate();
  }
}
"""


def test_the_runtime_works_from_a_page_on_another_origin(browser, open_guarded_page, server, foreign_server,
                                                         exported_model):
    folder = exported_model("tiny-qwen3.5")
    context, page, guard = open_guarded_page(browser, foreign_server)
    runtime_requests = []
    context.on("request", lambda request: runtime_requests.append(request.url)
               if "/node_modules/" in request.url or "/web/runtime/" in request.url else None)
    try:
        page.set_default_timeout(300_000)
        page.goto(f"{foreign_server}/tests/pages/runtime-host.html")
        result = page.evaluate(EMBEDDED_RUN, {"runtimeOrigin": server, "folderUrl": f"{server}/models/{folder.name}/"})
    finally:
        context.close()
    guard.assert_clean()
    assert result["pageOrigin"] == foreign_server
    assert result["isolated"] is True
    assert result["threads"] == 2
    assert len(result["tokens"]) == 3
    # everything but the host page itself comes from the runtime's origin (the host has none of it)
    loaded_from_host = [url for url in runtime_requests
                        if url.startswith(foreign_server)]
    assert not loaded_from_host
