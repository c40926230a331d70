"""The arguments the model writes are checked against the tool's schema before the tool runs."""

from botpsy_agent.validation import check_arguments


def test_a_tool_that_lists_no_properties_takes_no_arguments():
    """BFCL's get_account_info, get_current_speed: `{"properties": {}}`. The model invented
    `sector` and `speed`; the function raised TypeError on them. Refused here, as the grammar
    never lets a constrained call write them."""
    schema = {"type": "object", "properties": {}, "required": []}
    assert check_arguments({}, schema) == []
    assert check_arguments({"sector": "Technology"}, schema) == [
        "arguments: unknown argument 'sector' (allowed: none)"]


def test_listed_properties_are_the_arguments_there_are():
    schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
    assert check_arguments({"title": "x", "ticket_id": 1}, schema) == [
        "arguments: unknown argument 'ticket_id' (allowed: title)"]


def test_an_object_without_listed_properties_takes_any_keys_unless_it_says_otherwise():
    assert check_arguments({"anything": 1}, {"type": "object"}) == []
    assert check_arguments({"anything": 1}, {"type": "object", "additionalProperties": False}) == [
        "arguments: unknown argument 'anything' (allowed: none)"]
    typed = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert check_arguments({"a": 1}, typed) == []
    assert check_arguments({"a": "one"}, typed) != []
