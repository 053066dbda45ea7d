"""UPSes through NUT's network protocol (upsd, TCP 3493): LIST UPS, LIST VAR.

Format source: NUT's docs/net-protocol.txt. Replies are lines; a list is framed by
"BEGIN LIST VAR <ups>" ... "END LIST VAR <ups>"; values are double-quoted with
backslash escapes; errors are "ERR <CODE>" (DRIVER-NOT-CONNECTED, DATA-STALE, ...).
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from collectors import energy, finite
from collectors.base import (
    DEFAULT_MAX_BYTES,
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    MetricSpec,
    NoData,
    ParseError,
    Runner,
    Sample,
    read_line,
)
from collectors.context import HostContext
from collectors.counters import Most
from collectors.home.nut.config import UpsdTarget
from collectors.home.nut.state import NutState, Ups
from collectors.snmpwire import SnmpTarget
from collectors.state import State

FLAGS = ("OL", "OB", "LB", "HB", "RB", "CHRG", "DISCHRG", "BYPASS", "CAL", "OFF", "OVER", "TRIM", "BOOST", "FSD",
         "ALARM", "WAIT")
ERRORS = {
    "DRIVER-NOT-CONNECTED": "Driver not connected (the UPS driver is not running or lost the UPS)",
    "DATA-STALE": "Data stale (the driver stopped updating; cable or UPS problem)",
    "UNKNOWN-UPS": "unknown UPS name",
    "ACCESS-DENIED": "access denied (check upsd.users and the login in the config)",
    "PASSWORD-REQUIRED": "password required",
    "INVALID-PASSWORD": "invalid password",
    "USERNAME-REQUIRED": "username required",
}
# VAR ups12v battery.charge "100"
_VAR_RE = re.compile(r'^VAR (\S+) (\S+) "((?:[^"\\]|\\.)*)"$')
_UPS_RE = re.compile(r'^UPS (\S+) "((?:[^"\\]|\\.)*)"$')


def _unescape(v: str) -> str:
    return re.sub(r"\\(.)", r"\1", v)


def parse_list_var(lines: Sequence[str], ups: str) -> dict[str, str]:
    """Lines of a LIST VAR reply (BEGIN ... END) -> {variable: value}."""
    if not lines:
        raise ParseError("empty reply to LIST VAR")
    if lines[0].startswith("ERR "):
        code = lines[0][4:].strip()
        raise CollectorError(f"{ups}: {ERRORS.get(code, code)}")
    if lines[0] != f"BEGIN LIST VAR {ups}" or lines[-1] != f"END LIST VAR {ups}":
        raise ParseError(f"{ups}: LIST VAR reply not framed by BEGIN/END: {lines[0][:80]!r} ... {lines[-1][:80]!r}")
    out = {}
    for line in lines[1:-1]:
        m = _VAR_RE.match(line)
        if not m or m[1] != ups:
            raise ParseError(f"{ups}: unexpected line in LIST VAR: {line[:120]!r}")
        out[m[2]] = _unescape(m[3])
    return out


def parse_list_ups(lines: Sequence[str]) -> dict[str, str]:
    if lines and lines[0].startswith("ERR "):
        raise CollectorError(ERRORS.get(lines[0][4:].strip(), lines[0]))
    if not lines or lines[0] != "BEGIN LIST UPS" or lines[-1] != "END LIST UPS":
        raise ParseError(f"LIST UPS reply not framed by BEGIN/END: {lines[:1]!r}")
    out = {}
    for line in lines[1:-1]:
        m = _UPS_RE.match(line)
        if not m:
            raise ParseError(f"unexpected line in LIST UPS: {line[:120]!r}")
        out[m[1]] = _unescape(m[2])
    return out


@dataclass(frozen=True)
class UpsState:
    name: str
    flags: frozenset[str]
    vars: dict[str, str]

    def num(self, key: str) -> float | None:
        try:
            return finite.parse_float(self.vars[key])
        except (KeyError, ValueError):
            return None


def ups_state(name: str, variables: dict[str, str]) -> UpsState:
    status = variables.get("ups.status", "")
    flags = frozenset(status.split())
    if flags == {"WAIT"}:
        raise CollectorError(f"{name}: upsd is still waiting for the driver's first data (ups.status WAIT)")
    return UpsState(name, flags, variables)


class NutClient:
    def __init__(self, host: str, port: int, timeout: float, username: str | None = None,
                 password: str | None = None) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.username, self.password = username, password
        self.sock: socket.socket | None = None
        self.buf = bytearray()
        self.read_total = 0  # a upsd that never stops answering must not grow this process

    def __enter__(self) -> NutClient:
        try:
            self.sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        except OSError as exc:
            raise CollectorError(f"upsd {self.host}:{self.port}: cannot connect: {exc}") from None
        if self.username:
            self._expect_ok(f"USERNAME {self.username}")
            self._expect_ok(f"PASSWORD {self.password or ''}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.sock:
            try:
                self.sock.sendall(b"LOGOUT\n")
            except OSError:
                pass
            self.sock.close()

    def _line(self) -> str:
        assert self.sock is not None
        line = read_line(self.sock, self.buf, f"upsd {self.host}:{self.port}", self.timeout)
        self.read_total += len(line) + 1
        if self.read_total > DEFAULT_MAX_BYTES:
            raise CollectorError(f"upsd {self.host}:{self.port}: output exceeded {DEFAULT_MAX_BYTES} bytes")
        return line

    def _expect_ok(self, cmd: str) -> None:
        assert self.sock is not None
        self.sock.sendall(cmd.encode() + b"\n")
        answer = self._line()
        if not answer.startswith("OK"):
            code = answer[4:].strip() if answer.startswith("ERR ") else answer
            raise CollectorError(f"upsd {self.host}:{self.port}: login refused: {ERRORS.get(code, code)}")

    def list(self, what: str) -> list[str]:
        """Send LIST <what>; return the reply lines (one ERR line, or BEGIN ... END)."""
        assert self.sock is not None
        self.sock.sendall(f"LIST {what}\n".encode())
        first = self._line()
        lines = [first]
        if first.startswith("ERR "):
            return lines
        while True:
            line = self._line()
            lines.append(line)
            if line.startswith("END LIST"):
                return lines


# The most a UPS's output passes (a large rack UPS): its energy rising faster is a bad read.
UPS_MAX_WATTS = 20_000.0


class NutCollector(Collector):
    name: ClassVar[str] = "nut"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_ups_on_battery": MetricSpec("1 while the UPS runs on battery (OB).",
                                               states=("mains", "battery")),
        "rackpulse_ups_low_battery": MetricSpec("1 when the UPS reports low battery (LB).", states=("ok", "low")),
        "rackpulse_ups_status": MetricSpec("1 for each status flag the UPS reports (OL, OB, LB, RB, CHRG ...)."),
        "rackpulse_ups_battery_voltage_volts": MetricSpec("Battery voltage."),
        "rackpulse_ups_battery_charge_ratio": MetricSpec("Battery charge, 0..1."),
        "rackpulse_ups_runtime_seconds": MetricSpec("Estimated runtime on battery."),
        "rackpulse_ups_load_ratio": MetricSpec("Load, 0..1 of the UPS's capacity."),
        "rackpulse_ups_input_voltage_volts": MetricSpec("Input (mains) voltage."),
        "rackpulse_ups_output_voltage_volts": MetricSpec("Output voltage."),
        "rackpulse_ups_on_battery_seconds": MetricSpec("How long the UPS has been on battery (0 on mains)."),
        **energy.SPECS,
    }

    def __init__(self, targets: Sequence[UpsdTarget], timeout: float = 5.0, snmp_targets: Sequence[SnmpTarget] = (),
                 interval: float = 10.0, clock: Callable[[], float] = time.time) -> None:
        self.targets = list(targets)
        self.snmp_targets = list(snmp_targets)  # UPSes with a network card: UPS-MIB over SNMP
        self.timeout = timeout
        self.clock = clock
        self._ob_since: dict[str, float] = {}
        # What the UPS's output draws, over time: the UPS as a source of the lab's energy (nothing
        # guessed across three missed polls)
        self._energy = energy.Integrator(gap=3 * interval)
        self._read_at: dict[str, float] = {}  # UPS -> when it last answered
        self._names: dict[tuple[str, int], list[str]] = {}  # upsd -> the UPSes it last listed

    def counter_limits(self) -> Mapping[str, Most]:
        return {energy.ENERGY: Most(UPS_MAX_WATTS, 3600.0)}

    def restore(self, state: State) -> None:
        if isinstance(state, NutState):
            self._energy.seed({u.name: u.energy_joules for u in state.ups})
            self._read_at.update({u.name: u.last_read for u in state.ups if u.last_read is not None})

    def _unread(self, name: str, error: str) -> Ups:
        return Ups(name=name, up=False, error=error, last_read=self._read_at.get(name))

    def collect(self) -> CollectResult:
        if not self.targets and not self.snmp_targets:
            raise NoData("no upsd or UPS-MIB agent configured")
        result = CollectResult()
        views: list[Ups] = []
        for card in self.snmp_targets:
            try:
                views.append(self._ups(ups_state(card.name, self._snmp_vars(card)), result))
            except CollectorError as exc:
                result.warnings.append(str(exc))
                views.append(self._unread(card.name, str(exc)))
        for t in self.targets:
            try:
                with NutClient(t.host, t.port, self.timeout, t.username, t.password_value()) as c:
                    names = list(t.ups) or list(parse_list_ups(c.list("UPS")))
                    self._names[(t.host, t.port)] = names
                    for name in names:
                        try:
                            st = ups_state(name, parse_list_var(c.list(f"VAR {name}"), name))
                        except CollectorError as exc:
                            result.warnings.append(f"{t.host}:{t.port}: {exc}")
                            views.append(self._unread(name, str(exc)))
                            continue
                        views.append(self._ups(st, result))
            except CollectorError as exc:
                result.warnings.append(str(exc))
                # Each UPS it served is unreadable by name, so that UPS's firing alerts are held.
                known = list(t.ups) or self._names.get((t.host, t.port)) or [f"{t.host}:{t.port}"]
                views += [self._unread(name, str(exc)) for name in known if name not in {v.name for v in views}]
        if not any(v.up for v in views):
            raise CollectorError("; ".join(result.warnings) or "no UPS found")
        result.state = NutState(ups=views)
        return result

    def _snmp_vars(self, target: Any) -> dict[str, str]:
        import asyncio

        from collectors.home.nut.upsmib import read_ups_mib, ups_mib_to_nut

        return ups_mib_to_nut(asyncio.run(read_ups_mib(target)))

    @staticmethod
    def _watts(st: UpsState) -> float | None:
        """ups.realpower; else the load (percent) of ups.realpower.nominal; else unknown (ups.power
        is volt-amperes, not watts)."""
        real = st.num("ups.realpower")
        if real is not None:
            return real
        load, nominal = st.num("ups.load"), st.num("ups.realpower.nominal")
        return round(load / 100 * nominal, 1) if load is not None and nominal is not None else None

    def _ups(self, st: UpsState, result: CollectResult) -> Ups:
        now = self.clock()
        on_battery = "OB" in st.flags
        if on_battery:
            self._ob_since.setdefault(st.name, now)
        else:
            self._ob_since.pop(st.name, None)
        ob_seconds = now - self._ob_since[st.name] if on_battery else 0.0
        lab = {"ups": st.name}
        s = result.samples
        s.append(Sample.of("rackpulse_ups_on_battery", 1 if on_battery else 0, **lab))
        s.append(Sample.of("rackpulse_ups_low_battery", 1 if "LB" in st.flags else 0, **lab))
        s.append(Sample.of("rackpulse_ups_on_battery_seconds", round(ob_seconds, 1), **lab))
        for flag in sorted(set(FLAGS) | st.flags):
            s.append(Sample.of("rackpulse_ups_status", 1 if flag in st.flags else 0, flag=flag, **lab))
        for metric, key, scale in (("rackpulse_ups_battery_voltage_volts", "battery.voltage", 1),
                                   ("rackpulse_ups_battery_charge_ratio", "battery.charge", 0.01),
                                   ("rackpulse_ups_runtime_seconds", "battery.runtime", 1),
                                   ("rackpulse_ups_load_ratio", "ups.load", 0.01),
                                   ("rackpulse_ups_input_voltage_volts", "input.voltage", 1),
                                   ("rackpulse_ups_output_voltage_volts", "output.voltage", 1)):
            v = st.num(key)
            if v is not None:
                s.append(Sample.of(metric, round(v * scale, 4), **lab))
        watts = self._watts(st)
        joules = self._energy.add(st.name, watts, now) if watts is not None else self._energy.energy.get(st.name)
        s += energy.samples(st.name, watts, joules)
        result.entities.append(Entity("ups", st.name, {"status": " ".join(sorted(st.flags))}))
        self._read_at[st.name] = now
        return Ups(last_read=now, name=st.name, up=True, flags=sorted(st.flags), on_battery=on_battery,
                   on_battery_seconds=ob_seconds, low_battery="LB" in st.flags,
                   model=st.vars.get("ups.model") or st.vars.get("device.model"),
                   battery_voltage=st.num("battery.voltage"), charge=st.num("battery.charge"),
                   runtime=st.num("battery.runtime"), load=st.num("ups.load"),
                   input_voltage=st.num("input.voltage"), output_voltage=st.num("output.voltage"), watts=watts,
                   energy_joules=joules)


# -- plug-in -----------------------------------------------------------------------------

def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.nut]."""
    return NutCollector(c.upsd, c.command_timeout, c.snmp, c.interval)
