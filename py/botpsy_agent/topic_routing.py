"""Which offered tools a turn's first step may call: the topics the person's message names.

Left to choose among 14 tools, Qwen2.5-Coder-0.5B began a quarter of the task suite's requests
with the wrong kind of tool (bench/tasks-done.md, issue 41): current_time for "How many kilometres
is 26.2 miles?", notes_list for "what's on my calendar this week?", notes_create for "add pay
council tax to my todos". Yet such messages name their topic outright: two units of one kind, "my
calendar", "my todos", "a note", "the file", "BotPsy". When a message names one or more topics,
the first step's call grammar offers only those topics' tools, the tools of no topic (the
calculator, a host page's tools) and every tool that reads the person's own data (notes, events,
to-dos, files: a request about one topic often starts by reading another, "Note the hotel the
reviews recommend"); when it names none, every tool stays. Only the grammar changes:
the prompt's tool list is the same for every request (so a shipped prompt state still fits), later
steps may call any tool, and the model may answer in words.

A topic counts only when named plainly: a word of the topic (or, for words of six letters or more,
the word with one letter wrong: "calender"), or for units two units of one kind that the unit
converter knows (its own table, time units aside: "in two hours" is a when, not a conversion).
A message in words these lists do not cover names no topic, and so keeps every tool, unless it says
when: a message naming no topic but a day or a clock time ("Lunch with Sam on Saturday, 1pm to
2:30pm. Add it please", "anything on tomorrow evening?") is about what happens then, and names
the topics of the tools that take the moment a thing starts as the person says it (the agent
passes them: `@tool(said_when="start")`, the calendar's). Left every tool, Qwen2.5-Coder-0.5B
stored such events as notes.

A message that asks a question (questions.py) changes nothing on its first step: the caller passes
the offered tools with side effects, and they leave the routing's tools, whether or not it names a
topic ("how much flour goes in my pancake recipe?" had the 0.5B write a note).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .tools.units import unit_spellings

# Tools by topic; a tool in no topic (the calculator, host and eval tools) is always offered.
TOPIC_TOOLS: dict[str, tuple[str, ...]] = {
    "time": ("current_time", "convert_time", "date_difference", "date_add"),
    "units": ("convert_units",),
    "notes": ("notes_create", "notes_search", "notes_list", "notes_read", "notes_delete"),
    "calendar": ("calendar_add_event", "calendar_list_events", "calendar_delete_event", "calendar_free_slots",
                 "calendar_export_ics"),
    "todos": ("todo_add", "todo_list", "todo_complete", "todo_delete"),
    "files": ("files_list", "files_read", "files_search"),
    "python": ("run_python",),
    "docs": ("search_docs",),
    "messages": ("outbox_draft", "outbox_send", "outbox_list"),
    "web": ("fetch_url",),
}

# The words that name each topic (lower case; a phrase matches as a whole).
TOPIC_WORDS: dict[str, tuple[str, ...]] = {
    "time": ("time", "times", "timezone", "timezones", "time zone", "clock", "o'clock", "date", "dates",
             "weekday", "day of the week", "how old", "age"),
    "notes": ("note", "notes", "notebook", "jot"),
    "calendar": ("calendar", "calendars", "diary", "agenda", "schedule", "scheduled", "event", "events",
                 "meeting", "meetings", "appointment", "appointments"),
    "todos": ("todo", "todos", "to-do", "to-dos", "to do list", "task list", "remind", "reminder", "reminders"),
    "files": ("file", "files", "document", "documents", "spreadsheet", "csv", "txt", "pdf", "json"),
    "python": ("python", "script", "code"),
    "docs": ("botpsy", "botpsy-web"),
    "messages": ("email", "emails", "e-mail", "message", "messages", "outbox", "draft", "drafts", "send"),
    "web": ("url", "website", "web page", "webpage", "http", "https"),
}
# Tools that read the person's own data: a first step may call them whatever topics the message names.
PERSONAL_DATA_READS = ("notes_search", "notes_list", "notes_read", "calendar_list_events", "calendar_free_slots",
                       "todo_list", "files_list", "files_read", "files_search", "outbox_list")
_TYPO_MIN_LENGTH = 6
# Unit spellings that are everyday words or too short to mean a unit on their own.
_NOT_UNIT_WORDS = {"in", "at", "am", "pm", "a", "an", "is", "it", "do", "or", "us", "me", "my", "no", "so", "to",
                   "up", "we", "he", "be", "by", "go", "hi", "oh", "ok", "on", "as", "of", "if", "bit", "bits",
                   "turn", "turns", "rev", "gon", "°", "º", "deg", "degree", "degrees"}
_NOT_CONVERSION_DIMENSIONS = {"time"}


@dataclass(frozen=True)
class Routing:
    """The topics a message names, the offered tools its first step may call (all, when none), and
    of those the named topics' own and the tools of no topic (`topic_tools`: what a first step that
    called none of `tools` is asked again to call)."""
    topics: tuple[str, ...]
    tools: tuple[str, ...]
    restricted: bool
    topic_tools: tuple[str, ...] = ()
    question: bool = False  # the message asks a question: no tool with side effects

    def as_event(self) -> dict:
        return {"topics": list(self.topics), "tools": list(self.tools), **({"question": True} if self.question else {})}


def _phrase_pattern(phrases) -> re.Pattern:
    alternatives = "|".join(re.escape(phrase) for phrase in sorted(phrases, key=len, reverse=True))
    return re.compile(rf"(?<![a-z])(?:{alternatives})(?![a-z])", re.IGNORECASE)


_TOPIC_PATTERNS = {topic: _phrase_pattern(words) for topic, words in TOPIC_WORDS.items()}
_TYPO_WORDS = {word: topic for topic, words in TOPIC_WORDS.items() for word in words
               if len(word) >= _TYPO_MIN_LENGTH and word.isalpha()}
_UNITS = {spelling: target for spelling, target in unit_spellings().items()
          if len(spelling) >= 2 and spelling not in _NOT_UNIT_WORDS and target[0] not in _NOT_CONVERSION_DIMENSIONS}
_UNIT_PATTERN = _phrase_pattern(_UNITS)


def _one_edit_apart(a: str, b: str) -> bool:
    """True when one letter inserted, removed or replaced turns a into b (a != b)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    for index in range(len(a)):
        if a[index] != b[index]:
            rest_a = a[index + 1:] if len(a) == len(b) else a[index:]
            return rest_a == b[index + 1:]
    return True


def names_a_conversion(message: str) -> bool:
    """Two different units of one kind ("kilometres ... miles", "72 °F to Celsius")."""
    seen: dict[str, set[str]] = {}
    for found in _UNIT_PATTERN.finditer(message):
        dimension, symbol = _UNITS[found.group(0).lower()]
        seen.setdefault(dimension, set()).add(symbol)
    return any(len(symbols) >= 2 for symbols in seen.values())


def topics_named_in(message: str) -> list[str]:
    """The topics `message` names, in TOPIC_TOOLS order."""
    named = {topic for topic, pattern in _TOPIC_PATTERNS.items() if pattern.search(message)}
    for word in re.findall(r"[a-z]+", message.lower()):
        if len(word) >= _TYPO_MIN_LENGTH - 1:
            named.update(topic for known, topic in _TYPO_WORDS.items() if _one_edit_apart(word, known))
    if names_a_conversion(message):
        named.add("units")
    return [topic for topic in TOPIC_TOOLS if topic in named]


_TOPIC_OF = {tool: topic for topic, tools in TOPIC_TOOLS.items() for tool in tools}


def route(message: str, offered: list[str], when_tools: tuple[str, ...] = (),
          acting: tuple[str, ...] = ()) -> Routing:
    """The offered tools the first step of a turn starting with `message` may call. `when_tools`:
    the offered tools that take the moment the person says, when the message says one (the caller
    reads the clock: said_when.says_a_moment); their topics count when the message names none.
    `acting`: the offered tools with side effects, when the message asks a question (questions.py);
    none of them may be called. Unrestricted when the message names no topic, or none whose tools
    are offered, and asks no question."""
    return _routing(topics_named_in(message) or _topics_of(when_tools), offered, acting)


def one_topic_routings(offered: list[str], acting: tuple[str, ...] = ()) -> list[Routing]:
    """The restricted routings of messages that name one topic, one per topic with an offered tool,
    and with `acting` (the offered tools with side effects) the same for a question, and a question
    naming none: the first-step grammars most turns use, which the page's warm-up compiles ahead (a
    message that only says when is routed as one naming the calendar)."""
    routings = [_routing([topic], offered) for topic in TOPIC_TOOLS]
    if acting:
        routings += [_routing([topic], offered, acting) for topic in TOPIC_TOOLS] + [_routing([], offered, acting)]
    return [routing for routing in routings if routing.restricted]


def _topics_of(tools: tuple[str, ...]) -> list[str]:
    return [topic for topic in TOPIC_TOOLS if any(_TOPIC_OF.get(name) == topic for name in tools)]


def _routing(topics: list[str], offered: list[str], acting: tuple[str, ...] = ()) -> Routing:
    topics = [topic for topic in topics if any(_TOPIC_OF.get(name) == topic for name in offered)]
    if topics:
        own = tuple(name for name in offered if _TOPIC_OF.get(name) in (None, *topics))
        allowed = tuple(name for name in offered if name in own or name in PERSONAL_DATA_READS)
    else:
        own = allowed = tuple(offered)
    question = any(name in acting for name in offered)
    if question:
        own, allowed = (tuple(name for name in names if name not in acting) for names in (own, allowed))
    return Routing(tuple(topics), allowed, restricted=len(allowed) < len(offered), topic_tools=own, question=question)
