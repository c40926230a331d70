"""Task files are data anyone can write; a bad line is refused before anything runs, naming the
file, the line and the field."""

import pytest

from botpsy_tasks.data import DEFAULT_NOW, DEFAULT_TIMEZONE, TaskFileError, load_tasks, read_task_file, select_tasks

GOOD = {"id": "ok", "category": "calculator", "turns": ["What is 2+2?"], "checks": [{"answer_number": 4}]}


def test_the_public_task_files_load_with_unique_ids_and_defaults_filled_in():
    tasks = load_tasks()
    assert len({task.id for task in tasks}) == len(tasks) >= 10
    assert all(task.data["now"] and task.data["timezone"] for task in tasks)


def test_a_task_gets_the_default_clock_and_an_implicit_no_unwanted_acting_call_check(task_file):
    task, acting = read_task_file(task_file(GOOD, {**GOOD, "id": "note", "approve": ["notes_create"]}))
    assert (task.data["now"], task.data["timezone"]) == (DEFAULT_NOW, DEFAULT_TIMEZONE)
    assert task.checks[-1] == {"acting_calls": []}
    assert acting.checks[-1] == {"acting_calls": ["notes_create"]}


def test_also_enabled_adds_tools_to_the_pages_default_set(task_file):
    from botpsy_agent.tool_selection import DEFAULT_ENABLED_TOOLS

    default, own = read_task_file(task_file({**GOOD, "settings": {"alsoEnabled": ["notes_delete"]}},
                                            {**GOOD, "id": "own", "settings": {"enabledTools": ["calculator"],
                                                                               "alsoEnabled": ["notes_delete"]}}))
    assert default.data["settings"] == {"enabledTools": [*DEFAULT_ENABLED_TOOLS, "notes_delete"]}
    assert own.data["settings"] == {"enabledTools": ["calculator", "notes_delete"]}


@pytest.mark.parametrize("change, field, words", [
    ({"turns": []}, "turns", "at least one"),
    ({"turns": ["hi", ""]}, "turns[1]", "non-empty"),
    ({"id": "has space"}, "id", "letters"),
    ({"category": "Calculator"}, "category", "lowercase"),
    ({"colour": "red"}, "colour", "unknown field"),
    ({"now": "tomorrow"}, "now", "YYYY-MM-DD"),
    ({"timezone": "Mars/Olympus"}, "timezone", "Mars/Olympus"),
    ({"approve": ["calculator"]}, "approve", "no side effects"),
    ({"approve": ["make_coffee"]}, "approve", "make_coffee"),
    ({"settings": {"enabledTools": ["nope"]}}, "settings.enabledTools", "nope"),
    ({"settings": {"speed": 2}}, "settings.speed", "unknown setting"),
    ({"settings": {"alsoEnabled": ["nope"]}}, "settings.alsoEnabled", "nope"),
    ({"settings": {"alsoEnabled": None}}, "settings.alsoEnabled", "list of tool names"),
    ({"setup": {"notes": [{"title": "no text"}]}}, "setup.notes[0]", "missing required argument 'text'"),
    ({"setup": {"todos": [{"text": "x", "done": "yes"}]}}, "setup.todos[0].done", "true or false"),
    ({"setup": {"files": [{"name": "a.txt"}]}}, "setup.files[0].text", "must be text"),
    ({"setup": {"pets": []}}, "setup.pets", "unknown"),
    ({"checks": []}, "checks", "at least one"),
    ({"checks": [{"answer_number": "four"}]}, "checks[0].answer_number", "must be a number"),
    ({"checks": [{"answer_number": 4, "tolerance": -1}]}, "checks[0].tolerance", "at least 0"),
    ({"checks": [{"answer_is": 4}]}, "checks[0].answer_is", "unknown check"),
    ({"checks": [{"answer_contains": "x", "turn": 2}]}, "checks[0].turn", "1 to 1"),
    ({"checks": [{"answer_contains": "x", "colour": 1}]}, "checks[0].colour", "no option"),
    ({"checks": [{"stored": "pets"}]}, "checks[0].stored", "notes, todos, events"),
    ({"checks": [{"stored": "notes", "where": {"due": {"date": "friday"}}}]}, "checks[0].where.due", "YYYY-MM-DD"),
    ({"checks": [{"stored": "notes", "count": 1, "exists": True}]}, "checks[0].count", "not both"),
    ({"checks": [{"called": "calculate_units"}]}, "checks[0].called", "calculate_units"),
    ({"checks": [{"called": "calculator", "with": {"expression": {"near": 3}}}]}, "checks[0].with.expression",
     "unknown condition"),
    ({"checks": [{"acting_calls": "notes_create"}]}, "checks[0].acting_calls", "list"),
])
def test_a_bad_line_is_refused_naming_the_file_the_line_and_the_field(task_file, change, field, words):
    path = task_file("# a comment line", GOOD, "", {**GOOD, "id": "bad", **change})
    with pytest.raises(TaskFileError) as refused:
        read_task_file(path)
    message = str(refused.value)
    task_id = change.get("id", "bad")
    assert message.startswith(f"{path}:4 (task {task_id}): {field}: "), message
    assert words in message


def test_a_line_that_is_not_json_and_a_repeated_id_are_refused_with_their_lines(task_file):
    with pytest.raises(TaskFileError, match=r"tasks.jsonl:2: not JSON"):
        read_task_file(task_file(GOOD, '{"id": "x",'))
    first, second = task_file(GOOD, name="a.jsonl"), task_file({**GOOD, "category": "other"}, name="b.jsonl")
    with pytest.raises(TaskFileError, match=r"b.jsonl:1: id: 'ok' is already the id of the task at .*a.jsonl:1"):
        load_tasks([first, second])


def test_categories_and_limit_select_in_file_order_and_an_unknown_category_is_named(task_file):
    tasks = read_task_file(task_file(*({**GOOD, "id": f"c{n}", "category": "calculator"} for n in range(3)),
                                     {**GOOD, "id": "u1", "category": "units"}))
    assert [task.id for task in select_tasks(tasks, limit=2)] == ["c0", "c1", "u1"]
    assert [task.id for task in select_tasks(tasks, ["units"])] == ["u1"]
    with pytest.raises(TaskFileError, match="no task has category 'notes'; the categories are calculator, units"):
        select_tasks(tasks, ["notes"])
