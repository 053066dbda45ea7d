"""Issue 28's storm, through a real `rackpulse serve`: the gateway and two services behind it go
down at once (TCP ports nothing listens on: a real "connection refused"); with the dependency
declared, one notification arrives (the gateway's) and the alerts page says the others are
"suppressed by probe down gateway". When the gateway answers again, what is still down is told."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

from app.demo.agent import to_toml
from tests.agent_hosts import rackpulse, stop, wait_for
from tests.alerting.sink import Sink
from tests.peers import free_port
from tests.states import all_off

INTERVAL = 0.5  # the probes' and the alerts' interval, in seconds
GROUP_WAIT = 2.0  # what is told together waits this long for the rest of its host's news


def config(tmp: Path, port: int, sink: Sink, gateway: int, nas: int, cloud: int) -> Path:
    probes = {"interval": INTERVAL, "tcp": [
        {"name": "gateway", "host": "127.0.0.1", "port": gateway, "timeout": 1},
        {"name": "nas", "host": "127.0.0.1", "port": nas, "timeout": 1}],
        "http": [{"name": "nextcloud", "url": f"http://127.0.0.1:{cloud}/status.php", "timeout": 1}]}
    cfg = {"host": "nas", "host_root": str(tmp), "web": {"port": port},
           "storage": {"url": f"sqlite:///{tmp / 'r.db'}"},
           "collectors": all_off(probes=probes),
           "alerts": {"interval": INTERVAL, "group_wait": GROUP_WAIT, "rules": {"probe_down": {"for_seconds": 0}},
                      "channels": [{"name": "hook", "url": f"{sink.url}/hook", "timeout": 5}],
                      "dependencies": [{"parent": {"rule": "probe_down", "subject": "gateway"},
                                        "children": [{"rule": "probe_*"}, {"rule": "vpn_*"}]}]}}
    path = tmp / "rackpulse.toml"
    path.write_text(to_toml(cfg))
    return path


def sent(sink: Sink) -> list[tuple[str, str, str]]:
    """Every event told, a group's one by one."""
    out = []
    for _, _, body in list(sink.received):
        doc = json.loads(body)
        for ev in doc.get("events", [doc]):
            out.append((ev["state"], ev["rule"], ev["subject"]))
    return out


def test_with_the_gateway_down_the_services_behind_it_send_nothing_and_read_suppressed(tmp_path: Path) -> None:
    gateway, nas, cloud, port = free_port(), free_port(), free_port(), free_port()
    sink = Sink()
    proc = rackpulse("serve", "--config", str(config(tmp_path, port, sink, gateway, nas, cloud)),
                     log=tmp_path / "serve.log")
    base = f"http://127.0.0.1:{port}"
    deadline = 60.0  # start-up, then a probe poll and an evaluation every INTERVAL
    listener = None
    try:
        wait_for(lambda: sent(sink), deadline, "the gateway's notification")

        def page() -> str:
            import urllib.request

            html = urllib.request.urlopen(f"{base}/alerts", timeout=5).read().decode()  # noqa: S310 - loopback
            return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))
        wait_for(lambda: page().count("suppressed by probe down gateway") >= 2, deadline, "both shown suppressed")
        # Many evaluations later the children have still sent nothing.
        from tests.agent_hosts import get_json

        seen = get_json(f"{base}/api/alerts")["evaluations"]
        wait_for(lambda: get_json(f"{base}/api/alerts")["evaluations"] >= seen + 10, deadline, "10 evaluations")
        assert sent(sink) == [("firing", "probe_down", "gateway")]
        # The gateway answers again; nas and nextcloud are still down: now they are told, once each.
        listener = socket.socket()
        listener.bind(("127.0.0.1", gateway))
        listener.listen()
        wait_for(lambda: len(sent(sink)) >= 4, deadline, "the gateway resolved and the others told")
        seen = get_json(f"{base}/api/alerts")["evaluations"]
        wait_for(lambda: get_json(f"{base}/api/alerts")["evaluations"] >= seen + 5, deadline, "5 evaluations")
        assert sorted(sent(sink)[1:]) == [("firing", "probe_down", "nas"), ("firing", "probe_down", "nextcloud"),
                                          ("resolved", "probe_down", "gateway")]
        assert "suppressed by" not in page()
    finally:
        stop(proc)
        sink.close()
        if listener is not None:
            listener.close()
