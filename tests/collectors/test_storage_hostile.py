"""No input crashes a storage parser: random text, random JSON of any shape, and real captures
cut at any byte or with any line dropped give a record or a ParseError/CollectorError, never
anything else (a KeyError or a TypeError would stop the collector with a traceback).

The example counts keep the quick loop quick; RACKPULSE_FUZZ=40 runs forty times as many
(4,000 per test was run once before this file was committed, and found nothing more)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors import finite
from collectors.base import CollectorError
from collectors.storage.btrfs.parse import (
    parse_device_stats,
    parse_error_stats,
    parse_fi_show,
    parse_scrub_status,
)
from collectors.storage.ceph.parse import parse_osd_metadata, parse_osd_tree, parse_status
from collectors.storage.megaraid.storcli import parse_drives, parse_rebuild, parse_show_all
from collectors.storage.zfs.zpool_json import parse_zpool_status_json
from collectors.storage.zfs.zpool_text import parse_zpool_list, parse_zpool_status
from tests.collectors.storage_helpers import FIXTURES

DEEP = int(os.environ.get("RACKPULSE_FUZZ", "1"))
TEXT_PARSERS: dict[str, Callable[[str], Any]] = {
    "zpool status": parse_zpool_status, "zpool list": parse_zpool_list, "btrfs fi show": parse_fi_show,
    "btrfs device stats": parse_device_stats, "btrfs scrub": parse_scrub_status, "error_stats": parse_error_stats,
}
JSON_PARSERS: dict[str, Callable[[str], Any]] = {
    "zpool status -j": parse_zpool_status_json, "storcli show": parse_show_all, "storcli drives": parse_drives,
    "storcli rebuild": parse_rebuild, "ceph status": parse_status, "ceph osd tree": parse_osd_tree,
    "ceph osd metadata": parse_osd_metadata,
}
ALL = {**TEXT_PARSERS, **JSON_PARSERS}

# JSON of any shape, with the keys the parsers look for so that the fuzzing reaches inside.
KEYS = st.sampled_from(["pools", "vdevs", "name", "state", "scan_stats", "function", "to_examine", "issued",
                        "Controllers", "Command Status", "Response Data", "Status", "VD LIST", "PD LIST",
                        "EID:Slt", "DG", "BBU_Info", "Drive /c0/e252/s1 - Detailed Information", "Drive-ID",
                        "health", "checks", "summary", "osdmap", "pgmap", "pgs_by_state", "nodes", "children",
                        "type", "id", "reweight", "status", "device_ids", "logs", "spares", "error_count", "x"])
WORDS = st.sampled_from(["HEALTH_OK", "HEALTH_WARN", "HEALTH_ERR", "ONLINE", "DEGRADED", "SCRUB", "RESILVER",
                         "SCANNING", "FINISHED", "Optl", "Dgrd", "Onln", "Rbld", "UBad", "osd", "host", "up", "root",
                         "Success", "Failure", "252:3", "/c0/e252/s3", "0/0", "-", "", "12", "1.5K"])
# Numbers no page can show: json.dumps writes them as Infinity, NaN, 1e+308 and a 41-digit integer.
NOT_FINITE = st.sampled_from([float("inf"), -float("inf"), float("nan"), 1e308, -1e308, 10**40, -(2**64)])
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
                    | WORDS | NOT_FINITE,
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=6),
                    max_leaves=40)


def survives(parse: Callable[[str], Any], text: str) -> None:
    try:
        parse(text)
    except CollectorError:
        pass  # a clear error (ParseError, NoData ...) is the right answer to bad input


@pytest.mark.parametrize("name", sorted(ALL))
@settings(max_examples=40 * DEEP, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=400))
def test_random_text_never_crashes_a_storage_parser(name: str, text: str) -> None:
    survives(ALL[name], text)


@pytest.mark.parametrize("name", sorted(JSON_PARSERS))
@settings(max_examples=60 * DEEP, deadline=None)
@given(doc=JSON)
def test_json_of_any_shape_never_crashes_a_storage_parser(name: str, doc: Any) -> None:
    survives(JSON_PARSERS[name], json.dumps(doc))


def _paths(doc: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON document, as the keys and indexes that lead there."""
    out = [here]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*here, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*here, i))
    return out


def _replace(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    doc[path[0]] = _replace(doc[path[0]], path[1:], value)
    return doc


def _captures() -> list[tuple[str, str]]:
    which = {"zpool": "zpool status", "btrfs": "btrfs fi show", "storcli": "storcli show", "ceph": "ceph status"}
    out = []
    for kind, parser in which.items():
        for p in sorted((FIXTURES / kind).iterdir()):
            if p.suffix != ".md":
                name = parser
                if kind == "zpool" and p.suffix == ".json":
                    name = "zpool status -j"
                elif kind == "btrfs" and "scrub" in p.name:
                    name = "btrfs scrub"
                elif kind == "btrfs" and "device_stats" in p.name:
                    name = "btrfs device stats"
                elif kind == "storcli" and ("sALL" in p.name or "drives" in p.name):
                    name = "storcli drives"
                elif kind == "ceph" and "tree" in p.name:
                    name = "ceph osd tree"
                out.append((name, p.read_text()))
    return out


CAPTURES = _captures()


@settings(max_examples=100 * DEEP, deadline=None)
@given(which=st.integers(0, len(CAPTURES) - 1), cut=st.floats(0, 1), drop=st.integers(0, 200))
def test_a_real_capture_cut_short_or_missing_a_line_never_crashes_its_parser(which: int, cut: float,
                                                                            drop: int) -> None:
    name, text = CAPTURES[which]
    survives(ALL[name], text[:int(len(text) * cut)])
    lines = text.splitlines(keepends=True)
    if lines:
        del lines[drop % len(lines)]
    survives(ALL[name], "".join(lines))


JSON_CAPTURES = [(n, t) for n, t in CAPTURES if n in JSON_PARSERS and t.lstrip().startswith(("{", "["))]


@settings(max_examples=150 * DEEP, deadline=None)
@given(which=st.integers(0, len(JSON_CAPTURES) - 1), where=st.integers(0, 10**6), value=JSON)
def test_a_real_json_capture_with_any_part_replaced_never_crashes_its_parser(which: int, where: int,
                                                                            value: Any) -> None:
    """A device or a newer tool version answering with another shape in one place."""
    name, text = JSON_CAPTURES[which]
    doc = json.loads(text)
    paths = _paths(doc)
    survives(JSON_PARSERS[name], json.dumps(_replace(doc, paths[where % len(paths)], value)))


NUMBER = re.compile(r"(?<![\w.\"])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.\"])")
LITERALS = ["Infinity", "-Infinity", "NaN", "1e400", "-1e400", "9" * 400, "1e308"]


@settings(max_examples=150 * DEEP, deadline=None)
@given(which=st.integers(0, len(JSON_CAPTURES) - 1), where=st.integers(0, 10**6), literal=st.sampled_from(LITERALS))
def test_a_number_in_a_real_json_capture_that_is_not_finite_is_read_as_unknown(which: int, where: int,
                                                                               literal: str) -> None:
    """ZFS or Ceph answering 1e400 or Infinity somewhere (Python's json reads both as infinity):
    the parser gives a record or a clear error, and no number in the record is infinite or NaN."""
    name, text = JSON_CAPTURES[which]
    spots = list(NUMBER.finditer(text))
    if not spots:
        return
    m = spots[where % len(spots)]
    try:
        record = JSON_PARSERS[name](text[:m.start()] + literal + text[m.end():])
    except CollectorError:
        return
    assert finite.count_bad(_plain(record)) == 0, (name, m[0], literal)


def _plain(obj: Any) -> Any:
    """A parsed record (dataclasses, tuples) as plain JSON-like values."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _plain(dataclasses.asdict(obj))
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [_plain(v) for v in obj]
    return obj


def _collect_and_judge(plugin_name: str, collector: Any) -> None:
    """A collection that succeeds gives a state its findings, tile and page view can read."""
    from collectors import plugins
    from collectors.findings import Judging
    from collectors.state import dump

    try:
        res = collector.collect()
    except CollectorError:
        return
    p = plugins()[plugin_name]
    found = p.findings(res.state, Judging())
    assert p.pages.section is not None and p.pages.section.view is not None and p.tile is not None and p.pages.bays is not None
    p.pages.section.view(res.state, found)
    p.tile.all_clear(res.state, Judging())
    p.pages.bays(res.state)
    # The state is what the database and an agent's batch carry: it comes back as it went.
    assert p.load(json.loads(json.dumps(dump(res.state)))) == res.state


@settings(max_examples=80 * DEEP, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(["zfs", "megaraid", "ceph"]), where=st.integers(0, 10**6), value=JSON)
def test_a_collector_fed_a_capture_with_any_part_replaced_gives_a_state_or_an_error(tmp_path_factory: Any, which: str,
                                                                                   where: int, value: Any) -> None:
    from collectors.storage.ceph.collector import CephCollector
    from collectors.storage.megaraid.collector import MegaraidCollector
    from collectors.storage.zfs.collector import ZfsCollector
    from tests.collectors.storage_helpers import fixture, runner

    source = {"zfs": ("zpool", "status-j-int-resilvering.json"), "megaraid": ("storcli", "netdata__storcli__megaraid"
                                                                               "-controllers-info.json"),
              "ceph": ("ceph", "telegraf__ceph_status__pacific_HEALTH_OK.json")}[which]
    doc = json.loads(fixture(*source))
    paths = _paths(doc)
    out = json.dumps(_replace(doc, paths[where % len(paths)], value)).encode()
    root = tmp_path_factory.mktemp("host")
    if which == "zfs":
        c: Any = ZfsCollector(root, runner=runner({"status -p -j --json-int": (0, out, b""), "list -Hp -o name,size,"
                                                   "allocated,free,fragmentation,capacity,dedupratio,health":
                                                   (0, b"", b"")}))
    elif which == "megaraid":
        c = MegaraidCollector(root, runner=runner({"/call show all J": (0, out, b""), "/call/eall/sall show all J":
                                                   (0, fixture("storcli", "netdata__storcli__megaraid-drives-info.json"),
                                                    b"")}))
    else:
        c = CephCollector(root, runner=runner({"--connect-timeout 10 status -f json": (0, out, b""),
                                               "--connect-timeout 10 osd tree -f json":
                                               (0, fixture("ceph", "insights-core__ceph_osd_tree__osd4-down.json"),
                                                b"")}))
    _collect_and_judge(which, c)
