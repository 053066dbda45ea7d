"""HAProxy in `rackpulse demo`: the lab's edge proxy in front of Nextcloud (two servers), Jellyfin
and Home Assistant. In the story nc2's health check fails with a 503 from story second 110 to 160
(its PHP-FPM pool stuck), so haproxy_server_down fires naming the check and the backend keeps
serving from nc1. The scene writes `show stat` and `show info` as HAProxy 2.6 prints them; the
collector reads them through SceneSocket (app/demo/story.py attach_simulations), no socket."""

from __future__ import annotations

import time
from pathlib import Path

from collectors.network.haproxy.config import HaproxyInstance
from collectors.scenes import atomic_write

SOCKET = "/run/haproxy/admin.sock"
FAILING = (110.0, 160.0)
HEADER = ("# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,"
          "weight,act,bck,chkfail,chkdown,lastchg,downtime,qlimit,pid,iid,sid,throttle,lbtot,tracked,type,rate,"
          "rate_lim,rate_max,check_status,check_code,check_duration,hrsp_1xx,hrsp_2xx,hrsp_3xx,hrsp_4xx,hrsp_5xx,"
          "hrsp_other,hanafail,req_rate,req_rate_max,req_tot,cli_abrt,srv_abrt,comp_in,comp_out,comp_byp,comp_rsp,"
          "lastsess,last_chk,last_agt,qtime,ctime,rtime,ttime,agent_status,agent_code,agent_duration,check_desc,")
FIELDS = HEADER[2:].rstrip(",").split(",")


def row(**values: object) -> str:
    return ",".join(str(values.get(f, "")) for f in FIELDS) + ","


def show_stat(t: float, now: float) -> str:
    """The proxies at story time t. The counters climb on the real clock `now` since HAProxy's start
    (its uptime, ten days a run), so they never fall when the story loops (a counter that fell would
    read as HAProxy restarted every four minutes)."""
    failing = FAILING[0] <= t % 240 < FAILING[1]
    up = now % 864000
    served, fives = int(up * 12), int(up * 0.002)
    lines = [HEADER,
             row(pxname="https", svname="FRONTEND", scur=37, smax=80, slim=2000, stot=served, status="OPEN",
                 type=0, hrsp_2xx=served, hrsp_5xx=fives),
             row(pxname="nextcloud", svname="nc1", qcur=0, scur=14, status="UP", act=1, bck=0, type=2,
                 check_status="L7OK", check_code=200, check_desc="Layer7 check passed", last_chk="HTTP status 200")]
    nc2 = dict(status="DOWN", check_status="L7STS", check_code=503, check_desc="Layer7 wrong status",
               last_chk="HTTP status 503") if failing else dict(status="UP", check_status="L7OK", check_code=200,
                                                                check_desc="Layer7 check passed",
                                                                last_chk="HTTP status 200")
    lines += [row(pxname="nextcloud", svname="nc2", qcur=0, scur=0 if failing else 12, act=1, bck=0, type=2, **nc2),
              row(pxname="nextcloud", svname="BACKEND", qcur=0, scur=14 if failing else 26, slim=200, stot=served // 2,
                  status="UP", act=1 if failing else 2, bck=0, type=1, hrsp_5xx=fives),
              row(pxname="jellyfin", svname="jf1", qcur=0, scur=9, status="UP", act=1, bck=0, type=2,
                  check_status="L4OK", check_desc="Layer4 check passed"),
              row(pxname="jellyfin", svname="BACKEND", qcur=0, scur=9, slim=200, stot=served // 3, status="UP", act=1,
                  bck=0, type=1, hrsp_5xx=0),
              row(pxname="homeassistant", svname="ha1", qcur=0, scur=2, status="UP", act=1, bck=0, type=2,
                  check_status="L7OK", check_code=200, check_desc="Layer7 check passed", last_chk="HTTP status 200"),
              row(pxname="homeassistant", svname="BACKEND", qcur=0, scur=2, slim=200, stot=served // 6, status="UP",
                  act=1, bck=0, type=1, hrsp_5xx=0)]
    return "\n".join(lines) + "\n\n"


def write_scene(root: Path, t: float) -> None:
    folder, now = root / "demo-tools" / "haproxy", time.time()
    atomic_write(folder / "show stat", show_stat(t, now))
    atomic_write(folder / "show info", f"Name: HAProxy\nVersion: 2.6.12-1+deb12u4\nUptime_sec: {int(now % 864000)}\n"
                                       "CurrConns: 48\nMaxconn: 4000\n\n")


class SceneSocket:
    """What the stats socket would answer, as the scene wrote it."""

    def __init__(self, root: Path) -> None:
        self.folder = root / "demo-tools" / "haproxy"

    def __call__(self, inst: HaproxyInstance, command: str) -> str:
        return (self.folder / command).read_text()


def demo_section(interval: float) -> dict[str, object]:
    return {"interval": interval, "instances": [{"name": "edge", "socket": SOCKET}]}
