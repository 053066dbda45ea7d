"""Every installed plug-in keeps the contract (like Home Assistant's hassfest): a third party's
is checked by the same test once installed. Its config keys have defaults and are documented,
its metrics are named as Prometheus wants, its rules are unique, it builds from its own section
and a HostContext, its state is typed and versioned and comes back from JSON as it went, an
empty state is "not collected yet" (never an error), and docs/metrics.md says what the code says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.docs import metrics_md
from collectors import plugins
from collectors.base import run_command
from collectors.config import CollectorBase
from collectors.context import HostContext
from collectors.findings import Judging
from collectors.plugin import DOMAINS
from collectors.state import VERSION_KEY, State, StateError, dump

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = (ROOT / "rackpulse.example.toml").read_text()
NAMES = sorted(plugins())


def example_chunks(name: str) -> str:
    """The example config's text under [collectors.<name>] and its [[collectors.<name>.*]] tables."""
    heads = list(re.finditer(r"^#? ?\[\[?[a-z_.]+\]\]?\s*$", EXAMPLE, re.M))
    out = []
    for i, h in enumerate(heads):
        if re.match(rf"^#? ?\[\[?collectors\.{name}[.\]]", h[0]):
            end = heads[i + 1].start() if i + 1 < len(heads) else len(EXAMPLE)
            out.append(EXAMPLE[h.start():end])
    return "".join(out)


@pytest.mark.parametrize("name", NAMES)
def test_its_config_keys_have_defaults_and_are_documented_in_the_example(name: str) -> None:
    p = plugins()[name]
    assert p.domain in DOMAINS
    assert issubclass(p.config, CollectorBase)
    p.config()  # a section left out of the file is valid: every key has a default
    text = example_chunks(name)
    assert text, f"[collectors.{name}] is not in rackpulse.example.toml"
    own = [k for k in p.config.model_fields if k not in CollectorBase.model_fields]
    assert [k for k in own if not re.search(rf"\b{k}\b", text)] == []


@pytest.mark.parametrize("name", NAMES)
def test_its_metrics_are_named_as_prometheus_wants(name: str) -> None:
    for metric, spec in plugins()[name].collector.metrics.items():
        assert re.fullmatch(r"rackpulse_[a-z0-9_]+", metric), metric
        assert spec.help.strip() and spec.help.strip()[-1] in ".)", (metric, spec.help)
        assert metric.endswith("_total") == (spec.kind == "counter"), metric
        assert not re.search(r"_(bits|hours|minutes|milliseconds|kwh|percent)(_|$)", metric), metric


def test_rule_names_are_unique_across_plug_ins_and_severities_known() -> None:
    from collectors.backup import RULES as BACKUP  # one set of rules the backup plug-ins share

    names = [r.name for p in plugins().values() for r in p.rules if r not in BACKUP]
    assert len(names) == len(set(names))
    assert {r.severity for p in plugins().values() for r in p.rules} <= {"critical", "warning", "info"}


@pytest.mark.parametrize("name", NAMES)
def test_each_of_its_rules_has_a_title_in_words_not_its_id(name: str) -> None:
    # "megaraid vd degraded" was what /alerts said: a title names the thing as its owner does
    shorthand = {"vd", "pd", "pve", "pbs", "sel", "bbu", "psu", "oom", "tls", "bgp", "bfd", "vpn", "ups"}
    for r in plugins()[name].rules:
        assert r.title and r.title[0].isupper() and "_" not in r.title, r.name
        assert not shorthand & set(r.title.split()), (r.name, r.title)


@pytest.mark.parametrize("name", NAMES)
def test_it_builds_from_its_own_section_and_a_host_context(name: str, tmp_path: Path) -> None:
    p = plugins()[name]
    collector = p.build(p.config(), HostContext("nas", tmp_path), run_command)
    assert collector.name == name and collector.metrics == p.collector.metrics


@pytest.mark.parametrize("name", NAMES)
def test_an_empty_state_is_not_collected_yet_never_an_error(name: str) -> None:
    p = plugins()[name]
    for empty in (None, p.state()):  # nothing collected yet, or a collection that found nothing
        assert [f.text for f in p.judge(empty, Judging(host="nas")) if "not understood" in f.text] == []
        assert "error" not in p.view(empty)
        assert p.bay_list(empty) == [] and p.monitor_list(empty) == []
        p.clear_words(empty, Judging(host="nas"))


@pytest.mark.parametrize("name", NAMES)
def test_its_state_is_typed_versioned_and_comes_back_from_json_as_it_went(name: str) -> None:
    p = plugins()[name]
    assert issubclass(p.state, State) and isinstance(p.state.version, int) and p.state.version >= 1
    assert VERSION_KEY not in p.state.model_fields  # the key its stored JSON carries its version under
    schema = p.state.model_json_schema()  # what /api/docs shows of /api/state
    assert schema["type"] == "object" and schema["properties"]
    stored = json.loads(json.dumps(dump(p.state())))
    assert stored[VERSION_KEY] == p.state.version and p.load(stored) == p.state()
    with pytest.raises(StateError, match="this rackpulse reads version"):
        p.load({**stored, VERSION_KEY: p.state.version + 1})


@pytest.mark.parametrize("name", NAMES)
def test_a_state_of_another_type_costs_its_own_tile_in_words_never_an_exception(name: str) -> None:
    p = plugins()[name]
    other = next(q.state() for q in plugins().values() if q.state is not p.state)
    (finding,) = p.judge(other, Judging(host="nas"))
    assert finding.text.startswith(f"{name}: state not understood") and finding.rule is None
    assert p.bay_list(other) == [] and "not understood" in str(p.view(other).get("error", "not understood"))


def test_docs_metrics_md_says_what_the_plug_ins_say() -> None:
    assert (ROOT / "docs" / "metrics.md").read_text() == metrics_md(), "stale: run `make docs`"


@pytest.mark.parametrize("name", NAMES)
def test_its_example_fragment_parses_and_its_readme_is_fresh(name: str) -> None:
    import tomllib

    from app.config import load_config
    from app.docs import package_of, readme

    p = plugins()[name]
    fragment = package_of(p) / "example.toml"
    doc = tomllib.loads(fragment.read_text())
    assert name in doc["collectors"]
    load_config(None, doc)  # what it sets is valid config
    # Every key and table it shows commented out, taken in: the example as a whole is valid config too.
    shown = re.compile(r"^# (\[|[A-Za-z_][A-Za-z0-9_]* = )")
    uncommented = "\n".join(line[2:] if shown.match(line) else line for line in fragment.read_text().splitlines())
    load_config(None, tomllib.loads(uncommented))
    assert (package_of(p) / "README.md").read_text() == readme(p), "stale: run `make docs`"


def test_the_example_config_is_made_of_the_plug_ins_fragments() -> None:
    from app.docs import example_toml

    assert EXAMPLE == example_toml(), "stale: run `make docs`"
