"""The demo's hwmon tree: an nct6798 with a 12 V battery bus behind a 1:12 divider (sagging
while the UPS is on battery, story time 150-190 s) and an HBA fan that stalls (160-220 s)."""

from __future__ import annotations

from pathlib import Path

from collectors.scenes import atomic_write


def write_scene(root: Path, t: float) -> None:
    t = t % 240
    hba_rpm = 0 if 160 <= t < 220 else 2400 + int(40 * ((t * 7) % 5))
    files = {
        "hwmon1": {"name": "nct6798", "in0_input": "1016", "in0_label": "Vcore",
                   # 12 V bus through a 1:12 divider: 13.6 V on mains, sagging while on battery
                   "in4_input": str(int((13.6 if not 150 <= t < 190 else 12.7 - (t - 150) * 0.06) / 12 * 1000)),
                   "fan1_input": "1180", "fan1_min": "300", "fan2_input": str(hba_rpm), "fan2_min": "600",
                   "fan2_alarm": "1" if hba_rpm == 0 else "0", "temp1_input": "38000", "temp1_label": "SYSTIN"},
        "hwmon2": {"name": "k10temp", "temp1_input": "52000", "temp1_label": "Tctl"},
    }
    for d, entries in files.items():
        for f, v in entries.items():
            atomic_write(root / "sys/class/hwmon" / d / f, v + "\n")
