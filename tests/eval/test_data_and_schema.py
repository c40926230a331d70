"""The BFCL loader reads every single-turn category, samples the same cases for the same seed,
and says how to install the data when it is missing; every function doc in the data converts
to a JSON schema the agent accepts as a tool and renders with its chat template."""

import sys

import pytest

from botpsy_agent.chat_format import ChatFormat
from botpsy_agent.tooling import Tool
from botpsy_eval.data import CATEGORIES, BfclDataError, load_cases, load_category, sample_cases
from botpsy_eval.schema import SchemaError, TYPE_NAMES, tool_name, tool_spec, tool_specs, to_json_schema

JSON_SCHEMA_TYPES = {"object", "number", "array", "string", "integer", "boolean"}
SIMPLE_TEMPLATE = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}{{ tools | tojson }}"


def walk_types(schema, found, where):
    if "type" in schema:
        found.add((schema["type"], where))
    for inner in schema.get("properties", {}).values():
        walk_types(inner, found, where)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            walk_types(schema[key], found, where)


@pytest.fixture(scope="module")
def all_cases():
    return load_cases(CATEGORIES)


def test_every_category_loads_with_answers_where_bfcl_has_them(all_cases):
    sizes = {category: sum(case.category == category for case in all_cases) for category in CATEGORIES}
    assert sizes["simple_python"] == 400 and sizes["multiple"] == 200 and sizes["live_multiple"] == 1053
    assert all(size > 0 for size in sizes.values())
    for case in all_cases:
        assert case.messages
        if case.category in ("irrelevance", "live_irrelevance", "live_relevance"):  # some offer no function at all
            assert case.possible_answer is None
        else:
            assert case.possible_answer and case.functions, case.id


def test_every_parameter_type_in_the_data_converts_to_json_schema(all_cases):
    bfcl_types, json_types = set(), set()
    chat_format = ChatFormat(SIMPLE_TEMPLATE)
    for case in all_cases:
        for function in case.functions:
            walk_types(function["parameters"], bfcl_types, "bfcl")
        specs = tool_specs(case.functions)
        for spec in specs:
            walk_types(spec["function"]["parameters"], json_types, "json")
            Tool.from_json_schema(spec["function"]["name"], spec["function"]["description"],
                                  spec["function"]["parameters"], handler=lambda arguments: None)
        chat_format.render(case.messages, specs, thinking=False)
    assert {t for t, _ in bfcl_types} == {"string", "dict", "integer", "boolean", "float", "array", "tuple", "any"}
    assert {t for t, _ in json_types} <= JSON_SCHEMA_TYPES


def test_the_conversion_rules():
    schema = to_json_schema({"type": "dict", "required": ["a"], "properties": {
        "a": {"type": "float", "description": "x", "default": 1.5},
        "b": {"type": "tuple", "items": {"type": "integer"}},
        "c": {"type": "any", "description": "anything"},
        "d": {"type": "array", "items": {"type": "dict", "properties": {"e": {"type": "string", "enum": ["x"]}}}},
        "f": {"type": "boolean", "optional": True}}})
    assert schema == {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "number", "description": "x", "default": 1.5},
        "b": {"type": "array", "items": {"type": "integer"}},
        "c": {"description": "anything"},
        "d": {"type": "array", "items": {"type": "object", "properties": {"e": {"type": "string", "enum": ["x"]}}}},
        "f": {"type": "boolean"}}}
    assert set(TYPE_NAMES) >= {"dict", "float", "tuple", "any"}


def test_names_become_tool_names_and_clashes_or_unknown_types_are_named():
    assert tool_name("math.factorial") == "math_factorial"
    assert tool_spec({"name": "a.b", "parameters": {"type": "dict", "properties": {}}})["function"]["name"] == "a_b"
    with pytest.raises(SchemaError, match="a_b"):
        tool_specs([{"name": "a.b", "parameters": {}}, {"name": "a_b", "parameters": {}}])
    with pytest.raises(SchemaError, match=r"f\.x: unknown BFCL type 'HashMap'"):
        tool_spec({"name": "f", "parameters": {"type": "dict", "properties": {"x": {"type": "HashMap"}}}})


def test_a_sample_is_fixed_by_its_seed_and_keeps_the_file_order():
    cases = load_category("multiple")
    first, again, other = (sample_cases(cases, 5, seed) for seed in (0, 0, 1))
    assert [c.id for c in first] == [c.id for c in again] != [c.id for c in other]
    order = [c.id for c in cases]
    assert [c.id for c in first] == sorted((c.id for c in first), key=order.index)
    assert len(sample_cases(cases, 10_000, 0)) == len(cases)


def test_samples_nest_so_a_larger_limit_keeps_the_smaller_ones_cases():
    for category in ("simple_python", "live_simple", "live_relevance"):
        cases = load_category(category)
        sizes = [1, 5, 10, 50, len(cases)]
        samples = [{case.id for case in sample_cases(cases, size, 0)} for size in sizes]
        assert [len(sample) for sample in samples] == [min(size, len(cases)) for size in sizes]
        assert all(small <= large for small, large in zip(samples, samples[1:])), category


def test_an_unknown_category_lists_the_known_ones():
    with pytest.raises(ValueError, match="'simple_java'.*simple_python"):
        load_cases(["simple_java"])


def test_without_the_package_the_error_names_it_and_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "bfcl_eval", None)  # what an environment without it looks like
    with pytest.raises(BfclDataError, match=r"'bfcl-eval' is missing.*pip install --no-deps bfcl-eval==2026\.3\.23"):
        load_category("simple_python")
