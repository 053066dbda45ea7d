"""`rackpulse demo`: a populated dashboard with no hardware.

A fixture host tree (``/proc/mdstat``, ``/sys/block/md*``, ``/dev/disk/by-*``) and fake
``smartctl``/``mdadm`` commands are rewritten every few seconds by a driver thread that
plays a story on a loop: a healthy 12-disk RAID6, a disk in bay 7 starts reallocating
sectors, fails, is pulled and replaced, and the array rebuilds onto the new disk.
"""

from __future__ import annotations

import json
import marshal
import math
import os
import py_compile
import sys
import threading
import time
from pathlib import Path
from typing import Any

from app.demo.backups import DEMO_DATA
from app.demo.power import DEMO_ENERGY
from app.demo.pve_api import demo_sections
from collectors.host.updates.demo import demo_section as updates_demo
from collectors.network.haproxy.demo import demo_section as haproxy_demo
from collectors.scenes import atomic_write, write_symlinks

CYCLE = 240.0  # seconds of one story loop at speed 1
N_BAYS = 12
MODELS = ("ST8000VN004-2M2101", "WDC WD80EFZZ-68BTXN0")


def _disk(i: int, dev: str, serial: str) -> dict[str, Any]:
    return {"dev": dev, "serial": serial, "model": MODELS[i % 2], "bytes": 8_001_563_222_016, "passed": True,
            "temp": 33 + i % 5, "hours": 21_000 + 137 * i, "realloc": 0, "wwn_id": 0x9A0000 + i, "fw": "SC60"}


def story_state(t: float) -> dict[str, Any]:
    """The demo host at time t (seconds into the loop). `elapsed`: story seconds since the start,
    not looped, for what only ever rises (a plug's or a CPU's energy counter)."""
    elapsed, t = t, t % CYCLE
    devs = [f"sd{chr(ord('a') + i)}" for i in range(N_BAYS)]
    disks = [_disk(i, d, f"ZA{1000 + i * 7:04d}{chr(65 + i)}K") for i, d in enumerate(devs)]
    disks += [{"dev": "nvme0n1", "serial": "S5GXNF0R123456", "model": "Samsung SSD 980 PRO 1TB",
               "bytes": 1_000_204_886_016, "passed": True, "temp": 41, "hours": 9_100},
              {"dev": "nvme1n1", "serial": "S5GXNF0R123457", "model": "Samsung SSD 980 PRO 1TB",
               "bytes": 1_000_204_886_016, "passed": True, "temp": 43, "hours": 9_100}]
    for i, d in enumerate(disks):  # a little life in the temperature charts (deterministic in t)
        d["temp"] = round(d["temp"] + 2 * math.sin(t / 40 + i), 0)
    members = [{"dev": f"{d}1", "num": i, "slot": i, "state": "active"} for i, d in enumerate(devs)]
    arr = {"name": "md0", "level": "raid6", "slots": N_BAYS, "uuid": "3b1f2a7c:9d0e4f11:a2c3b4d5:e6f70819",
           "members": members, "sync": None, "events": 4711}
    victim = 7  # sdh, bay 7 (0-based port 7)
    port_of = {d: i for i, d in enumerate(devs)}
    if 40 <= t < 100:
        disks[victim]["realloc"] = int(8 + (t - 40) * 2)
    if 70 <= t < 100:
        disks[victim]["passed"] = False
        members[victim]["state"] = "failed"
        members[victim]["slot"] = None
    if 100 <= t < 115:
        # sdh pulled, the replacement not in yet: only rackpulse's memory knows what was in bay 7.
        disks.pop(victim)
        port_of.pop("sdh")
        members.pop(victim)
    elif t >= 115:
        # A new disk appears as sdm on the same HBA port (bay 7) and the array rebuilds onto it.
        new = _disk(victim, "sdm", "ZR9Q0NEWK")
        new["hours"] = 12
        disks[victim] = new
        port_of.pop("sdh")
        port_of["sdm"] = victim
        members[victim] = {"dev": "sdm1", "num": 12, "slot": victim, "state": "rebuilding" if t < 200 else "active"}
        if t < 200:
            arr["sync"] = {"action": "recovery", "ratio": (t - 115) / 85}
    arrays = [arr, {"name": "md1", "level": "raid1", "slots": 2, "uuid": "77aa01be:5c2d3e4f:60718293:a4b5c6d7",
                    "members": [{"dev": "nvme0n1p2", "num": 0, "slot": 0, "state": "active"},
                                {"dev": "nvme1n1p2", "num": 1, "slot": 1, "state": "active"}], "sync": None}]
    return {"disks": disks, "arrays": arrays, "ports": port_of, "t": t, "elapsed": elapsed}


def render_mdstat(state: dict[str, Any]) -> str:
    out = ["Personalities : [raid1] [raid6] [raid5] [raid4] ", ""]
    for a in state["arrays"]:
        toks = []
        for m in a["members"]:
            flag = "(F)" if m["state"] == "failed" else "(S)" if m["state"] == "spare" else ""
            toks.append(f"{m['dev']}[{m['num']}]{flag}")
        slot_map = "".join("U" if any(m.get("slot") == s and m["state"] == "active" for m in a["members"]) else "_"
                           for s in range(a["slots"]))
        working = slot_map.count("U")
        out.append(f"{a['name']} : active {a['level']} {' '.join(reversed(toks))}")
        if a["level"] == "raid6":
            out.append(f"      78129610752 blocks super 1.2 level 6, 512k chunk, algorithm 2 "
                       f"[{a['slots']}/{working}] [{slot_map}]")
        else:
            out.append(f"      975585280 blocks super 1.2 [{a['slots']}/{working}] [{slot_map}]")
        if a.get("sync"):
            r = a["sync"]["ratio"]
            done = int(7812961075 * r)
            bar = "=" * int(r * 20) + ">" + "." * (20 - int(r * 20))
            left = (1 - r) * 100 / 60 * 40
            out.append(f"      [{bar}]  {a['sync']['action']} = {r * 100:4.1f}% ({done}/7812961075) "
                       f"finish={left:.1f}min speed=198765K/sec")
        out.append("      bitmap: 2/59 pages [8KB], 65536KB chunk")
        out.append("")
    out.append("unused devices: <none>")
    return "\n".join(out) + "\n"


def write_tree(root: Path, state: dict[str, Any]) -> None:
    atomic_write(root / "proc" / "mdstat", render_mdstat(state))
    by_id: dict[str, str] = {}
    by_path: dict[str, str] = {}
    for d in state["disks"]:
        dev = d["dev"]
        if dev.startswith("nvme"):
            by_id[f"nvme-{d['model'].replace(' ', '_')}_{d['serial']}"] = f"../../{dev}"
            by_id[f"nvme-{d['model'].replace(' ', '_')}_{d['serial']}-part2"] = f"../../{dev}p2"
            by_path[f"pci-0000:0{dev[4]}:00.0-nvme-1"] = f"../../{dev}"
            continue
        by_id[f"ata-{d['model'].replace(' ', '_')}_{d['serial']}"] = f"../../{dev}"
        by_id[f"ata-{d['model'].replace(' ', '_')}_{d['serial']}-part1"] = f"../../{dev}1"
        by_id[f"wwn-0x{(5 << 60) | (3152 << 36) | d['wwn_id']:016x}"] = f"../../{dev}"
        by_path[f"pci-0000:03:00.0-sas-phy{state['ports'][dev]}-lun-0"] = f"../../{dev}"
    write_symlinks(root / "dev" / "disk" / "by-id", by_id)
    write_symlinks(root / "dev" / "disk" / "by-path", by_path)
    for a in state["arrays"]:
        md = root / "sys" / "block" / a["name"] / "md"
        atomic_write(md / "uuid", a["uuid"] + "\n")
        atomic_write(md / "array_state", "clean\n")
        atomic_write(md / "sync_action", (a["sync"]["action"].replace("recovery", "recover") if a.get("sync")
                                           else "idle") + "\n")
        atomic_write(md / "mismatch_cnt", "0\n")
        present = set()
        for m in a["members"]:
            present.add(f"dev-{m['dev']}")
            st = {"active": "in_sync", "failed": "faulty", "spare": "spare", "rebuilding": ""}[m["state"]]
            atomic_write(md / f"dev-{m['dev']}" / "state", st + "\n")
        for old in os.listdir(md):
            if old.startswith("dev-") and old not in present:
                for f in os.listdir(md / old):
                    os.unlink(md / old / f)
                os.rmdir(md / old)
    from app.demo.network import write_network

    write_network(root, state.get("t", 0.0))
    from collectors import plugins

    for plugin in plugins().values():  # the scenes collectors bring in their own folders
        if plugin.setup.scene is not None:
            plugin.setup.scene(root, state.get("t", 0.0))
    write_state(root, state)


def write_state(root: Path, state: dict[str, Any]) -> None:
    """The story's state as the stand-ins read it (app/demo/tools.py): marshal, the one format Python
    reads without an import (`import json` was 11 of a stand-in's 17 ms of CPU, and the demo
    starts dozens a second), and JSON beside it for the plug-ins' scenes and for people."""
    atomic_write(root / "demo-state.json", json.dumps(state))
    atomic_write(root / "demo-state.marshal", marshal.dumps(state))


# The rules whose own `for` is longer than their moment in the story, and what the demo uses.
STORY_FOR = {"container_unhealthy": 10, "unit_failed": 0, "bgp_peer_down": 20, "bond_slave_down": 20, "probe_loss": 30, "probe_latency": 30,
             "vpn_tunnel_drops": 30, "ceph_osd_down": 20, "ceph_health_warn": 30, "ups_on_battery": 10,
             "rail_out_of_range": 0, "modem_signal_poor": 30, "modem_gone": 10}


def demo_config(root: Path, db_url: str, port: int, interval: float, upsd_port: int | None = None,
                isg_port: int | None = None, pve_port: int | None = None, pbs_port: int | None = None,
                speed: float = 1.0) -> dict[str, Any]:
    """The demo host's whole config: each part of the lab answered by its scene's stand-in or
    simulation (a replayed tool, a simulated UPS, switch or heat pump), every address loopback.
    `speed`: the story's, for what is held a while in real seconds (a BMC log's news)."""
    tools = _Tools(root)
    return {
        "host": "demo-nas",
        "host_root": str(root),
        "web": {"listen": "127.0.0.1", "port": port, "refresh_seconds": 3},
        "storage": {"url": db_url, "maintenance_interval": 60},
        "collectors": {**_storage_sections(tools, interval), **_network_sections(tools, interval),
                       **_power_sections(interval, upsd_port, isg_port),
                       **_probe_sections(tools, interval, upsd_port, isg_port), **_host_sections(tools, interval, speed),
                       **demo_sections(root, interval, pve_port, pbs_port, tools.replay)},
        # The chassis as the bay map draws them: shelf 1 a 12-bay case in three rows of four,
        # counted from the bottom left as many 3U cases are; the RAID shelf two rows of four.
        "disks": {"bays": _bays(), "enclosures": [
            {"name": "shelf 1", "rows": 3, "columns": 4, "start": "bottom"},
            {"name": "shelf 2", "rows": 1, "columns": 2},
            {"name": "shelf 3", "rows": 2, "columns": 4}]},
        # The story packs an evening into four minutes: a rule's `for` (how long a condition must
        # hold) is cut to fit its moment, and flapping is counted over two minutes, not an hour,
        # so that every alert the story shows fires, and clears, in each loop.
        "alerts": {"interval": max(interval, 2.0), "flap_window": 120,
                   "rules": {rule: {"for_seconds": seconds} for rule, seconds in STORY_FOR.items()}},
        "energy": DEMO_ENERGY, "data": DEMO_DATA,  # /energy's bill (app/demo/power.py), /data's sets
    }


def _bays() -> list[dict[str, str]]:
    """The bay labels: the md shelf's by port, the NVMe slots, the ZFS mirror's disks by serial (the
    replacement takes the pulled one's bay), the RAID shelf's by slot, Ceph's OSD disks by serial."""
    bays = [{"label": f"shelf 1, bay {i}", "path": f"pci-0000:03:00.0-sas-phy{i}-lun-0"} for i in range(N_BAYS)]
    bays += [{"label": "NVMe slot M2_1", "path": "pci-0000:00:00.0-nvme-1"},
             {"label": "NVMe slot M2_2", "path": "pci-0000:01:00.0-nvme-1"}]
    bays += [{"label": "shelf 2, bay 0", "serial": "WD-WCC7K4NL1AXA"},
             {"label": "shelf 2, bay 1", "serial": "WD-WCC7K6RR9KXB"},
             {"label": "shelf 2, bay 1", "serial": "WD-WCC7K2HJ7YZN"}]
    bays += [{"label": f"shelf 3, bay {i}", "slot": f"252:{i}"} for i in range(8)]
    # Ceph OSD disks by serial, on this node and its two peers (a serial is unique anywhere).
    bays += [{"label": f"{('demo-nas', 'ceph-b', 'ceph-c')[i // 2]}, bay {i % 2}", "serial": f"ZRT0{i:02d}K{i}"}
             for i in range(6)]
    return bays


class _Tools:
    """The demo's stand-ins for the tools a collector runs: app/demo/tools.py answering from the
    story's state, or replaying what a scene wrote under demo-tools/."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # Run compiled: Python compiles a script it is given on every start (only imports are
        # cached), and that was a third of a stand-in's CPU.
        compiled = root / "demo-tools.pyc"
        py_compile.compile(str(Path(__file__).with_name("tools.py")), cfile=str(compiled), doraise=True)
        self.tool = [sys.executable, "-I", "-S", str(compiled)]
        self.state = str(root / "demo-state.marshal")

    def live(self, name: str) -> list[str]:
        return [*self.tool, name, self.state]

    def replay(self, name: str) -> list[str]:
        return [*self.tool, "replay", str(self.root / "demo-tools" / name)]


def _storage_sections(tools: _Tools, interval: float) -> dict[str, Any]:
    """md, SMART, ZFS, the RAID controller and Ceph, answered by the scenes' stand-ins."""
    return {
        "mdraid": {"interval": interval, "mdadm": tools.live("mdadm")},
        "smart": {"interval": interval, "timeout": 30, "smartctl": tools.live("smartctl")},
        # Storage beyond md, answered by the scenes' replayed zpool, storcli and ceph output.
        "zfs": {"interval": interval, "format": "text", "zpool": tools.replay("zpool")},
        "megaraid": {"interval": interval, "storcli": tools.replay("storcli")},
        "ceph": {"interval": interval, "ceph": tools.replay("ceph")},
    }


def _network_sections(tools: _Tools, interval: float) -> dict[str, Any]:
    """BGP, the 3G bond and its modems, the VPN, the switch and WireGuard."""
    return {
        "frr": {"enabled": True, "interval": interval, "vtysh": tools.live("vtysh")},
        "bonding": {"interval": interval},
        # The bond's six modems, answered by the scene's replayed mmcli (collectors/network/modems/demo.py):
        # eoip4's fades, then drops off and returns under another number. Thirteen mmcli answers a
        # poll: at most every 5 s, so a fast demo does not spend a core on stand-ins.
        "modems": {"enabled": True, "interval": max(interval, 5.0), "mmcli": tools.replay("mmcli"),
                   "links": [{"imei": f"3569380356438{i:02d}", "interface": f"eoip{i}", "name": f"3G link {i}"}
                             for i in range(1, 7)]},
        "openvpn": {"interval": interval, "instances": [{
            "name": "site-b", "status_file": "/run/openvpn/site-b.status", "interface": "tun0",
            "config_file": "/etc/openvpn/server/site-b.conf", "path_mtu": 1420, "link_mbps": 100}]},
        # Answered by a simulated switch (attach_simulations); the address is loopback so that
        # nothing leaves the machine even if the simulation is not attached.
        "snmp": {"interval": interval, "targets": [{"name": "rack-sw", "host": "127.0.0.1", "port": 1,
                                                    "community": "demo", "timeout": 0.5, "retries": 0}]},
        # WireGuard answered by the scene's replayed `wg show all dump`: the phone goes quiet
        # once a loop (stale after a minute of story), then roams back from another network.
        "haproxy": haproxy_demo(interval),  # the edge proxy; nc2's check fails (collectors/network/haproxy/demo.py)
        "wireguard": {"interval": interval, "wg": tools.replay("wg"), "stale_after": 60,
                      "peers": [{"key": "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=", "name": "phone",
                                 "expect": True},
                                {"key": "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=", "name": "site-b"}]},
    }


def _power_sections(interval: float, upsd_port: int | None, isg_port: int | None) -> dict[str, Any]:
    """The rails and fans, the simulated UPS and heat pump, the smart plugs."""
    from app.demo.power import DEMO_HWMON
    from collectors.home.smartplugs.demo import demo_section

    return {
        "hwmon": {"interval": interval, **DEMO_HWMON},
        "nut": {"interval": interval, "upsd": [{"port": upsd_port}] if upsd_port else []},
        "heatpump": {"interval": interval, "host": "127.0.0.1" if isg_port else "", "port": isg_port or 502},
        "smartplugs": demo_section(interval),  # fed the scene's payloads: attach_simulations
    }


def _probe_sections(tools: _Tools, interval: float, upsd_port: int | None, isg_port: int | None) -> dict[str, Any]:
    """Pings, TCP checks, iperf3 and the cron jobs' heartbeats."""
    return {
        # Reachability of the demo's own simulated devices (loopback only: the demo sends
        # nothing beyond this machine; pings need fping, which a demo machine may lack).
        # Pings answered by the fping stand-in (nothing is sent): the 3G bond's evening rush.
        "probes": {"interval": interval, "fping": tools.live("fping"),
                   "ping": [{"name": "3G bond", "target": "10.0.250.1", "interface": "bond0", "count": 20,
                             "interval_ms": 20},
                            {"name": "LAN gateway", "target": "192.168.1.1", "count": 5, "interval_ms": 20}],
                   "tcp": [{"name": name, "host": "127.0.0.1", "port": p, "timeout": 2}
                           for name, p in (("UPS server", upsd_port), ("heat pump gateway", isg_port)) if p]},
        "throughput": {"interval": interval, "iperf3": tools.live("iperf3"),
                       "tests": [{"name": "VPN site-b up", "server": "10.8.0.1", "duration": 5, "interval": 60,
                                  "baseline_mbps": 90},
                                 {"name": "VPN site-b down", "server": "10.8.0.1", "duration": 5, "interval": 60,
                                  "baseline_mbps": 90, "reverse": True}]},
        # Cron jobs' heartbeats, from the scene (collectors/probes/heartbeats/demo.py): the
        # nightly backup runs every 30 story seconds, hangs once a loop, fails, runs again.
        "heartbeats": {"interval": interval, "checks": [{"name": "nightly-backup", "every": 30, "grace": 10},
                                                        {"name": "photo-sync", "every": 60, "grace": 30,
                                                         "public": True}]},
    }


def _host_sections(tools: _Tools, interval: float, speed: float = 1.0) -> dict[str, Any]:
    """The containers on the demo's fake engine and systemd's units."""
    from collectors.host.containers.demo import socket_path
    from collectors.host.ipmi.demo import demo_section

    return {
        # A compose stack on the demo's fake engine (collectors/host/containers/demo.py): sonarr's
        # health check fails for a stretch of each loop.
        "containers": {"interval": interval, "socket": str(socket_path(tools.root)),
                       "public": ["media-jellyfin-1"]},
        # systemd answered by the scene's replayed systemctl: photo-sync's service fails for a while.
        "systemd": {"interval": interval, "systemctl": tools.replay("systemctl"),
                    "watch": ["nginx.service", "*.timer"], "public": ["nginx.service"]},
        # Two servers' BMCs answered by the scene's FreeIPMI stand-in (collectors/host/ipmi/demo.py).
        "ipmi": demo_section(tools.tool, tools.root, interval, speed),
        # KVM guests answered by the scene's replayed virsh (collectors/host/libvirt/demo.py).
        "libvirt": {"interval": interval, "virsh": tools.replay("virsh")},
        # apt's replayed simulation and the host tree's kernels: a reboot owed late in each loop
        "updates": updates_demo(tools.replay("apt-get"), interval * 3),
    }


class Driver(threading.Thread):
    """Rewrites the fixture tree every second or so, following the story."""

    def __init__(self, root: Path, speed: float = 1.0) -> None:
        super().__init__(daemon=True, name="demo-driver")
        self.root, self.speed, self.t0 = root, speed, time.time()
        self.stop_event = threading.Event()

    def tick(self) -> None:
        write_tree(self.root, story_state((time.time() - self.t0) * self.speed))

    def run(self) -> None:
        while not self.stop_event.wait(1.0):
            self.tick()


def attach_simulations(collectors: dict[str, Any], root: Path) -> None:
    """Plug the simulated switch into the SNMP collector (the only source not faked by files or commands)."""
    from app.demo.network import make_walker

    if "snmp" in collectors:
        collectors["snmp"].walker = make_walker(root)
    if "host" in collectors:  # /srv and /boot of the story's sizes, not this machine's disk
        from collectors.host.basics.demo import demo_statvfs

        collectors["host"].statvfs = demo_statvfs
    if "haproxy" in collectors:  # `show stat` as its scene wrote it (no HAProxy here)
        from collectors.network.haproxy.demo import SceneSocket

        collectors["haproxy"].ask = SceneSocket(root)
    if "smartplugs" in collectors:  # the plugs' payloads, from the scene (no broker here)
        from collectors.home.smartplugs.demo import ScenePlugs, seeded

        collectors["smartplugs"].feed = ScenePlugs(root)
        collectors["smartplugs"].restore(seeded())
    if "rapl" in collectors:  # the scene's counters rise on the story's clock
        from collectors.host.rapl.demo import StoryClock

        collectors["rapl"].clock = StoryClock(root)
    if "heartbeats" in collectors:  # the cron jobs' pings, from the scene (no job runs here)
        from collectors.probes.heartbeats.demo import ScenePings

        collectors["heartbeats"].pings = ScenePings(root)
    if "heatpump" in collectors:
        from app.demo import heatpump

        if heatpump._clock:  # the demo's ISG runs: the day book on its calendar, with the week before
            from collectors.home.heatpump.state import HeatpumpState

            hp = collectors["heatpump"]
            hp.clock = heatpump.sim_clock
            hp.energy_pace = heatpump.DAY / 86400  # on /energy at a real day's pace
            # what it drew: twice a mild November's 300 kWh, so the history the demo seeds (half of
            # where a counter stands, a month ago) gives /energy a month of it
            hp.restore(HeatpumpState(days=heatpump.seeded_days(), energy_counters=heatpump.seeded_counters(),
                                     electricity_drawn_kwh=600.0))
