"""What an ATA attribute's raw value means: decoded as smartctl's ``-v ID,FORMAT`` presets print it.

A raw value is 48 bits the vendor may pack several numbers into. smartctl decodes it when its
drive database (drivedb.h) knows the drive, and its JSON keeps both: ``raw.value`` (the 48 bits)
and ``raw.string`` (what ``smartctl -A`` prints). Judging ``raw.value`` is how tools report a
healthy Seagate as failing: its Raw_Read_Error_Rate (1), Seek_Error_Rate (7) and
Hardware_ECC_Recovered (195) hold an error count in the top 16 bits and an operation count in
the low 32, and its Command_Timeout (188) is three 16-bit counters.

So the order is: the string smartctl printed, when it is a decoded form (smartctl knew the
drive); else the vendor's packing where drivedb.h says so for the family (``raw24/raw32`` for
Seagate's 1, 7 and 195, ``raw16`` for its 188) and the temperature format for 190/194; else the
48 bits as they are. Formats: smartctl(8), ``-v, --vendorattribute``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# drivedb.h presets by vendor (the Seagate families' "-v 1,raw24/raw32 -v 7,raw24/raw32 -v 188,raw16
# -v 195,raw24/raw32"). Only what changes what a number means is here.
SEAGATE = {1: "raw24/raw32", 7: "raw24/raw32", 195: "raw24/raw32", 188: "raw16"}
ANY_VENDOR = {190: "tempminmax", 194: "tempminmax"}
# What the parts of a packed value are, for the disk's page.
PARTS = {"raw24/raw32": "errors / operations", "raw16": "three counters"}

_INT = re.compile(r"^(\d+)$")
_SLASH = re.compile(r"^(\d+)/(\d+)$")  # raw24/raw32: "2988/1234567"
_WORDS = re.compile(r"^(\d+) (\d+) (\d+)$")  # raw16: "0 0 0"
_LEAD = re.compile(r"^(\d+) \(")  # tempminmax "33 (Min/Max 26/37)", raw24(raw8) "2725 (151 234 0)"
_HOURS = re.compile(r"^(\d+)h\+(\d+)m")  # msec24hour32: "12345h+06m+07.890s"


@dataclass(frozen=True, slots=True)
class Decoded:
    value: float  # the number judged and charted: a count, degrees, hours
    shown: str  # as smartctl -v would print it: "2988/4294967295", "0 0 0", "33"
    how: str  # the format: "raw48", "raw24/raw32", "raw16", "tempminmax", "msec24hour32", or
    # "smartctl" for another form smartctl decoded ("2725 (151 234 0)": its first number is the value)


def vendor_of(model: str | None, family: str | None) -> str:
    """"seagate", "wdc", "toshiba", "hgst" or "" from the model and drivedb's model family."""
    text = f"{family or ''} {model or ''}".upper()
    if "SEAGATE" in text or re.match(r"^(ST\d|ZA\d)", (model or "").upper()):
        return "seagate"
    if "WESTERN DIGITAL" in text or (model or "").upper().startswith(("WDC", "WD")):
        return "wdc"
    if "TOSHIBA" in text:
        return "toshiba"
    if "HGST" in text or "HITACHI" in text:
        return "hgst"
    return ""


def decode(attr_id: int, raw: float | None, string: str | None, vendor: str = "") -> Decoded | None:
    """The attribute's value as a person means it, or None without a raw value."""
    if raw is None:
        return None
    raw_int = int(raw)
    text = (string or "").strip()
    if text and text != str(raw_int):
        printed = _printed(attr_id, text)
        if printed is not None:
            return printed
    fmt = (SEAGATE.get(attr_id) if vendor == "seagate" else None) or ANY_VENDOR.get(attr_id)
    if fmt == "raw24/raw32":
        high, low = raw_int >> 32, raw_int & 0xFFFFFFFF
        return Decoded(float(high), f"{high}/{low}", fmt)
    if fmt == "raw16":
        words = [(raw_int >> s) & 0xFFFF for s in (32, 16, 0)]
        return Decoded(float(max(words)), " ".join(str(w) for w in words), fmt)
    if fmt == "tempminmax" and raw_int > 0xFF:
        return Decoded(float(raw_int & 0xFF), str(raw_int & 0xFF), fmt)
    return Decoded(float(raw_int), str(raw_int), "raw48")


def _printed(attr_id: int, text: str) -> Decoded | None:
    """A decoded form smartctl printed; None for a form this does not know (the bits are used)."""
    if m := _SLASH.match(text):
        return Decoded(float(m[1]), text, "raw24/raw32")
    if m := _WORDS.match(text):
        # Seagate's 188: commands that timed out, and of them those over 5 s and 7.5 s; the
        # largest of the three is how many timed out, whatever order a firmware keeps them in.
        return Decoded(float(max(int(w) for w in m.groups())), text, "raw16")
    if m := _LEAD.match(text):
        # The first number is the value; the brackets hold the rest (min/max, an average, more words).
        return Decoded(float(m[1]), m[1], "tempminmax" if attr_id in (190, 194) else "smartctl")
    if m := _HOURS.match(text):
        return Decoded(float(m[1]), text, "msec24hour32")
    if m := _INT.match(text):
        return Decoded(float(m[1]), text, "raw48")
    return None
