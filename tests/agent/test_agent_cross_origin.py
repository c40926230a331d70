"""The agent host used from a page on another origin (the embeddable widget's case):
its worker, Pyodide and the agent bundle all come from the serving origin."""

TEMPLATE_URL = "/tests/agent/templates/qwen35_style.jinja"


def test_agent_runs_a_tool_turn_from_another_origin(guarded_page, server, foreign_server, agent_bundle):
    guarded_page.set_default_timeout(120_000)
    guarded_page.goto(f"{foreign_server}/tests/pages/agent-cross-origin.html?host={server}")
    outputs = ["<tool_call>\n<function=calculator>\n<parameter=expression>\n6*7\n</parameter>\n"
               "</function>\n</tool_call>", "It is 42."]
    result = guarded_page.evaluate("options => window.runCrossOrigin(options)", {
        "outputs": outputs, "templateUrl": TEMPLATE_URL, "storeName": "botpsy-test-cross-origin"})
    assert result["origin"] == foreign_server
    assert result["final"]["text"] == "It is 42."
    [tool_result] = [event for event in result["events"] if event["type"] == "tool_result"]
    assert tool_result["name"] == "calculator" and "42" in tool_result["result"]
