"""What issue 13's guards cost and hold, measured on real `rackpulse serve` processes:

1. RSS of a server whose FRR collector runs an endless command (`yes`), over 20 s, against the
   same server without it (the cap: command_max_bytes, 16 MiB).
2. /healthz latency while 8 clients from 8 addresses guess passwords as fast as they can (scrypt
   runs in the thread pool one check at a time; the throttle answers 429 after 10 failures a
   minute per address).
3. Scrape size and time of /metrics, plain and gzip.

Prints figures; asserts nothing. Run: .venv/bin/python bench/trust.py
"""

from __future__ import annotations

import http.client
import statistics
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from tempfile import TemporaryDirectory

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.credentials import hash_password  # noqa: E402
from app.demo.agent import to_toml  # noqa: E402
from tests.agent_hosts import rackpulse, rss_mb, stop, wait_for  # noqa: E402
from tests.peers import free_port  # noqa: E402

MDSTAT = """Personalities : [raid6] [raid5] [raid4]
md0 : active raid5 sdc1[3](F) sdb1[0] sdd1[2]
      8385664 blocks level 5, 64k chunk, algorithm 2 [3/2] [U_U]

unused devices: <none>
"""
OFF = {"enabled": False}


def serve(tmp: Path, endless: bool, password: str | None = None) -> tuple[object, str]:
    (tmp / "root" / "proc").mkdir(parents=True, exist_ok=True)
    (tmp / "root" / "proc" / "mdstat").write_text(MDSTAT)
    port = free_port()
    web: dict[str, object] = {"port": port}
    if password:
        web["password_hash"] = hash_password(password)  # the default cost, as a real install has it
    cfg = {"host": "bench", "host_root": str(tmp / "root"), "web": web, "storage": {"url": f"sqlite:///{tmp / 'r.db'}"},
           "collectors": {**{n: OFF for n in ("smart", "bonding", "openvpn", "snmp", "nut", "hwmon", "heatpump")},
                          "mdraid": {"interval": 1, "detail": False},
                          "frr": {"enabled": endless, "vtysh": ["yes", "--"], "interval": 1, "timeout": 30,
                                  "command_timeout": 20}}}
    (tmp / "c.toml").write_text(to_toml(cfg))
    proc = rackpulse("serve", "--config", str(tmp / "c.toml"), log=tmp / "serve.log")
    base = f"http://127.0.0.1:{port}"
    wait_for(lambda: urllib.request.urlopen(base + "/healthz", timeout=2).status == 200, 60, "server")
    return proc, base




def bench_rss(seconds: float = 20.0) -> None:
    for endless in (False, True):
        with TemporaryDirectory() as d:
            proc, _ = serve(Path(d), endless)
            samples = []
            t_end = time.monotonic() + seconds
            while time.monotonic() < t_end:
                samples.append(rss_mb(proc.pid))  # type: ignore[attr-defined]
                time.sleep(0.25)
            stop(proc)  # type: ignore[arg-type]
            killed = (Path(d) / "serve.log").read_text().count("output exceeded")
            print(f"rss {'endless vtysh' if endless else 'no frr       '}: max {max(samples):.0f} MB, "
                  f"median {statistics.median(samples):.0f} MB over {seconds:.0f}s"
                  + (f" (frr failures logged: {killed}; the log says it once per outage)" if endless else ""))


def timed_get(url: str) -> float:
    t0 = time.perf_counter()
    with urllib.request.urlopen(url, timeout=10) as r:
        r.read()
    return (time.perf_counter() - t0) * 1000


def bench_guessers(guessers: int = 8, seconds: float = 15.0) -> None:
    with TemporaryDirectory() as d:
        proc, base = serve(Path(d), False, password="the real one")
        quiet = [timed_get(base + "/healthz") for _ in range(200)]
        stop_at = time.monotonic() + seconds
        answers: dict[int, int] = {}
        lock = threading.Lock()

        port = int(base.rsplit(":", 1)[1])

        def guess(source: str) -> None:
            # Each guesser from its own loopback address (127.0.0.2 ...): the per-address throttle
            # lets each one through 10 times a minute, so only the global cap on checks holds.
            form = urllib.parse.urlencode({"password": "wrong", "next": "/"})
            while time.monotonic() < stop_at:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
                try:
                    conn.request("POST", "/login", body=form,
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
                    code = conn.getresponse().status
                except OSError:
                    code = 0
                finally:
                    conn.close()
                with lock:
                    answers[code] = answers.get(code, 0) + 1
                if code == 429:
                    return  # its 10 guesses a minute are used: what is measured is the scrypt window

        threads = [threading.Thread(target=guess, args=(f"127.0.0.{i + 2}",)) for i in range(guessers)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        busy = []
        started = time.monotonic()
        while any(t.is_alive() for t in threads):
            busy.append(timed_get(base + "/healthz"))
            time.sleep(0.02)
        window = time.monotonic() - started
        for t in threads:
            t.join()
        stop(proc)  # type: ignore[arg-type]

    def q(xs: list[float], p: float) -> float:
        return sorted(xs)[min(len(xs) - 1, int(len(xs) * p))]

    print(f"/healthz alone: p50 {q(quiet, .5):.2f} ms, p99 {q(quiet, .99):.2f} ms ({len(quiet)} requests)")
    print(f"/healthz while {guessers} guessers from {guessers} addresses use their attempts ({window:.1f} s): "
          f"p50 {q(busy, .5):.2f} ms, p99 {q(busy, .99):.2f} ms ({len(busy)} requests); guessers' answers "
          f"{dict(sorted(answers.items()))} (200: 'Wrong password' page, 429: throttled)")


if __name__ == "__main__":
    bench_rss()
    bench_guessers()
