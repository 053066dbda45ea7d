"""Stand-ins for smartctl, mdadm, vtysh, fping, iperf3, FreeIPMI's tools and (by replay) the storage tools in `rackpulse demo`: they print what the real tools
print, from the demo's state file. Run as ``python -I -S demo-tools.pyc smartctl STATE ARGS...``
(this file compiled into the demo's folder: `demo.story._Tools`; STATE is demo-state.marshal).

The collectors start one of these per disk and per command, as they would start the real tool,
so this file imports nothing but modules built into the interpreter (sys, marshal): each start
costs Python's bare start-up only. Not even json: importing it (and the re, enum and functools it
brings) was 11 of a stand-in's 17 ms of CPU, and the demo and the test suite start tens of
thousands. The state comes as marshal (demo-state.marshal, written beside the JSON), and the
answers are written by `_json`, which prints what `json.dumps` prints.
"""

from __future__ import annotations

import marshal
import sys

# Not `from typing import TYPE_CHECKING`: importing typing is 15 % of this file's start-up, and
# the demo starts it dozens of times a second. Type checkers read the name as True all the same.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# What json.dumps escapes in a string: control characters and DEL; it writes ASCII only, so
# anything beyond is a \u escape too (in _string).
_ESCAPES = {**{i: f"\\u{i:04x}" for i in (*range(32), 127)}, 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r",
            34: '\\"', 92: "\\\\"}


def _string(text: str) -> str:
    text = text.translate(_ESCAPES)
    if not text.isascii():
        out = []
        for ch in text:
            n = ord(ch)
            if n < 128:
                out.append(ch)
            elif n < 0x10000:
                out.append(f"\\u{n:04x}")
            else:  # beyond the first plane: a surrogate pair, as JSON writes it
                n -= 0x10000
                out.append(f"\\u{0xD800 | n >> 10:04x}\\u{0xDC00 | n & 0x3FF:04x}")
        text = "".join(out)
    return '"' + text + '"'


def _json(value: object) -> str:
    """`json.dumps(value)` for what the stand-ins print (dicts, lists, strings, numbers, booleans,
    None), the same text to the byte."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_json(k if isinstance(k, str) else _key(k))}: {_json(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_json(v) for v in value) + "]"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _key(key: object) -> str:
    """A dict key as json.dumps turns it into a string."""
    # bool before int: True is an int, and json.dumps writes it "true", not "1".
    if isinstance(key, (bool, type(None), float)):
        return _json(key)
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def smartctl(state: dict[str, Any], args: list[str]) -> int:
    disks = {d["dev"]: d for d in state["disks"]}
    if "--scan" in args:
        devs = [{"name": f"/dev/{d}", "info_name": f"/dev/{d}", "type": "nvme" if d.startswith("nvme") else "sat",
                 "protocol": "NVMe" if d.startswith("nvme") else "ATA"} for d in sorted(disks)]
        print(_json({"json_format_version": [1, 0], "smartctl": {"version": [7, 3], "exit_status": 0},
                          "devices": devs}))
        return 0
    dev = args[-1].removeprefix("/dev/")
    d = disks.get(dev)
    meta: dict[str, Any] = {"version": [7, 3], "argv": ["smartctl", *args]}
    if d is None:
        meta.update(exit_status=2, messages=[{"string": f"Smartctl open device: /dev/{dev} failed: No such device",
                                               "severity": "error"}])
        print(_json({"json_format_version": [1, 0], "smartctl": meta}))
        return 2
    nvme = dev.startswith("nvme")
    exit_status = 0 if d["passed"] else 8
    if d.get("realloc", 0) and not d["passed"]:
        exit_status |= 16
    meta["exit_status"] = exit_status
    doc: dict[str, Any] = {
        "json_format_version": [1, 0], "smartctl": meta,
        "device": {"name": f"/dev/{dev}", "info_name": f"/dev/{dev}", "type": "nvme" if nvme else "sat",
                   "protocol": "NVMe" if nvme else "ATA"},
        "model_name": d["model"], "serial_number": d["serial"], "firmware_version": d.get("fw", "SC60"),
        "user_capacity": {"bytes": d["bytes"]}, "smart_status": {"passed": d["passed"]},
        "temperature": {"current": d["temp"]}, "power_on_time": {"hours": d["hours"]},
        "rotation_rate": 0 if nvme else 7200, "form_factor": {"name": "M.2" if nvme else "3.5 inches"},
    }
    if nvme:
        doc["nvme_smart_health_information_log"] = {
            "critical_warning": 0, "temperature": d["temp"], "available_spare": 100, "available_spare_threshold": 10,
            "percentage_used": 3, "media_errors": 0, "power_on_hours": d["hours"]}
    else:
        doc["wwn"] = {"naa": 5, "oui": 3152, "id": d["wwn_id"]}
        table = []
        for attr_id, name, raw in ((5, "Reallocated_Sector_Ct", d.get("realloc", 0)), (9, "Power_On_Hours", d["hours"]),
                                   (187, "Reported_Uncorrect", 0), (194, "Temperature_Celsius", d["temp"]),
                                   (197, "Current_Pending_Sector", d.get("pending", 0)),
                                   (198, "Offline_Uncorrectable", 0), (199, "UDMA_CRC_Error_Count", 0)):
            failing = attr_id == 5 and not d["passed"]
            table.append({"id": attr_id, "name": name, "value": 1 if failing else 100, "worst": 1 if failing else 100,
                          "thresh": 10 if attr_id == 5 else 0, "when_failed": "now" if failing else "",
                          "raw": {"value": raw, "string": str(raw)}})
        doc["ata_smart_attributes"] = {"revision": 10, "table": table}
        # A weekly short test and a monthly long one, all passed (what the schedule leaves behind).
        runs = [(1, "Short offline", 7 * 24 * k + 3) for k in range(4)] + [(2, "Extended offline", 30 * 24 + 5)]
        doc["ata_smart_self_test_log"] = {"standard": {"revision": 1, "count": len(runs), "table": [
            {"type": {"value": v, "string": words}, "lifetime_hours": d["hours"] - hours_ago,
             "status": {"value": 0, "string": "Completed without error", "passed": True}}
            for v, words, hours_ago in runs if d["hours"] > hours_ago]}}
        doc["ata_smart_data"] = {"self_test": {"status": {"value": 0, "string": "completed without error",
                                                          "passed": True},
                                               "polling_minutes": {"short": 2, "extended": 900}}}
    print(_json(doc))
    return exit_status


def mdadm(state: dict[str, Any], args: list[str]) -> int:
    name = args[-1].removeprefix("/dev/")
    arr = next((a for a in state["arrays"] if a["name"] == name), None)
    if arr is None:
        print(f"mdadm: cannot open /dev/{name}: No such file or directory", file=sys.stderr)
        return 1
    members = arr["members"]
    slots = arr["slots"]
    failed = [m for m in members if m["state"] == "failed"]
    spares = [m for m in members if m["state"] in ("spare", "rebuilding")]
    active = [m for m in members if m["state"] == "active"]
    words = ["clean"]
    if len(active) < slots:
        words.append("degraded")
    if arr.get("sync"):
        words.append("recovering")
    out = [f"/dev/{name}:", "           Version : 1.2", f"        Raid Level : {arr['level']}",
           f"      Raid Devices : {slots}", f"     Total Devices : {len(members)}",
           f"             State : {', '.join(words)} ", f"    Active Devices : {len(active)}",
           f"   Working Devices : {len(active) + len(spares)}", f"    Failed Devices : {len(failed)}",
           f"     Spare Devices : {len(spares)}", "", f"              UUID : {arr['uuid']}",
           f"            Events : {arr.get('events', 100)}", "",
           "    Number   Major   Minor   RaidDevice State"]
    for slot in range(slots):
        m = next((m for m in members if m.get("slot") == slot and m["state"] in ("active", "rebuilding")), None)
        if m is None:
            out.append(f"       -       0        0     {slot:4d}      removed")
        else:
            st = "active sync" if m["state"] == "active" else "spare rebuilding"
            out.append(f"    {m['num']:4d}       8     {m['num'] * 16:4d}     {slot:4d}      {st}   /dev/{m['dev']}")
    for m in members:
        if m["state"] in ("failed", "spare"):
            st = "faulty" if m["state"] == "failed" else "spare"
            out.append(f"    {m['num']:4d}       8     {m['num'] * 16:4d}        -      {st}   /dev/{m['dev']}")
    print("\n".join(out))
    return 1 if "degraded" in words else 0


def bgp_summary(t: float) -> dict[str, Any]:
    """What `show bgp vrf all summary json` prints on a Ceph node with two unnumbered uplinks."""
    # The session over the 3G failover drops at story second 30 and is back at 90.
    flap_up = not 30 <= t < 90
    flaps = int(t >= 30)

    def peer(asn: int, up: bool, uptime: float, pfx: int, desc: str, iface: bool, dropped: int) -> dict[str, Any]:
        p = {"remoteAs": asn, "state": "Established" if up else "Active", "peerState": "OK",
             "peerUptimeMsec": int(uptime * 1000), "pfxRcd": pfx if up else 0, "pfxSnt": 4 if up else 0,
             "connectionsEstablished": dropped + (1 if up else 0), "connectionsDropped": dropped,
             "desc": desc, "idType": "interface" if iface else "ipv4"}
        if up:
            p["hostname"] = desc.split()[0]
        return p

    v6 = {
        "swp1": peer(65100, True, 86400 * 12 + t, 42, "tor-a uplink", True, 0),
        "swp2": peer(65100, True, 86400 * 12 + t, 42, "tor-b uplink", True, 0),
    }
    v4 = {
        "10.0.250.1": peer(65200, flap_up, t - 90 if t >= 90 else t + 3600, 12, "edge-router 3G failover", False, flaps),
        "10.0.250.9": {**peer(65300, False, 0, 0, "old-isp (shut down)", False, 0), "state": "Idle (Admin)",
                       "peerState": "Admin"},
    }
    return {"default": {"ipv4Unicast": {"vrfName": "default", "peers": v4},
                        "ipv6Unicast": {"vrfName": "default", "peers": v6}}}


def bgp_neighbors(t: float) -> dict[str, Any]:
    reason = "Peer closed the session" if t >= 30 else "Waiting for NHT"
    return {"default": {"vrfName": "default", "10.0.250.1": {"lastResetDueTo": reason},
                        "swp1": {"lastResetDueTo": "Waiting for peer OPEN"}}}


def vtysh(state: dict[str, Any], args: list[str]) -> int:
    command = args[args.index("-c") + 1] if "-c" in args else ""
    t = state.get("t", 0.0)
    if "neighbors" in command:
        print(_json(bgp_neighbors(t)))
    elif "summary" in command:
        print(_json(bgp_summary(t)))
    else:
        print(f"% Unknown command: {command}")
    return 0


# The demo's pings: a LAN gateway, and a bond of 3G links whose round trip "goes over a few
# hundred ms" in the evening rush (story minutes 2 to 3 of every 4) and then loses pings too.
PINGS = {"192.168.1.1": (0.4, 0.3, 0.0), "10.0.250.1": (95.0, 60.0, 0.05)}


def _rtts(target: str, count: int, t: float) -> list[float | None]:
    base, spread, loss = PINGS.get(target, (1.0, 0.5, 0.0))
    rush = target == "10.0.250.1" and int(t // 60) % 4 == 2
    if rush:
        base, spread, loss = base * 4, spread * 5, 0.3
    out: list[float | None] = []
    for i in range(count):
        wave = ((i * 7919 + int(t)) % 97) / 97  # the same story moment, the same answers
        out.append(None if wave < loss else round(base + spread * wave * wave, 3))
    return out


def fping(state: dict[str, Any], args: list[str]) -> int:
    """`fping -C N -q ... -- TARGET...`: each target's round trips on standard error, "-" for a lost one."""
    count = int(args[args.index("-C") + 1]) if "-C" in args else 1
    targets = args[args.index("--") + 1:] if "--" in args else args[-1:]
    missed = 0
    for target in targets:
        rtts = _rtts(target, count, state.get("t", 0.0))
        missed += all(r is None for r in rtts)
        print(f"{target} : " + " ".join("-" if r is None else f"{r:.3f}" for r in rtts), file=sys.stderr)
    return 1 if missed else 0


def iperf3(state: dict[str, Any], args: list[str]) -> int:
    """`iperf3 -c SERVER -J [-R]`: a VPN that does about 90 Mbit/s up, and half of it down in the
    evening rush (story seconds 120-200)."""
    t = state.get("t", 0.0)
    reverse = "-R" in args
    mbps = 88.0 if not reverse else (41.0 if 120 <= t < 200 else 86.0)  # the evening rush, as the tun's drops
    seconds = float(args[args.index("-t") + 1]) if "-t" in args else 10.0
    bps = mbps * 1e6
    print(_json({"start": {"test_start": {"protocol": "TCP", "num_streams": 1, "duration": seconds,
                                               "reverse": int(reverse)}},
                      "end": {"sum_sent": {"seconds": seconds, "bits_per_second": bps * 1.01, "retransmits": 7},
                              "sum_received": {"seconds": seconds, "bits_per_second": bps}}}))
    return 0


def replay(folder: str, args: list[str]) -> int:
    """A storage tool's answer as a collector's demo scene wrote it (collectors.scenes.write_answer):
    `zpool`, `storcli64` and `ceph` in the demo. An answer not written is the tool's "unknown command"."""
    name = " ".join(args).replace("/", "%")
    if len(name.encode()) > 200:  # as collectors.scenes.replay_name shortens it (this runs with -I -S)
        import hashlib

        digest = hashlib.sha1(name.encode(), usedforsecurity=False).hexdigest()[:16]
        name = name.encode()[:100].decode("utf-8", "ignore") + " " + digest
    base = folder + "/" + name
    try:
        with open(base + ".out", encoding="utf-8") as f:
            sys.stdout.write(f.read())
        with open(base + ".rc", encoding="utf-8") as f:
            return int(f.read().strip() or 0)
    except FileNotFoundError:
        print(f"demo: no answer for {' '.join(args)!r}", file=sys.stderr)
        return 2


def ipmi(folder: str, args: list[str]) -> int:
    """FreeIPMI's ipmi-sensors, ipmi-sel and ipmi-dcmi for the demo's BMCs, from the files the
    scene wrote per BMC host (collectors/host/ipmi/demo.py): `ipmi <folder> sensors|sel|dcmi ...`."""
    kind, rest = args[0], args[1:]
    host = rest[rest.index("--hostname") + 1].rsplit(":", 1)[0] if "--hostname" in rest else "local"
    base = folder + "/" + host + "/"
    try:
        if kind == "sensors":
            with open(base + "sensors.csv", encoding="utf-8") as f:
                sys.stdout.write(f.read())
            return 0
        if kind == "dcmi":
            with open(base + "dcmi.txt", encoding="utf-8") as f:
                sys.stdout.write(f.read())
            return 0
        with open(base + "sel.csv", encoding="utf-8") as f:
            header, *rows = f.read().splitlines()
    except FileNotFoundError:
        print(f"ipmi-{kind}: connection timeout", file=sys.stderr)
        return 1
    if "--info" in rest:
        print(f"Number of log entries                  : {len(rows)}\n"
              f"Free space remaining                   : {(512 - len(rows)) * 16} bytes")
        return 0
    tail = [a for a in rest if a.startswith("--tail=")]
    span = [a for a in rest if a.startswith("--display-range=")]
    if tail:
        rows = rows[-int(tail[0].split("=")[1]):]
    elif span:
        lo, hi = (int(x) for x in span[0].split("=")[1].split("-"))
        rows = [r for r in rows if lo <= int(r.split(",")[0]) <= hi]
    print("\n".join([header, *rows]) if rows else "")
    return 0


def main() -> int:
    tool, state_path, *args = sys.argv[1:]
    if tool == "replay":
        return replay(state_path, args)
    if tool == "ipmi":
        return ipmi(state_path, args)
    with open(state_path, "rb") as f:
        state = marshal.load(f)
    return {"smartctl": smartctl, "mdadm": mdadm, "vtysh": vtysh, "fping": fping, "iperf3": iperf3}[tool](state, args)


if __name__ == "__main__":
    sys.exit(main())
