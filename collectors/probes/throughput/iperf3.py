"""iperf3's JSON report (`iperf3 -c SERVER -J`), from text to a record.

A run that failed still prints JSON, with its reason in "error" ("unable to connect to server:
Connection refused"); bad arguments print the usage text instead. Both become an Iperf3Error
that carries iperf3's own words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from collectors import finite
from collectors.base import CollectorError, ParseError


class Iperf3Error(CollectorError):
    pass


@dataclass(frozen=True)
class Iperf3Result:
    protocol: str  # "TCP" | "UDP"
    reverse: bool
    seconds: float
    sent_bps: float | None
    received_bps: float  # what arrived at the receiving end: the throughput
    retransmits: int | None  # TCP only
    lost_percent: float | None = None  # UDP only


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


# Any: a tool's JSON output, read key by key (each value checked where it is used)
def _obj(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def parse_iperf3(text: str | bytes) -> Iperf3Result:
    try:
        doc = finite.loads(text)
    except (ValueError, UnicodeDecodeError):
        raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        first = next((ln.strip() for ln in raw.splitlines() if ln.strip()), "")
        raise ParseError(f"iperf3 did not print JSON: {first[:200]!r}" if first else "iperf3 printed nothing") from None
    if not isinstance(doc, dict):
        raise ParseError(f"iperf3 printed JSON that is not an object: {str(doc)[:80]!r}")
    if doc.get("error"):
        raise Iperf3Error(f"iperf3: {str(doc['error']).removeprefix('error - ')}")
    test = _obj(_obj(doc, "start"), "test_start")
    end = _obj(doc, "end")
    protocol = str(test.get("protocol") or "TCP")
    if protocol == "UDP":
        udp = _obj(end, "sum")
        received = _num(udp.get("bits_per_second"))
        if received is None:
            raise ParseError("iperf3 UDP report without end.sum.bits_per_second")
        return Iperf3Result("UDP", bool(test.get("reverse")), _num(udp.get("seconds")) or 0.0, None, received, None,
                            _num(udp.get("lost_percent")))
    sent, rcvd = _obj(end, "sum_sent"), _obj(end, "sum_received")
    received = _num(rcvd.get("bits_per_second"))
    if received is None:
        raise ParseError("iperf3 report without end.sum_received.bits_per_second (the test did not finish)")
    retrans = _num(sent.get("retransmits"))
    return Iperf3Result("TCP", bool(test.get("reverse")), _num(rcvd.get("seconds")) or 0.0,
                        _num(sent.get("bits_per_second")), received, int(retrans) if retrans is not None else None)


def iperf3_argv(iperf3: list[str], server: str, port: int, duration: int, reverse: bool) -> list[str]:
    return [*iperf3, "-c", server, "-p", str(port), "-t", str(duration), "-J", *(["-R"] if reverse else [])]
