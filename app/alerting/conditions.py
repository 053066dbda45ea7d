"""What is wrong right now, from the latest snapshot: the built-in rules, and user rules
over any metric. Produces Conditions for the pure engine in app/alerting/engine.py."""

from __future__ import annotations

import operator
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.alerting.engine import AlertState, Condition, Rule
from app.alerting.sources import RuleSources, source_of
from app.snapshot import Snapshot
from collectors import plugins


def builtin_rules() -> dict[str, Rule]:
    """The rules every installed collector brings, and the ones about collectors and agents."""
    rules = [Rule(r.name, r.severity, r.for_seconds, r.reminder_hours) for p in plugins().values() for r in p.rules]
    rules += [Rule("collector_down", "warning", 300), Rule("agent_silent", "critical", 0, 12),
              Rule("agent_clock_skew", "warning", 300), Rule("agent_cardinality", "warning", 0, 12),
              Rule("power_above_baseline", "warning", 1800, 24), Rule("energy_budget", "warning", 0, 24),
              Rule("data_unprotected", "warning", 0, 24), Rule("data_at_risk", "critical", 0, 12)]
    return {r.name: r for r in rules}


BUILTIN: dict[str, Rule] = builtin_rules()


def rule_sources() -> RuleSources:
    """Each plug-in rule and the collector whose findings raise it (its collector_down explains it)."""
    return RuleSources()


RULE_SOURCES = rule_sources()

# The titles of the rules that are not a plug-in's (a plug-in's come with its RuleSpec).
APP_TITLES = {"collector_down": "Collector cannot read its source", "agent_silent": "Agent host silent",
              "agent_clock_skew": "Agent host's clock is off", "agent_cardinality": "Agent host sends too many series",
              "power_above_baseline": "Power above its usual level", "energy_budget": "Energy budget passed",
              "data_unprotected": "Data set not protected", "data_at_risk": "Data set at risk"}
RULE_TITLES = {**APP_TITLES, **{r.name: r.title for p in plugins().values() for r in p.rules if r.title}}


def rule_title(rule: str) -> str:
    """What a page or a message calls a rule ("RAID array degraded" for array_degraded); a rule of
    the config, which has no title, is its name in words ("Nas temperature")."""
    return RULE_TITLES.get(rule) or rule.replace("_", " ").capitalize()


def source_label(plugin: str) -> str:
    """The finding label that names a plug-in's sources ("bmc"), or "" when it reads one source."""
    p = plugins().get(plugin)
    return p.state.source_label if p is not None else ""

def held(down: Iterable[Any], previous: dict[tuple[str, str], AlertState], present: set[tuple[str, str]]
         ) -> list[Condition]:
    """The firing alerts of collectors that cannot read their source now, held as they were: a heat
    pump that stops answering while its fault fires has not repaired itself. Each resolves only
    once its source is read again and the condition is gone. (Only firing ones: a pending alert
    was never confirmed, and the plug-in's own "unreachable" finding stands for itself.) A source
    that went absent (its file gone, "no data") while an alert of it fired is held the same way."""
    sources = RULE_SOURCES
    out = []
    for st in down:
        absent = st.up is not False and st.no_data
        since = (st.last_data if absent else st.last_success) or st.last_run
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(since)) if since else "its start"
        why = "source absent" if absent else "source unreachable"
        for key, old in previous.items():
            if old.state != "firing" or key in present or source_of(sources, old.rule, old.subject) != st.name:
                continue
            out.append(Condition(old.rule, old.subject, f"{unheld(old.summary)} (held: {why} since {when})",
                                 dict(old.labels), old.severity))
    return out


def unheld(summary: str) -> str:
    """A held alert's words without the mark of its hold."""
    return summary.split(" (held: ")[0]


def held_sources(snap: Any, previous: dict[tuple[str, str], AlertState], present: set[tuple[str, str]]
                 ) -> list[Condition]:
    """The same hold for one source of a plug-in that reads several: the firing alerts whose
    finding named a source (its state's source_label) that this run could not read stay as they
    were, marked "(held: <source> unreachable since HH:MM)". The plug-in's own "unreachable"
    finding for the source stands beside them."""
    out: list[Condition] = []
    by_plugin: dict[str, tuple[str, dict[str, float | None]]] = {}
    for name in plugins():
        state = snap.states.get(name)
        if state is not None and type(state).source_label and (gone := state.unreadable_sources()):
            by_plugin[name] = (type(state).source_label, gone)
    if not by_plugin:
        return out
    for key, old in previous.items():
        plugin = source_of(RULE_SOURCES, old.rule, old.subject)
        if old.state != "firing" or key in present or plugin not in by_plugin:
            continue
        label, gone = by_plugin[plugin]
        source = old.labels.get(label)
        if source not in gone:
            continue
        since = gone[source]
        why = f"unreachable since {time.strftime('%H:%M', time.localtime(since))}" if since else "cannot be read now"
        out.append(Condition(old.rule, old.subject, f"{unheld(old.summary)} (held: {source} {why})", dict(old.labels),
                             old.severity))
    return out


OPS = {">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le, "==": operator.eq,
       "!=": operator.ne}


@dataclass(frozen=True)
class MetricRule:
    """A user rule: metric (+ label match) compared with a threshold, cleared by another."""

    rule: Rule
    metric: str
    op: str
    threshold: float
    clear_threshold: float | None = None
    labels: tuple[tuple[str, str], ...] = ()
    message: str = "{metric}{labels} is {value}"


class Conditions:
    """Builds the conditions from each collector's findings (those that name a rule). The
    findings are the snapshot's, judged once per collection with the host's thresholds and
    memory (app/judge.py): what a tile says is what fires."""

    def build(self, snap: Snapshot, user_rules: Iterable[MetricRule] = (),
              previous: dict[tuple[str, str], AlertState] | None = None, now: float | None = None) -> list[Condition]:
        now = now or time.time()
        host = snap.host
        out: list[Condition] = []
        for name in plugins():
            if not snap.seen(name):
                continue
            for f in snap.findings_of(name, now):  # an odd state: a finding without a rule, no stop
                if f.rule is not None:
                    labels = {k: str(v) for k, v in f.labels.items() if v is not None}
                    out.append(Condition(f.rule, f.subject, f.text, {"host": host, **labels}, f.severity))
        down = []
        for st in snap.statuses.values():
            if st.up is False or st.stale(now):
                down.append(st)
                out.append(Condition("collector_down", st.name, f"collector {st.name} "
                                     f"{'down: ' + (st.last_error or '') if st.up is False else 'stale'}",
                                     {"host": host, "collector": st.name}))
            elif st.no_data and st.last_data is not None:
                down.append(st)  # it read its source before, and that source is gone: not a repair
        if down and previous:
            out += held(down, previous, {(c.rule, c.subject) for c in out})
        if previous:
            out += held_sources(snap, previous, {(c.rule, c.subject) for c in out})
        out += self._user(snap, user_rules, previous or {})
        return out

    def _user(self, snap: Snapshot, rules: Iterable[MetricRule], previous: dict[tuple[str, str], AlertState]
              ) -> list[Condition]:
        out: list[Condition] = []
        rules = list(rules)
        if not rules:
            return out
        wanted = {mr.metric for mr in rules}
        by_metric: dict[str, list[Any]] = {}
        for samples in snap.samples.values():
            for smp in samples:
                if smp.metric in wanted:
                    by_metric.setdefault(smp.metric, []).append(smp)
        for mr in rules:
            for smp in by_metric.get(mr.metric, ()):
                labels = dict(smp.labels)
                if any(labels.get(k) != v for k, v in mr.labels):
                    continue
                # Cheap test first; the subject and the message only for samples that matter.
                hot = OPS[mr.op](smp.value, mr.threshold)
                cold_side = mr.clear_threshold is not None and OPS[mr.op](smp.value, mr.clear_threshold)
                if not hot and not cold_side:
                    continue
                subject = ",".join(f"{k}={v}" for k, v in smp.labels) or mr.metric
                firing = previous.get((mr.rule.name, subject))
                # Hysteresis: once firing, it clears only past the clear threshold.
                held = firing is not None and firing.state == "firing" and mr.clear_threshold is not None
                if hot or (held and cold_side):
                    shown = "{" + ", ".join(f"{k}={v}" for k, v in smp.labels) + "}" if labels else ""
                    text = mr.message.format(metric=mr.metric, value=f"{smp.value:g}", labels=shown,
                                             **{f"label_{k}": v for k, v in labels.items()})
                    out.append(Condition(mr.rule.name, subject, text, {"host": snap.host, **labels}))
        return out
