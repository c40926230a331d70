"""Stop on the real runtime with sampling (temperature 0.7, random-weight tiny-qwen3.5).

Regression: a Stop pressed while the turn was still on its way to Python (the page waits
for queued settings first) was erased when the Python turn began, and the model had no
generation to cancel yet, so the turn ran on to maxTokens for up to maxSteps steps
(thousands of events after Stop). Every stopped turn must now end cancelled, and no
event may arrive after its final event."""

import asyncio
import json
from pathlib import Path

import pytest

from botpsy_agent.browser_session import create_session

PAGE = "/tests/pages/agent-host.html"

# Starts a turn, waits for `stopAfter` events (0: Stop right away), stops it, and
# reports what came before and after the final event.
STOP_TURN = """async ({text, stopAfter, settleMs, settings}) => {
  const {agent, events} = window.agentTest;
  if (settings) agent.setSettings(settings);  // queued: runTurn waits for it, as in the demo
  const first = events.length;
  const running = agent.runTurn(text);
  while (events.length - first < stopAfter) await new Promise((resolve) => setTimeout(resolve, 5));
  agent.cancel();
  const final = await running;
  const atFinal = events.length;
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  return {final, eventsInTurn: atFinal - first, lateEvents: events.slice(atFinal), stats: agent.lastStats};
}"""

MAX_TOKENS = 1024


@pytest.fixture(scope="module")
def sampled_agent_page(browser, open_guarded_page, agent_bundle, server, exported_model):
    exported_model("tiny-qwen3.5")
    context, page, guard = open_guarded_page(browser)
    page.set_default_timeout(300_000)
    page.goto(server + PAGE)
    page.evaluate("options => window.startAgent(options)", {
        "modelUrl": "/models/tiny-qwen3.5/", "storeName": "botpsy-test-cancel", "thinking": False,
        "settings": {"temperature": 0.7, "maxTokens": MAX_TOKENS, "maxSteps": 8}})
    yield page
    context.close()
    guard.assert_clean()


@pytest.mark.parametrize("stop_after", [0, 1, 4])
def test_a_stopped_sampled_turn_ends_cancelled_with_no_late_events(sampled_agent_page, stop_after):
    page = sampled_agent_page
    for number in range(3):
        turn = page.evaluate(STOP_TURN, {"text": f"Tell me a long story, part {number}", "stopAfter": stop_after,
                                         "settleMs": 500, "settings": {"temperature": 0.7}})
        print(f"\nstop after {stop_after} events, turn {number}: {turn['eventsInTurn']} events, "
              f"{turn['stats'] and turn['stats']['generatedTokens']} tokens generated")
        assert turn["final"]["type"] == "final" and turn["final"].get("cancelled") is True, turn["final"]
        assert turn["lateEvents"] == []
        assert turn["eventsInTurn"] < MAX_TOKENS, "the turn ran on after Stop"


def test_the_turn_after_a_stop_runs_normally(sampled_agent_page):
    page = sampled_agent_page
    page.evaluate(STOP_TURN, {"text": "Stop this one", "stopAfter": 0, "settleMs": 0, "settings": None})
    result = page.evaluate("""async () => {
      const {agent, events} = window.agentTest;
      agent.setSettings({maxTokens: 8, maxSteps: 1});
      const first = events.length;
      const final = await agent.runTurn("And now answer");
      agent.setSettings({maxTokens: %d, maxSteps: 8});
      return {final, events: events.slice(first).map((e) => e.type)};
    }""" % MAX_TOKENS)
    assert result["final"].get("cancelled") is None and result["final"]["steps"] == 1, result["final"]
    assert result["events"][-1] == "final" and len(result["events"]) > 1, result["events"]


# --- the same rule in the browser session, under CPython with a fake host --------------------

class ChattyHost:
    """A host whose model says `words` one at a time; records the prompts it was given."""

    def __init__(self, words=("one ", "two ", "three")):
        self.words, self.prompts, self.events = list(words), [], []

    def generate_start(self, prompt, options_json):
        self.prompts.append(prompt)
        self.pending = iter(self.words)
        return len(self.prompts)

    async def generate_next(self, handle):
        return next(self.pending, None)

    async def generate_close(self, handle):
        pass

    def emit(self, event_json):
        self.events.append(json.loads(event_json))


def chatty_session(host):
    manifest = {"tool_call_format": "qwen3_coder_xml", "chat_template_supports_tools": True}
    template = (Path(__file__).parent / "templates" / "qwen35_style.jinja").read_text()
    return create_session(host, json.dumps({"chat_template": template}), json.dumps(manifest), False)


def test_a_stop_seen_before_the_turn_began_is_kept():
    host = ChattyHost()
    session = chatty_session(host)
    session.begin_turn(stopped=True)
    final = json.loads(asyncio.run(session.run_turn("hello")))
    assert final == {"type": "final", "text": "", "steps": 0, "cancelled": True}
    assert host.prompts == []  # the model was never asked
    messages = session.agent.export_conversation()["messages"]
    assert [m["role"] for m in messages if not m.get("agent_note")] == ["user", "assistant"]  # beside the now line


def test_a_cancel_between_begin_and_run_counts_and_the_next_turn_runs():
    host = ChattyHost()
    session = chatty_session(host)
    session.begin_turn()
    session.cancel()  # arrives before run_turn's coroutine first runs
    assert json.loads(asyncio.run(session.run_turn("first")))["cancelled"] is True
    session.begin_turn()  # the next turn forgets the last Stop
    final = json.loads(asyncio.run(session.run_turn("second")))
    assert final["text"] == "one two three" and "cancelled" not in final
    assert len(host.prompts) == 1


def test_run_turn_without_begin_still_starts_fresh():
    session = chatty_session(ChattyHost())
    session.cancel()  # a Stop left over from an earlier turn
    final = json.loads(asyncio.run(session.run_turn("hi")))
    assert final["text"] == "one two three" and "cancelled" not in final
