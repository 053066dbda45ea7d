"""HAProxy with a real haproxy (Debian's package) on loopback, started by each test as a child
process: two backend servers that are real HTTP servers, a stats socket and the stats page's CSV.
A server stopped mid-test is marked DOWN by HAProxy's own check (inter 200 ms, fall 2), which fires
haproxy_server_down naming the check's reason, and haproxy_backend_down once none is up."""

from __future__ import annotations

import http.server
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.alerting.conditions import BUILTIN, Conditions
from app.alerting.engine import evaluate
from app.scheduler import Snapshot
from collectors.base import CollectorError, NoData, ParseError
from collectors.findings import Judging
from collectors.network.haproxy import findings
from collectors.network.haproxy.collector import HaproxyCollector
from collectors.network.haproxy.config import HaproxyConfig
from collectors.network.haproxy.parse import parse_stat
from collectors.network.haproxy.state import HaproxyState
from tests.peers import free_port

INTER, FALL, RISE = 0.2, 2, 1  # haproxy.cfg's check timing: a server is DOWN after FALL failed checks
# How long HAProxy takes to mark a server down or up by its own checks, with room for a loaded machine.
CHECK_DEADLINE = 50 * INTER * (FALL + RISE)


class Web:
    """A backend server: a real HTTP server answering 200 on its own port."""

    def __init__(self) -> None:
        self.port = free_port()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), http.server.SimpleHTTPRequestHandler)
        self.server.RequestHandlerClass.log_message = lambda *a: None  # type: ignore[method-assign]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Haproxy:
    def __init__(self, folder: Path, webs: list[Web]) -> None:
        self.socket, self.stats_port, self.front = folder / "h.sock", free_port(), free_port()
        servers = "\n".join(f"    server s{i + 1} 127.0.0.1:{w.port} check inter {int(INTER * 1000)} fall {FALL} "
                            f"rise {RISE}" for i, w in enumerate(webs))
        (folder / "haproxy.cfg").write_text(f"""global
    stats socket {self.socket} mode 600 level user
defaults
    mode http
    timeout connect 1s
    timeout client 5s
    timeout server 5s
frontend web
    bind 127.0.0.1:{self.front}
    maxconn 100
    default_backend app
backend app
    option httpchk GET /
{servers}
listen stats
    bind 127.0.0.1:{self.stats_port}
    stats enable
    stats uri /stats
""")
        self.proc = subprocess.Popen(["haproxy", "-f", str(folder / "haproxy.cfg"), "-db"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + CHECK_DEADLINE
        while not self.socket.exists() and time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(0.05)
        assert self.socket.exists(), self.proc.stderr.read().decode() if self.proc.poll() is not None else "no socket"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture
def lab() -> Iterator[tuple[Haproxy, list[Web]]]:
    folder = Path(tempfile.mkdtemp(prefix="hx", dir="/tmp"))  # a unix socket's path has 108 bytes at most
    webs = [Web(), Web()]
    h = Haproxy(folder, webs)
    yield h, webs
    h.stop()
    for w in webs:
        w.server.server_close()
    shutil.rmtree(folder, ignore_errors=True)


def collector(h: Haproxy, **kw: object) -> HaproxyCollector:
    return HaproxyCollector(HaproxyConfig(instances=[{"name": "edge", "socket": h.socket},  # type: ignore[list-item]
                                                     {"name": "page", "url": f"http://127.0.0.1:{h.stats_port}/stats;csv"}],
                                          **kw))


def until(c: HaproxyCollector, ok: object) -> HaproxyState:
    deadline = time.monotonic() + CHECK_DEADLINE
    while True:
        state = c.collect().state
        assert isinstance(state, HaproxyState)
        if ok(state) or time.monotonic() > deadline:  # type: ignore[operator]
            return state
        time.sleep(INTER)


def conditions(state: HaproxyState, previous: dict | None = None) -> list:  # type: ignore[type-arg]
    snap = Snapshot(host="nas")
    snap.states["haproxy"] = state
    return Conditions().build(snap, previous=previous or {}, now=time.time())


def servers_up(state: HaproxyState) -> dict[str, str]:
    return {s.name: s.status for s in state.instances[0].servers}


def test_a_stopped_server_fires_server_down_with_its_checks_reason_then_backend_down(lab) -> None:  # type: ignore[no-untyped-def]
    h, webs = lab
    c = collector(h)
    state = until(c, lambda s: servers_up(s) == {"s1": "UP", "s2": "UP"})
    assert servers_up(state) == {"s1": "UP", "s2": "UP"}
    assert conditions(state) == []
    assert findings.all_clear(state, Judging(now=time.time())) == "2 backends up, 4 of 4 servers up"
    edge, page = state.instances
    assert edge.version and edge.version.startswith("2.") and edge.uptime_seconds is not None
    assert [(p.name, p.kind, p.limit) for p in page.proxies if p.name == "web"] == [("web", "frontend", 100)]

    webs[0].stop()
    state = until(c, lambda s: servers_up(s)["s1"].startswith("DOWN"))
    conds = conditions(state)
    down = [(x.rule, x.subject, x.summary) for x in conds]
    assert down == [("haproxy_server_down", "edge/app/s1",
                     "HAProxy edge: server s1 of app is down: Layer4 connection problem: Connection refused"),
                    ("haproxy_server_down", "page/app/s1",
                     "HAProxy page: server s1 of app is down: Layer4 connection problem: Connection refused")]
    states, _ = evaluate(conds, BUILTIN, {}, time.time())

    webs[1].stop()
    state = until(c, lambda s: servers_up(s)["s2"].startswith("DOWN"))
    conds = conditions(state, states)
    assert ("haproxy_backend_down", "edge/app") in {(x.rule, x.subject) for x in conds}
    backend = next(x for x in conds if x.subject == "edge/app")
    assert backend.summary == "HAProxy edge: backend app has no server up (of 2)"
    states, events = evaluate(conds, BUILTIN, states, time.time())
    assert states[("haproxy_backend_down", "edge/app")].severity == "critical"
    metrics = {(s.metric, dict(s.labels).get("instance"), dict(s.labels).get("server")): s.value
               for s in c.collect().samples}
    assert metrics[("rackpulse_haproxy_backend_servers_up", "edge", None)] == 0
    assert metrics[("rackpulse_haproxy_server_up", "edge", "s1")] == 0


def test_an_instance_that_goes_away_holds_its_alerts_while_the_other_is_read(lab) -> None:  # type: ignore[no-untyped-def]
    h, webs = lab
    c = collector(h)
    webs[0].stop()
    state = until(c, lambda s: servers_up(s)["s1"].startswith("DOWN"))
    states, _ = evaluate(conditions(state), BUILTIN, {}, time.time())
    assert states[("haproxy_server_down", "edge/app/s1")].state == "firing"

    h.socket.unlink()  # the socket gone (HAProxy restarted elsewhere, or the path changed)
    gone = c.collect().state
    assert isinstance(gone, HaproxyState)
    assert gone.instances[0].error == (f"no socket at {h.socket} (is HAProxy running, with `stats socket` "
                                       "in its global section?)")
    assert gone.unreadable_sources() == {"edge": None} and gone.instances[1].error is None
    conds = conditions(gone, states)
    _, events = evaluate(conds, BUILTIN, states, time.time() + 60)
    assert [e.alert.key for e in events if e.kind == "resolved"] == []  # held, not resolved
    held = next(x for x in conds if x.subject == "edge/app/s1")
    assert "(held: edge " in held.summary


def test_a_socket_that_refuses_and_a_page_that_is_not_there_are_said_in_words(tmp_path: Path) -> None:
    import socket

    path = Path(tempfile.mkdtemp(prefix="hx", dir="/tmp")) / "dead.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))  # bound, never listening: connect is refused
    port = free_port()
    try:
        c = HaproxyCollector(HaproxyConfig(instances=[{"name": "a", "socket": path},  # type: ignore[list-item]
                                                      {"name": "b", "url": f"http://127.0.0.1:{port}/stats;csv"}]))
        state = c.collect().state
        assert isinstance(state, HaproxyState)
        assert [i.error for i in state.instances] == [f"connection refused on the stats socket {path}",
                                                      f"http://127.0.0.1:{port}/stats;csv: [Errno 111] Connection refused"]
        one = HaproxyCollector(HaproxyConfig(instances=[{"name": "a", "socket": path}]))  # type: ignore[list-item]
        with pytest.raises(CollectorError, match="haproxy a: connection refused"):
            one.collect()
    finally:
        s.close()
    with pytest.raises(NoData):
        HaproxyCollector(HaproxyConfig()).collect()


def test_an_answer_larger_than_max_bytes_is_refused_in_words(lab) -> None:  # type: ignore[no-untyped-def]
    h, _ = lab
    c = collector(h)
    c.cfg = c.cfg.model_copy(update={"max_bytes": 1000})  # below the config's floor: this haproxy says ~3 KB
    state = c.collect().state
    assert isinstance(state, HaproxyState)
    assert [i.error for i in state.instances] == ["show stat: the answer is larger than max_bytes (1000 bytes); not read"] * 2


@pytest.mark.parametrize(("text", "said"), [
    ("", "show stat: the header line '# pxname,svname,…' expected, got 'nothing'"),
    ("Unknown command\n", "show stat: the header line '# pxname,svname,…' expected, got 'Unknown command'"),
    ("# pxname,svname,scur,status,type,\nweb,FRONTEND,x,OPEN,0,\n", "show stat: scur is 'x', not a number"),
    ("# pxname,svname,scur,status,type,\nweb,FRONTEND,1,OPEN,7,\n", "show stat: type '7' is none of 0-3"),
    ("# pxname,svname,scur,status,type,\nweb,FRON", "show stat: 2 fields where the header has 5"),
    ("# pxname,svname,scur,type,\nweb,FRONTEND,1,0,\n", "show stat: no status field in the header"),
])
def test_what_is_not_show_stat_is_an_error_quoting_it(text: str, said: str) -> None:
    with pytest.raises(ParseError, match=said.replace("(", r"\(").replace("'", ".")):
        parse_stat(text)


def test_a_server_in_maintenance_is_not_down_and_not_counted() -> None:
    from collectors.network.haproxy.collector import proxies

    text = ("# pxname,svname,scur,slim,status,act,type,check_desc,last_chk,\n"
            "app,s1,0,,MAINT,1,2,,,\napp,s2,0,,UP,1,2,Layer7 check passed,HTTP status 200,\n"
            "app,BACKEND,0,10,UP,1,1,,,\n")
    rows = parse_stat(text)
    (backend,) = proxies(rows)
    assert (backend.servers, backend.servers_up) == (1, 1)
    state = HaproxyState(instances=[{"name": "edge", "where": "x", "proxies": [backend]}])  # type: ignore[list-item]
    assert findings.findings(state, Judging(now=time.time())) == []


def test_a_frontend_at_nine_tenths_of_its_maxconn_is_near_its_limit_and_the_rule_waits_two_minutes() -> None:
    from collectors.network.haproxy.collector import proxies

    text = ("# pxname,svname,scur,slim,status,type,\nweb,FRONTEND,90,100,OPEN,0,\nstats,FRONTEND,10,100,OPEN,0,\n")
    state = HaproxyState(instances=[{"name": "edge", "where": "x", "proxies": proxies(parse_stat(text))}])  # type: ignore[list-item]
    found = findings.findings(state, Judging(now=time.time()))
    assert [(f.rule, f.subject, f.text) for f in found] == [
        ("haproxy_sessions_near_limit", "edge/frontend/web", "HAProxy edge: frontend web has 90 of its 100 sessions")]
    assert BUILTIN["haproxy_sessions_near_limit"].for_seconds == 120  # a burst is not a page at 3 a.m.


def test_init_finds_haproxys_stats_socket_and_the_section_it_writes_loads(tmp_path: Path) -> None:
    from collectors.network.haproxy.starter import starter
    from collectors.starter import HostTree

    (tmp_path / "etc/haproxy").mkdir(parents=True)
    cfg = tmp_path / "etc/haproxy/haproxy.cfg"
    cfg.write_text("global\n    log /dev/log local0\n    stats socket /run/haproxy/admin.sock mode 660 level admin\n"
                   "    stats socket ipv4@127.0.0.1:9999 level user\n")
    lines = starter(HostTree(tmp_path))
    assert lines == ["[collectors.haproxy]", "[[collectors.haproxy.instances]]", 'name = "haproxy"',
                     'socket = "/run/haproxy/admin.sock"  # level admin: rackpulse sends only show stat and show info']
    import tomllib

    section = tomllib.loads("\n".join(lines))["collectors"]["haproxy"]
    assert HaproxyConfig(**section).instances[0].socket == Path("/run/haproxy/admin.sock")
    cfg.write_text("global\n    daemon\n")
    assert "has no stats socket: add `stats socket" in starter(HostTree(tmp_path))[1]
    assert starter(HostTree(tmp_path / "nothing")) == []
