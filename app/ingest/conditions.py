"""What the server says of its agents as alert conditions: agent_silent, agent_clock_skew and
agent_cardinality (batches refused over the host's limits)."""

from __future__ import annotations

import time
from typing import Any, Protocol

from sqlalchemy import Engine

from app.alerting.engine import Condition
from app.ingest.tokens import list_agents


class AgentsSeen(Protocol):
    """What these conditions read of the server's Agents (app/ingest/agents.py)."""

    engine: Engine
    over_limit: dict[str, tuple[float, str]]  # host -> (when, why) its last batch was refused


def agent_conditions(agents: AgentsSeen, cfg: Any, now: float) -> list[Condition]:
    """agent_silent and agent_clock_skew for every agent whose token is live."""
    out = []
    for host, (when, why) in list(agents.over_limit.items()):
        out.append(Condition("agent_cardinality", host, f"agent {host}: batches refused since "
                             f"{_when(when)}: {why}", {"host": host, "agent": host, "server": cfg.host}))
    for row in list_agents(agents.engine):
        if row["revoked_at"] is not None:
            continue
        host, last = row["host"], row["last_contact"] or row["created"]
        # Kept with the agent's own alerts (keyed by the agent, whichever server evaluates: one
        # outage is one alert across fail-overs), saying which server noticed.
        labels = {"host": host, "agent": host, "server": cfg.host}
        if now - last > cfg.agents.silent_after:
            what = "has not reported" if row["last_contact"] else "has never reported since its token was issued"
            out.append(Condition("agent_silent", host, f"agent {host} {what} for {_ago(now - last)} "
                                                       f"(last batch {_when(row['last_contact'])})", labels))
        skew = row["clock_skew"]
        if skew is not None and abs(skew) > cfg.agents.clock_skew_warning and now - last < cfg.agents.silent_after:
            side = "behind" if skew > 0 else "ahead of"
            out.append(Condition("agent_clock_skew", host, f"clock of {host} is {abs(skew):.0f}s {side} the "
                                                           "server's: check its NTP", labels))
    return out


def _ago(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}h {s % 3600 // 60}m" if s >= 3600 else f"{s // 60}m {s % 60}s"


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "never"
