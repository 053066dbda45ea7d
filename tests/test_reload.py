"""SIGHUP re-reads the config of a real `rackpulse serve`: a collector added starts, a new channel
and a rule's new `for` apply, while the history, the live states and a firing alert's episode
stay (no second notification for it); what needs a restart is named and kept; a file that does
not load or validate changes nothing and costs one log line, its secret not in it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
from pathlib import Path
from typing import Any

from tests.agent_hosts import get_json, rackpulse, stop, to_toml, wait_for
from tests.alerting.sink import Sink
from tests.peers import free_port

FIXTURES = Path(__file__).resolve().parent / "fixtures"
INTERVAL = 1.0  # collectors and alerts: every wait below is a few of these, or start-up


def config(tmp: Path, port: int, sink: Sink, **change: Any) -> dict[str, Any]:
    from collectors import plugins

    cfg: dict[str, Any] = {
        "host": "nas", "host_root": str(tmp / "host"), "web": {"port": port},
        "storage": {"url": f"sqlite:///{tmp / 'rackpulse.db'}"},
        "collectors": {**{n: {"enabled": False} for n in plugins()},
                       "mdraid": {"enabled": True, "interval": INTERVAL, "detail": False}},
        "alerts": {"interval": INTERVAL, "group_wait": 0,
                   "channels": [{"name": "hook", "url": f"{sink.url}/hook"}]}}
    for key, value in change.items():
        where = cfg
        *path, last = key.split(".")
        for part in path:
            where = where.setdefault(part, {})
        where[last] = value
    return cfg


def told(sink: Sink) -> list[tuple[str, str, str, str]]:
    """(channel path, state, rule, subject) of every notification received."""
    out = []
    for path, _, body in list(sink.received):
        d = json.loads(body)
        out.append((path, d["state"], d["rule"], d["subject"]))
    return out


def samples_stored(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return int(c.execute("select count(*) from sample").fetchone()[0])


def hup_and_wait(proc: Any, log: Path, said: str, before: int) -> str:
    """SIGHUP, then the log's new part once it holds `said` (a reload is applied within one
    collector interval; start-up's deadline covers a loaded machine)."""
    os.kill(proc.pid, signal.SIGHUP)

    def new_part() -> str | None:
        text = log.read_text()[before:]
        return text if said in text else None

    return wait_for(new_part, 60, said)


def serving(tmp_path: Path) -> tuple[Any, int, Sink, Path, Path]:
    """A host tree with a rebuilding md array and a bond with a slave down, and `serve` on it:
    (process, port, sink, config path, log)."""
    (tmp_path / "host" / "proc" / "net" / "bonding").mkdir(parents=True)
    shutil.copy(FIXTURES / "mdstat" / "nagios-plugin-check_raid__mdadm__white-mdstat", tmp_path / "host/proc/mdstat")
    shutil.copy(FIXTURES / "bonding" / "telegraf__proc_net_bonding__active-backup_slave-down",
                tmp_path / "host/proc/net/bonding/bond0")
    port, sink = free_port(), Sink()
    path, log = tmp_path / "rackpulse.toml", tmp_path / "serve.log"
    path.write_text(to_toml(config(tmp_path, port, sink)))
    return rackpulse("serve", "--config", str(path), log=log), port, sink, path, log


def test_sighup_applies_a_new_config_and_keeps_history_states_and_alert_episodes(tmp_path: Path) -> None:
    proc, port, sink, path, log = serving(tmp_path)
    base = f"http://127.0.0.1:{port}"

    def active() -> dict[tuple[str, str], dict[str, Any]]:
        return {(a["rule"], a["subject"]): a for a in get_json(f"{base}/api/alerts")["active"]}

    try:
        # md126 rebuilds in the fixture: its alert fires and is told once
        wait_for(lambda: ("/hook", "firing", "array_rebuilding", "md126") in told(sink), 60, "array_rebuilding")
        episode = active()[("array_rebuilding", "md126")]
        stored = wait_for(lambda: samples_stored(tmp_path / "rackpulse.db"), 30, "stored samples")
        assert get_json(f"{base}/api/state")["states"]["bonding"] is None

        # The new file: bonding on, a second channel, bond_slave_down with no `for`, another port.
        path.write_text(to_toml(config(tmp_path, port, sink, **{
            "collectors.bonding": {"enabled": True, "interval": INTERVAL},
            "collectors.mdraid": {"enabled": True, "interval": INTERVAL * 1.5, "detail": False},  # rebuilt, seeded
            "alerts.channels": [{"name": "hook", "url": f"{sink.url}/hook"}, {"name": "hook2", "url": f"{sink.url}/hook2"}],
            "alerts.rules": {"bond_slave_down": {"for_seconds": 0}},
            "web.port": free_port()})))
        said = hup_and_wait(proc, log, "config reloaded", 0)
        assert "needs a restart to change: web" in said, said
        assert "started or rebuilt from their new sections: bonding, mdraid" in said, said

        # the new collector runs, and its alert goes to both channels at once (`for` now 0)
        wait_for(lambda: {"/hook", "/hook2"} <= {p for p, s, r, _ in told(sink) if (s, r) == ("firing", "bond_slave_down")},
                 60, "bond_slave_down on both channels")
        state = get_json(f"{base}/api/state")
        assert state["states"]["bonding"]["bonds"] and state["arrays"], state["states"].keys()
        # the same episode, told once; history only grew; the same process on the same port
        now = active()[("array_rebuilding", "md126")]
        assert now["since"] == episode["since"], (episode, now)
        assert told(sink).count(("/hook", "firing", "array_rebuilding", "md126")) == 1
        assert samples_stored(tmp_path / "rackpulse.db") >= stored
        assert proc.poll() is None

        # A broken file and a file that fails validation: nothing changes, one line each.
        secret = "hunter2-not-a-hash"
        for broken, why in ((config(tmp_path, port, sink) | {"web": "not a table"}, "web"),
                            (config(tmp_path, port, sink, **{"web.password_hash": secret}), "web.password_hash")):
            path.write_text(to_toml(broken) if why != "web" else "[collectors\nbroken = ")
            mark = len(log.read_text())
            said = hup_and_wait(proc, log, "reload refused", mark)
            refused = [line for line in said.splitlines() if "reload refused" in line]
            assert len(refused) == 1 and "the running config stays" in refused[0], said
            assert secret not in log.read_text()
        assert get_json(f"{base}/api/state")["states"]["bonding"]
        assert ("array_rebuilding", "md126") in active() and proc.poll() is None

        # A collector turned off: it stops, its state leaves the pages, its alert resolves.
        path.write_text(to_toml(config(tmp_path, port, sink, **{
            "collectors.mdraid": {"enabled": False}, "collectors.bonding": {"enabled": True, "interval": INTERVAL}})))
        hup_and_wait(proc, log, "config reloaded", len(log.read_text()))
        wait_for(lambda: ("/hook", "resolved", "array_rebuilding", "md126") in told(sink), 60, "array_rebuilding resolved")
        state = get_json(f"{base}/api/state")
        assert state["states"]["mdraid"] is None and "mdraid" not in {c["name"] for c in state["collectors"]}
    finally:
        stop(proc)
        sink.close()
