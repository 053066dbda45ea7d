"""The collector registry: name -> factory from the validated config.

One name is the module, the config section ([collectors.<name>]) and the metric subsystem.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from collectors.base import Collector, MetricSpec, Runner, run_command

if TYPE_CHECKING:
    from app.config import Config


def _mdraid(cfg: Config, runner: Runner) -> Collector:
    from collectors.disklocation import bay_rules
    from collectors.mdraid import MdraidCollector

    c = cfg.collectors.mdraid
    return MdraidCollector(Path(cfg.host_root), c.mdadm, c.detail, c.command_timeout,
                           bay_rules(b.model_dump() for b in cfg.disks.bays), runner)


def _smart(cfg: Config, runner: Runner) -> Collector:
    from collectors.disklocation import bay_rules
    from collectors.smartdisks import SmartCollector

    c = cfg.collectors.smart
    accepted: dict[str, dict[str, float]] = {}
    for a in cfg.disks.accept:
        accepted.setdefault(a.serial, {})[a.attribute] = a.value
    return SmartCollector(Path(cfg.host_root), c.smartctl, c.devices, c.nocheck, c.command_timeout,
                          c.temperature_warning, bay_rules(b.model_dump() for b in cfg.disks.bays), accepted, runner)


def _frr(cfg: Config, runner: Runner) -> Collector:
    from collectors.frr import FrrCollector

    return FrrCollector(cfg.collectors.frr.vtysh, cfg.collectors.frr.command_timeout, runner)


def _bonding(cfg: Config, runner: Runner) -> Collector:
    from collectors.bonding import BondingCollector

    return BondingCollector(Path(cfg.host_root), cfg.collectors.bonding.bonds)


def _openvpn(cfg: Config, runner: Runner) -> Collector:
    from collectors.openvpn import Instance, OpenvpnCollector

    c = cfg.collectors.openvpn
    return OpenvpnCollector(Path(cfg.host_root), [Instance(**i.model_dump()) for i in c.instances],
                            c.command_timeout, c.max_status_age)


def _snmp_targets(raw):
    from collectors.snmp import Target

    return [Target(name=t.name, host=t.host, port=t.port, version=t.version, community=t.secret("community"),
                   user=t.user, auth_protocol=t.auth_protocol, auth_password=t.secret("auth_password"),
                   priv_protocol=t.priv_protocol, priv_password=t.secret("priv_password"), timeout=t.timeout,
                   retries=t.retries) for t in raw]


def _snmp(cfg: Config, runner: Runner) -> Collector:
    from collectors.snmp import SnmpCollector

    return SnmpCollector(_snmp_targets(cfg.collectors.snmp.targets))


def _nut(cfg: Config, runner: Runner) -> Collector:
    from collectors.nut import NutCollector, UpsdTarget

    targets = [UpsdTarget(u.host, u.port, u.username,
                          u.password_file.read_text().strip() if u.password_file else None, tuple(u.ups))
               for u in cfg.collectors.nut.upsd]
    return NutCollector(targets, cfg.collectors.nut.command_timeout, _snmp_targets(cfg.collectors.nut.snmp))


def _hwmon(cfg: Config, runner: Runner) -> Collector:
    from collectors.hwmon import Fan, HwmonCollector, Rail

    c = cfg.collectors.hwmon
    return HwmonCollector(Path(cfg.host_root), [Rail(**r.model_dump()) for r in c.rails],
                          [Fan(**f.model_dump()) for f in c.fans])


def _heatpump(cfg: Config, runner: Runner) -> Collector:
    from collectors.heatpump import HeatpumpCollector

    c = cfg.collectors.heatpump
    return HeatpumpCollector(c.host, c.port, c.unit, c.command_timeout)


REGISTRY: dict[str, Callable[[Config, Runner], Collector]] = {
    "mdraid": _mdraid,
    "smart": _smart,
    "frr": _frr,
    "bonding": _bonding,
    "openvpn": _openvpn,
    "snmp": _snmp,
    "nut": _nut,
    "hwmon": _hwmon,
    "heatpump": _heatpump,
}


def build_collectors(cfg: Config, runner: Runner = run_command) -> dict[str, Collector]:
    """Every enabled collector, by name."""
    out = {}
    for name, factory in REGISTRY.items():
        section = getattr(cfg.collectors, name)
        if section.enabled:
            run = runner
            if runner is run_command:  # the real runner: with this collector's output cap
                run = functools.partial(run_command, max_bytes=section.command_max_bytes)
            out[name] = factory(cfg, run)
    return out


# Where each collector's class lives, for a server that stores what remote agents collected:
# it needs their metric specs (HELP, TYPE, whether to store) without building the collectors.
CLASSES = {
    "mdraid": "collectors.mdraid:MdraidCollector",
    "smart": "collectors.smartdisks:SmartCollector",
    "frr": "collectors.frr:FrrCollector",
    "bonding": "collectors.bonding:BondingCollector",
    "openvpn": "collectors.openvpn:OpenvpnCollector",
    "snmp": "collectors.snmp:SnmpCollector",
    "nut": "collectors.nut:NutCollector",
    "hwmon": "collectors.hwmon:HwmonCollector",
    "heatpump": "collectors.heatpump:HeatpumpCollector",
}


def metric_specs(name: str) -> dict[str, MetricSpec]:
    """The declared metrics of collector ``name``; empty for a name this version does not know."""
    import importlib

    where = CLASSES.get(name)
    if where is None:
        return {}
    module, cls = where.split(":")
    return dict(getattr(importlib.import_module(module), cls).metrics)
