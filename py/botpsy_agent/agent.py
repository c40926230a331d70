"""The agent loop: generate, parse, check, confirm, run tools, repeat.

`Agent.run_turn(text)` is an async generator of event dicts the UI renders:
  {"type": "text" | "thinking", "text"}
  {"type": "tool_call_delta", "index", "name", "text"}      a call while it forms
  {"type": "tool_call", "id", "name", "arguments", "error", "named_by_person"?, "said_when"?}  a complete call
   (named_by_person: a read of a file the person's message named, made before the model's first step;
   said_when: {argument: {"written", "used", "said"?}}, the arguments the person's words about when
   changed: `arguments` are the ones that run, said_when.py)
  {"type": "confirmation", "id", "name", "arguments", "reason"}
  {"type": "tool_result", "id", "name", "ok", "result", "duration_ms", "untrusted",
   "untrusted_source"?, "stored_marked"?}   untrusted_source: why the result is data (a tool,
   or stored records that came from one); stored_marked: what the records this call stored
   are marked as coming from (py/botpsy_agent/provenance.py)
  {"type": "numbers_unsourced", "numbers"}   the model's words stated numbers nobody gave: withdrawn,
   and the model asked again for a call (worked_numbers.py)
  {"type": "final", "text", "steps", "cancelled"?, "answered_from_results"?, "answered_without_tools"?,
   "untrusted_reads"?, "first_step_tools"?, "numbers_sent_back"?}   {"type": "error", "message"}
   answered_from_results: the model repeated its calls and was asked for words instead;
   first_step_tools: {"topics", "tools", "question"?}, when the person's message named topics (or,
   naming none, said when: the topics of the tools that take a moment) or asked a question
   (questions.py: no tool that acts), and the turn's first step could call only those tools
   (topic_routing.py);
   answered_without_tools: it called only tools nobody offered, and answered in words instead
   numbers_sent_back: the numbers of a numbers_unsourced event of the turn
   untrusted_reads: present when the prompt the answer was written from held untrusted content
   (this turn's or an earlier one's, as the gate counts it): [{"name", "arguments", "source"}],
   one per tool result read as data (provenance.UntrustedRead); the page shows it beside the answer
Tool failures are fed back to the model as "Error: <Type>: <message>"; only a
failing model or template ends the turn with an "error" event.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import time
from dataclasses import dataclass, field, replace
from typing import AsyncIterator, Awaitable, Callable, Protocol

from .chat_format import ChatFormat, prompt_leaves_thinking_open
from .conversation import Conversation
from .grammar import logits_processor_spec
from .named_files import READ_TOOL, files_to_read
from .now_line import now_line
from .parsing import ModelOutputParser, ParsedCall
from .provenance import ProvenanceStore, stored_data_source
from .questions import asks_a_question
from .results import DENIED, cap_length, error_text, result_text
from .repetition import Loop, RepetitionGuard, before_the_loop, loop_at_end
from .results_in_words import result_in_words
from .said_when import says_a_moment, with_the_persons_when
from .safety import (NETWORK_TOOLS, confirmation_reason, mark_untrusted, marking_notice_in, network_refusal,
                     reads_personal_data, without_special_tokens)
from .tooling import Tool, ToolContext, ToolError
from .tools.clock import user_zone
from .topic_routing import Routing, one_topic_routings, route
from .validation import check_arguments
from .worked_numbers import unsourced_numbers


class Model(Protocol):
    def generate(self, prompt: str, options: dict) -> AsyncIterator[str]: ...


Confirm = Callable[[dict], Awaitable[dict]]  # request -> {"approved": bool, "arguments": dict | None}


async def deny_everything(request: dict) -> dict:
    return {"approved": False}


AFTER_RESULTS = "Using the result above, answer my question in plain words (or call another tool if you still need one)."
AFTER_ERRORS = "The tool reported an error above: correct the call and try again, or answer my question in plain words."
AFTER_DENIAL = "I did not allow that. Answer me in plain words (or call a different tool if my request needs one)."


@dataclass
class AgentOptions:
    max_steps: int = 8
    max_result_chars: int = 4000
    max_tokens: int = 1024
    temperature: float = 0.6
    system_prompt: str = "You are BotPsy, a helpful assistant running privately on the user's device."
    # Tool calls constrained to the offered tools' schemas (botpsy_agent.grammar): "auto",
    # "required" or a tool's name (the turn's first reply must call it; later steps are
    # "auto", or the model could never answer), "none" (no call) or "off" (unconstrained).
    tool_calls: str = "auto"
    # Whatever the temperature, the runtime picks a call's tokens and the reply's choice between
    # words and a call greedily: the temperature varies the words, not which tool runs with what.
    greedy_calls: bool = True
    # A reply that repeats the previous step's calls exactly (same tools, same arguments) ends the
    # turn without running them again. False runs them (the multi-turn eval: BFCL's harness runs
    # whatever the model calls, until its step limit).
    stop_repeated_calls: bool = True
    # After a step's tool results the agent adds this line as the person's next message (it is
    # the agent's own text, never a tool's): without it Qwen2.5-Coder-0.5B answers a result by
    # writing the same call again, with it in words (bench/RESULTS.md, issue 41). None adds
    # nothing (the BFCL multi-turn eval keeps BFCL's own protocol).
    after_results: str | None = AFTER_RESULTS
    # The same, when every result of the step is an error: with AFTER_RESULTS the model answered
    # a "did you mean cups?" error with an invented figure instead of correcting the call.
    after_errors: str | None = AFTER_ERRORS
    # The same, when the person denied a call of the step: AFTER_ERRORS ("correct the call and try
    # again") had Qwen2.5-Coder-0.5B write the denied call again, or echo the line as its answer.
    after_denial: str | None = AFTER_DENIAL
    # A step whose every call names a tool nobody offered is not run: the model answers the same
    # prompt again in words, calls forbidden (grammar "none": no start with "{", "[" or a fence). Told "there
    # is no such tool" instead, Qwen2.5-Coder-0.5B wrote the same invented call again in 11 of 14
    # such turns of the task suite and an offered tool's call in none (bench/RESULTS.md, issue 41).
    # False answers them with the UnknownTool error, so the model may correct itself (BFCL's harness).
    words_after_invented_tool: bool = True
    # Before each message of the person, a line of the agent's with the date and time where they
    # are (now_line.py). False adds none (BFCL's and AgentDojo's worlds keep their own clocks).
    now_line: bool = True
    # Stop a generation once it ends in one piece written again and again (repetition.py): the
    # step's calls do not run and the turn ends, instead of the loop running on to max_tokens.
    # False lets it run (the BFCL evals measure the model as it is).
    stop_repetition: bool = True
    # The person's files their message names ("It's all in spending.csv") are read with files_read
    # before the model's first step, when files_read is offered (named_files.py). False leaves
    # every read to the model.
    read_named_files: bool = True
    # A turn's first step may call only the tools of the topics the person's message names ("my
    # calendar", "kilometres ... miles"), and the tools of no topic; a message naming none keeps
    # every tool (topic_routing.py). Only the call grammar changes, never the prompt. False offers
    # every tool at every step.
    route_by_topic: bool = True
    # Words stating numbers that neither the person nor a tool gave, in a turn where no tool ran
    # (the model's own arithmetic: "and 25%?" answered 75), are sent back once: the same prompt
    # again, a call of a tool that only reads or computes required (worked_numbers.py). False
    # keeps the words (the BFCL multi-turn eval: BFCL's protocol has no such step).
    figures_from_tools: bool = True
    # A call of a tool that declares which argument says when (an event's start, a todo's due
    # time) runs with the person's own words about when, where the model wrote another moment
    # (said_when.py). False runs the call as written.
    person_says_when: bool = True


@dataclass
class Agent:
    model: Model
    chat_format: ChatFormat
    context: ToolContext = field(default_factory=ToolContext)
    confirm: Confirm = deny_everything
    options: AgentOptions = field(default_factory=AgentOptions)
    tools: dict[str, Tool] = field(default_factory=dict)
    pre_approved: set[str] = field(default_factory=set)
    off_by_default: set[str] = field(default_factory=set)  # hidden while settings.enabled_tools is None
    conversation: Conversation = field(default_factory=Conversation)
    special_tokens: tuple[str, ...] = ()  # the tokenizer's added tokens: never in untrusted text
    _cancelled: bool = field(default=False, repr=False)
    _turn_routing: Routing | None = field(default=None, repr=False)  # this turn's first-step tools
    _turn_numbers: list[str] = field(default_factory=list, repr=False)  # figures this turn sent back for a call

    def add_tool(self, tool: Tool, pre_approved: bool = False, enabled_by_default: bool = True) -> None:
        self.tools[tool.name] = tool
        (self.pre_approved.add if pre_approved else self.pre_approved.discard)(tool.name)
        (self.off_by_default.discard if enabled_by_default else self.off_by_default.add)(tool.name)

    def cancel(self) -> None:
        """Stop the running turn after the current generation; no further tool runs."""
        self._cancelled = True

    def reset_cancel(self) -> None:
        self._cancelled = False

    def new_chat(self) -> None:
        self.conversation.clear()

    def export_conversation(self) -> dict:
        return self.conversation.export()

    def restore_conversation(self, data: dict) -> None:
        self.conversation = Conversation.restore(data, self.special_tokens)

    def active_tools(self) -> list[Tool]:
        """The tools the model sees: settings.enabled_tools, or when that is None every tool
        added as enabled by default, plus the network tools once the user allowed the network."""
        settings = self.context.settings
        enabled = settings.enabled_tools
        if enabled is None:
            return [tool for name, tool in self.tools.items()
                    if name not in self.off_by_default or (settings.allow_network and name in NETWORK_TOOLS)]
        return [tool for name, tool in self.tools.items() if name in enabled]

    def render_prompt(self, extra_messages: tuple = ()) -> str:
        messages = self.conversation.messages_with_system(self.options.system_prompt) + list(extra_messages)
        specs = [tool.spec() for tool in self.active_tools()]
        return self.chat_format.render(messages, specs, self.context.settings.thinking)

    def render_prompt_prefix(self) -> str:
        """The text every prompt of the next turn starts with, whatever the user writes: the
        system prompt, the tool schemas and the conversation so far, up to where the turn's
        messages would begin (the agent's now line, then the person's). The page runs it into the
        model while the person types, and stores the state it leaves for the next visit, so the
        turn computes only its new messages (found as the common start of the prompts for two
        different messages: no knowledge of the template's markers needed). The now line is left
        out: it changes every minute, and a stored state of a model with recurrent layers
        (Qwen3.5's) resumes only at its exact end, so a prefix holding it would never be reused on
        a later visit; the line costs the turn ~15 tokens instead."""
        first, second = (self.render_prompt(({"role": "user", "content": text},)) for text in ("A", "B"))
        return os.path.commonprefix([first, second])

    def _now_message(self) -> dict:
        return {"role": "user", "content": now_line(self.context), "agent_note": True}

    async def run_turn(self, user_text: str, reset_cancel: bool = True) -> AsyncIterator[dict]:
        """reset_cancel=False keeps a cancel() made before the turn began (the browser session
        resets it itself, synchronously, when the page's request arrives: see begin_turn)."""
        if self.options.now_line:
            self.conversation.add(self._now_message())
        self.conversation.add({"role": "user", "content": user_text})
        # Untrusted text read in an earlier turn is still in the prompt: it still counts.
        earlier = self.conversation.untrusted_source()
        turn = {"read_untrusted": earlier is not None, "untrusted_source": earlier,
                "personal_data": self.conversation.holds_personal_data()}
        if reset_cancel:
            self._cancelled = False
        prompt, output = None, ""
        previous_calls = None
        if self.options.read_named_files:
            read: list = []
            async for event in self._read_named_files(user_text, turn, read):
                yield event
            previous_calls = read or None  # the model writing these reads again is a repeat
        repeat_run = False  # a repeat the model insisted on was run (once per turn)
        numbers_checked = False  # words with numbers nobody gave were sent back for a call (once per turn)
        invented: list = []  # the step's calls of tools nobody offered, when its words are checked
        words_next = False  # the next step answers in words, calls forbidden
        self._turn_numbers = []
        routing = self._turn_routing = self._routing(user_text)
        for step in range(1, self.options.max_steps + 1):
            if self._cancelled and step == 1:  # stopped before the model said anything
                self.conversation.add_assistant("", "", [])
                yield self._final("", 0, cancelled=True)
                return
            try:
                prompt = self._next_prompt(prompt, output)
                schemas = {tool.name: tool.parameters for tool in self.active_tools()}
                parser = ModelOutputParser(self.chat_format.tool_call_format, schemas,
                                           thinking=prompt_leaves_thinking_open(prompt))
                pieces = []
                guard = self._repetition_guard()
                # after the call that checked a figure, words: the figure's tool result is in hand
                options = self._generation_options(prompt, first_step=step == 1, mode="none" if words_next else None,
                                                   tools=routing.tools if routing and step == 1 else None)
                words_next = False
                async with contextlib.aclosing(self._generation(prompt, options, parser, pieces, guard)) as events:
                    async for event in events:  # closed with the turn: a turn left early stops the model too
                        yield event
                output = "".join(pieces)
            except Exception as error:  # a failing model or template ends the turn
                yield {"type": "error", "message": error_text(error)}
                return
            calls = self._with_ids(parser.calls)
            if self._cancelled:  # the user pressed stop: keep the text, run nothing
                self.conversation.add_assistant(parser.text, parser.thinking, [])
                yield self._final(parser.text.strip(), step, cancelled=True)
                return
            if guard and guard.loop:
                yield self._stopped_repeating(parser, guard.loop, step)
                return
            if routing and step == 1 and calls and self._held_back(routing, [call for _, call in calls]):
                # The model chose to call, but none of its calls is of a tool the routing allows: a call
                # Qwen2.5-Coder writes without tags is free text to the grammar until an offered name
                # ends (reply_openings.py), and every tool of the prompt is offered. Nothing runs; the
                # same prompt is asked again, a call of the named topics' tools required: of those that
                # only read, when every call held back was a read (a question stays a question). A step
                # with at least one allowed call runs as written ("What time is it, and add lunch on
                # Friday at 1pm": current_time, then calendar_add_event).
                retry_tools = self._retry_tools(routing, [call for _, call in calls])
                for call_id, call in calls:
                    yield {"type": "tool_call", "id": f"{call_id}_off_topic", "name": call.name,
                           "arguments": call.arguments,
                           "error": _off_topic(call.name, routing, retry_tools, call.name in self._acting_tools())}
                again: list = []
                async for event in self._call_required(prompt, retry_tools, step, again):
                    yield event
                if not again:  # the model failed or looped; the turn's last event is out
                    return
                parser, output = again[0], again[0].output
                calls = self._with_ids(parser.calls)
            if calls and self.options.stop_repeated_calls and _same_calls(parser.calls, previous_calls):
                # The model wrote again the very calls whose results it was just given: a loop
                # small models fall into (Qwen2.5-Coder-0.5B writes the calculator call after its
                # result until the step limit: bench/RESULTS.md). They are not run again; the
                # model is asked for its answer from the results it has, with calls forbidden.
                # Only a model that writes the calls even then (it ignores the constraint: a
                # multi-part request reading the same thing twice on purpose, AgentDojo's
                # workspace user_task_36) gets them run, once.
                for call_id, call in calls:
                    yield {"type": "tool_call", "id": f"{call_id}_repeated", "name": call.name,
                           "arguments": call.arguments, "error": REPEATED_CALL}
                answered: list = []
                async for event in self._answer_from_results(prompt, answered):
                    yield event
                if not answered:  # the model failed; its error event is out
                    return
                answer = answered[0]
                # Calls of offered tools written even now are run, once a turn (AgentDojo's
                # workspace user_task_36 reads the same thing twice on purpose, then goes on);
                # a name no tool has (Qwen2.5-Coder-0.5B renames the forbidden tool:
                # notes_list_all) is not the model insisting, and is not run.
                offered = {tool.name for tool in self.active_tools()}
                if answer.calls and not repeat_run and all(call.name in offered for call in answer.calls):
                    repeat_run = True
                    parser, output = answer, answer.output
                    calls = self._with_ids(parser.calls)
                else:
                    words = self._own_words(answer.text)
                    shown, kept = (words, words) if words else self._results_as_answer()
                    self.conversation.add_assistant(kept, answer.thinking, [])
                    yield self._final(shown, step, answered_from_results=True, stopped_repeating=answer.loop)
                    return
            offered = {tool.name for tool in self.active_tools()}
            if calls and self.options.words_after_invented_tool and not any(c.name in offered for _, c in calls):
                answered: list = []
                async for event in self._words_instead_of(calls, prompt, answered):
                    yield event
                if not answered:  # the model failed; its error event is out
                    return
                if answered[0].calls or numbers_checked or not self._unsourced_numbers(answered[0].text, step):
                    yield self._final_without_tools(calls, answered[0], step)
                    return
                invented = [call for _, call in calls]
                parser, calls = answered[0], []  # words with figures nobody gave: checked just below
            numbers = [] if calls or numbers_checked else self._unsourced_numbers(parser.text, step)
            if numbers:
                # Words stating numbers that neither the person nor a tool gave, in a turn where no
                # tool ran: the model's own arithmetic (worked_numbers.py). Once a turn, the same
                # prompt is asked again with a call required, of the tools that only read or compute;
                # the step after its results answers in words (sent back to tools, Qwen2.5-Coder-0.5B
                # went on calling, to a note it was not asked for).
                numbers_checked, self._turn_numbers = True, numbers
                again: list = []
                async for event in self._call_required(prompt, self._tools_for_numbers(step, invented), step, again,
                                                       {"type": "numbers_unsourced", "numbers": numbers}):
                    yield event
                if not again:  # the model failed or looped; the turn's last event is out
                    return
                parser, output = again[0], again[0].output
                calls = self._with_ids(parser.calls)
                words_next = True  # one call for the figures, then the answer (no new episode)
            previous_calls = parser.calls
            if not calls:
                # our own line copied back is not the model's answer: the person sees what the turn got
                words = parser.text.strip()
                shown, kept = self._results_as_answer() if _copies_the_agent(parser.text) else (words, words)
                self.conversation.add_assistant(kept, parser.thinking, [])
                yield self._final(shown, step)
                return
            self.conversation.add_assistant(parser.text, parser.thinking, calls)
            results_from = len(self.conversation.messages)
            for call_id, call in calls:
                if self._cancelled:  # answer every call, so the conversation stays well formed
                    self.conversation.add({"role": "tool", "tool_call_id": call_id, "name": call.name or "",
                                           "content": "Error: Cancelled: the user stopped the turn."})
                    continue
                async for event in self._run_call(call_id, call, turn):
                    yield event
            if self._cancelled:
                yield self._final("", step, cancelled=True)
                return
            note = self._note_after(self.conversation.messages[results_from:])
            if note:
                self.conversation.add({"role": "user", "content": note, "agent_note": True})
        yield {"type": "error", "message": f"stopped after {self.options.max_steps} steps "
                                           "without a final answer"}
        yield self._final("", self.options.max_steps)

    async def _read_named_files(self, user_text: str, turn: dict, read: list) -> AsyncIterator[dict]:
        """files_read on each of the person's files their message names, as a step of the turn
        before the model's first (named_files.py); the calls made are appended to `read`."""
        if READ_TOOL not in {tool.name for tool in self.active_tools()}:
            return
        try:
            names = await files_to_read(user_text, self.context)
        except Exception:  # the store failing to list files ends no turn: the model may still read them
            return
        if not names:
            return
        calls = [(f"call_{len(self.conversation.messages)}_{index}", ParsedCall(READ_TOOL, {"name": name}))
                 for index, name in enumerate(names)]
        self.conversation.add_assistant("", "", calls)
        results_from = len(self.conversation.messages)
        for call_id, call in calls:
            async for event in self._run_call(call_id, call, turn, named_by_person=True):
                yield event
        read.extend(call for _, call in calls)
        note = self._note_after(self.conversation.messages[results_from:])
        if note:
            self.conversation.add({"role": "user", "content": note, "agent_note": True})

    def _routing(self, user_text: str) -> Routing | None:
        """The tools the turn's first step may call (topic_routing.py), or None when every offered
        tool may be called: routing is off, or the page named the one tool the reply must call."""
        if not self.options.route_by_topic or self.options.tool_calls not in ("auto", "required"):
            return None
        acting = self._acting_tools() if asks_a_question(user_text) else ()
        routing = route(user_text, [tool.name for tool in self.active_tools()], self._when_tools(user_text), acting)
        return routing if routing.restricted else None

    def _held_back(self, routing: Routing, calls: list) -> bool:
        """True when a routed first step's calls are held back: none is of a tool the routing allows.
        A question naming no topic holds back only a step that calls a tool that acts: one that
        only names tools nobody offered is answered as any such step is (words_after_invented_tool)."""
        if any(call.name in routing.tools for call in calls):
            return False
        return bool(routing.topics) or any(call.name in self._acting_tools() for call in calls)

    def _acting_tools(self) -> tuple[str, ...]:
        return tuple(tool.name for tool in self.active_tools() if tool.side_effects)

    def _when_tools(self, user_text: str) -> tuple[str, ...]:
        """The offered tools that take the moment a thing starts as the person says it (an event's
        start: Tool.said_when "start"), when their message says one (a day or a clock time). A
        to-do's due time is not among them: people name their to-dos ("remind me", "my todo list"),
        and a message that says when but names nothing is about something happening then."""
        if not says_a_moment(user_text, user_zone(self.context), self.context.now()):
            return ()
        return tuple(tool.name for tool in self.active_tools() if tool.said_when == "start")

    def _retry_tools(self, routing: Routing, held: list) -> tuple[str, ...]:
        """The tools a routed first step is asked again to call, its calls outside the routing held
        back: the named topics' tools and the tools of no topic, only those that read when every held
        call read (an offered tool without side effects; a call that acts, or of a tool nobody offered,
        keeps them all)."""
        offered = {tool.name: tool for tool in self.active_tools()}
        if all(call.name in offered and not offered[call.name].side_effects for call in held):
            reading = tuple(name for name in routing.topic_tools if not offered[name].side_effects)
            if reading:
                return reading
        return routing.topic_tools

    def _final(self, text: str, steps: int, cancelled: bool = False, answered_from_results: bool = False,
               answered_without_tools: bool = False, stopped_repeating: Loop | None = None) -> dict:
        """The turn's final event. Its untrusted_reads come from the tool results the loop marked
        untrusted (the same ones that make the gate ask again), never from the model's text: the
        model can neither add nor remove them."""
        event = {"type": "final", "text": text, "steps": steps}
        if cancelled:
            event["cancelled"] = True
        if answered_from_results:
            event["answered_from_results"] = True
        if answered_without_tools:
            event["answered_without_tools"] = True
        if stopped_repeating:
            event["stopped_repeating"] = stopped_repeating.describe()
        if self._turn_routing:
            event["first_step_tools"] = self._turn_routing.as_event()
        if self._turn_numbers:
            event["numbers_sent_back"] = list(self._turn_numbers)
        reads = self.conversation.untrusted_reads()
        if reads:
            event["untrusted_reads"] = [read.as_event() for read in reads]
        return event

    async def _words_instead_of(self, calls: list, prompt: str, answered: list) -> AsyncIterator[dict]:
        """The step called only tools nobody offered: each call is shown refused (never run, never
        in the conversation), and the same prompt is answered again in words, calls forbidden
        (the answer's parser is appended to `answered`, as _answer_from_results does)."""
        for call_id, call in calls:
            yield {"type": "tool_call", "id": call_id, "name": call.name, "arguments": call.arguments,
                   "error": self._problem_with(call, None)}
        async for event in self._answer_from_results(prompt, answered, "the model called a tool nobody offered"):
            yield event

    def _final_without_tools(self, calls: list, answer: ModelOutputParser, step: int) -> dict:
        """The final event after _words_instead_of: the model's words, else the turn's results."""
        names = ", ".join(dict.fromkeys(repr(call.name) for _, call in calls))
        words = self._own_words(answer.text) if not answer.calls else ""
        shown, kept = (words, words) if words else self._results_as_answer()
        if not shown:
            shown = kept = f"I have no tool for that (there is no tool named {names})."
        self.conversation.add_assistant(kept, answer.thinking, [])
        return self._final(shown, step, answered_without_tools=True, stopped_repeating=answer.loop)

    def _unsourced_numbers(self, words: str, step: int) -> list[str]:
        """The numbers `words` state that neither the person's messages nor this turn's tool results
        hold (worked_numbers.py), when that is worth a call: the option is on, calls are constrained,
        no tool has run in the turn and some tool that only reads or computes is offered. Else []."""
        if not self.options.figures_from_tools or self.options.tool_calls not in ("auto", "required"):
            return []
        results = self._turn_results()
        if any(not str(message.get("content", "")).startswith("Error:") for message in results):
            return []
        if not self._tools_for_numbers(step):
            return []
        said = [str(message.get("content", "")) for message in self.conversation.messages if message["role"] == "user"]
        return unsourced_numbers(words, said + [str(message.get("content", "")) for message in results])

    def _tools_for_numbers(self, step: int, invented: list = ()) -> tuple[str, ...]:
        """The tools a call for the answer's figures may use: the offered tools without side
        effects that keep their arguments in this page (a host page's tools do not: a check of the
        model's arithmetic is no reason to send the conversation elsewhere), of those a routed
        first step may call when this is the first step; of them,
        the ones the conversation has called before ("and 25%?" after a calculation) and those
        whose arguments a call of a tool nobody offered wrote (`calculate_income(expression=...)`),
        when there are any. Left to choose among all of them, Qwen2.5-Coder-0.5B called
        current_time for "and 25%?" (bench/tasks-done.md)."""
        tools = [tool for tool in self.active_tools() if not tool.side_effects and not tool.sends_elsewhere]
        if step == 1 and self._turn_routing:
            tools = [tool for tool in tools if tool.name in self._turn_routing.tools]
        called = {message.get("name") for message in self.conversation.messages if message["role"] == "tool"}
        written = [set(call.arguments) for call in invented if isinstance(call.arguments, dict)]
        focused = [tool.name for tool in tools if tool.name in called or any(
            required and required <= names for names in written
            for required in [set(tool.parameters.get("required", []))])]
        return tuple(focused or (tool.name for tool in tools))

    async def _answer_from_results(self, prompt: str, answered: list,
                                   reason: str = "the model repeated its previous calls") -> AsyncIterator[dict]:
        """One more generation from `prompt` with tool calls forbidden: the model's words from the
        results it already has. Yields its text events and appends its parser to `answered` (the
        parser also carries `output`, the raw text, and `loop`, the loop its generation was stopped
        in or None), or yields an error event when the model fails."""
        yield {"type": "answer_from_results", "reason": reason}
        async for event in self._generate_again(prompt, answered, "none"):
            yield event

    async def _call_required(self, prompt: str, tools: tuple[str, ...], step: int, got: list,
                             why: dict | None = None) -> AsyncIterator[dict]:
        """The same prompt again, a call of `tools` required (after the event `why`, when given).
        Appends its parser to `got` when the turn goes on; when the model failed, or its reply was
        stopped in a loop, yields the error or the turn's final event and appends nothing."""
        again: list = []
        async for event in self._generate_again(prompt, again, "required", tools, why):
            yield event
        if again and again[0].loop:
            yield self._stopped_repeating(again[0], again[0].loop, step)
        elif again:
            got.append(again[0])

    async def _generate_again(self, prompt: str, answered: list, mode: str,
                              tools: tuple[str, ...] | None = None, why: dict | None = None) -> AsyncIterator[dict]:
        """One more generation from `prompt` under toolCalls `mode` ("none": words only; "required":
        a call of `tools` first), after the event `why` when given. Yields its text events and
        appends its parser to `answered` (see _answer_from_results), or yields an error event when
        the model fails."""
        if why:
            yield why
        schemas = {tool.name: tool.parameters for tool in self.active_tools()}
        parser = ModelOutputParser(self.chat_format.tool_call_format, schemas,
                                   thinking=prompt_leaves_thinking_open(prompt))
        options = self._generation_options(prompt, first_step=mode == "required", mode=mode, tools=tools)
        pieces = []
        guard = self._repetition_guard()
        try:
            async with contextlib.aclosing(self._generation(prompt, options, parser, pieces, guard)) as events:
                async for event in events:
                    yield event
        except Exception as error:
            yield {"type": "error", "message": error_text(error)}
            return
        parser.output = "".join(pieces)
        parser.loop = guard.loop if guard else None
        if parser.loop:  # words up to the loop, and no calls: the rest was the loop
            text_loop = loop_at_end(parser.text)
            parser.text = before_the_loop(parser.text, text_loop) if text_loop else parser.text
            parser.calls = []
        answered.append(parser)

    async def _generation(self, prompt: str, options: dict, parser: ModelOutputParser, pieces: list[str],
                          guard: RepetitionGuard | None) -> AsyncIterator[dict]:
        """One generation, its chunks fed to `parser` (their events yielded) and kept in `pieces`.
        aclosing: leaving the loop (the guard saw a loop, or handling a chunk failed) closes the
        model's stream at once, so the model stops generating instead of running on to max_tokens."""
        async with contextlib.aclosing(self.model.generate(prompt, options)) as stream:
            async for chunk in stream:
                pieces.append(chunk)
                for event in _stream_events(parser.feed(chunk)):
                    yield event
                if guard and guard.feed(chunk):
                    break
        for event in _stream_events(parser.finish()):
            yield event

    def _repetition_guard(self) -> RepetitionGuard | None:
        return RepetitionGuard() if self.options.stop_repetition else None

    def _stopped_repeating(self, parser: ModelOutputParser, loop: Loop, step: int) -> dict:
        """The step's generation was stopped in a loop (repetition.py). None of its calls run: they
        were written in the loop, or cut off by it, or came before it in a reply that went on
        repeating itself. The person reads the words before the loop, else the turn's results in
        words, and the final event says what the model kept writing."""
        text_loop = loop_at_end(parser.text)
        words = self._own_words(before_the_loop(parser.text, text_loop) if text_loop else parser.text)
        shown, kept = (words, words) if words else self._results_as_answer()
        self.conversation.add_assistant(kept, parser.thinking, [])
        if not shown:
            shown = STUCK_REPEATING
        return self._final(shown, step, stopped_repeating=loop)

    def _note_after(self, results: list[dict]) -> str | None:
        """The agent's line after a step's results (AgentOptions.after_results / after_errors)."""
        contents = [str(message.get("content", "")) for message in results]
        if any(content.startswith(DENIED) for content in contents):
            return self.options.after_denial
        failed = contents and all(content.startswith("Error:") for content in contents)
        return self.options.after_errors if failed else self.options.after_results

    def _own_words(self, text: str) -> str:
        """_words_of, and "" too when the reply only repeats an error one of this turn's tools
        returned ("Error: Denied: the user did not allow outbox_send ..."): that is the result, not
        an answer, and the person reads it in words instead (_results_as_answer)."""
        words = _words_of(text)
        if words.startswith("Error:") and any(words == str(message.get("content", "")).strip()
                                                for message in self._turn_results()):
            return ""
        return words

    def _with_ids(self, calls: list) -> list[tuple[str, ParsedCall]]:
        """A step's calls with the ids their events and results carry."""
        return [(f"call_{len(self.conversation.messages)}_{index}", call) for index, call in enumerate(calls)]

    def _persons_message(self) -> str:
        """The person's message of this turn (not the agent's lines)."""
        return next((str(message.get("content", "")) for message in reversed(self.conversation.messages)
                     if message["role"] == "user" and not message.get("agent_note")), "")

    def _turn_messages(self) -> list[dict]:
        """The messages after the person's last one: this turn's calls, results and the agent's lines."""
        messages = self.conversation.messages
        start = max((i for i, m in enumerate(messages) if m["role"] == "user" and not m.get("agent_note")), default=-1)
        return messages[start + 1:]

    def _turn_results(self) -> list[dict]:
        """This turn's tool results, in order."""
        return [message for message in self._turn_messages() if message["role"] == "tool"]

    def _results_as_answer(self) -> tuple[str, str]:
        """When the model has no words of its own: the results of this turn's last step that got
        any that is not an error or empty (else the last step's), as (what the person is shown:
        results_in_words.py, what the conversation keeps: the results as the model read them,
        third-party text still marked). Both empty when the turn ran no tool."""
        steps, current = [], []
        for message in self._turn_messages():
            if message["role"] == "tool":
                current.append(message)
            elif current:
                steps, current = steps + [current], []
        steps += [current] if current else []
        useful = next((step for step in reversed(steps) if not all(map(_failed_or_empty, step))), None)
        chosen = [m for m in useful if not _failed_or_empty(m)] if useful else (steps[-1] if steps else [])
        names = [message.get("name") or "the tool" for message in chosen]
        shown = "\n".join(result_in_words(name, message["content"]) for name, message in zip(names, chosen))
        kept = "\n".join(f"{name} returned: {message['content']}" for name, message in zip(names, chosen))
        return shown, kept

    def _next_prompt(self, previous_prompt: str | None, previous_output: str) -> str:
        """First step: the whole conversation. Later steps extend the previous prompt."""
        if previous_prompt is not None:
            messages = self.conversation.messages_with_system(self.options.system_prompt)
            specs = [tool.spec() for tool in self.active_tools()]
            extended = self.chat_format.continue_prompt(previous_prompt, previous_output, messages,
                                                        specs, self.context.settings.thinking)
            if extended is not None:
                return extended
        return self.render_prompt()

    async def _run_call(self, call_id: str, call, turn: dict, named_by_person: bool = False) -> AsyncIterator[dict]:
        tool = self.tools.get(call.name) if call.name in {t.name for t in self.active_tools()} else None
        arguments, said = call.arguments, {}
        if tool and tool.said_when and self.options.person_says_when and isinstance(arguments, dict):
            arguments, said = with_the_persons_when(tool, arguments, self._persons_message(),
                                                    user_zone(self.context), self.context.now())
        yield {"type": "tool_call", "id": call_id, "name": call.name, "arguments": arguments,
               "error": call.error, **({"named_by_person": True} if named_by_person else {}),
               **({"said_when": said} if said else {})}
        problem = self._problem_with(call, tool)
        if problem is None:
            reason = confirmation_reason(tool, self.pre_approved, turn["read_untrusted"], turn["personal_data"])
            if reason:
                request = {"id": call_id, "name": tool.name, "arguments": arguments,
                           "reason": reason, "description": tool.description}
                yield {"type": "confirmation", **request}
                decision = await self.confirm(request) or {}
                if not decision.get("approved"):
                    problem = f"{DENIED} the user did not allow {tool.name} with these arguments."
                elif decision.get("arguments") is not None:
                    arguments = decision["arguments"]
                    issues = check_arguments(arguments, tool.parameters)
                    problem = f"Error: InvalidArguments: {'; '.join(issues)}" if issues else None
        started = time.monotonic()
        source, provenance, read_personal = None, {}, False
        if problem is None:
            # What this call stores is marked when the turn is untrusted; marked records it reads
            # make the turn untrusted, like a file would.
            store = ProvenanceStore(self.context.store, turn["untrusted_source"])
            try:
                context = replace(self.context, fetch=_gated_fetch(self.context, tool), store=store)
                output = result_text(await tool.call(context, arguments))
                ok = True
            except Exception as error:
                output, ok = error_text(error), False
            if store.stamped:
                provenance["stored_marked"] = turn["untrusted_source"]
            if tool.untrusted_output:  # its errors too: one can quote what it read (a file's name)
                source = f"the tool {tool.name}"
            elif store.read_from:  # an error may quote a marked record too
                source = stored_data_source(store.read_from)
            read_personal = reads_personal_data(tool, store.records_read)
            turn["personal_data"] = turn["personal_data"] or read_personal
            if source:
                turn["read_untrusted"] = True
                turn["untrusted_source"] = turn["untrusted_source"] or source
                provenance["untrusted_source"] = source
        else:
            output, ok = problem, False
        output = self._as_the_model_reads_it(output, source)
        duration_ms = round((time.monotonic() - started) * 1000, 1)
        untrusted = source is not None
        self.conversation.add({"role": "tool", "tool_call_id": call_id, "name": call.name or "",
                               "content": output, "untrusted": untrusted,
                               **({"personal_data": True} if read_personal else {}),
                               **({"untrusted_source": source} if source else {})})
        yield {"type": "tool_result", "id": call_id, "name": call.name, "ok": ok, "result": output,
               "duration_ms": duration_ms, "untrusted": untrusted, **provenance}

    def _as_the_model_reads_it(self, output: str, source: str | None) -> str:
        """A tool result for the prompt: capped first (so a data block always has its end), then
        marked as data when third-party text is behind it; never holding a special token."""
        output = cap_length(output, self.options.max_result_chars)
        if source:
            return mark_untrusted(output, source, self.special_tokens)
        return without_special_tokens(output, self.special_tokens)

    def _problem_with(self, call, tool: Tool | None) -> str | None:
        """The error text for a call that must not run, or None."""
        valid = ", ".join(t.name for t in self.active_tools()) or "none"
        if call.error:
            return f"Error: MalformedToolCall: {call.error}. Valid tools: {valid}"
        if tool is None:
            closest = closest_tool_names(call.name or "", [t.name for t in self.active_tools()])
            hint = f" The closest: {', '.join(closest)}." if closest else ""
            return f"Error: UnknownTool: there is no tool named {call.name!r}.{hint} Valid tools: {valid}"
        refusal = network_refusal(tool, self.context.settings.allow_network)
        if refusal:
            return f"Error: NetworkDisabled: {refusal}"
        issues = check_arguments(call.arguments, tool.parameters)
        if issues:
            return f"Error: InvalidArguments for {tool.name}: {'; '.join(issues)}"
        return None

    def _generation_options(self, prompt: str, first_step: bool = True, mode: str | None = None,
                            tools: tuple[str, ...] | None = None) -> dict:
        options = {"maxTokens": self.options.max_tokens, "temperature": self.options.temperature}
        processors = self.logits_processors(prompt, first_step, mode, tools)
        if processors:
            options["logitsProcessors"] = processors
        return options

    def logits_processors(self, prompt: str | None = None, first_step: bool = True,
                          mode: str | None = None, tools: tuple[str, ...] | None = None) -> list[dict]:
        """The runtime's logits processors for a generation from `prompt` (default: the next
        turn's first): the tool-call grammar of the tools the prompt offers (or of `tools`, the
        names of those the step may call), per options.tool_calls (or `mode`, when the loop forbids
        calls for one answer: "none", unless calls are "off")."""
        configured = self.options.tool_calls
        if mode is None or configured == "off":
            mode = configured
        if not first_step and mode not in ("none", "off"):
            mode = "auto"
        if prompt is None:
            prompt = self.render_prompt(({"role": "user", "content": "A"},))
        callable_tools = [tool for tool in self.active_tools() if tools is None or tool.name in tools]
        spec = logits_processor_spec([tool.spec() for tool in callable_tools],
                                     self.chat_format.tool_call_format, mode,
                                     thinking=prompt_leaves_thinking_open(prompt),
                                     greedy_calls=self.options.greedy_calls)
        return [spec] if spec else []

    def routed_logits_processors(self) -> list[list[dict]]:
        """The logits processors of the next turn's first step for each message naming one topic
        (topic_routing.one_topic_routings), distinct ones only: the page's warm-up has the runtime
        compile their grammars ahead too, so a routed turn's first token waits for none. Empty when
        turns are not routed."""
        if not self.options.route_by_topic or self.options.tool_calls not in ("auto", "required"):
            return []
        prompt = self.render_prompt(({"role": "user", "content": "A"},))
        distinct: dict[str, list[dict]] = {}
        for routing in one_topic_routings([tool.name for tool in self.active_tools()], self._acting_tools()):
            processors = self.logits_processors(prompt, tools=routing.tools)
            if processors:
                distinct.setdefault(json.dumps(processors, sort_keys=True), processors)
        return list(distinct.values())


REPEATED_CALL = "not run again: the same call as the step before (its result is above)"


def _off_topic(name: str, routing: Routing, retry_tools: tuple[str, ...], acts: bool) -> str:
    """The error of a routed first step's call of a tool outside the topics the message names, or
    of one that changes things (`acts`) in answer to a question."""
    why = (f"this is a question, and {name} changes things" if routing.question and acts
           else f"this request is about {', '.join(routing.topics)}, and {name} is not one of its tools")
    return f"not run: {why}; the model was asked again to call one of {', '.join(retry_tools)}"
# The final answer of a turn stopped in a loop when the model said nothing before it and nothing ran.
STUCK_REPEATING = "I got stuck repeating myself, so I stopped there. Please ask again, perhaps in other words."
# What a reply asked for words may hold that says nothing: told not to start with "{" or "[",
# Qwen2.5-Coder-0.5B answered a list of to-dos with "null".
_NO_WORDS = {"", "null", "none", "true", "false", "undefined", "nan"}


def _words_of(text: str) -> str:
    """The reply's text, or "" when it is only a JSON literal (no answer at all), a call written as
    text (_only_a_call) or a copy of the agent's own words (_copies_the_agent)."""
    text = text.strip()
    empty = text.strip("`\"'.").lower() in _NO_WORDS or _only_a_call(text) or _copies_the_agent(text)
    return "" if empty else text


def _only_a_call(text: str) -> bool:
    """The reply is nothing but a call's JSON (in parentheses or a code fence too): asked for words,
    Qwen2.5-Coder-0.5B wrote `({"name": "convert_units", "arguments": {...}}` (no closing parenthesis).
    Shown, it is raw JSON; it was never run."""
    body = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    body = body.lstrip("( \n").rstrip(") \n")  # its parentheses need not even pair up
    try:
        value = json.loads(body)
    except ValueError:
        return False
    return isinstance(value, dict) and isinstance(value.get("name"), str) and "arguments" in value


_AGENT_NOTES = (AFTER_RESULTS, AFTER_ERRORS, AFTER_DENIAL)


def _copies_the_agent(text: str) -> bool:
    """The reply repeats a line the agent itself put in the conversation: a note after results (all
    or part of it) or the notice of marked data. Qwen2.5-Coder-0.5B answered a denial with "I did
    not allow that.", a failed call with the whole note after errors, and a file search with the
    marking's notice; shown as the assistant's answer, each says the opposite of what happened."""
    flat = " ".join(text.split()).rstrip(" .!")  # a copy of part of a note ends with a full stop of its own
    return (len(flat) >= 12 and any(flat in note for note in _AGENT_NOTES)) or marking_notice_in(flat)


def closest_tool_names(name: str, offered: list[str], count: int = 3) -> list[str]:
    """The offered tools whose names look most like `name` (an invented `calculate_units` ->
    calculator, convert_units): close spellings first, then shared words."""
    close = difflib.get_close_matches(name, offered, n=count, cutoff=0.5)
    words = set(name.lower().replace("-", "_").split("_")) - {""}
    for tool_name in offered:
        if len(close) >= count:
            break
        if tool_name not in close and words & set(tool_name.split("_")):
            close.append(tool_name)
    return close


def _failed_or_empty(message: dict) -> bool:
    content = str(message.get("content", "")).strip()
    return content.startswith("Error:") or content in ("", "[]", "{}", "null")


def _same_calls(calls: list, previous: list | None) -> bool:
    """The same tools with the same arguments, in the same order."""
    def key(each):
        return [(call.name, json.dumps(call.arguments, sort_keys=True, default=str)) for call in each]
    return previous is not None and key(calls) == key(previous)


def _stream_events(parser_events) -> list[dict]:
    """Parser events as UI events; complete calls are announced by the loop, with their id."""
    events = []
    for event in parser_events:
        if event.kind in ("text", "thinking"):
            events.append({"type": event.kind, "text": event.text})
        elif event.kind == "tool_call_delta":
            events.append({"type": "tool_call_delta", "index": event.index, "name": event.name,
                           "text": event.text})
    return events


def _gated_fetch(context: ToolContext, tool: Tool) -> Callable[[str], Awaitable[str]]:
    """ctx.fetch for one confirmed call: only network tools, only with the network enabled."""
    async def fetch(url: str) -> str:
        if tool.name not in NETWORK_TOOLS or not context.settings.allow_network:
            raise ToolError(f"{tool.name} may not use the network")
        return await context.fetch(url)
    return fetch
