"""Whose address a request has: the socket's, unless the socket's peer is in web.trusted_proxies;
then the right-most untrusted hop of X-Forwarded-For. A local process forging the header must not
sign in through the proxy login, dodge the login throttle or the ping limit, or write a made-up
address into the audit log (uvicorn's own rewriting trusted 127.0.0.1 and did all four)."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

from fastapi.testclient import TestClient

from app.demo.agent import to_toml
from tests.agent_hosts import rackpulse, stop, wait_for
from tests.peers import free_port
from tests.security.test_web_guards import PW_HASH, make_app

PROXY = {"trusted_proxies": ["127.0.0.2/32", "10.0.0.0/24"], "proxy_user_header": "Remote-User",
         "proxy_admin_group": "lab-admins"}
FORGED = {"X-Forwarded-For": "127.0.0.2", "Remote-User": "alice", "Remote-Groups": "lab-admins"}


def _get(port: int, path: str, headers: dict[str, str], source: str = "127.0.0.1") -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def test_a_local_process_forging_x_forwarded_for_is_not_signed_in_by_a_real_server(tmp_path: Path) -> None:
    port = free_port()
    cfg = {"host": "nas", "web": {"port": port, "password_hash": PW_HASH, **PROXY},
           "storage": {"url": f"sqlite:///{tmp_path / 'r.db'}"},
           "collectors": {"host": {"enabled": False}}}
    path = tmp_path / "rackpulse.toml"
    path.write_text(to_toml(cfg))
    proc = rackpulse("serve", "--config", str(path), log=tmp_path / "serve.log")
    try:
        wait_for(lambda: _get(port, "/healthz", {})[0] == 200, what="the server to answer")
        # from 127.0.0.1 (not a trusted proxy) the forged hop is ignored: nobody is signed in
        status, _ = _get(port, "/api/v1/whoami", FORGED)
        assert status == 401
        # the real proxy at 127.0.0.2 is trusted: its user header counts, and the client is the hop it adds
        status, body = _get(port, "/api/v1/whoami", {**FORGED, "X-Forwarded-For": "198.51.100.7"},
                            source="127.0.0.2")
        assert status == 200 and json.loads(body)["name"] == "alice"
    finally:
        stop(proc)


def test_the_client_is_the_right_most_hop_no_trusted_proxy_added() -> None:
    from app.web.proxies import Proxies

    p = Proxies(["10.0.0.0/24", "127.0.0.2/32"], "Remote-User")
    assert p.client("127.0.0.1", "127.0.0.2") == "127.0.0.1"  # an untrusted peer's header is not read
    assert p.client("10.0.0.9", "198.51.100.7") == "198.51.100.7"
    # two proxies: the client's own claim (left) is skipped, the first untrusted hop from the right counts
    assert p.client("10.0.0.9", "6.6.6.6, 198.51.100.7, 127.0.0.2") == "198.51.100.7"
    assert p.client("10.0.0.9", "10.0.0.3, 127.0.0.2") == "10.0.0.3"  # only proxies: the first of them
    assert p.client("10.0.0.9", "not-an-address") == "10.0.0.9"
    assert p.client("10.0.0.9", None) == "10.0.0.9"


def test_a_forged_header_neither_dodges_the_login_throttle_nor_writes_the_audit_log(tmp_path: Path) -> None:
    app = make_app(tmp_path, **PROXY)
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False, client=("127.0.0.1", 4000)) as c:
        codes = [c.post("/login", data={"password": "wrong", "next": "/"},
                        headers={"X-Forwarded-For": f"192.0.2.{i}"}).status_code for i in range(12)]
        assert 429 in codes  # a new forged address per guess is still the one socket address
    rows = app.state.site.engine.connect().exec_driver_sql("SELECT address FROM audit").fetchall()
    assert rows and {r[0] for r in rows} == {"127.0.0.1"}


def test_behind_a_trusted_proxy_the_audit_log_and_throttle_see_the_client(tmp_path: Path) -> None:
    app = make_app(tmp_path, **PROXY)
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False, client=("10.0.0.9", 4000)) as c:
        for _ in range(3):
            c.post("/login", data={"password": "wrong", "next": "/"}, headers={"X-Forwarded-For": "198.51.100.7"})
        # another client behind the same proxy is not held by the first one's failures
        assert app.state.site.throttle.retry_after("10.0.0.9") == 0
    rows = app.state.site.engine.connect().exec_driver_sql("SELECT address FROM audit").fetchall()
    assert {r[0] for r in rows} == {"198.51.100.7"}
