"""SMART's names as a person says them: ATA attributes by ID, NVMe's critical warning bits."""

from __future__ import annotations

# ATA attributes by ID as a person says them: the names smartctl prints vary by vendor and
# drive database ("Reallocated_Sector_Ct"); the ID is what the attribute is.
ATTRIBUTE_WORDS = {1: "read error rate", 3: "spin-up time", 5: "reallocated sectors", 7: "seek error rate",
                   9: "power-on hours", 10: "spin-up retries", 12: "power cycles", 171: "program failures",
                   172: "erase failures", 177: "wear levelling count", 183: "runtime bad blocks",
                   184: "end-to-end errors", 187: "reported uncorrectable errors", 188: "command timeouts",
                   190: "airflow temperature", 194: "temperature", 196: "reallocation events",
                   197: "pending sectors", 198: "offline uncorrectable sectors", 199: "UDMA CRC errors",
                   231: "life left", 233: "media wearout"}
# NVMe's critical warning bits (NVMe base specification, SMART / Health log, byte 0).
CRITICAL_WARNING_WORDS = {0x01: "spare below threshold", 0x02: "temperature", 0x04: "reliability degraded",
                          0x08: "read-only", 0x10: "volatile memory backup failed", 0x20: "persistent memory read-only"}


def attribute_words(attr: str) -> str:
    """"5 Reallocated_Sector_Ct" -> "reallocated sectors (SMART 5)"; an unknown one by its own name."""
    ident, _, name = attr.partition(" ")
    if not ident.isdigit():
        return attr.replace("_", " ")
    said = ATTRIBUTE_WORDS.get(int(ident)) or name.replace("_", " ") or "attribute"
    return f"{said} (SMART {ident})"
