"""3G/LTE modems through ModemManager (`mmcli -L -J`, `mmcli -m N -J`, `mmcli -m N --signal-get -J`),
each named by its IMEI (ModemManager's object number changes when a modem re-attaches), tied to
the interface it carries and, when that is a bond slave, to the slave's state and flaps as the
bond sees them (/proc/net/bonding). No mmcli, or no ModemManager running, is "no data"."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
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
    host_path,
    read_text,
    run_command,
)
from collectors.context import HostContext
from collectors.network.bonding.collector import parse_bonding
from collectors.network.modems.config import ModemLink, ModemsConfig
from collectors.network.modems.parse import ModemInfo, parse_modem, parse_modem_list, parse_signal
from collectors.network.modems.state import Modem, ModemsState

REGISTERED = ("home", "roaming", "home-sms-only", "roaming-sms-only", "home-csfb-not-preferred",
              "roaming-csfb-not-preferred", "attached-rlos")


class ModemsCollector(Collector):
    name: ClassVar[str] = "modems"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_modem_registered": MetricSpec("1 if the modem is registered on a network (home or roaming).",
                                                 states=("not registered", "registered")),
        "rackpulse_modem_connected": MetricSpec("1 if the modem has a data connection.",
                                                states=("not connected", "connected")),
        "rackpulse_modem_present": MetricSpec("1 while ModemManager lists the modem; 0 once it is gone.",
                                              states=("gone", "present")),
        "rackpulse_modem_signal_quality_ratio": MetricSpec("Signal quality as ModemManager rates it (0-1)."),
        "rackpulse_modem_signal_dbm": MetricSpec("Extended signal in dBm by measure (rssi, rsrp, rscp)."),
        "rackpulse_modem_signal_db": MetricSpec("Extended signal in dB by measure (rsrq, snr, ecio)."),
    }

    def __init__(self, cfg: ModemsConfig, root: Path = Path("/"), runner: Runner = run_command,
                 clock: Callable[[], float] = time.time) -> None:
        self.cfg, self.root, self.runner, self.clock = cfg, root, runner, clock
        self.seen: dict[str, tuple[float, Modem]] = {}  # key -> (last listed, as it was)
        self.set_up: set[str] = set()  # object paths whose extended signal was set up

    def _mmcli(self, *args: str) -> str:
        try:
            res = self.runner([*self.cfg.mmcli, *args], self.cfg.command_timeout)
        except CommandNotFound as exc:
            raise NoData(f"{exc} (ModemManager not installed)") from None
        err = res.stderr.decode("utf-8", "replace").strip()
        if res.returncode != 0:
            if "ServiceUnknown" in err or "not provided by any .service" in err or "couldn't find" in err.lower():
                raise NoData(f"ModemManager is not running: {err[:200]}")
            raise CollectorError(f"mmcli {' '.join(args)} exited {res.returncode}: {err[:300]}")
        return res.stdout.decode("utf-8", "replace")

    def collect(self) -> CollectResult:
        paths = parse_modem_list(self._mmcli("-L", "-J"))
        result = CollectResult()
        now = self.clock()
        bonds = self._bond_slaves(result) if self.cfg.links else {}
        listed: list[Modem] = []
        for path in paths:
            number = path.rsplit("/", 1)[-1]
            try:
                info = parse_modem(self._mmcli("-m", number, "-J"))
            except (CollectorError, ParseError) as exc:
                result.warnings.append(f"modem {number}: {exc}")
                continue
            signal: dict[str, dict[str, float]] = {}
            try:
                signal = self._signal(info, number)
            except (CollectorError, ParseError) as exc:
                result.warnings.append(f"modem {number} ({info.key}): extended signal unavailable: {exc}")
            listed.append(self._view(info, number, signal, bonds))
        keys = {m.key for m in listed}
        for key, (when, _) in list(self.seen.items()):
            if key not in keys and now - when > self.cfg.gone_memory:
                del self.seen[key]
        for m in listed:
            self.seen[m.key] = (now, m)
        gone = [old.model_copy(update={"gone": True, "state": "gone", "number": None, "quality": None, "poor": [],
                                       **self._slave(old.interface, bonds)})
                for key, (_, old) in self.seen.items() if key not in keys]
        # A configured modem never seen since start is gone too: its link has no modem.
        for link in self.cfg.links:
            if not any(self._matches(link, m.imei, m.device) for m in [*listed, *gone]):
                gone.append(Modem(key=link.imei or link.device or "", name=link.name, imei=link.imei,
                                  device=link.device or "", state="gone", gone=True, interface=link.interface,
                                  **self._slave(link.interface, bonds)))
        for m in [*listed, *gone]:
            self._samples(m, result)
        result.state = ModemsState(modems=sorted(listed + gone, key=lambda m: (m.interface or "~", m.key)))
        return result

    def _signal(self, info: ModemInfo, number: str) -> dict[str, dict[str, float]]:
        if info.state in ("failed", "disabled", "locked") or info.power_state in ("off", "low"):
            return {}
        rate, values = parse_signal(self._mmcli("-m", number, "--signal-get", "-J"))
        if not rate and self.cfg.signal_setup and info.path not in self.set_up:
            self.set_up.add(info.path)  # asked once per attach: a modem that refuses is not asked again
            self._mmcli("-m", number, f"--signal-setup={self.cfg.signal_setup}")
        return values if rate else {}

    @staticmethod
    def _matches(link: ModemLink, imei: str | None, device: str) -> bool:
        return (link.imei is not None and link.imei == imei) or (link.device is not None and link.device == device)

    def _view(self, info: ModemInfo, number: str, signal: dict[str, dict[str, float]],
              bonds: dict[str, tuple[str, bool, int]]) -> Modem:
        link = next((lk for lk in self.cfg.links if self._matches(lk, info.imei, info.device)), None)
        interface = link.interface if link else (info.net_ports[0] if info.net_ports else None)
        tech = {"LTE": "lte", "5G": "5g", "3G": "umts", "2G": "gsm"}.get(info.family or "", "")
        now_signal = signal.get(tech) or next(iter(signal.values()), {})
        m = Modem(key=info.key, name=link.name if link else None, imei=info.imei, device=info.device, number=number,
                  model=" ".join(x for x in (info.manufacturer, info.model) if x) or None, state=info.state,
                  failed_reason=info.failed_reason, registration=info.registration,
                  operator=info.operator_name or info.operator_code, access=info.access, family=info.family,
                  quality=info.quality, has_sim=info.sim is not None and info.failed_reason != "sim-missing",
                  interface=interface, **{k: now_signal.get(k) for k in ("rssi", "rsrp", "rsrq", "snr", "rscp", "ecio")},
                  **self._slave(interface, bonds))
        # A modem without a SIM, failed or switched off has no signal worth judging: that is said otherwise.
        judged = m.has_sim and info.state not in ("failed", "disabled", "locked", "disabling")
        return m.model_copy(update={"poor": self._poor(m) if judged else []})

    def _poor(self, m: Modem) -> list[str]:
        """What is poor about the signal, by the thresholds of its technology."""
        c, out = self.cfg, []
        checks = [("RSRP", m.rsrp, c.poor_rsrp, "dBm"), ("RSRQ", m.rsrq, c.poor_rsrq, "dB"),
                  ("SNR", m.snr, c.poor_snr, "dB")] if m.family in ("LTE", "5G") else \
            [("RSCP", m.rscp, c.poor_rscp, "dBm"), ("Ec/Io", m.ecio, c.poor_ecio, "dB")] if m.family == "3G" else []
        if m.family in ("2G", "3G") and m.rscp is None:
            checks.append(("RSSI", m.rssi, c.poor_rssi, "dBm"))
        out = [f"{name} {value:g} {unit}" for name, value, limit, unit in checks if value is not None and value <= limit]
        if not any(v is not None for _, v, _, _ in checks) and m.quality is not None and m.quality <= c.poor_quality:
            out.append(f"signal quality {m.quality} %")
        return out

    def _slave(self, interface: str | None, bonds: dict[str, tuple[str, bool, int]]) -> dict[str, object]:
        bond = bonds.get(interface or "")
        return {"bond": bond[0], "slave_up": bond[1], "slave_flaps": bond[2]} if bond else {}

    def _bond_slaves(self, result: CollectResult) -> dict[str, tuple[str, bool, int]]:
        """slave -> (bond, up, link failures) from /proc/net/bonding, for the linked interfaces."""
        base = host_path(self.root, "/proc/net/bonding")
        out: dict[str, tuple[str, bool, int]] = {}
        try:
            names = sorted(os.listdir(base))
        except OSError:
            return out  # no bonding here: the links are plain interfaces
        for name in names:
            try:
                bond = parse_bonding(read_text(base / name))
            except (ParseError, OSError) as exc:
                result.warnings.append(f"{base / name}: {exc}")
                continue
            for s in bond.slaves:
                out[s.name] = (name, s.mii_up, s.link_failures)
        return out

    def _samples(self, m: Modem, result: CollectResult) -> None:
        labels = {"modem": m.name or m.key, "interface": m.interface or ""}
        s = result.samples
        s.append(Sample.of("rackpulse_modem_present", 0 if m.gone else 1, **labels))
        if m.gone:
            return
        s.append(Sample.of("rackpulse_modem_registered", 1 if m.registration in REGISTERED else 0, **labels))
        s.append(Sample.of("rackpulse_modem_connected", 1 if m.state == "connected" else 0, **labels))
        if m.quality is not None:
            s.append(Sample.of("rackpulse_modem_signal_quality_ratio", m.quality / 100, **labels))
        for measure in ("rssi", "rsrp", "rscp"):
            if (v := getattr(m, measure)) is not None:
                s.append(Sample.of("rackpulse_modem_signal_dbm", v, **labels, measure=measure))
        for measure in ("rsrq", "snr", "ecio"):
            if (v := getattr(m, measure)) is not None:
                s.append(Sample.of("rackpulse_modem_signal_db", v, **labels, measure=measure))
        result.entities.append(Entity("modem", m.key, {
            "name": m.name, "model": m.model, "device": m.device, "number": m.number, "interface": m.interface,
            "operator": m.operator, "access": ",".join(m.access) or None, "sim": "yes" if m.has_sim else "no"}))


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.modems]."""
    return ModemsCollector(c, host.root, runner)
