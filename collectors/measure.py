"""One rounding per unit, wherever a value is said: a page's table, a tile's finding, an alert's
words (app/words.py and the plug-ins' findings use it; static/app.js `DECIMALS` keeps the same
for the charts' legends)."""

from __future__ import annotations

# A temperature to a tenth, a fan whole, watts whole from 10 W (a tenth below), volts to
# hundredths. A page said "3702.94 RPM" in one place and "3703 RPM" in another, a legend "0.493°C".
DECIMALS: dict[str, tuple[int, ...]] = {"°C": (1,), "RPM": (0,), "W": (1, 0), "V": (2,)}
# Units whose figure keeps its trailing zeros: a rail at "12.00 V" was read to the hundredth.
FIXED = frozenset({"V"})


def measure(value: object, unit: str) -> str:
    """A value and its unit in the unit's one rounding, trailing zeros dropped but a voltage's:
    "34 °C", "21.3 °C", "3703 RPM", "35 W", "4.2 W", "12.00 V"; "–" when there is no number."""
    v = number(value)
    if v is None:
        return "–"
    places = DECIMALS.get(unit, (2,))
    decimals = places[0] if abs(v) < 10 or len(places) == 1 else places[1]
    figure = f"{v:.{decimals}f}"
    if "." in figure and unit not in FIXED:
        figure = figure.rstrip("0").rstrip(".")
    return f"{'0' if figure == '-0' else figure} {unit}"


def number(value: object) -> float | None:
    """A finite float, or None for anything else (None, "n/a", NaN, infinity)."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if v != v or v in (float("inf"), float("-inf")) else v
