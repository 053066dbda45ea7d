"""MegaRAID/PERC: controllers, virtual drives and the physical drives behind them by
EID:slot, with serials and error counters, so a failed drive says which bay to pull."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    MetricSpec,
    Runner,
    Sample,
    run_command,
)
from collectors.context import HostContext
from collectors.location import BayRule, DiskLocation, read_locations
from collectors.state import State
from collectors.storage.common import first_line, identify, run_tool
from collectors.storage.megaraid.state import Bbu, MegaraidState
from collectors.storage.megaraid.state import Controller as ControllerView
from collectors.storage.megaraid.state import PhysicalDrive as PdView
from collectors.storage.megaraid.state import VirtualDrive as VdView
from collectors.storage.megaraid.storcli import (
    VD_STATES,
    Controller,
    merge,
    parse_drives,
    parse_rebuild,
    parse_show_all,
)

SHOW_ALL = ["/call", "show", "all", "J"]
DRIVES = ["/call/eall/sall", "show", "all", "J"]
REBUILD = ["/call/eall/sall", "show", "rebuild", "J"]
CONTROLLER_OK = ("Optimal", "OK", "")


class MegaraidCollector(Collector):
    name: ClassVar[str] = "megaraid"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_megaraid_controller_ok": MetricSpec("1 if the controller reports Optimal (OK for an HBA).",
                                                       states=("not ok", "ok")),
        "rackpulse_megaraid_vd_state": MetricSpec("1 for the virtual drive's current state (Optl, Dgrd, Pdgd, "
                                                  "Rbld, OfLn, Rec).", store=False),
        "rackpulse_megaraid_vd_optimal": MetricSpec("1 if the virtual drive is Optl.",
                                                    states=("degraded", "optimal")),
        "rackpulse_megaraid_pd_state": MetricSpec("1 per physical drive with its state, slot, serial and bay as "
                                                  "labels.", store=False),
        "rackpulse_megaraid_pd_media_errors_total": MetricSpec("A drive's media error count.", "counter"),
        "rackpulse_megaraid_pd_other_errors_total": MetricSpec("A drive's other error count.", "counter"),
        "rackpulse_megaraid_pd_predictive_failures_total": MetricSpec("A drive's predictive failure count.", "counter"),
        "rackpulse_megaraid_pd_temperature_celsius": MetricSpec("A drive's temperature as the controller reads it."),
        "rackpulse_megaraid_pd_rebuild_ratio": MetricSpec("Progress of a drive's rebuild, 0..1."),
        "rackpulse_megaraid_bbu_ok": MetricSpec("1 if the BBU or CacheVault is Optimal.", states=("not ok", "ok")),
    }

    def __init__(self, host_root: Path, storcli: Sequence[str] = ("storcli64",), timeout: float = 30.0,
                 bays: Iterable[BayRule] = (), runner: Runner = run_command) -> None:
        self.host_root = host_root
        self.storcli = list(storcli)
        self.timeout = timeout
        self.bays = bays  # live: labels saved from a page apply from the next collection
        self.runner = runner
        # Drives last seen per "<controller>/<EID:Slt>": one that failed and was pulled leaves
        # the PD list, but the user still needs its serial and bay.
        self._known: dict[str, PdView] = {}

    def restore(self, state: State) -> None:
        if isinstance(state, MegaraidState):
            for c in state.controllers:
                for pd in c.pds:
                    if pd.dg not in (None, "-") and pd.state != "Msng":
                        self._known[pd.key] = pd

    def _run(self, args: list[str]) -> str:
        res = run_tool(self.runner, [*self.storcli, *args], self.timeout, "storcli")
        out = res.stdout.decode("utf-8", "replace")
        if not out.strip():
            raise CollectorError(f"storcli {' '.join(args)}: {first_line(res)}")
        return out

    def collect(self) -> CollectResult:
        ctrls = parse_show_all(self._run(SHOW_ALL))
        result = CollectResult()
        try:
            merge(ctrls, parse_drives(self._run(DRIVES)))
        except CollectorError as exc:  # states still known; serials and counters not
            result.warnings.append(f"drive details: {exc}")
        if any(pd.state == "Rbld" for c in ctrls for pd in c.pds):
            try:
                progress = parse_rebuild(self._run(REBUILD))
                for c in ctrls:
                    for pd in c.pds:
                        pd.rebuild_ratio, pd.rebuild_remaining_seconds = progress.get((c.index, pd.eid_slot),
                                                                                      (None, None))
            except CollectorError as exc:
                result.warnings.append(f"rebuild progress: {exc}")
        for c in ctrls:
            if c.problem:
                result.warnings.append(f"controller {c.index}: {c.problem}")
        locs = read_locations(self.host_root, self.bays)
        views = [self._view(c, locs) for c in ctrls]
        for v in views:
            result.samples.extend(controller_samples(v))
            result.entities.extend(controller_entities(v))
        result.state = MegaraidState(controllers=views)
        return result

    def _view(self, c: Controller, locs: dict[str, DiskLocation]) -> ControllerView:
        pds = []
        for pd in c.pds:
            key = f"{c.index}/{pd.eid_slot}"
            ident = identify(f"c{key}", locs, self.bays, slot=key, serial=pd.serial, wwn=pd.wwn,
                             model=pd.model or None)
            row = PdView(**{**asdict(pd), "serial": ident.serial, "wwn": ident.wwn}, key=key, enclosure=pd.enclosure,
                         slot=pd.slot, bay=ident.bay, device=ident.device)
            pds.append(row)
            if pd.dg not in ("-", "") and pd.serial:
                self._known[key] = row
        present = {p.key for p in pds}
        degraded_dgs = {vd.dg_vd.split("/")[0] for vd in c.vds if vd.state != "Optl"}
        for key, old in list(self._known.items()):
            if not key.startswith(f"{c.index}/") or key in present:
                continue
            if str(old.dg) in degraded_dgs:
                # Gone from the controller while its drive group is degraded: the pulled drive.
                pds.append(old.model_copy(update={"state": "Msng", "media_errors": None, "other_errors": None,
                                                  "temperature": None, "rebuild_ratio": None,
                                                  "rebuild_remaining_seconds": None}))
            else:
                del self._known[key]
        pds.sort(key=lambda p: (p.enclosure, int(p.slot) if p.slot.isdigit() else 0))
        return ControllerView(index=c.index, name=f"c{c.index}", model=c.model, serial=c.serial, status=c.status,
                              problem=c.problem, bbu=Bbu(**c.bbu) if c.bbu else None,
                              vds=[VdView(**asdict(v)) for v in c.vds], pds=pds)


def controller_samples(c: ControllerView) -> list[Sample]:
    ctl = c.name
    s = [Sample.of("rackpulse_megaraid_controller_ok", 1 if c.status in CONTROLLER_OK else 0, controller=ctl,
                   model=c.model)]
    for vd in c.vds:
        for st in VD_STATES:
            s.append(Sample.of("rackpulse_megaraid_vd_state", 1 if vd.state == st else 0, controller=ctl,
                               vd=vd.dg_vd, state=st))
        s.append(Sample.of("rackpulse_megaraid_vd_optimal", 1 if vd.state == "Optl" else 0, controller=ctl,
                           vd=vd.dg_vd))
    for pd in c.pds:
        labels = {"controller": ctl, "enclosure": pd.enclosure, "slot": pd.slot, "serial": pd.serial}
        s.append(Sample.of("rackpulse_megaraid_pd_state", 1, **labels, state=pd.state, bay=pd.bay))
        for value, metric in ((pd.media_errors, "media_errors_total"), (pd.other_errors, "other_errors_total"),
                              (pd.predictive_failures, "predictive_failures_total"),
                              (pd.temperature, "temperature_celsius"), (pd.rebuild_ratio, "rebuild_ratio")):
            if value is not None:
                s.append(Sample.of(f"rackpulse_megaraid_pd_{metric}", value, **labels))
    if c.bbu:
        s.append(Sample.of("rackpulse_megaraid_bbu_ok", 1 if c.bbu.state == "Optimal" else 0, controller=ctl,
                           kind=c.bbu.kind))
    return s


def controller_entities(c: ControllerView) -> list[Entity]:
    ents = [Entity("megaraid_vd", f"{c.name}/{vd.dg_vd}", {"raid": vd.raid, "state": vd.state,
                                                                  "name": vd.name}) for vd in c.vds]
    for pd in c.pds:
        ents.append(Entity("megaraid_pd", f"{c.name}/{pd.eid_slot}", {
            "state": pd.state, "serial": pd.serial, "bay": pd.bay, "dg": pd.dg}))
    return ents


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    return MegaraidCollector(host.root, c.storcli, c.command_timeout, host.bays, runner)
