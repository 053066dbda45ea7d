"""Issue 3's cycle: CPU time to parse and store one collection of a host with 8 BGP peers,
2 OpenVPN instances with 50 clients each, a 6-slave bond and a 48-port switch.

Sources are in memory (the vtysh JSON, the status files, the bond file, the SNMP varbinds)
so the figure is rackpulse's own work: parsing, building samples, the SQL transaction.
usage: python bench/network_cycle.py [--cycles 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.storage.db import make_engine, upgrade  # noqa: E402
from app.storage.store import Store  # noqa: E402
from collectors.base import CommandResult  # noqa: E402
from collectors.network.bonding.collector import BondingCollector  # noqa: E402
from collectors.network.frr.collector import FrrCollector  # noqa: E402
from collectors.network.openvpn.collector import OpenvpnCollector  # noqa: E402
from collectors.network.openvpn.config import Instance
from collectors.network.snmp.collector import IF_TABLE, IF_X_TABLE, SnmpCollector  # noqa: E402
from collectors.snmpwire import SnmpTarget


def bgp_json() -> bytes:
    peers = {f"10.0.0.{i}": {"remoteAs": 65000 + i, "state": "Established", "peerState": "OK",
                             "peerUptimeMsec": 3600_000, "pfxRcd": 100 * i, "pfxSnt": 10, "connectionsEstablished": 1,
                             "connectionsDropped": 0, "desc": f"peer {i}", "idType": "ipv4"} for i in range(1, 5)}
    v6 = {f"swp{i}": {**p, "idType": "interface"} for i, p in enumerate(peers.values(), 1)}
    return json.dumps({"default": {"ipv4Unicast": {"vrfName": "default", "peers": peers},
                                   "ipv6Unicast": {"vrfName": "default", "peers": v6}}}).encode()


def status_file(n: int) -> str:
    head = ["TITLE,OpenVPN 2.6.14", "TIME,2026-11-22 12:00:00,1795000000",
            "HEADER,CLIENT_LIST,Common Name,Real Address,Virtual Address,Virtual IPv6 Address,Bytes Received,"
            "Bytes Sent,Connected Since,Connected Since (time_t),Username,Client ID,Peer ID,Data Channel Cipher"]
    rows = [f"CLIENT_LIST,client{i},198.51.100.{i}:5000,10.8.0.{i + 2},,{i * 1000},{i * 3000},2026-11-22 08:00:00,"
            f"1794985600,UNDEF,{i},{i},AES-256-GCM" for i in range(n)]
    return "\n".join(head + rows + ["GLOBAL_STATS,Max bcast/mcast queue length,0", "END"]) + "\n"


def bond_file() -> str:
    slaves = "\n".join(f"Slave Interface: eoip{i}\nMII Status: up\nSpeed: 100 Mbps\nDuplex: full\n"
                       f"Link Failure Count: {i}\nPermanent HW addr: 02:00:00:00:00:0{i}\nSlave queue ID: 0\n"
                       for i in range(6))
    return ("Ethernet Channel Bonding Driver: v6.1.0\n\nBonding Mode: load balancing (xor)\n"
            "Transmit Hash Policy: layer3+4 (1)\nMII Status: up\nMII Polling Interval (ms): 100\n\n" + slaves)


def varbinds() -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for i in range(1, 49):
        out += [(f"{IF_TABLE}.2.{i}", f"port{i}"), (f"{IF_TABLE}.7.{i}", 1), (f"{IF_TABLE}.8.{i}", 1),
                (f"{IF_TABLE}.9.{i}", 100), (f"{IF_TABLE}.13.{i}", 0), (f"{IF_TABLE}.14.{i}", 0),
                (f"{IF_TABLE}.19.{i}", 0), (f"{IF_TABLE}.20.{i}", 0), (f"{IF_X_TABLE}.1.{i}", f"ge-0/0/{i}"),
                (f"{IF_X_TABLE}.6.{i}", i * 10**9), (f"{IF_X_TABLE}.10.{i}", i * 10**8),
                (f"{IF_X_TABLE}.15.{i}", 1000), (f"{IF_X_TABLE}.18.{i}", "")]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=50)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp())
    for name in ("a", "b"):
        (root / "run").mkdir(exist_ok=True)
        (root / f"run/{name}.status").write_text(status_file(50))
    tun = root / "sys/class/net/tun0/statistics"
    tun.mkdir(parents=True)
    for f in ("tx_dropped", "rx_dropped", "tx_bytes", "rx_bytes"):
        (tun / f).write_text("0\n")
    (root / "sys/class/net/tun0/tx_queue_len").write_text("500\n")
    (root / "sys/class/net/tun0/mtu").write_text("1500\n")
    (root / "proc/net/bonding").mkdir(parents=True)
    (root / "proc/net/bonding/bond0").write_text(bond_file())
    summary = bgp_json()
    neighbors = json.dumps({"default": {"vrfName": "default"}}).encode()

    def runner(argv, timeout):  # type: ignore[no-untyped-def]
        return CommandResult(tuple(argv), 0, neighbors if "neighbors" in argv[-1] else summary, b"")

    vb = varbinds()

    async def walker(t: SnmpTarget):  # type: ignore[no-untyped-def]
        return 1000, vb

    collectors = {
        "frr": FrrCollector(["vtysh"], runner=runner),
        "openvpn": OpenvpnCollector(root, [Instance(name="a", status_file="/run/a.status", interface="tun0"),
                                           Instance(name="b", status_file="/run/b.status")]),
        "bonding": BondingCollector(root),
        "snmp": SnmpCollector([SnmpTarget(name="sw", host="127.0.0.1", community="x")], walker=walker),
    }
    url = f"sqlite:///{root / 'net.db'}"
    upgrade(url)
    store = Store(make_engine(url), "bench")
    parse_ms, store_ms, total_ms, n_samples = [], [], [], 0
    for cycle in range(args.cycles):
        t0 = time.process_time()
        results = {name: c.collect() for name, c in collectors.items()}
        t1 = time.process_time()
        for name, r in results.items():
            skip = frozenset(m for m, s in collectors[name].metrics.items() if not s.store)
            store.write_run(name, 1_795_000_000 + 30 * cycle, 0.01, True, None, r, skip)
        t2 = time.process_time()
        n_samples = sum(len(r.samples) for r in results.values())
        parse_ms.append((t1 - t0) * 1000)
        store_ms.append((t2 - t1) * 1000)
        total_ms.append((t2 - t0) * 1000)
    cut = max(1, args.cycles // 10)  # the first cycles create series and entities
    steady = sorted(total_ms[cut:])
    print(f"network_cycle cycles={args.cycles} samples_per_cycle={n_samples} "
          f"first_cycle_cpu_ms={total_ms[0]:.1f} steady: parse_cpu_ms={statistics.median(parse_ms[cut:]):.1f} "
          f"store_cpu_ms={statistics.median(store_ms[cut:]):.1f} total_cpu_ms median={statistics.median(steady):.1f} "
          f"p95={steady[int(len(steady) * 0.95) - 1]:.1f}")


if __name__ == "__main__":
    main()
