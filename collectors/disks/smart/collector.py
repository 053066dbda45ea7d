"""SMART health of every disk (``smartctl --json``), with its serial, WWN and bay."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    CommandNotFound,
    Entity,
    MetricSpec,
    NoData,
    ParseError,
    Runner,
    Sample,
    run_command,
)
from collectors.context import HostContext
from collectors.disks.smart import bay_history
from collectors.disks.smart.schedule import (
    TYPES,
    Busy,
    SelfTestConfig,
    md_busy,
    plan,
    refusal,
    storage_busy,
    test_argv,
)
from collectors.disks.smart.selftests import with_history
from collectors.disks.smart.smartctl import (
    HEALTH_NAMES,
    SmartDisk,
    judge_health,
    parse_smartctl_json,
    parse_smartctl_scan,
    what_it_said,
)
from collectors.disks.smart.state import BayStay, Disk, SmartState
from collectors.disks.smart.wear import wear, written_bytes
from collectors.location import BayRule, DiskLocation, read_locations
from collectors.privilege import read_only_smartctl_type
from collectors.state import State

log = logging.getLogger("collectors.smart")


class SmartCollector(Collector):
    name: ClassVar[str] = "smart"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_disk_info": MetricSpec("Disk identity: device, serial, model, WWN and bay as labels; value 1.",
                                          store=False),
        "rackpulse_disk_smart_healthy": MetricSpec("1 if the drive's SMART overall health self-assessment passed.",
                                                   states=("failed", "passed")),
        "rackpulse_disk_health": MetricSpec("rackpulse's verdict: 0 ok, 1 warning, 2 failing.",
                                            states=("ok", "warning", "failing")),
        "rackpulse_disk_temperature_celsius": MetricSpec("Drive temperature."),
        "rackpulse_disk_power_on_seconds": MetricSpec("Power-on time (SMART counts whole hours)."),
        "rackpulse_disk_smart_attribute_raw": MetricSpec("Raw value of failure-predicting SMART attributes."),
        "rackpulse_disk_standby": MetricSpec("1 if the disk was asleep and was not woken (values are from before).",
                                             states=("awake", "asleep")),
        "rackpulse_disk_smartctl_exit_status": MetricSpec("smartctl's exit status bitmask (see smartctl(8))."),
        "rackpulse_disk_wear_used_ratio": MetricSpec("SSD wear: the share of its rated life used, 0 to 1 (may pass 1)."),
        "rackpulse_disk_written_bytes": MetricSpec("Bytes the host has written to the disk, as the disk counts them."),
        "rackpulse_disk_selftest_running": MetricSpec("1 while a SMART self-test runs.", states=("idle", "testing")),
    }

    def __init__(
        self,
        host_root: Path,
        smartctl: Sequence[str] = ("smartctl",),
        devices: Sequence[str] = (),
        nocheck: str = "standby",
        command_timeout: float = 10.0,
        temperature_warning: float = 50.0,
        bays: Iterable[BayRule] = (),
        accepted: Mapping[str, Mapping[str, float]] | None = None,
        runner: Runner = run_command,
        parallel: int = 4,
        selftest: SelfTestConfig | None = None,
        rated_tbw: Mapping[str, float] | None = None,
        peers: Mapping[str, object] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.host_root = host_root
        self.smartctl = list(smartctl)
        self.devices = list(devices)
        self.nocheck = nocheck
        self.command_timeout = command_timeout
        self.temperature_warning = temperature_warning
        self.bays = bays  # live: labels saved from a page apply from the next collection
        self.accepted = {k: dict(v) for k, v in (accepted or {}).items()}
        self.runner = runner
        self.parallel = max(1, parallel)
        self.selftest = selftest or SelfTestConfig()
        self.rated_tbw = dict(rated_tbw or {})
        self.peers = peers if peers is not None else {}  # the host's other collectors' latest states
        self.clock = clock  # the tests' stand-in for the wall clock (the window is in local time)
        self._last: dict[str, Disk] = {}  # disk key -> last view (for standby and increases)
        self._stays: list[BayStay] = []  # the bays' history, restored with the state

    def restore(self, state: State) -> None:
        if isinstance(state, SmartState):
            for d in state.disks:
                self._last[d.key] = d
            self._stays = list(state.bays)

    def collect(self) -> CollectResult:
        devices = [(d, None) for d in self.devices] if self.devices else self._scan()
        if not devices:
            raise NoData("smartctl --scan found no disks")
        locations = read_locations(self.host_root, self.bays)
        result = CollectResult()
        disks: list[Disk] = []
        unanswered: set[str] = set()
        for (dev, _), answer in zip(devices, self._query_all(devices), strict=True):
            if isinstance(answer, CollectorError):
                result.warnings.append(str(answer))
                unanswered.add(dev.removeprefix("/dev/"))
                continue
            disks.append(self._view(answer, locations, dev))
        if not disks and result.warnings:
            raise CollectorError("; ".join(result.warnings[:5]))
        if self.selftest.enabled:
            result.warnings += self._start_due(disks)
        for view in disks:
            result.samples.extend(disk_samples(view))
            result.entities.extend(disk_entities(view))
        self._stays = bay_history.update(self._stays, disks, unanswered, self.clock())
        result.state = SmartState(disks=disks, bays=self._stays)
        return result

    def _start_due(self, disks: list[Disk]) -> list[str]:
        """Start the self-tests the schedule says are due; a refusal by smartctl is a warning."""
        now = self.clock()
        warnings = []
        for d, kind in plan(disks, self.selftest, now, datetime.fromtimestamp(now), self._busy()):
            try:
                self._run_test(d, kind, now)
            except CollectorError as exc:
                warnings.append(str(exc))
            else:
                disks[disks.index(d)] = self._last[d.key]
        return warnings

    def start_test(self, key: str, kind: str) -> str:
        """Start a self-test now (``rackpulse smart-test``, the disk page's button): the same
        refusals as the schedule's but the window. Raises CollectorError with the reason."""
        if kind not in TYPES:
            raise CollectorError(f"test type must be short or long, not {kind!r}")
        d = self._last.get(key) or next((v for v in self._last.values() if v.serial == key), None)
        if d is None:
            raise CollectorError(f"no disk with serial {key!r} seen on this host")
        testing = [v for v in self._last.values() if v.selftests.running]
        if reason := refusal(d, self._busy(), testing, self.selftest.wake):
            raise CollectorError(f"not started: {reason}")
        self._run_test(d, kind, self.clock())
        minutes = d.selftests.minutes.get(kind)
        took = f"; the drive says it takes about {minutes} minutes" if minutes else ""
        return f"{kind} self-test started on {d.device} ({d.bay or 'no bay label'}, serial {d.serial or d.key}){took}"

    def _busy(self) -> Busy:
        """md from /proc/mdstat; ZFS and RAID controllers from their plug-ins' latest states."""
        return md_busy(self.host_root).merged(storage_busy(self.peers))

    def _run_test(self, d: Disk, kind: str, now: float) -> None:
        res = self.runner(test_argv(self.smartctl, d, kind, self.selftest.wake), self.command_timeout)
        if res.returncode & 0b111:  # smartctl(8): command line, device open, or the command itself failed
            err = (res.stderr or res.stdout).decode("utf-8", "replace").strip().splitlines()
            raise CollectorError(f"smartctl -t {kind} {d.device}: exit {res.returncode}: {(err or ['?'])[-1][:200]}")
        log.info("started a %s self-test on %s (%s)", kind, d.device, d.bay or d.key)
        running = d.selftests.model_copy(update={"running": kind, "percent_done": 0})
        self._last[d.key] = d.model_copy(update={"selftest_started": {**d.selftest_started, kind: now},
                                                 "selftests": running})

    def _scan(self) -> list[tuple[str, str | None]]:
        # No smartctl and no disks named: nothing to read here, as ZFS or Ceph without their tools
        # (the default config enables smart: a first `serve` on a host without it was red). With
        # `devices` named, a missing smartctl stays a failure: the user said there are disks.
        try:
            res = self.runner([*self.smartctl, "--scan", "--json"], self.command_timeout)
        except CommandNotFound as exc:
            raise NoData(f"{exc} (smartmontools not installed)") from None
        if res.returncode & 0b11:
            raise CollectorError(f"smartctl --scan failed (exit {res.returncode}): {what_it_said(res.stdout, res.stderr)}")
        return [(name, t) for name, t in parse_smartctl_scan(res.stdout)]

    def _query_all(self, devices: Sequence[tuple[str, str | None]]) -> list[SmartDisk | CollectorError]:
        """Every disk's answer in the order asked, `parallel` at a time; a disk that hangs holds
        up only its own thread until the command timeout."""

        def ask(device: tuple[str, str | None]) -> SmartDisk | CollectorError:
            try:
                return self._query(*device)
            except CollectorError as exc:
                return exc

        workers = min(self.parallel, len(devices))
        if workers <= 1:
            return [ask(d) for d in devices]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="smartctl") as pool:
            return list(pool.map(ask, devices))

    def _query(self, device: str, dev_type: str | None) -> SmartDisk:
        argv = [*self.smartctl, "--json", "--all"]
        if self.nocheck != "never":
            argv.append(f"--nocheck={self.nocheck}")
        # "-d scsi" from an old --scan would hide a SATA disk's ATA attributes: let smartctl probe.
        if dev_type and dev_type not in ("auto", "scsi"):
            if not read_only_smartctl_type(dev_type):  # `--scan` may name one: jmb39x writes to the disk
                raise CollectorError(f"smartctl {device}: device type {dev_type!r} is not one smartctl only reads "
                                     "through (smartctl(8)): not asked")
            argv += ["-d", dev_type]
        argv.append(device)
        res = self.runner(argv, self.command_timeout)
        if not res.stdout.strip():
            err = res.stderr.decode("utf-8", "replace").strip()[:200]
            raise CollectorError(f"smartctl {device}: no output (exit {res.returncode}) {err}".strip())
        try:
            return parse_smartctl_json(res.stdout, res.returncode)
        except ParseError as exc:
            raise ParseError(f"{exc}") from None

    def _view(self, disk: SmartDisk, locations: Mapping[str, DiskLocation], queried: str) -> Disk:
        kernel = queried.removeprefix("/dev/")
        loc = locations.get(kernel)
        serial = disk.serial or (loc.serial if loc else None)
        wwn = disk.wwn or (loc.wwn if loc else None)
        # A USB bridge that hides the serial: key the disk by WWN or port instead, and say so.
        key = serial or (f"wwn:{wwn}" if wwn else f"path:{loc.by_path}" if loc and loc.by_path else f"dev:{kernel}")
        if disk.standby:
            # A sleeping disk answers without identity: find it by its kernel name.
            key = next((k for k, v in self._last.items() if v.device == kernel), key)
        last = self._last.get(key)
        if disk.standby and last:
            asleep = last.model_copy(update={"standby": True, "device": kernel})
            self._last[key] = asleep
            return asleep
        accepted = self.accepted.get(serial or key, {})
        previous = {k: v for k, v in (last.attributes if last else {}).items() if v is not None}
        bay = loc.bay if loc else _bay_for_serial(self.bays, serial)
        started = dict(last.selftest_started) if last else {}
        tests = with_history(disk.selftests, last.selftests if last else None)
        if tests.running == "test" and started:
            # ATA says a test runs, not which: the one rackpulse started last, when it did.
            tests = tests.model_copy(update={"running": max(started, key=lambda k: started[k] or 0.0)})
        level, reasons = judge_health(disk, accepted, previous, self.temperature_warning, bay)
        view = Disk(
            key=key, device=kernel, serial=serial, serial_hidden=serial is None,
            model=disk.model or (loc.model if loc else None), wwn=wwn, firmware=disk.firmware,
            protocol=disk.protocol, dev_type=disk.dev_type, capacity_bytes=disk.capacity_bytes,
            form_factor=disk.form_factor, rotation_rpm=disk.rotation_rpm,
            by_path=loc.by_path if loc else None, enclosure_slot=loc.enclosure_slot if loc else None, bay=bay,
            smart_passed=disk.smart_passed, temperature=disk.temperature, power_on_hours=disk.power_on_hours,
            attributes=dict(disk.attributes), accepted=dict(accepted), exit_status=disk.exit_status,
            messages=list(disk.messages), standby=disk.standby, health=level, health_name=HEALTH_NAMES[level],
            reasons=reasons, table=disk.table, vendor=disk.vendor,
            selftests=tests, selftest_started=started)
        worn = wear(view, self.rated_tbw, self.clock())
        view = view.model_copy(update={"wear_used": worn.used_percent if worn else None,
                                       "wear_source": worn.source if worn else None,
                                       "wear_full_at": worn.full_at if worn else None,
                                       "written_bytes": written_bytes(view)})
        self._last[key] = view
        return view


def _bay_for_serial(bays: Iterable[BayRule], serial: str | None) -> str | None:
    return next((b.label for b in bays if serial and b.serial == serial), None)


def disk_samples(d: Disk) -> list[Sample]:
    key = d.key
    s = [
        Sample.of("rackpulse_disk_info", 1, device=d.device, serial=key, model=d.model or "",
                  wwn=d.wwn or "", bay=d.bay or ""),
        Sample.of("rackpulse_disk_standby", 1 if d.standby else 0, serial=key),
    ]
    if d.health is not None:
        s.append(Sample.of("rackpulse_disk_health", d.health, serial=key))
    if d.exit_status is not None:
        s.append(Sample.of("rackpulse_disk_smartctl_exit_status", d.exit_status, serial=key))
    if d.smart_passed is not None:
        s.append(Sample.of("rackpulse_disk_smart_healthy", 1 if d.smart_passed else 0, serial=key))
    if d.temperature is not None:
        s.append(Sample.of("rackpulse_disk_temperature_celsius", d.temperature, serial=key))
    if d.power_on_hours is not None:
        s.append(Sample.of("rackpulse_disk_power_on_seconds", d.power_on_hours * 3600, serial=key))
    if d.wear_used is not None:
        s.append(Sample.of("rackpulse_disk_wear_used_ratio", d.wear_used / 100, serial=key))
    if d.written_bytes is not None:
        s.append(Sample.of("rackpulse_disk_written_bytes", d.written_bytes, serial=key))
    s.append(Sample.of("rackpulse_disk_selftest_running", 1 if d.selftests.running else 0, serial=key))
    for attr, value in d.attributes.items():
        if value is not None:
            s.append(Sample.of("rackpulse_disk_smart_attribute_raw", value, serial=key, attribute=attr))
    return s


def disk_entities(d: Disk) -> list[Entity]:
    ents = [Entity("disk", d.key, {
        "device": d.device, "bay": d.bay, "model": d.model, "wwn": d.wwn,
        "by_path": d.by_path, "health": d.health_name,
    })]
    if d.bay:
        ents.append(Entity("bay", d.bay, {"serial": d.key, "model": d.model, "device": d.device}))
    return ents


# -- plug-in -----------------------------------------------------------------------------

def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.smart]: hot from the host's one setting
    (alerts.disk_hot_celsius, which the deprecated temperature_warning stands in for)."""
    accepted = {serial: dict(attrs) for serial, attrs in host.accepted.items()}
    return SmartCollector(host.root, c.smartctl, c.devices, c.nocheck, c.command_timeout,
                          host.disk_hot_celsius, host.bays, accepted, runner, c.parallel, c.selftest, c.rated_tbw,
                          host.states)
