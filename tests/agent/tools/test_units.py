"""Unit conversion: exact factors, spellings, temperatures, and clear refusals."""

import pytest

from botpsy_agent.tooling import ToolError
from botpsy_agent.tools.units import convert_units

from .conftest import call


@pytest.mark.parametrize("value, source, target, expected", [
    (5, "mi", "km", 8.04672),
    (1, "inch", "cm", 2.54),
    (3, "feet", "inches", 36),
    (1, "lb", "g", 453.59237),
    (1, "stone", "lbs", 14),
    (1, "US gallon", "L", 3.785411784),
    (1, "imp gal", "litres", 4.54609),
    (1, "cup", "ml", 236.5882365),
    (1, "tbsp", "tsp", 3),
    (1, "acre", "m2", 4046.8564224),
    (1, "ha", "m²", 10000),
    (60, "mph", "km/h", 96.56064),
    (10, "knots", "km/h", 18.52),
    (2, "hours", "minutes", 120),
    (1, "week", "days", 7),
    (1, "GiB", "MiB", 1024),
    (1, "GB", "MB", 1000),
    (1, "byte", "bit", 8),
    (100, "Mbit", "MB", 12.5),
    (1, "kWh", "kJ", 3600),
    (1, "kcal", "kJ", 4.184),
    (1, "atm", "hPa", 1013.25),
    (1, "bar", "kPa", 100),
    (1, "kW", "W", 1000),
])
def test_conversions(ctx, value, source, target, expected):
    answer = call(convert_units, ctx, value=value, from_unit=source, to_unit=target)
    assert answer["result"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("value, source, target, expected", [
    (100, "°C", "°F", 212), (-40, "celsius", "fahrenheit", -40), (32, "F", "C", 0),
    (0, "K", "°C", -273.15), (98.6, "degF", "kelvin", 310.15),
])
def test_temperatures_are_affine(ctx, value, source, target, expected):
    answer = call(convert_units, ctx, value=value, from_unit=source, to_unit=target)
    assert answer["result"] == pytest.approx(expected, abs=1e-9)
    assert answer["dimension"] == "temperature"


@pytest.mark.parametrize("source, target, expected, text", [
    ("degrees", "celsius", 22.2222222222, "72 °F = 22.2222222222 °C"),      # "72 degrees Fahrenheit to Celsius"
    ("degrees fahrenheit", "degrees celsius", 22.2222222222, "72 °F = 22.2222222222 °C"),
    ("deg F", "ºC", 22.2222222222, "72 °F = 22.2222222222 °C"),
    ("farenheit", "celcius", 22.2222222222, "72 °F = 22.2222222222 °C"),
    ("°C", "degrees", 161.6, "72 °C = 161.6 °F"),
])
def test_degrees_as_people_write_them(ctx, source, target, expected, text):
    answer = call(convert_units, ctx, value=72, from_unit=source, to_unit=target)
    assert answer["result"] == pytest.approx(expected) and answer["text"] == text


def test_us_before_a_customary_unit_is_that_unit(ctx):
    assert call(convert_units, ctx, value=1.5, from_unit="liters", to_unit="US cups")["text"] == "1.5 l = 6.3401292566 cup"
    assert call(convert_units, ctx, value=1, from_unit="U.S. pints", to_unit="ml")["result"] == pytest.approx(473.176473)


def test_angles(ctx):
    assert call(convert_units, ctx, value=180, from_unit="deg", to_unit="rad")["result"] == pytest.approx(3.14159265358979)


def test_answer_reads_as_a_sentence(ctx):
    answer = call(convert_units, ctx, value=1.5, from_unit="kilometres", to_unit="m")
    assert answer["text"] == "1.5 km = 1500 m"
    assert answer["result"] == 1500


@pytest.mark.parametrize("value, source, target, message", [
    (1, "kg", "m", r"cannot convert kg \(mass\) to m \(length\)"),
    (1, "°C", "m/s", "cannot convert"),
    (1, "parsec", "m", "unknown unit 'parsec'.*for example value 72, from_unit \"°F\""),
    (1, "kilometr", "m", "did you mean"),
    (1, "mb", "kB", "ambiguous"),
    (-300, "°C", "K", "below absolute zero"),
    (float("inf"), "m", "km", "finite number"),
])
def test_refusals(ctx, value, source, target, message):
    with pytest.raises(ToolError, match=message):
        call(convert_units, ctx, value=value, from_unit=source, to_unit=target)
