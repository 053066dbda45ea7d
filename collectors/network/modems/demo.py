"""The demo's six 3G/LTE modems under bond0's EoIP links, answered as `mmcli` JSON for the
demo's replay stand-in. Modem 4 (under eoip4) loses signal over the first 20 story seconds,
before its slave starts flapping; it drops off the USB bus while the slave is down for good
(100-140) and comes back under another ModemManager number, its signal good again."""

from __future__ import annotations

import json
from pathlib import Path

from collectors.scenes import write_answer

MM = "/org/freedesktop/ModemManager1/Modem/"
IMEI = "3569380356438{:02d}"
OPERATORS = ("Telekom.de", "Vodafone.de", "o2 - de", "Telekom.de", "Vodafone.de", "o2 - de")


def imei(i: int) -> str:
    return IMEI.format(i)


def _modem(i: int, number: int, rscp: float, lte: bool) -> dict[str, object]:
    quality = max(0, min(100, round((rscp + 115) * 3.2)))
    return {"modem": {"dbus-path": f"{MM}{number}", "generic": {
        "device": f"/sys/devices/pci0000:00/0000:00:14.0/usb1/1-{i}", "equipment-identifier": imei(i),
        "manufacturer": "Sierra Wireless, Incorporated" if lte else "huawei", "model": "EM7455" if lte else "E3372",
        "state": "connected", "state-failed-reason": "--", "power-state": "on",
        "access-technologies": ["lte"] if lte else ["hsdpa", "hsupa"],
        "signal-quality": {"value": str(quality), "recent": "yes"},
        "ports": [f"cdc-wdm{i} (qmi)", f"ttyUSB{3 * i} (at)", f"wwan{i} (net)"], "sim": f"/org/freedesktop/ModemManager1/SIM/{number}",
        "drivers": ["qmi_wwan", "option1"], "plugin": "sierra" if lte else "huawei"},
        "3gpp": {"imei": imei(i), "operator-code": "26201", "operator-name": OPERATORS[i - 1],
                 "registration-state": "home"}}}


def _signal(rscp: float, lte: bool) -> dict[str, object]:
    if lte:
        return {"modem": {"signal": {"refresh": {"rate": "10"}, "lte": {
            "rssi": f"{rscp + 20:.2f}", "rsrp": f"{rscp - 10:.2f}", "rsrq": "-9.00", "snr": "11.40"}}}}
    return {"modem": {"signal": {"refresh": {"rate": "10"}, "umts": {
        "rssi": f"{rscp + 12:.2f}", "rscp": f"{rscp:.2f}", "ecio": f"{-4 - max(0.0, -90 - rscp) / 2:.2f}"}}}}


def rscp_of_4(t: float) -> float:
    """eoip4's modem: -85 dBm, fading to -106 over the first 20 s, poor while its slave flaps."""
    if t >= 140:
        return -88.0
    return -85.0 - min(t, 20.0) * 1.05


def write_scene(root: Path, t: float) -> None:
    folder = root / "demo-tools" / "mmcli"
    gone = 100 <= t < 140
    numbers = {i: (6 if i == 4 and t >= 140 else i - 1) for i in range(1, 7)}
    listed = [f"{MM}{numbers[i]}" for i in range(1, 7) if not (i == 4 and gone)]
    write_answer(folder, ["-L", "-J"], json.dumps({"modem-list": listed}))
    for i in range(1, 7):
        if i == 4 and gone:
            continue
        lte = i == 6
        rscp = rscp_of_4(t) if i == 4 else -80.0 - i
        n = str(numbers[i])
        write_answer(folder, ["-m", n, "-J"], json.dumps(_modem(i, numbers[i], rscp, lte)))
        write_answer(folder, ["-m", n, "--signal-get", "-J"], json.dumps(_signal(rscp, lte)))
