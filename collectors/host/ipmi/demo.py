"""The demo's two servers with BMCs: r720 loses its second power supply for a stretch of each
loop (the failure and the lost redundancy in its event log, then their recovery), r430 logs a
burst of correctable ECC errors on one DIMM. Written as FreeIPMI prints them (freeipmi.py) for
the demo's `ipmi` stand-in (app/demo/tools.py), which answers `ipmi-sensors`, `ipmi-sel --info`,
`--tail` and `--display-range`, and `ipmi-dcmi` from these files."""

from __future__ import annotations

import time
from pathlib import Path

from collectors.scenes import atomic_write

LOOP = 240.0
PSU_DOWN = (200.0, 235.0)  # story seconds of each loop in which r720's PSU2 has failed
ECC_BURST = 160.0  # when r430 logs its correctable errors
SENSORS_HEADER = "ID,Name,Type,State,Reading,Units,Lower NR,Lower C,Lower NC,Upper NC,Upper C,Upper NR,Event"
SEL_HEADER = "ID,Date,Time,Name,Type,State,Event Direction,Event"
BMCS = {"r720": "192.0.2.20", "r430": "192.0.2.21"}


def _row(i: int, name: str, kind: str, state: str, reading: str, unit: str, limits: str, event: str) -> str:
    return f"{i},{name},{kind},{state},{reading},{unit},{limits},{event}"


def _sensors(name: str, t: float) -> str:
    down = name == "r720" and PSU_DOWN[0] <= t % LOOP < PSU_DOWN[1]
    wave = (t % 60) / 60  # fans and temperatures breathe a little
    na6 = "N/A,N/A,N/A,N/A,N/A,N/A"
    rows = [
        _row(1, "Inlet Temp", "Temperature", "Nominal", f"{21 + 2 * wave:.2f}", "C", "N/A,-7.00,3.00,42.00,47.00,N/A", "'OK'"),
        _row(2, "CPU1 Temp", "Temperature", "Nominal", f"{52 + 6 * wave:.2f}", "C", "N/A,3.00,8.00,N/A,95.00,N/A", "'OK'"),
        _row(3, "FAN1", "Fan", "Nominal", f"{3600 + 240 * wave:.2f}", "RPM", "N/A,600.00,840.00,N/A,N/A,N/A", "'OK'"),
        _row(4, "FAN2", "Fan", "Nominal", f"{3720 + 240 * wave:.2f}", "RPM", "N/A,600.00,840.00,N/A,N/A,N/A", "'OK'"),
        _row(5, "Voltage 12V", "Voltage", "Nominal", "12.10", "V", "N/A,10.80,11.40,12.60,13.20,N/A", "'OK'"),
        _row(6, "Pwr Consumption", "Current", "Nominal",
             f"{(92 if name == 'r430' else 168 if down else 182) + 10 * wave:.2f}", "W",
             "N/A,N/A,N/A,896.00,980.00,N/A", "'OK'"),
        _row(7, "PSU1 Status", "Power Supply", "Nominal", "N/A", "N/A", na6, "'Presence detected'"),
        _row(8, "PSU2 Status", "Power Supply", "Critical" if down else "Nominal", "N/A", "N/A", na6,
             "'Presence detected' 'Power Supply Failure detected'" if down else "'Presence detected'"),
        _row(9, "PS Redundancy", "Power Unit", "Critical" if down else "Nominal", "N/A", "N/A", na6,
             "'Redundancy Lost'" if down else "'Fully Redundant'"),
        _row(10, "Intrusion", "Physical Security", "Nominal", "N/A", "N/A", na6, "'OK'"),
    ]
    if name == "r430":  # one PSU, no redundancy sensor; a quieter box
        rows = [r for r in rows if ",PSU2 Status," not in r and ",PS Redundancy," not in r]
    return "\n".join([SENSORS_HEADER, *rows]) + "\n"


def _stamp(start: float, story_then: float) -> tuple[str, str]:
    when = time.gmtime(start + story_then)
    return time.strftime("%b-%d-%Y", when), time.strftime("%H:%M:%S", when)


def _sel(name: str, t: float, now: float) -> str:
    # `now - t` is when the story began, to the minute: the log's dates stay put between ticks
    """The whole log: three old entries from before the demo began, then each loop's events so far."""
    events: list[tuple[float, str, str, str, str, str]] = [
        (-9e6, "PSU1 Status", "Power Supply", "Nominal", "Assertion Event", "Presence detected"),
        (-9e6, "PSU2 Status", "Power Supply", "Nominal", "Assertion Event", "Presence detected"),
        (-8e6, "Intrusion", "Physical Security", "Nominal", "Deassertion Event", "General Chassis Intrusion"),
    ]
    for loop in range(int(t // LOOP) + 1):
        base = loop * LOOP
        if name == "r720":
            if t >= base + PSU_DOWN[0]:
                events += [(base + PSU_DOWN[0], "PSU2 Status", "Power Supply", "Critical", "Assertion Event",
                            "Power Supply Failure detected"),
                           (base + PSU_DOWN[0], "PS Redundancy", "Power Unit", "Critical", "Assertion Event",
                            "Redundancy Lost")]
            if t >= base + PSU_DOWN[1]:
                events += [(base + PSU_DOWN[1], "PSU2 Status", "Power Supply", "Nominal", "Deassertion Event",
                            "Power Supply Failure detected"),
                           (base + PSU_DOWN[1], "PS Redundancy", "Power Unit", "Nominal", "Assertion Event",
                            "Fully Redundant")]
        elif t >= base + ECC_BURST:
            events += [(base + ECC_BURST + i, "DIMM B2", "Memory", "Warning", "Assertion Event",
                        "Correctable memory error ; Event Data3 = 05h") for i in range(3)]
    rows = []
    for record, (when, sensor, kind, state, direction, text) in enumerate(events[-60:], start=max(1, len(events) - 59)):
        date, clock = _stamp((now - t) // 60 * 60, when)
        rows.append(f"{record},{date},{clock},{sensor},{kind},{state},{direction},{text}")
    return "\n".join([SEL_HEADER, *rows]) + "\n"


def _dcmi(name: str, t: float) -> str:
    down = name == "r720" and PSU_DOWN[0] <= t % LOOP < PSU_DOWN[1]
    watts = (171 if down else 184) if name == "r720" else 96
    return (f"Current Power                        : {watts} Watts\n"
            f"Minimum Power over sampling duration : {watts - 40} watts\n"
            f"Maximum Power over sampling duration : {watts + 90} watts\n"
            f"Average Power over sampling duration : {watts} watts\n"
            "Statistics reporting time period     : 1000 milliseconds\n"
            "Power Measurement                    : Active\n")


# How long the log's news is held, in story seconds: PSU2's entry (at 200) is gone at 230, before
# the loop restarts, and r430's ECC burst (at 160) by 190. 60 real seconds held PSU2's through the
# whole next loop at --speed 4 (a loop of 60 s): "BMC event log: critical entry" at every moment.
SEL_HOLD = 30.0


def demo_section(tool: list[str], root: Path, interval: float, speed: float = 1.0) -> dict[str, object]:
    """[collectors.ipmi] of the demo: both BMCs through app/demo/tools.py's `ipmi` stand-in. The log's
    news is held SEL_HOLD story seconds, not a day: gone before the story's loop restarts at any
    `speed`. Read every 10 s at most, as BMCs are (each read is four stand-in processes)."""
    return {"interval": max(interval, 10.0), "local": "off", "work_dir": str(root / "ipmi"),
            "sel_hold": SEL_HOLD / max(speed, 1e-3),
            **{f"ipmi_{k}": [*tool, "ipmi", str(root / "demo-tools" / "ipmi"), k] for k in ("sensors", "sel", "dcmi")},
            "bmcs": [{"name": name, "host": host, "user": "monitor", "password_file": str(root / "ipmi-password")}
                     for name, host in BMCS.items()]}


def write_scene(root: Path, t: float) -> None:
    now = time.time()
    password = root / "ipmi-password"
    if not password.exists():  # the BMCs' (stand-ins') password file, as an admin would keep it
        atomic_write(password, "demo\n")
        password.chmod(0o600)
    for name, host in BMCS.items():
        folder = root / "demo-tools" / "ipmi" / host
        atomic_write(folder / "sensors.csv", _sensors(name, t))
        atomic_write(folder / "sel.csv", _sel(name, t, now))
        atomic_write(folder / "dcmi.txt", _dcmi(name, t))
