"""IPMI: the sensors, system event log (SEL) and DCMI power of this server's own BMC and of
remote BMCs, read with FreeIPMI (why FreeIPMI: freeipmi.py). Read-only: only Get commands.

A remote BMC's password is read from its password_file for each call and handed to FreeIPMI in a
config file of its own (mode 0600, deleted after the call): a command line is readable by every
user through `ps`, a config file is not (freeipmi.conf(5))."""

from __future__ import annotations

import logging
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from collectors import energy
from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    MetricSpec,
    NoData,
    Runner,
    Sample,
    run_command,
)
from collectors.context import HostContext
from collectors.counters import Most
from collectors.host.ipmi.config import Bmc, IpmiConfig
from collectors.host.ipmi.freeipmi import (
    SelEntry,
    judged_state,
    parse_dcmi_power,
    parse_sel,
    parse_sel_info,
    parse_sensors,
)
from collectors.host.ipmi.scan import Scan
from collectors.host.ipmi.state import BmcView, IpmiState, SelEvent, Sensor
from collectors.state import State

log = logging.getLogger("rackpulse.collectors.ipmi")
LOCAL = "local"
RECENT = 20  # SEL entries the section lists per BMC
LAST_RECORD = 0xFFFE  # 0xFFFF means "the last record" in Get SEL Entry: not a record id
LOCAL_DEVICES = ("dev/ipmi0", "dev/ipmi/0", "dev/ipmidev/0")
STATE_VALUE = {"Nominal": 0, "Warning": 1, "Critical": 2}
# FreeIPMI's abbreviated units -> this reading's metric in base units
UNIT_METRICS = {"C": "rackpulse_ipmi_temperature_celsius", "RPM": "rackpulse_ipmi_fan_speed_rpm",
                "V": "rackpulse_ipmi_voltage_volts", "A": "rackpulse_ipmi_current_amperes",
                "W": "rackpulse_ipmi_sensor_power_watts"}
# -v adds the event direction; OEM data decoded where FreeIPMI knows the vendor (a Dell DIMM's name)
SEL_ARGS = ("--comma-separated-output", "--output-event-state", "-v", "--interpret-oem-data")
_NO_DCMI = ("invalid or unsupported", "not supported", "unsupported", "privilege level insufficient")


# The most a server draws (a 4U box with GPUs): its DCMI energy rising faster is a bad read.
SERVER_MAX_WATTS = 10_000.0


class IpmiCollector(Collector):
    name: ClassVar[str] = "ipmi"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_ipmi_up": MetricSpec("1 when the BMC answered this run.", states=("down", "up")),
        "rackpulse_ipmi_sensor_state": MetricSpec("A sensor's state as the BMC's readings judge it: 0 nominal, "
                                                  "1 warning, 2 critical."),
        "rackpulse_ipmi_temperature_celsius": MetricSpec("A temperature sensor's reading."),
        "rackpulse_ipmi_fan_speed_rpm": MetricSpec("A fan sensor's reading."),
        "rackpulse_ipmi_voltage_volts": MetricSpec("A voltage sensor's reading."),
        "rackpulse_ipmi_current_amperes": MetricSpec("A current sensor's reading."),
        "rackpulse_ipmi_sensor_power_watts": MetricSpec("A power sensor's reading (a power supply's output)."),
        "rackpulse_ipmi_power_watts": MetricSpec("The server's power draw as DCMI reports it (where the BMC has DCMI)."),
        **energy.SPECS,
        "rackpulse_ipmi_sel_entries": MetricSpec("Entries in the BMC's system event log."),
        "rackpulse_ipmi_sel_used_ratio": MetricSpec("How full the system event log is, 0..1 (a full SEL drops new "
                                                    "events)."),
    }

    def __init__(self, cfg: IpmiConfig, root: Path = Path("/"), runner: Runner = run_command,
                 clock: Callable[[], float] = time.time) -> None:
        self.cfg, self.root, self.runner, self.clock = cfg, root, runner, clock
        self._last: dict[str, BmcView] = {}  # by BMC: the SEL position and held events survive a failed run
        self._no_dcmi: set[str] = set()  # BMCs that said they have no DCMI: not asked again
        self._bad: dict[str, list[str]] = {}  # per BMC: the lines of its last sensors read with a value not a number
        # DCMI's watts over time: a server as a source of the lab's energy. Across a gap of three
        # polls nothing is guessed.
        self._energy = energy.Integrator(gap=3 * cfg.interval)

    def counter_limits(self) -> Mapping[str, Most]:
        return {energy.ENERGY: Most(SERVER_MAX_WATTS, 3600.0)}

    def restore(self, state: State) -> None:
        if isinstance(state, IpmiState):
            self._last = {b.name: b for b in state.bmcs}
            self._energy.seed({b.name: b.energy_joules for b in state.bmcs})

    def _targets(self) -> list[Bmc | None]:
        """None is this host's own BMC."""
        local = self.cfg.local == "on" or (
            self.cfg.local == "auto" and any((self.root / d).exists() for d in LOCAL_DEVICES))
        return ([None] if local else []) + list(self.cfg.bmcs)

    def collect(self) -> CollectResult:
        targets = self._targets()
        if not targets:
            raise NoData("no /dev/ipmi0 here and no BMC configured in [[collectors.ipmi.bmcs]]")
        result = CollectResult()
        views = []
        for bmc in targets:
            name = bmc.name if bmc else LOCAL
            try:
                view = self._read(bmc, name)
                if bad := self._bad.pop(name, []):  # once a run, the rest of the BMC's sensors read
                    result.warnings.append(f"{name}: {len(bad)} value(s) not a number, taken as unknown: {bad[0]}")
            except CollectorError as exc:
                result.warnings.append(f"{name}: {exc}")
                view = self._down(name, bmc is not None, str(exc))
            self._last[name] = view
            views.append(view)
            self._samples(view, result)
        if not any(v.up for v in views) and all(not v.remote for v in views):
            raise CollectorError("; ".join(result.warnings))
        result.state = IpmiState(bmcs=views, sel_full_ratio=self.cfg.sel_full_ratio)
        return result

    def _down(self, name: str, remote: bool, error: str) -> BmcView:
        """A BMC that did not answer: what was read of its SEL before is kept (the position, the
        held events), so nothing is read twice or lost when it answers again."""
        last = self._last.get(name)
        if last is None:
            return BmcView(name=name, remote=remote, error=error)
        return last.model_copy(update={"up": False, "error": error, "sensors": [], "power_watts": None,
                                       "held": self._still_held(last.held)})

    def _still_held(self, held: Sequence[SelEvent]) -> list[SelEvent]:
        now = self.clock()
        return [e for e in held if e.seen is not None and now - e.seen < self.cfg.sel_hold]

    def _read(self, bmc: Bmc | None, name: str) -> BmcView:
        with self._session(bmc) as scan:
            bad: list[str] = []
            sensors = [Sensor(name=s.name, type=s.type, state=judged_state(s), reading=s.reading, unit=s.unit,
                              thresholds=s.thresholds, events=list(s.events))
                       for s in parse_sensors(scan.run(self.cfg.ipmi_sensors, "--comma-separated-output",
                                                       "--output-sensor-state", "--output-sensor-thresholds"), bad)]
            self._bad[name] = bad
            info = parse_sel_info(scan.run(self.cfg.ipmi_sel, "--info"))
            last = self._last.get(name)
            recent, held, last_id = self._sel(scan, info.entries, last)
            power = None if name in self._no_dcmi else self._power(scan, name)
        joules = self._energy.add(name, power, self.clock()) if power is not None else self._energy.energy.get(name)
        return BmcView(name=name, remote=bmc is not None, up=True, last_read=self.clock(), sensors=sensors,
                       power_watts=power, energy_joules=joules,
                       sel_entries=info.entries, sel_used_ratio=info.used_ratio, sel_last_id=last_id,
                       recent=recent, held=held)

    def _sel(self, scan: Scan, entries: int, last: BmcView | None) -> tuple[list[SelEvent], list[SelEvent], int | None]:
        """(recent entries, held entries, the last record id). The first read of a BMC lists its
        latest entries but holds none: a PSU that failed last year is not news today. After that,
        only the records after the last one read are asked for (kept across restarts); a SEL with
        fewer entries than before was cleared, and is read from its start."""
        now = self.clock()
        first = last is None or last.sel_last_id is None
        if entries == 0:
            return [], self._still_held(last.held) if last else [], last.sel_last_id if last else None
        if first:
            new = parse_sel(scan.run(self.cfg.ipmi_sel, *SEL_ARGS, f"--tail={RECENT}"))
            fresh = [self._event(e, now) for e in new]
            return fresh, [], max((e.id for e in new), default=None)
        assert last is not None and last.sel_last_id is not None
        cleared = last.sel_entries is not None and entries < last.sel_entries
        start = 1 if cleared else last.sel_last_id + 1
        new = parse_sel(scan.run(self.cfg.ipmi_sel, *SEL_ARGS, f"--display-range={start}-{LAST_RECORD}")) \
            if start <= LAST_RECORD else []
        fresh = [self._event(e, now) for e in new]
        held = self._still_held(last.held) + [e for e in fresh if e.asserted and e.state in ("Critical", "Warning")]
        recent = ([] if cleared else list(last.recent)) + fresh
        return recent[-RECENT:], held, max((e.id for e in new), default=None if cleared else last.sel_last_id)

    @staticmethod
    def _event(e: SelEntry, now: float) -> SelEvent:
        return SelEvent(id=e.id, time=e.time, seen=now, name=e.name, type=e.type, state=e.state,
                        asserted=e.asserted, event=e.event)

    def _power(self, scan: Scan, name: str) -> float | None:
        """DCMI's power reading, or None: a BMC without DCMI (most home-lab boards), or one that
        refuses it at this privilege, is still read for its sensors and log, and not asked again."""
        try:
            return parse_dcmi_power(scan.run(self.cfg.ipmi_dcmi, "--get-system-power-statistics", cache=False))
        except CollectorError as exc:
            if any(s in str(exc).lower() for s in _NO_DCMI):
                self._no_dcmi.add(name)
                log.info("%s: no DCMI power reading (%s); not asked again until a restart", name, exc)
            else:
                log.warning("%s: DCMI power reading failed: %s", name, exc)
            return None

    @contextmanager
    def _session(self, bmc: Bmc | None) -> Iterator[Scan]:
        work = self._work_dir()
        cache = work / "sdr-cache"
        cache.mkdir(mode=0o700, exist_ok=True)
        if bmc is None:
            yield Scan(self.runner, self.cfg.command_timeout, [], cache, secret="")
            return
        password = _password(bmc)
        # In the private work directory: a process killed during the call (SIGKILL, or a daemon
        # thread cut off at exit) leaves it where only rackpulse's user, who reads the password
        # file anyway, can read it; the next run removes it.
        fd, path = tempfile.mkstemp(prefix="credentials-", suffix=".conf", dir=work)  # mode 0600
        try:
            with os.fdopen(fd, "w") as f:
                f.write(credentials(bmc.user, password))
            common = ["--hostname", f"{bmc.host}:{bmc.port}", "--config-file", path,
                      "--driver-type", "LAN_2_0" if bmc.interface == "lanplus" else "LAN",
                      "--privilege-level", bmc.privilege.upper(),
                      # FreeIPMI gives up first and says why ("connection timeout"), before the
                      # command's own limit kills it and only the limit could be said
                      f"--session-timeout={int(self.cfg.command_timeout * 800)}"]
            if bmc.workarounds:
                common.append(f"--workaround-flags={','.join(bmc.workarounds)}")
            yield Scan(self.runner, self.cfg.command_timeout, common, cache, secret=password)
        finally:
            Path(path).unlink(missing_ok=True)

    def _work_dir(self) -> Path:
        """Private to this user (FreeIPMI refuses an SDR cache others can write, and the credentials
        pass through it); credentials an interrupted run left behind are removed."""
        path = self.cfg.work_dir or Path(tempfile.gettempdir()) / f"rackpulse-ipmi-{os.getuid()}"
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = path.lstat()
        except OSError as exc:
            raise CollectorError(f"work_dir {path}: {exc.strerror}") from None
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise CollectorError(f"work_dir {path}: not a directory of this user's that only it can enter")
        # Only files older than any call lasts: the work_dir may be shared (the demo's hosts, two
        # servers' collectors), and a file younger than that is another call's, still in use.
        # Removing those once failed the other call ("No such file or directory").
        stale = time.time() - self._call_bound()
        for left in path.glob("credentials-*.conf"):
            try:
                if left.stat().st_mtime < stale:
                    left.unlink(missing_ok=True)
            except FileNotFoundError:
                pass  # its call ended meanwhile
        return path

    def _call_bound(self) -> float:
        """Longer than any session lasts: each of its commands is killed at command_timeout."""
        return 10 * self.cfg.command_timeout + 60

    def _samples(self, v: BmcView, result: CollectResult) -> None:
        s = result.samples
        s.append(Sample.of("rackpulse_ipmi_up", 1 if v.up else 0, bmc=v.name))
        for sensor in v.sensors:
            labels = {"bmc": v.name, "sensor": sensor.name}
            if sensor.state in STATE_VALUE:
                s.append(Sample.of("rackpulse_ipmi_sensor_state", STATE_VALUE[sensor.state], type=sensor.type, **labels))
                result.entities.append(Entity("ipmi_sensor", f"{v.name}/{sensor.name}", {"state": sensor.state}))
            metric = UNIT_METRICS.get(sensor.unit or "")
            if metric and sensor.reading is not None:
                s.append(Sample.of(metric, sensor.reading, **labels))
        if v.power_watts is not None:
            s.append(Sample.of("rackpulse_ipmi_power_watts", v.power_watts, bmc=v.name))
        s += energy.samples(v.name, v.power_watts, v.energy_joules)
        if v.sel_entries is not None:
            s.append(Sample.of("rackpulse_ipmi_sel_entries", v.sel_entries, bmc=v.name))
        if v.sel_used_ratio is not None:
            s.append(Sample.of("rackpulse_ipmi_sel_used_ratio", round(v.sel_used_ratio, 4), bmc=v.name))


def conf_value(text: str) -> str:
    """A value as FreeIPMI's config file parser (conffile) reads it back whole: in double quotes
    (spaces kept), with the three characters it gives a meaning escaped: \\, # (a comment) and "."""
    return '"' + text.replace("\\", "\\\\").replace("#", "\\#").replace('"', '\\"') + '"'


def credentials(user: str, password: str) -> str:
    lines = [f"username {conf_value(user)}"] if user else []
    if password:
        lines.append(f"password {conf_value(password)}")
    return "".join(f"{line}\n" for line in lines)


def _password(bmc: Bmc) -> str:
    if bmc.password_file is None:
        return ""
    try:
        password = bmc.password_file.read_text().strip()
    except OSError as exc:
        raise CollectorError(f"password_file {bmc.password_file}: {exc.strerror}") from None
    if any(ord(c) < 32 for c in password):
        raise CollectorError(f"password_file {bmc.password_file}: more than one line, or a control character")
    return password


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.ipmi]."""
    return IpmiCollector(c, host.root, runner)
