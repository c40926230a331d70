"""A generation that keeps writing the same piece is stopped there (py/botpsy_agent/repetition.py):
the loops below are the real 0.5B's, from the task suite's records (bench/tasks-done.md)."""

import asyncio

from botpsy_agent.agent import STUCK_REPEATING, Agent, AgentOptions
from botpsy_agent.repetition import MIN_SPAN, RepetitionGuard, before_the_loop, loop_at_end

from .conftest import xml_call
from .test_loop import QWEN_FORMAT, note_add, note_list, run


class LoopingModel:
    """Writes `opening`, then `piece` until it is closed (or `limit` copies), chunk by chunk;
    counts the chunks it was asked for and whether its stream was closed."""

    def __init__(self, outputs, limit=100_000):
        self.outputs = list(outputs)  # (opening, piece) per generation; piece "" for a plain output
        self.limit = limit
        self.chunks = 0
        self.closed = 0
        self.prompts = []

    async def generate(self, prompt, options=None):
        opening, piece = self.outputs[len(self.prompts)]
        self.prompts.append(prompt)
        try:
            for chunk in [opening] + [piece] * (self.limit if piece else 0):
                self.chunks += 1
                yield chunk
        finally:
            self.closed += 1


def agent_with(model, **options):
    agent = Agent(model=model, chat_format=QWEN_FORMAT, options=AgentOptions(now_line=False, **options))
    for each in (note_add, note_list):
        agent.add_tool(each)
    return agent


def test_the_loops_the_0_5b_wrote_are_seen_and_a_short_repeat_is_not():
    ravi = '{"name": "notes_create", "arguments": {"text": "Ravi agreed' + " to agree" * 40
    loop = loop_at_end(ravi)
    assert loop.describe() == '"to agree"' and loop.copies == 40
    calls = ('{"name": "notes_list", "arguments": {"status": "open"}}\n'
             '{"name": "notes_search", "arguments": {"query": "physio", "name": "e2"}}\n')
    assert loop_at_end('{"name": "notes_delete_event", "arguments": {"event_id": "e2"}}\n' + calls * 4).copies == 4
    assert loop_at_end("calculator(1.5 * 2.5" + " + 1.5 * 2.5" * 30).describe() == '"+ 1.5 * 2.5"'
    # what a reply may mean: a short run, a numbered list, a table, a block of different lines
    assert loop_at_end("ha " * 30) is None
    assert loop_at_end("".join(f"{n}. Select the item number {n}.\n" for n in range(1, 60))) is None
    assert loop_at_end("| a | b |\n|---|---|\n" + "".join(f"| {n} | {n * n} |\n" for n in range(40))) is None
    assert loop_at_end("x" * (MIN_SPAN - 1)) is None and loop_at_end("x" * (MIN_SPAN + 1)).piece == "x"


def test_the_guard_keeps_a_window_and_answers_the_same_whatever_the_chunks():
    text = "Sure. " + "I'm sorry for any confusion. " * 30
    for size in (1, 7, 64):
        guard = RepetitionGuard()
        fed = 0
        while not guard.feed(text[fed:fed + size]):
            fed += size
        assert guard.loop.describe() == '"I\'m sorry for any confusion."'
        assert len(guard.tail) <= 1601 and fed < len(text)
    assert before_the_loop(text, loop_at_end(text)) == "Sure. I'm sorry for any confusion. "


def test_a_call_that_loops_is_stopped_at_once_and_nothing_runs():
    opening = "<tool_call>\n<function=note_add>\n<parameter=title>\nRavi\n</parameter>\n<parameter=text>\nRavi agreed"
    model = LoopingModel([(opening, " to agree")])
    agent = agent_with(model, max_tokens=100_000)
    events = run(agent, "Note that Ravi agreed to the budget")
    final = events[-1]
    assert final["type"] == "final" and final["stopped_repeating"] == '"to agree"'
    assert final["text"] == STUCK_REPEATING  # no words of its own and no results this turn
    assert model.chunks < 60 and model.closed == 1  # stopped within ~40 copies, the stream closed
    assert not [event for event in events if event["type"] in ("tool_call", "tool_result")]
    assert asyncio.run(agent.context.store.items("notes")) == []
    assistant = agent.conversation.messages[-1]
    assert assistant["role"] == "assistant" and not assistant.get("tool_calls")


def test_words_that_loop_end_with_their_first_copy_and_earlier_results_answer_otherwise():
    model = LoopingModel([("The answer is:\n\n", "The answer is:\n\n")])
    final = run(agent_with(model), "What is the answer?")[-1]
    assert final["text"] == "The answer is:" and final["stopped_repeating"] == '"The answer is:"'

    first = xml_call("note_add", title="milk") + "\n"
    model = LoopingModel([(first, ""), (first, first)])  # a good step, then the call written again and again
    agent = agent_with(model)
    events = run(agent, "Note milk")
    assert [event["name"] for event in events if event["type"] == "tool_result"] == ["note_add"]  # once
    final = events[-1]
    assert final["stopped_repeating"] and "note_add" in final["text"] and "milk" in final["text"]


def test_with_the_guard_off_the_loop_runs_to_the_models_end():
    model = LoopingModel([("Hello", " hello")], limit=200)
    final = run(agent_with(model, stop_repetition=False), "Say hello")[-1]
    assert "stopped_repeating" not in final and model.chunks == 201


def test_an_answer_asked_for_after_repeated_calls_keeps_its_words_up_to_the_loop():
    call = xml_call("note_list") + "\n"
    model = LoopingModel([(call, ""), (call, ""), ("You have no notes. ", "You have no notes. ")])
    events = run(agent_with(model), "Which notes do I have?")
    final = events[-1]
    assert [event["type"] for event in events].count("answer_from_results") == 1
    assert final["answered_from_results"] and final["stopped_repeating"] == '"You have no notes."'
    assert final["text"] == "You have no notes." and model.closed == 3


def test_a_turn_left_early_closes_the_models_stream_at_once():
    model = LoopingModel([("Once upon a time", " there was a dragon named Nora who")])

    async def read_two_events():
        turn = agent_with(model).run_turn("Tell me a story")
        await turn.__anext__()
        await turn.__anext__()
        await turn.aclose()
        return model.closed  # before the event loop's own clean-up of unfinished generators

    assert asyncio.run(read_two_events()) == 1
