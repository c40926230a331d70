"""Unit conversion: length, mass, volume, area, speed, time, data size, energy,
pressure, power, angle and temperature. Factors are exact Fractions where the
unit is defined exactly (1 in = 0.0254 m, 1 lb = 0.45359237 kg, 1 US gal = 231 in³).
"""

from __future__ import annotations

import difflib
import math
from fractions import Fraction as F

from botpsy_agent.tooling import ToolContext, ToolError, tool

# dimension -> {unit symbol: (factor to the dimension's base unit, aliases)}
_INCH = F("0.0254")
_FOOT = 12 * _INCH
_MILE = 5280 * _FOOT
_POUND = F("0.45359237")
_US_GALLON = 231 * _INCH ** 3
_IMPERIAL_GALLON = F("0.00454609")
_DAY = 86400
_YEAR = F("365.2425") * _DAY          # mean Gregorian year

UNITS: dict[str, dict[str, tuple[F | float, tuple[str, ...]]]] = {
    "length": {
        "m": (F(1), ("meter", "metre")), "km": (F(1000), ("kilometer", "kilometre")),
        "cm": (F(1, 100), ("centimeter", "centimetre")), "mm": (F(1, 1000), ("millimeter", "millimetre")),
        "µm": (F(1, 10**6), ("um", "micrometer", "micron")), "nm": (F(1, 10**9), ("nanometer",)),
        "in": (_INCH, ("inch", "inches", '"')), "ft": (_FOOT, ("foot", "feet", "'")),
        "yd": (3 * _FOOT, ("yard",)), "mi": (_MILE, ("mile",)),
        "nmi": (F(1852), ("nautical mile",)), "ly": (F(9460730472580800), ("light year", "light-year")),
    },
    "mass": {
        "kg": (F(1), ("kilogram", "kilo")), "g": (F(1, 1000), ("gram",)), "mg": (F(1, 10**6), ("milligram",)),
        "µg": (F(1, 10**9), ("ug", "mcg", "microgram")), "t": (F(1000), ("tonne", "metric ton")),
        "lb": (_POUND, ("lbs", "pound")), "oz": (_POUND / 16, ("ounce",)), "st": (14 * _POUND, ("stone",)),
        "short ton": (2000 * _POUND, ("us ton",)), "long ton": (2240 * _POUND, ("imperial ton",)),
    },
    "volume": {
        "m³": (F(1), ("m3", "cubic meter", "cubic metre")), "l": (F(1, 1000), ("L", "liter", "litre")),
        "ml": (F(1, 10**6), ("mL", "milliliter", "millilitre", "cm³", "cm3", "cc")),
        "cl": (F(1, 10**5), ("centiliter", "centilitre")), "dl": (F(1, 10**4), ("deciliter", "decilitre")),
        "gal": (_US_GALLON, ("gallon", "us gallon")), "imp gal": (_IMPERIAL_GALLON, ("imperial gallon", "uk gallon")),
        "qt": (_US_GALLON / 4, ("quart",)), "pt": (_US_GALLON / 8, ("pint", "us pint")),
        "imp pt": (_IMPERIAL_GALLON / 8, ("imperial pint", "uk pint")), "cup": (_US_GALLON / 16, ()),
        "fl oz": (_US_GALLON / 128, ("fluid ounce", "floz")), "tbsp": (_US_GALLON / 256, ("tablespoon",)),
        "tsp": (_US_GALLON / 768, ("teaspoon",)), "ft³": (_FOOT ** 3, ("ft3", "cubic foot", "cubic feet")),
        "in³": (_INCH ** 3, ("in3", "cubic inch")),
    },
    "area": {
        "m²": (F(1), ("m2", "sq m", "square meter", "square metre")),
        "km²": (F(10**6), ("km2", "sq km", "square kilometer", "square kilometre")),
        "cm²": (F(1, 10**4), ("cm2", "square centimeter", "square centimetre")),
        "mm²": (F(1, 10**6), ("mm2", "square millimeter", "square millimetre")),
        "ha": (F(10**4), ("hectare",)), "acre": (4840 * (3 * _FOOT) ** 2, ("ac",)),
        "ft²": (_FOOT ** 2, ("ft2", "sq ft", "square foot", "square feet")),
        "in²": (_INCH ** 2, ("in2", "sq in", "square inch")),
        "yd²": ((3 * _FOOT) ** 2, ("yd2", "sq yd", "square yard")),
        "mi²": (_MILE ** 2, ("mi2", "sq mi", "square mile")),
    },
    "speed": {
        "m/s": (F(1), ("meters per second", "metres per second", "mps")),
        "km/h": (F(1000, 3600), ("kmh", "kph", "km/hr", "kilometers per hour", "kilometres per hour")),
        "mph": (_MILE / 3600, ("mi/h", "miles per hour")), "kn": (F(1852, 3600), ("knot", "kt", "kts")),
        "ft/s": (_FOOT, ("fps", "feet per second")),
    },
    "time": {
        "s": (F(1), ("sec", "second")), "ms": (F(1, 1000), ("millisecond",)),
        "µs": (F(1, 10**6), ("us", "microsecond")), "ns": (F(1, 10**9), ("nanosecond",)),
        "min": (F(60), ("minute",)), "h": (F(3600), ("hr", "hour")), "day": (F(_DAY), ("d",)),
        "week": (F(7 * _DAY), ("wk",)), "month": (_YEAR / 12, ("mo",)), "year": (_YEAR, ("yr", "a")),
    },
    "data size": {
        "bit": (F(1), ("b",)), "B": (F(8), ("byte", "octet")),
        "kB": (F(8 * 10**3), ("KB", "kilobyte")), "MB": (F(8 * 10**6), ("megabyte",)),
        "GB": (F(8 * 10**9), ("gigabyte",)), "TB": (F(8 * 10**12), ("terabyte",)),
        "PB": (F(8 * 10**15), ("petabyte",)),
        "KiB": (F(8 * 2**10), ("kibibyte",)), "MiB": (F(8 * 2**20), ("mebibyte",)),
        "GiB": (F(8 * 2**30), ("gibibyte",)), "TiB": (F(8 * 2**40), ("tebibyte",)),
        "kbit": (F(10**3), ("kb", "Kb", "kilobit")), "Mbit": (F(10**6), ("Mb", "megabit")),
        "Gbit": (F(10**9), ("Gb", "gigabit")),
    },
    "energy": {
        "J": (F(1), ("joule",)), "kJ": (F(1000), ("kilojoule",)), "cal": (F("4.184"), ("calorie",)),
        "kcal": (F(4184), ("Cal", "kilocalorie")), "Wh": (F(3600), ("watt hour", "watt-hour")),
        "kWh": (F(3_600_000), ("kilowatt hour", "kilowatt-hour")), "BTU": (F("1055.05585262"), ("btu",)),
        "eV": (F("1.602176634e-19"), ("electronvolt",)),
    },
    "pressure": {
        "Pa": (F(1), ("pascal",)), "kPa": (F(1000), ("kilopascal",)), "hPa": (F(100), ("hectopascal",)),
        "bar": (F(10**5), ()), "mbar": (F(100), ("millibar",)), "atm": (F(101325), ("atmosphere",)),
        "psi": (_POUND * F("9.80665") / _INCH ** 2, ("lbf/in²", "lbf/in2")),
        "mmHg": (F("133.322387415"), ("torr",)),
    },
    "power": {
        "W": (F(1), ("watt",)), "kW": (F(1000), ("kilowatt",)), "MW": (F(10**6), ("megawatt",)),
        "hp": (F("745.69987158227022"), ("horsepower",)),
    },
    "angle": {
        "rad": (1.0, ("radian",)), "deg": (math.pi / 180, ("°", "degree")),
        "grad": (math.pi / 200, ("gon", "gradian")), "turn": (2 * math.pi, ("rev", "revolution")),
    },
}

# Temperature is affine: (scale, offset) so that kelvin = value * scale + offset.
TEMPERATURES = {"°C": (F(1), F("273.15"), ("C", "celsius", "celcius", "degc", "deg c", "degrees celsius",
                                           "degree celsius", "degrees c", "centigrade", "ºC")),
                "°F": (F(5, 9), F("273.15") - F(32 * 5, 9), ("F", "fahrenheit", "farenheit", "degf", "deg f",
                                                            "degrees fahrenheit", "degree fahrenheit", "degrees f", "ºF")),
                "K": (F(1), F(0), ("kelvin", "degrees kelvin"))}
# "72 degrees" into °C: a person converting "degrees" to a temperature scale means the other
# common scale (the result says which it read).
_BARE_DEGREES = {"degree", "degrees", "deg", "°", "º"}
_OTHER_SCALE = {"°C": "°F", "°F": "°C", "K": "°C"}
EXAMPLE = 'for example value 72, from_unit "°F", to_unit "°C"'


def _spellings(symbol: str, aliases: tuple[str, ...]) -> list[str]:
    words = [symbol, *aliases]
    plurals = [word + "s" for word in words if len(word) >= 3 and word[-1].isalpha() and not word.endswith("s")]
    plurals += [word.replace("foot", "feet") for word in words if "foot" in word]
    return words + plurals


def _build_index() -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str] | None]]:
    exact: dict[str, tuple[str, str]] = {}
    for dimension, units in UNITS.items():
        for symbol, (_, aliases) in units.items():
            for spelling in _spellings(symbol, aliases):
                exact[spelling] = (dimension, symbol)
    for symbol, (_, _, aliases) in TEMPERATURES.items():
        for spelling in _spellings(symbol, aliases):
            exact[spelling] = ("temperature", symbol)
    folded: dict[str, tuple[str, str] | None] = {}
    for spelling, target in exact.items():
        key = spelling.lower()
        folded[key] = target if folded.get(key, target) == target else None   # None: ambiguous
    return exact, folded


_EXACT, _FOLDED = _build_index()


def unit_spellings() -> dict[str, tuple[str, str]]:
    """Every lower-case spelling the converter reads as exactly one unit: (dimension, symbol)."""
    return {spelling: target for spelling, target in _FOLDED.items() if target is not None}


def find_unit(name: str) -> tuple[str, str]:
    """(dimension, symbol) for a unit name, or ToolError with suggestions."""
    cleaned = " ".join(str(name).strip().split()).replace("^2", "²").replace("^3", "³")
    if cleaned in _EXACT:
        return _EXACT[cleaned]
    folded = _FOLDED.get(cleaned.lower(), False)
    if folded:
        return folded
    if folded is None:
        candidates = sorted({symbol for spelling, (_, symbol) in _EXACT.items() if spelling.lower() == cleaned.lower()})
        raise ToolError(f"unit {name!r} is ambiguous: write it exactly as one of {', '.join(candidates)}")
    if cleaned.lower().startswith(("us ", "u.s. ")):  # "US cups": US customary is what these units are
        return find_unit(cleaned.split(" ", 1)[1])
    close = difflib.get_close_matches(cleaned.lower(), list(_FOLDED), n=4, cutoff=0.7)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise ToolError(f"unknown unit {name!r}{hint} (dimensions: {', '.join([*UNITS, 'temperature'])}; {EXAMPLE})")


def _format(value: F | float) -> str:
    if isinstance(value, F) and value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.12g}"


def _bare_degrees(name: str) -> bool:
    return " ".join(str(name).strip().lower().split()) in _BARE_DEGREES


def convert(value: F | float, from_unit: str, to_unit: str) -> tuple[F | float, str, str, str]:
    """(converted value, dimension, from symbol, to symbol)."""
    from_dimension, from_symbol = find_unit(from_unit)
    to_dimension, to_symbol = find_unit(to_unit)
    if to_dimension == "temperature" and _bare_degrees(from_unit):
        from_dimension, from_symbol = "temperature", _OTHER_SCALE[to_symbol]
    elif from_dimension == "temperature" and _bare_degrees(to_unit):
        to_dimension, to_symbol = "temperature", _OTHER_SCALE[from_symbol]
    if from_dimension != to_dimension:
        raise ToolError(f"cannot convert {from_symbol} ({from_dimension}) to {to_symbol} ({to_dimension}); {EXAMPLE}")
    if from_dimension == "temperature":
        scale, offset, _ = TEMPERATURES[from_symbol]
        kelvin = value * scale + offset
        if kelvin < 0:
            raise ToolError(f"{_format(value)} {from_symbol} is below absolute zero")
        to_scale, to_offset, _ = TEMPERATURES[to_symbol]
        return (kelvin - to_offset) / to_scale, from_dimension, from_symbol, to_symbol
    units = UNITS[from_dimension]
    return value * units[from_symbol][0] / units[to_symbol][0], from_dimension, from_symbol, to_symbol


@tool
def convert_units(ctx: ToolContext, value: float, from_unit: str, to_unit: str) -> dict:
    """Convert a quantity between units of length, mass, volume, area, speed, time, data size,
    energy, pressure, power, angle or temperature (US customary gallon/pint/cup; "imp gal" for imperial).

    Args:
        value: The amount to convert.
        from_unit: Unit of the value, e.g. "km", "lb", "°F", "GiB", "mph", "cup".
        to_unit: Unit wanted, e.g. "mi", "kg", "°C", "MB", "km/h", "ml".
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ToolError(f"value must be a finite number, got {value!r}")
    exact_value = F(repr(value)) if isinstance(value, float) else F(value)
    result, dimension, from_symbol, to_symbol = convert(exact_value, from_unit, to_unit)
    shown = _format(result)
    return {"result": float(result) if not (isinstance(result, F) and result.denominator == 1) else int(result),
            "text": f"{_format(exact_value)} {from_symbol} = {shown} {to_symbol}", "dimension": dimension}
