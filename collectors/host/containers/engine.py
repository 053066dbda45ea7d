"""Pure parsing of the Docker Engine API's answers (Podman's compat API speaks the same), from
JSON to typed records. Fields from Docker's Engine API reference (v1.41+): GET /containers/json,
GET /containers/{id}/json (ContainerInspectResponse: State, RestartCount, HostConfig.RestartPolicy,
Config.Labels), GET /containers/{id}/stats?stream=false&one-shot=true and GET /version."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from collectors import finite
from collectors.base import ParseError

PROJECT = "com.docker.compose.project"
SERVICE = "com.docker.compose.service"
# A restart policy that says the container should be running (a non-zero exit is then a failure).
SHOULD_RUN = ("always", "unless-stopped", "on-failure")


@dataclass(frozen=True, slots=True)
class Summary:
    id: str
    name: str
    image: str
    state: str
    labels: dict[str, str]


@dataclass(frozen=True, slots=True)
class Inspect:
    state: str
    health: str | None
    health_log: str | None
    failing_streak: int | None
    exit_code: int | None
    oom_killed: bool
    restart_count: int | None
    restart_policy: str | None
    started_at: float | None
    finished_at: float | None
    error: str | None = None  # State.Error: why the engine could not (re)start it
    stopped_by_user: bool | None = None  # State.StoppedByUser (Podman 5); None where the engine does not say


@dataclass(frozen=True, slots=True)
class Stats:
    cpu_total_ns: float | None  # cpu_stats.cpu_usage.total_usage
    system_ns: float | None  # cpu_stats.system_cpu_usage
    online_cpus: int | None
    memory_bytes: float | None  # usage minus the page cache (what `docker stats` shows)
    memory_limit_bytes: float | None


def _json(data: str | bytes, what: str) -> Any:
    try:
        return finite.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        head = data[:80] if isinstance(data, str) else data[:80].decode("utf-8", "replace")
        raise ParseError(f"{what}: not JSON ({exc}): {head!r}") from None


def parse_list(data: str | bytes) -> list[Summary]:
    """GET /containers/json?all=true."""
    doc = _json(data, "containers/json")
    if not isinstance(doc, list):
        raise ParseError(f"containers/json: expected a list, got {type(doc).__name__}")
    out = []
    for c in doc:
        if not isinstance(c, dict) or not isinstance(c.get("Id"), str):
            continue
        names = c["Names"] if isinstance(c.get("Names"), list) else []
        name = next((str(n).lstrip("/") for n in names if isinstance(n, str)), c["Id"][:12])
        labels = c["Labels"] if isinstance(c.get("Labels"), dict) else {}
        out.append(Summary(c["Id"], name, str(c.get("Image") or ""), str(c.get("State") or "").lower(),
                           {str(k): str(v) for k, v in labels.items()}))
    return out


def parse_inspect(data: str | bytes) -> Inspect:
    """GET /containers/{id}/json."""
    doc = _json(data, "containers/{id}/json")
    if not isinstance(doc, dict):
        raise ParseError("containers/{id}/json: expected an object")
    st = _obj(doc, "State")
    health = _obj(st, "Health")
    log = health.get("Log") if isinstance(health.get("Log"), list) else []
    last = log[-1] if log and isinstance(log[-1], dict) else {}
    output = last.get("Output") if isinstance(last.get("Output"), str) else None
    policy = _obj(_obj(doc, "HostConfig"), "RestartPolicy").get("Name")
    status = health.get("Status")
    return Inspect(
        state=str(st.get("Status") or "").lower(),
        health=status.lower() if isinstance(status, str) and status and status.lower() != "none" else None,
        health_log=" ".join(output.split())[:300] if output else None,
        failing_streak=_int(health.get("FailingStreak")),
        exit_code=_int(st.get("ExitCode")),
        oom_killed=st.get("OOMKilled") is True,
        restart_count=_int(doc.get("RestartCount")),
        restart_policy=str(policy) if isinstance(policy, str) and policy else None,
        started_at=_time(st.get("StartedAt")),
        finished_at=_time(st.get("FinishedAt")),
        error=" ".join(st["Error"].split())[:300] if isinstance(st.get("Error"), str) and st["Error"].strip() else None,
        stopped_by_user=st["StoppedByUser"] if isinstance(st.get("StoppedByUser"), bool) else None,
    )


def parse_stats(data: str | bytes) -> Stats:
    """GET /containers/{id}/stats?stream=false&one-shot=true: one reading, no precpu (the CPU
    share comes from two readings, see cpu_ratio)."""
    doc = _json(data, "containers/{id}/stats")
    if not isinstance(doc, dict):
        raise ParseError("containers/{id}/stats: expected an object")
    cpu = _obj(doc, "cpu_stats")
    mem = _obj(doc, "memory_stats")
    usage = _num(mem.get("usage"))
    inner = _obj(mem, "stats")
    # docker stats: cgroup v2 subtracts inactive_file, v1 total_inactive_file (else cache)
    cache = next((v for k in ("inactive_file", "total_inactive_file", "cache") if (v := _num(inner.get(k))) is not None),
                 0.0)
    limit = _num(mem.get("limit"))
    return Stats(
        cpu_total_ns=_num(_obj(cpu, "cpu_usage").get("total_usage")),
        system_ns=_num(cpu.get("system_cpu_usage")),
        online_cpus=_int(cpu.get("online_cpus")) or (len(per) if isinstance(per := _obj(cpu, "cpu_usage").get(
            "percpu_usage"), list) else None),
        memory_bytes=max(0.0, usage - cache) if usage is not None else None,
        # An unlimited container reports the host's memory (or 2^63 on some engines): not a limit.
        memory_limit_bytes=limit if limit is not None and 0 < limit < 2**62 else None,
    )


def cpu_ratio(now: Stats, before: Stats | None) -> float | None:
    """The share of one CPU used between two readings (docker stats' CPU % / 100)."""
    if before is None or None in (now.cpu_total_ns, now.system_ns, before.cpu_total_ns, before.system_ns):
        return None
    used = now.cpu_total_ns - before.cpu_total_ns  # type: ignore[operator]
    system = now.system_ns - before.system_ns  # type: ignore[operator]
    if used < 0 or system <= 0:
        return None  # the container restarted: its counter began again
    return used / system * (now.online_cpus or 1)


def parse_version(data: str | bytes) -> str | None:
    """GET /version: "Docker 27.3.1" or "Podman Engine 5.2.2"."""
    doc = _json(data, "version")
    if not isinstance(doc, dict):
        return None
    comps = doc["Components"] if isinstance(doc.get("Components"), list) else []
    name = next((str(c.get("Name")) for c in comps if isinstance(c, dict) and c.get("Name")), "Docker Engine")
    return f"{name} {doc.get('Version')}" if doc.get("Version") else name


# Any: a tool's JSON output, read key by key (each value checked where it is used)
def _obj(d: dict[str, Any], key: str) -> dict[str, Any]:
    v = d.get(key)
    return v if isinstance(v, dict) else {}


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _time(v: Any) -> float | None:
    """RFC 3339 with nanoseconds ("2024-05-01T10:00:00.123456789Z"); the zero time is None."""
    if not isinstance(v, str) or not v or v.startswith("0001-01-01"):
        return None
    text = v.replace("Z", "+00:00")
    if "." in text:  # Python takes at most microseconds
        head, rest = text.split(".", 1)
        digits = "".join(ch for ch in rest if ch.isdigit())
        zone = rest[len(digits):]
        text = f"{head}.{digits[:6]}{zone}"
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None
