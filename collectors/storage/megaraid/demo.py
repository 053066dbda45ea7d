"""The demo's MegaRAID 9560: an eight-drive RAID6 whose drive in slot 3 fails, is swapped,
and rebuilds, on the story's four-minute loop (a minute behind the ZFS pool's disk)."""

from __future__ import annotations

import json
from pathlib import Path

from collectors.scenes import write_answer
from collectors.storage.megaraid.collector import DRIVES, REBUILD, SHOW_ALL

MODEL = "ST16000NM001G-2KK103"
SERIALS = [f"ZL2PV{i:03d}" for i in range(8)]
NEW_SERIAL = "ZL2QX913"
VICTIM = 3


def _pd_state(t: float, slot: int) -> tuple[str, str]:
    """(state, drive group) of slot at story time t."""
    if slot != VICTIM:
        return "Onln", "0"
    if 80 <= t < 140:
        return "UBad", "-"
    if 140 <= t < 150:
        return "", ""  # pulled: not in the list at all
    if 150 <= t < 220:
        return "Rbld", "0"
    return "Onln", "0"


def _wrap(data: dict[str, object] | list[dict[str, object]], description: str = "None") -> str:
    return json.dumps({"Controllers": [{"Command Status": {"CLI Version": "007.2807.0000.0000 Dec 22, 2023",
                                                           "Operating system": "Linux 6.1.0-demo", "Controller": 0,
                                                           "Status": "Success", "Description": description},
                                        "Response Data": data}]}, indent=1)


def show_all(t: float) -> str:
    pds = []
    for slot in range(8):
        state, dg = _pd_state(t, slot)
        if state:
            pds.append({"EID:Slt": f"252:{slot}", "DID": 30 + slot, "State": state, "DG": int(dg) if dg != "-" else "-",
                        "Size": "14.551 TB", "Intf": "SATA", "Med": "HDD", "SED": "N", "PI": "N", "SeSz": "512B",
                        "Model": MODEL, "Sp": "U", "Type": "-"})
    vd_state = "Dgrd" if 80 <= t < 220 else "Optl"
    return _wrap({
        "Basics": {"Controller": 0, "Model": "MegaRAID 9560-8i 4GB", "Serial Number": "SKC4203521"},
        "Status": {"Controller Status": "Optimal"},
        "VD LIST": [{"DG/VD": "0/0", "TYPE": "RAID6", "State": vd_state, "Access": "RW", "Consist": "Yes",
                     "Cache": "RWBD", "Cac": "-", "sCC": "ON", "Size": "87.311 TB", "Name": "vault"}],
        "PD LIST": pds,
        "Cachevault_Info": [{"Model": "CVPM05", "State": "Optimal", "Temp": "27C", "Mode": "-",
                             "MfgDate": "2023/02/11"}],
    })


def drives(t: float) -> str:
    data: dict[str, object] = {}
    for slot in range(8):
        state, _ = _pd_state(t, slot)
        if not state:
            continue
        serial = NEW_SERIAL if slot == VICTIM and t >= 150 else SERIALS[slot]
        media = int(min(max(t - 40, 0), 40) * 3) if slot == VICTIM and t < 150 else 0
        prefix = f"Drive /c0/e252/s{slot}"
        data[prefix] = [{"EID:Slt": f"252:{slot}", "State": state}]
        data[f"{prefix} - Detailed Information"] = {
            f"{prefix} State": {"Shield Counter": 0, "Media Error Count": media, "Other Error Count": 0,
                                "Drive Temperature": f" {30 + slot % 4}C ({(30 + slot % 4) * 9 / 5 + 32:.2f} F)",
                                "Predictive Failure Count": 1 if media > 60 else 0,
                                "S.M.A.R.T alert flagged by drive": "Yes" if media > 60 else "No"},
            f"{prefix} Device attributes": {"SN": f"            {serial}", "Model Number": MODEL,
                                            "WWN": f"5000C500E54F{slot:04X}", "Firmware Revision": "SN03    "},
        }
    return _wrap(data, "Show Drive Information Succeeded.")


def rebuild(t: float) -> str:
    r = min(max((t - 150) / 70, 0), 1)
    left = int((1 - r) * 70 * 60)
    return _wrap([{"Drive-ID": f"/c0/e252/s{VICTIM}", "Progress%": int(r * 100), "Status": "In progress",
                   "Estimated Time Left": f"{left // 3600} Hours {left // 60 % 60} Minutes"}])


def write_scene(root: Path, t: float) -> None:
    folder = root / "demo-tools" / "storcli"
    write_answer(folder, SHOW_ALL, show_all(t))
    write_answer(folder, DRIVES, drives(t))
    write_answer(folder, REBUILD, rebuild(t))
