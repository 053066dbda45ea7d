"""Prometheus text exposition (format 0.0.4), rendered once per collection, not per scrape."""

from __future__ import annotations

import functools
import gzip
import math
from collections.abc import Callable, Iterable, Mapping, Sequence

from collectors.base import MetricSpec, Sample

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _escape_label(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return repr(v)


# metric name -> (its "# HELP"/"# TYPE" header, its sample lines): one host's part of a family.
Families = dict[str, tuple[str, str]]


def render_families(
    samples: Sequence[Sample], specs: Mapping[str, MetricSpec], host: str, only_declared: bool = True
) -> Families:
    """Samples rendered as lines, grouped by metric; ``merge`` joins the parts of many hosts and
    collectors so that each family appears once (Prometheus refuses a scrape that repeats one)."""
    by_metric: dict[str, list[Sample]] = {}
    for s in samples:
        by_metric.setdefault(s.metric, []).append(s)
    host_label = f'host="{_escape_label(host)}"'
    out: Families = {}
    for metric, group in by_metric.items():
        spec = specs.get(metric)
        if spec is None and only_declared:
            raise ValueError(f"metric {metric!r} is not declared")
        if spec is None and not exposable(metric, group):
            continue  # stored, but not shown as a gauge: Prometheus would read it as a counter or histogram
        help_text = spec.help if spec else metric
        kind = spec.kind if spec else "gauge"
        seen: set[tuple[tuple[str, str], ...]] = set()
        lines = []
        for s in group:
            if s.labels in seen:
                continue  # two identical series would make Prometheus reject the whole scrape
            seen.add(s.labels)
            labels = "".join(f',{k}="{_escape_label(v)}"' for k, v in s.labels if k != "host")
            lines.append(f"{metric}{{{host_label}{labels}}} {format_value(s.value)}\n")
        out[metric] = (f"# HELP {metric} {_escape_help(help_text)}\n# TYPE {metric} {kind}\n", "".join(lines))
    return out


# An undeclared metric (an agent of another version) is shown as a gauge. These names and labels
# belong to counters, histograms and summaries (promtool fails the scrape), or to Prometheus itself.
RESERVED_SUFFIXES = ("_total", "_bucket", "_count", "_sum", "_created")
RESERVED_LABELS = ("le", "quantile")


def exposable(metric: str, group: Sequence[Sample]) -> bool:
    """Whether an undeclared metric can be shown as a gauge."""
    if metric.startswith("__") or metric.endswith(RESERVED_SUFFIXES):
        return False
    if any(f"_{t}_" in metric or metric.endswith(f"_{t}") for t in ("counter", "gauge", "histogram", "summary")):
        return False  # promtool: "metric name should not include type"
    return not any(k in RESERVED_LABELS or k.startswith("__") for s in group for k, _ in s.labels)


def merge(parts: Iterable[Mapping[str, tuple[str, str]]]) -> bytes:
    """One exposition from many parts: each family's header once, its samples together, and each
    series once (two collectors of one agent may send the same series; a scrape repeating one is
    refused whole)."""
    heads: dict[str, str] = {}
    bodies: dict[str, list[str]] = {}
    for part in parts:
        for metric, (head, lines) in part.items():
            if metric not in heads:
                heads[metric] = head
                bodies[metric] = []
            bodies[metric].append(lines)
    return "".join(heads[m] + _once(bodies[m]) for m in sorted(heads)).encode("utf-8")


def merge_hosts(groups: Iterable[Iterable[Mapping[str, tuple[str, str]]]]) -> bytes:
    """merge() for many hosts' parts, each group one host's: a series repeated is looked for
    within a host only (another host's series differ by their host label), so 100 hosts' 110,000
    series are joined, not compared line by line (that took 70 ms a scrape)."""
    heads: dict[str, str] = {}
    bodies: dict[str, list[str]] = {}
    for group in groups:
        mine: dict[str, list[str]] = {}
        for part in group:
            for metric, (head, lines) in part.items():
                heads.setdefault(metric, head)
                mine.setdefault(metric, []).append(lines)
        for metric, chunks in mine.items():
            bodies.setdefault(metric, []).append(_once(chunks))
    return "".join(heads[m] + "".join(bodies[m]) for m in sorted(heads)).encode("utf-8")


def _once(bodies: list[str]) -> str:
    if len(bodies) == 1:
        return bodies[0]  # one part renders each series once already (the usual case: no split)
    seen: set[str] = set()
    out = []
    for body in bodies:
        # Lines end at "\n" only: str.splitlines() also breaks at \x1c-\x1e, \x85 and \u2028,
        # which a label value may hold unescaped (the format escapes only \n, \\ and ").
        for line in body.split("\n"):
            series = line.rsplit(" ", 1)[0]
            if line and series not in seen:
                seen.add(series)
                out.append(line + "\n")
    return "".join(out)


def gzipped(exposition: bytes) -> bytes:
    """The exposition gzipped for a scrape. ISA-L (python-isal) where it has a wheel (x86-64,
    64-bit ARM): 100 hosts' 11.7 MB took 8.7 ms of CPU at its level 1 and came out smaller than
    zlib's level 5 (1.37 MB), where zlib took 43 ms at level 1; that gzip was a third of the
    server's CPU with 100 agents. Elsewhere (32-bit ARM) the standard library's zlib."""
    return _packer()(exposition)


def _zlib(data: bytes) -> bytes:
    return gzip.compress(data, 1 if len(data) > 1_000_000 else 5)


@functools.cache
def _packer() -> Callable[[bytes], bytes]:
    # Imported here, not above: an agent renders expositions too, and never gzips one.
    try:
        from isal import igzip
    except ImportError:
        return _zlib
    return functools.partial(igzip.compress, compresslevel=1)
