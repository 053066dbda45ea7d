"""The exposition format: whatever samples a host has (any label value, any finite or
non-finite number), what /metrics renders parses back to exactly those samples."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from app.exposition import merge, render_families
from collectors.base import MetricSpec, Sample

names = st.from_regex(r"\Arackpulse_[a-z_][a-z0-9_]{0,20}\Z")
label_names = st.from_regex(r"\A[a-zA-Z][a-zA-Z0-9_]{0,12}\Z").filter(lambda n: n != "host")
label_values = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)  # quotes, backslashes, newlines
values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(2**53), 2**53).map(float))
samples = st.lists(st.builds(lambda m, lab, v: Sample.of(m, v, **lab), names,
                             st.dictionaries(label_names, label_values, max_size=3), values), max_size=25)
hosts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


def parsed(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(hosts, samples), min_size=1, max_size=3, unique_by=lambda p: p[0]))
def test_rendered_samples_of_many_hosts_parse_back_to_the_same_samples(parts) -> None:  # type: ignore[no-untyped-def]
    """Hosts are unique in /metrics: the server refuses an agent named like itself."""
    specs = {s.metric: MetricSpec("help \\ with\nnewline") for _, ss in parts for s in ss}
    text = merge(render_families(ss, specs, host) for host, ss in parts).decode()
    want: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for host, ss in parts:
        for s in ss:
            key = (s.metric, tuple(sorted((*s.labels, ("host", host)))))
            want.setdefault(key, s.value)  # the first of two identical series is the one rendered
    got = parsed(text)
    assert got.keys() == want.keys()
    assert all(same(got[k], want[k]) for k in want)
    # Each family's header once, whatever the number of hosts.
    for m in {s.metric for _, ss in parts for s in ss}:
        assert text.count(f"# TYPE {m} ") == 1


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(hosts, st.lists(samples, min_size=1, max_size=3)), min_size=1, max_size=3,
                unique_by=lambda p: p[0]))
def test_joining_hosts_group_by_group_says_what_comparing_every_line_says(hosts_parts) -> None:  # type: ignore[no-untyped-def]
    """merge_hosts (the /metrics of many agents) looks for a repeated series within a host only:
    for distinct hosts it must give the same exposition as merge, which compares every line."""
    from app.exposition import merge_hosts

    specs = {s.metric: MetricSpec("help") for _, groups in hosts_parts for ss in groups for s in ss}
    rendered = [[render_families(ss, specs, host) for ss in groups] for host, groups in hosts_parts]
    assert merge_hosts(rendered) == merge(part for group in rendered for part in group)


def test_a_label_value_holding_a_unicode_line_separator_stays_on_its_line() -> None:
    """Found by the property above: merging parts split lines at \x1d (and \x85, \u2028), which
    Python counts as line breaks and the exposition format does not; two series sharing the text
    before such a character lost one half of a line."""
    spec = {"rackpulse_x": MetricSpec("x")}
    odd = [Sample.of("rackpulse_x", 1.0, disk="a"), Sample.of("rackpulse_x", 2.0, disk="b")]
    text = merge([render_families(odd[:1], spec, "nas\x1dx"), render_families(odd, spec, "nas\x1dx")]).decode()
    assert parsed(text) == {("rackpulse_x", (("disk", "a"), ("host", "nas\x1dx"))): 1.0,
                            ("rackpulse_x", (("disk", "b"), ("host", "nas\x1dx"))): 2.0}


def test_an_exposition_is_gzipped_by_isa_l_where_it_has_a_wheel_and_reads_back_whole() -> None:
    import gzip
    import platform

    from app.exposition import _packer, _zlib, gzipped

    text = "".join(f'rackpulse_x{{host="h{i}"}} {i}\n' for i in range(50_000)).encode()
    assert gzip.decompress(gzipped(text)) == text
    if platform.machine() in ("x86_64", "aarch64"):  # pyproject installs isal there: a missing wheel shows here
        assert _packer() is not _zlib


def test_without_isa_l_the_standard_librarys_gzip_does_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    import gzip
    import sys

    from app import exposition

    monkeypatch.setitem(sys.modules, "isal", None)  # as on a machine it has no wheel for
    exposition._packer.cache_clear()
    try:
        text = b'rackpulse_x{host="h"} 1\n' * 1000
        assert gzip.decompress(exposition.gzipped(text)) == text
        assert exposition._packer() is exposition._zlib
    finally:
        exposition._packer.cache_clear()
