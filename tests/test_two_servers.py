"""Two servers on one PostgreSQL, an agent that knows both: one server leads (evaluates alerts,
sends notifications) by holding an advisory lock; it is killed with SIGKILL mid-episode, the
other takes over, and a real HTTP sink receives exactly one firing and one resolved."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from app.demo.agent import to_toml
from collectors import plugins
from tests.agent_hosts import free_port, get_json, issue_token, rackpulse, stop, wait_for
from tests.alerting.sink import Sink
from tests.alerting.test_serve_episodes import FAILED, HEALED

ALERTS_INTERVAL = 0.5


def server(tmp: Path, name: str, db_url: str, port: int, sink: Sink) -> Path:
    cfg = {"host": name, "web": {"port": port}, "storage": {"url": db_url},
           "collectors": {n: {"enabled": False} for n in plugins()},
           "alerts": {"interval": ALERTS_INTERVAL, "group_wait": 0,
                      "channels": [{"name": "sink", "url": f"{sink.url}/hook", "format": "rackpulse", "timeout": 5}]},
           "agents": {"silent_after": 600}}
    path = tmp / f"{name}.toml"
    path.write_text(to_toml(cfg))
    return path


def agent(tmp: Path, servers: str) -> Path:
    root = tmp / "nas1"
    (root / "proc").mkdir(parents=True)
    (root / "proc" / "mdstat").write_text(FAILED)
    off = {"enabled": False}
    cfg = {"host": "nas1", "host_root": str(root),
           "collectors": {**{n: off for n in plugins()}, "mdraid": {"interval": 0.5, "detail": False}},
           "agent": {"server": servers, "outbox": str(root / "outbox.db"), "send_interval": 0.3, "timeout": 3}}
    path = tmp / "agent.toml"
    path.write_text(to_toml(cfg))
    return path


def role(port: int) -> str | None:
    try:
        return str(get_json(f"http://127.0.0.1:{port}/healthz")["alerts"])
    except OSError:
        return None


def test_killing_the_leading_server_mid_episode_notifies_once_firing_and_once_resolved(tmp_path: Path,
                                                                                      pg_url: str) -> None:
    sink = Sink()
    ports = {"a": free_port(), "b": free_port()}
    configs = {k: server(tmp_path, f"server-{k}", pg_url, p, sink) for k, p in ports.items()}
    token = issue_token(configs["a"], "nas1")
    (tmp_path / "token").write_text(token + "\n")
    log = tmp_path / "processes.log"
    procs = {k: rackpulse("serve", "--config", str(c), log=log) for k, c in configs.items()}
    urls = ",".join(f"http://127.0.0.1:{p}" for p in ports.values())
    acfg = agent(tmp_path, urls)
    agent_proc = rackpulse("agent", "--config", str(acfg), "--token-file", str(tmp_path / "token"), log=log)

    def nas1_events() -> list[str]:
        out = []
        for path, _, body in list(sink.received):
            doc = json.loads(body)
            if path == "/hook" and doc.get("host") == "nas1" and doc.get("rule") == "array_degraded":
                out.append(doc["state"])
        return out

    try:
        wait_for(lambda: sorted(filter(None, (role(p) for p in ports.values()))) == ["leader", "standby"],
                 60, "one leader and one standby")
        wait_for(lambda: nas1_events() == ["firing"], 60, "the firing notification")
        leader = next(k for k, p in ports.items() if role(p) == "leader")
        other = "b" if leader == "a" else "a"
        stop(procs[leader], signal.SIGKILL)
        # PostgreSQL drops the killed server's connection and its lock with it; the standby asks
        # again on each alert tick
        wait_for(lambda: role(ports[other]) == "leader", 30, "the standby taking the lead")
        (tmp_path / "nas1" / "proc" / "mdstat").write_text(HEALED)
        wait_for(lambda: "resolved" in nas1_events(), 60, "the resolved notification")
        seen = get_json(f"http://127.0.0.1:{ports[other]}/api/alerts")["evaluations"]
        wait_for(lambda: get_json(f"http://127.0.0.1:{ports[other]}/api/alerts")["evaluations"] >= seen + 10,
                 30 + 10 * ALERTS_INTERVAL, "ten more evaluations")
        time.sleep(1)  # a courier that would send twice has had its chance
        assert nas1_events() == ["firing", "resolved"]
    finally:
        stop(agent_proc)
        for p in procs.values():
            stop(p)
        sink.server.shutdown()


def test_the_two_server_compose_example_and_its_configs_are_valid() -> None:
    import subprocess

    from app.config import load_config
    from tests.agent_hosts import ROOT

    folder = ROOT / "deploy" / "two-servers"
    done = subprocess.run(["docker-compose", "-f", str(folder / "docker-compose.yml"), "config", "-q"],
                          capture_output=True, text=True, cwd=folder)
    assert done.returncode == 0, done.stderr
    hosts = {load_config(folder / f"rackpulse-{x}.toml").host for x in "ab"}
    urls = {load_config(folder / f"rackpulse-{x}.toml").storage.url for x in "ab"}
    assert hosts == {"rackpulse-a", "rackpulse-b"} and len(urls) == 1  # one database, two names


def _events(sink: Sink, host: str, rule: str) -> list[str]:
    out = []
    for path, _, body in list(sink.received):
        doc = json.loads(body)
        # by the alert's host, or its subject (where a server once stored an agent's alert under its own name)
        if path == "/hook" and host in (doc.get("host"), doc.get("subject")) and doc.get("rule") == rule:
            out.append(doc["state"])
    return out


def test_one_agent_outage_is_one_firing_and_one_resolved_across_three_fail_overs(tmp_path: Path, pg_url: str) -> None:
    """agent_silent is kept with the agent's alerts, keyed by the agent: whichever server leads
    carries on the same alert. Before, each leader stored its own (under its host name), and a
    fail-over sent a second firing, then two resolutions."""
    silent_after = 3.0
    sink = Sink()
    ports = {"a": free_port(), "b": free_port()}
    configs = {}
    for k, p in ports.items():
        path = server(tmp_path, f"server-{k}", pg_url, p, sink)
        path.write_text(path.read_text().replace("silent_after = 600", f"silent_after = {silent_after}"))
        configs[k] = path
    assert f"silent_after = {silent_after}" in configs["a"].read_text()
    token = issue_token(configs["a"], "nas1")
    (tmp_path / "token").write_text(token + "\n")
    log = tmp_path / "processes.log"
    procs = {k: rackpulse("serve", "--config", str(c), log=log) for k, c in configs.items()}
    acfg = agent(tmp_path, ",".join(f"http://127.0.0.1:{p}" for p in ports.values()))
    agent_proc = rackpulse("agent", "--config", str(acfg), "--token-file", str(tmp_path / "token"), log=log)
    try:
        wait_for(lambda: sorted(filter(None, (role(p) for p in ports.values()))) == ["leader", "standby"],
                 60, "one leader and one standby")
        wait_for(lambda: _events(sink, "nas1", "array_degraded") == ["firing"], 60, "the agent's own alert")
        # A server slower to start than silent_after after the token was issued has already said
        # "never reported" once and taken it back: that start is not the outage counted below.
        silent = lambda: _events(sink, "nas1", "agent_silent")  # noqa: E731
        wait_for(lambda: not silent() or silent()[-1] == "resolved", 30, "the start's own agent_silent settled")
        start = len(silent())
        stop(agent_proc)
        wait_for(lambda: silent()[start:] == ["firing"], 30 + silent_after, "agent_silent")
        for _ in range(3):  # three fail-overs while the agent stays silent
            leader = next(k for k, p in ports.items() if role(p) == "leader")
            other = "b" if leader == "a" else "a"
            stop(procs[leader], signal.SIGKILL)
            wait_for(lambda: role(ports[other]) == "leader", 30, "the standby taking the lead")  # noqa: B023
            api = f"http://127.0.0.1:{ports[other]}/api/alerts"
            due = get_json(api)["evaluations"] + 4
            wait_for(lambda a=api, d=due: get_json(a)["evaluations"] >= d, 30 + 4 * ALERTS_INTERVAL,
                     "a few evaluations by the new leader")
            procs[leader] = rackpulse("serve", "--config", str(configs[leader]), log=log)
            wait_for(lambda: role(ports[leader]) == "standby", 60, "the old leader back as standby")  # noqa: B023
        assert silent()[start:] == ["firing"]
        agent_proc = rackpulse("agent", "--config", str(acfg), "--token-file", str(tmp_path / "token"), log=log)
        wait_for(lambda: "resolved" in silent()[start:], 60, "the resolved notification")
        time.sleep(4 * ALERTS_INTERVAL)  # a second one would have been sent by now
        assert silent()[start:] == ["firing", "resolved"]
    finally:
        stop(agent_proc)
        for p in procs.values():
            stop(p)
        sink.server.shutdown()


# The heartbeats collector's interval; the job's period and grace: a window of 8 s for a ping that
# takes a second or two on a loaded machine (2 s and 1 s missed one there: a heartbeat fired).
HB_INTERVAL, HB_EVERY, HB_GRACE = 0.5, 4.0, 4.0


def hb_server(tmp: Path, name: str, db_url: str, port: int, sink: Sink) -> Path:
    path = server(tmp, name, db_url, port, sink)
    cfg = {"host": name, "web": {"port": port}, "storage": {"url": db_url},
           "collectors": {**{n: {"enabled": False} for n in plugins() if n != "heartbeats"},
                          "heartbeats": {"interval": HB_INTERVAL, "checks": [
                              {"name": "nightly", "every": HB_EVERY, "grace": HB_GRACE}]}},
           "alerts": {"interval": ALERTS_INTERVAL, "group_wait": 0, "base_url": f"http://127.0.0.1:{port}",
                      "channels": [{"name": "sink", "url": f"{sink.url}/hook", "format": "rackpulse", "timeout": 5}]}}
    path.write_text(to_toml(cfg))
    return path


def test_heartbeats_reach_their_server_through_either_and_a_standbys_own_heartbeat_fires(tmp_path: Path,
                                                                                         pg_url: str) -> None:
    """A job pings whichever server its URL's name resolves to. A ping that reaches the other server
    is its heartbeat's all the same; a standby's own heartbeat going overdue fires (from the
    standby: nobody else sees its heartbeats); a kill of the leader changes none of it."""
    import urllib.error
    import urllib.request

    from tests.cli import run_cli

    def hit(url: str) -> int:
        try:
            with urllib.request.urlopen(url, timeout=10) as r:  # noqa: S310 - loopback
                return int(r.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    sink = Sink()
    ports = {"a": free_port(), "b": free_port()}
    configs = {k: hb_server(tmp_path, f"server-{k}", pg_url, p, sink) for k, p in ports.items()}
    log = tmp_path / "processes.log"
    procs = {k: rackpulse("serve", "--config", str(c), log=log) for k, c in configs.items()}
    try:
        wait_for(lambda: sorted(filter(None, (role(p) for p in ports.values()))) == ["leader", "standby"],
                 60, "one leader and one standby")
        token = {}
        for k, c in configs.items():
            issued = run_cli("heartbeats", "url", "nightly", "--config", str(c))
            assert issued.returncode == 0, issued.stderr
            token[k] = issued.stdout.strip().rsplit("/", 1)[1]
        leader = next(k for k, p in ports.items() if role(p) == "leader")
        standby = "b" if leader == "a" else "a"

        def ping(whose: str, through: str) -> None:
            assert hit(f"http://127.0.0.1:{ports[through]}/ping/{token[whose]}") == 200

        # each job pings through the other server, in time, for longer than every + grace
        end = time.monotonic() + 3 * (HB_EVERY + HB_GRACE)
        while time.monotonic() < end:
            ping(leader, through=standby)
            ping(standby, through=leader)
            time.sleep(HB_EVERY / 3)  # in time, and under the ping rate limit (60 a minute)
        assert _events(sink, f"server-{leader}", "heartbeat_missed") == []
        assert _events(sink, f"server-{standby}", "heartbeat_missed") == []
        # the standby's job stops: its heartbeat_missed fires, from the standby
        end = time.monotonic() + HB_EVERY + HB_GRACE + 30 * ALERTS_INTERVAL + 30
        while time.monotonic() < end and not _events(sink, f"server-{standby}", "heartbeat_missed"):
            ping(leader, through=standby)
            time.sleep(HB_EVERY / 3)
        assert _events(sink, f"server-{standby}", "heartbeat_missed") == ["firing"]
        stop(procs[leader], signal.SIGKILL)  # mid-heartbeat: the leader dies
        wait_for(lambda: role(ports[standby]) == "leader", 30, "the standby taking the lead")
        time.sleep(4 * ALERTS_INTERVAL)
        assert _events(sink, f"server-{standby}", "heartbeat_missed") == ["firing"]  # not told twice
        ping(standby, through=standby)
        wait_for(lambda: "resolved" in _events(sink, f"server-{standby}", "heartbeat_missed"),
                 30 + 4 * HB_INTERVAL, "heartbeat_missed resolved")
        time.sleep(4 * ALERTS_INTERVAL)
        assert _events(sink, f"server-{standby}", "heartbeat_missed") == ["firing", "resolved"]
        assert _events(sink, f"server-{leader}", "heartbeat_missed") == []
    finally:
        for p in procs.values():
            stop(p)
        sink.server.shutdown()
