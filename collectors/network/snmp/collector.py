"""Switch ports over SNMP (IF-MIB ifTable + ifXTable by numeric OID), read-only.

OIDs from RFC 2863 (IF-MIB); no MIB files are needed. Counters: ifHC*Octets (64-bit)
when the agent has them, ifIn/OutOctets (32-bit) otherwise. Flaps: an oper-status
change between polls, or an ifLastChange that moved while the status looks the same
(the port went down and up between two polls).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    MetricSpec,
    NoData,
    Runner,
    Sample,
)
from collectors.context import HostContext
from collectors.network.snmp.state import PortView, SnmpState, Target
from collectors.snmpwire import SnmpTarget, auth_data, explain
from collectors.state import State

IF_TABLE = "1.3.6.1.2.1.2.2.1"
IF_X_TABLE = "1.3.6.1.2.1.31.1.1.1"
SYS_UPTIME = "1.3.6.1.2.1.1.3.0"
COLUMNS = {
    f"{IF_TABLE}.2": "descr", f"{IF_TABLE}.3": "type", f"{IF_TABLE}.5": "speed", f"{IF_TABLE}.7": "admin",
    f"{IF_TABLE}.8": "oper", f"{IF_TABLE}.9": "last_change", f"{IF_TABLE}.10": "in_octets",
    f"{IF_TABLE}.13": "in_discards", f"{IF_TABLE}.14": "in_errors", f"{IF_TABLE}.16": "out_octets",
    f"{IF_TABLE}.19": "out_discards", f"{IF_TABLE}.20": "out_errors",
    f"{IF_X_TABLE}.1": "name", f"{IF_X_TABLE}.6": "hc_in_octets", f"{IF_X_TABLE}.10": "hc_out_octets",
    f"{IF_X_TABLE}.15": "high_speed", f"{IF_X_TABLE}.18": "alias",
}
OPER = {1: "up", 2: "down", 3: "testing", 4: "unknown", 5: "dormant", 6: "notPresent", 7: "lowerLayerDown"}


@dataclass(frozen=True, slots=True)
class Port:
    index: int
    name: str
    alias: str
    admin_up: bool
    oper: str
    speed_bps: int | None
    last_change: int | None  # sysUpTime ticks (1/100 s) at the last status change
    in_octets: int | None
    out_octets: int | None
    counters_64bit: bool
    in_errors: int | None
    out_errors: int | None
    in_discards: int | None
    out_discards: int | None


def parse_if_walk(varbinds: Iterable[tuple[str, Any]]) -> list[Port]:
    """Varbinds (numeric OID, value as int or str) of ifTable and ifXTable -> ports by ifIndex."""
    rows: dict[int, dict[str, object]] = {}
    for oid, value in varbinds:
        oid = oid.lstrip(".")
        col, _, row = oid.rpartition(".")
        name = COLUMNS.get(col)
        if name is None or not row.isdigit():
            continue
        rows.setdefault(int(row), {})[name] = value
    ports = []
    for idx, r in sorted(rows.items()):
        if "oper" not in r:
            raise CollectorError(f"ifIndex {idx}: the agent returned no ifOperStatus (a partial walk?)")
        hc = "hc_in_octets" in r and "hc_out_octets" in r
        high = _int(r.get("high_speed"))
        speed = high * 1_000_000 if high else _int(r.get("speed"))
        ports.append(Port(
            index=idx,
            name=str(r.get("name") or r.get("descr") or idx),
            alias=str(r.get("alias") or ""),
            admin_up=_int(r.get("admin")) == 1,
            oper=OPER.get(_int(r.get("oper")) or 0, "unknown"),
            speed_bps=speed or None,
            last_change=_int(r.get("last_change")),
            in_octets=_int(r.get("hc_in_octets" if hc else "in_octets")),
            out_octets=_int(r.get("hc_out_octets" if hc else "out_octets")),
            counters_64bit=hc,
            in_errors=_int(r.get("in_errors")), out_errors=_int(r.get("out_errors")),
            in_discards=_int(r.get("in_discards")), out_discards=_int(r.get("out_discards")),
        ))
    return ports


def _int(v: Any) -> int | None:
    try:
        return int(v) if v is not None and str(v) != "" else None
    except (TypeError, ValueError):
        return None


def count_flaps(prev: tuple[str, int | None] | None, port: Port) -> int:
    """Status changes since the previous poll (its (oper, last_change)), at least one if ifLastChange moved."""
    if prev is None:
        return 0
    oper, last_change = prev
    changed_status = oper != port.oper
    moved = port.last_change is not None and last_change is not None and port.last_change != last_change
    if changed_status:
        return 1
    # Same status but a newer last-change time: it went away and came back in between.
    return 2 if moved else 0


async def walk(target: SnmpTarget) -> tuple[int | None, list[tuple[str, Any]]]:
    """sysUpTime and the varbinds of ifTable and ifXTable. Only GET and GETBULK are ever sent."""
    from pysnmp.hlapi.v3arch import asyncio as h

    engine = h.SnmpEngine()
    try:
        transport = await h.UdpTransportTarget.create((target.host, target.port), timeout=target.timeout,
                                                      retries=target.retries)
        auth = auth_data(target)
        err, status, _, vbs = await h.get_cmd(engine, auth, transport, h.ContextData(),
                                              h.ObjectType(h.ObjectIdentity(SYS_UPTIME)))
        if err:
            raise CollectorError(explain(target, err))
        if status:
            raise CollectorError(f"{target.name}: agent error {status} reading sysUpTime")
        uptime = _int(vbs[0][1]) if vbs else None
        out: list[tuple[str, Any]] = []
        for table in (IF_TABLE, IF_X_TABLE):
            async for err, status, _, rows in h.bulk_walk_cmd(engine, auth, transport, h.ContextData(), 0, 25,
                                                              h.ObjectType(h.ObjectIdentity(table)),
                                                              lexicographicMode=False):
                if err:
                    raise CollectorError(explain(target, err))
                if status:
                    break  # an agent without ifXTable ends the walk with an error status
                for oid, value in rows:
                    out.append((str(oid), _value(value)))
        return uptime, out
    except OSError as exc:
        raise CollectorError(f"{target.name} ({target.host}:{target.port}): {exc}") from None
    finally:
        engine.close_dispatcher()


def _value(v: Any) -> Any:
    try:
        return int(v)
    except (TypeError, ValueError):
        return v.prettyPrint() if hasattr(v, "prettyPrint") else str(v)


class SnmpCollector(Collector):
    name: ClassVar[str] = "snmp"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_snmp_interface_oper_up": MetricSpec("1 if the port's operational status is up.",
                                                       states=("down", "up")),
        "rackpulse_snmp_interface_admin_up": MetricSpec("1 if the port is administratively enabled.",
                                                        states=("disabled", "enabled")),
        "rackpulse_snmp_interface_receive_bytes_total": MetricSpec("Octets received (64-bit when available).",
                                                                   "counter"),
        "rackpulse_snmp_interface_transmit_bytes_total": MetricSpec("Octets sent (64-bit when available).", "counter"),
        "rackpulse_snmp_interface_errors_total": MetricSpec("Errors by direction.", "counter"),
        "rackpulse_snmp_interface_discards_total": MetricSpec("Discards by direction.", "counter"),
        "rackpulse_snmp_interface_speed_bytes": MetricSpec("Port speed in bytes per second."),
        "rackpulse_snmp_interface_flaps_total": MetricSpec("Link flaps rackpulse has seen.", "counter"),
    }

    def __init__(self, targets: Sequence[SnmpTarget], walker: Callable[[SnmpTarget], Awaitable[Any]] | None = None) -> None:
        self.targets = list(targets)
        # The I/O seam: the real SNMP walk by default; the demo plugs in its simulated switch.
        self.walker = walker or walk
        self._prev: dict[tuple[str, str], tuple[str, int | None]] = {}  # (oper, last_change) per port
        self._flaps: dict[tuple[str, str], int] = {}
        self._read_at: dict[str, float] = {}  # target -> when it last answered

    def restore(self, state: State) -> None:
        if isinstance(state, SnmpState):
            for t in state.targets:
                if t.last_read is not None:
                    self._read_at[t.name] = t.last_read
                for p in t.ports:
                    self._flaps[(t.name, p.name)] = p.flaps or 0

    def collect(self) -> CollectResult:
        if not self.targets:
            raise NoData("no SNMP targets configured")
        result = CollectResult()

        async def all_targets() -> list[Any]:
            return await asyncio.gather(*(self.walker(t) for t in self.targets), return_exceptions=True)

        answers = asyncio.run(all_targets())
        views = []
        for target, answer in zip(self.targets, answers, strict=True):
            if isinstance(answer, BaseException):
                msg = str(answer) if isinstance(answer, CollectorError) else f"{target.name}: {answer!r}"
                result.warnings.append(msg)
                views.append(self._unread(target, msg))
                continue
            _, varbinds = answer
            try:
                ports = parse_if_walk(varbinds)
            except CollectorError as exc:
                result.warnings.append(f"{target.name}: {exc}")
                views.append(self._unread(target, f"{target.name}: {exc}"))
                continue
            self._read_at[target.name] = time.time()
            views.append(self._target_view(target, ports, result))
        if all(not v.up for v in views):
            raise CollectorError("; ".join(result.warnings))
        result.state = SnmpState(targets=views)
        return result

    def _unread(self, target: SnmpTarget, error: str) -> Target:
        return Target(name=target.name, host=target.host, up=False, error=error,
                      last_read=self._read_at.get(target.name))

    def _target_view(self, target: SnmpTarget, ports: list[Port], result: CollectResult) -> Target:
        out = []
        s = result.samples
        for p in ports:
            key = (target.name, p.name)
            flaps = self._flaps.get(key, 0) + count_flaps(self._prev.get(key), p)
            self._flaps[key] = flaps
            self._prev[key] = (p.oper, p.last_change)
            lab = {"target": target.name, "interface": p.name}
            s.append(Sample.of("rackpulse_snmp_interface_oper_up", 1 if p.oper == "up" else 0, **lab))
            s.append(Sample.of("rackpulse_snmp_interface_admin_up", 1 if p.admin_up else 0, **lab))
            if p.in_octets is not None:
                s.append(Sample.of("rackpulse_snmp_interface_receive_bytes_total", p.in_octets, **lab))
            if p.out_octets is not None:
                s.append(Sample.of("rackpulse_snmp_interface_transmit_bytes_total", p.out_octets, **lab))
            for direction, err, disc in (("in", p.in_errors, p.in_discards), ("out", p.out_errors, p.out_discards)):
                if err is not None:
                    s.append(Sample.of("rackpulse_snmp_interface_errors_total", err, direction=direction, **lab))
                if disc is not None:
                    s.append(Sample.of("rackpulse_snmp_interface_discards_total", disc, direction=direction, **lab))
            if p.speed_bps:
                s.append(Sample.of("rackpulse_snmp_interface_speed_bytes", p.speed_bps / 8, **lab))
            s.append(Sample.of("rackpulse_snmp_interface_flaps_total", flaps, **lab))
            result.entities.append(Entity("switch_port", f"{target.name}/{p.name}", {"oper": p.oper,
                                                                                     "admin_up": p.admin_up}))
            out.append(PortView(index=p.index, name=p.name, alias=p.alias, admin_up=p.admin_up, oper=p.oper,
                                speed_bps=p.speed_bps, in_octets=p.in_octets, out_octets=p.out_octets,
                                counters_64bit=p.counters_64bit, in_errors=p.in_errors, out_errors=p.out_errors,
                                flaps=flaps))
        return Target(name=target.name, host=target.host, up=True, ports=out, last_read=self._read_at.get(target.name))


# -- plug-in -----------------------------------------------------------------------------

def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.snmp]."""
    return SnmpCollector(c.targets)
