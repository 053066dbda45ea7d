"""Prometheus text exposition (format 0.0.4), rendered once per collection, not per scrape."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

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


def render_block(
    samples: Sequence[Sample], specs: Mapping[str, MetricSpec], host: str, only_declared: bool = True
) -> str:
    """Render samples grouped by metric, each family with its HELP and TYPE once."""
    by_metric: dict[str, list[Sample]] = {}
    for s in samples:
        by_metric.setdefault(s.metric, []).append(s)
    host_label = f'host="{_escape_label(host)}"'
    out: list[str] = []
    for metric in sorted(by_metric):
        spec = specs.get(metric)
        if spec is None and only_declared:
            raise ValueError(f"metric {metric!r} is not declared")
        help_text = spec.help if spec else metric
        kind = spec.kind if spec else "gauge"
        out.append(f"# HELP {metric} {_escape_help(help_text)}\n# TYPE {metric} {kind}\n")
        seen: set[tuple[tuple[str, str], ...]] = set()
        for s in by_metric[metric]:
            if s.labels in seen:
                continue  # two identical series would make Prometheus reject the whole scrape
            seen.add(s.labels)
            labels = "".join(f',{k}="{_escape_label(v)}"' for k, v in s.labels)
            out.append(f"{metric}{{{host_label}{labels}}} {format_value(s.value)}\n")
    return "".join(out)


def join_blocks(blocks: Iterable[str]) -> bytes:
    return "".join(blocks).encode("utf-8")
