"""The rails and fans `rackpulse init` finds, as the starter config's [collectors.hwmon]."""

from __future__ import annotations

from collectors.base import CollectorError
from collectors.hwmon_sysfs import read_hwmon
from collectors.starter import HostTree, q


def starter(tree: HostTree) -> list[str]:
    try:
        sensors = read_hwmon(tree.root)
    except CollectorError:
        return []
    rails = [s for s in sensors if s.kind == "in" and s.value is not None]
    fans = [s for s in sensors if s.kind == "fan" and s.value is not None]
    if not rails and not fans:
        return []
    out = ["[collectors.hwmon]", "## Every sensor shows on the Power page anyway; rails and fans named here get",
           "## their own alerts. Set min/max from your supply's tolerance (suggested: ±5% of now)."]
    for s in rails:
        volts = s.value or 0.0
        out += ["[[collectors.hwmon.rails]]", f"name = {q(s.label or f'{s.chip} {s.name}')}", f"chip = {q(s.chip)}",
                f"sensor = {q(s.name)}", f"# min = {volts * 0.95:.2f}  # now {volts:.3f} V", f"# max = {volts * 1.05:.2f}"]
    for s in fans:
        rpm = s.value or 0.0
        out += ["[[collectors.hwmon.fans]]", f"name = {q(s.label or f'{s.chip} {s.name}')}", f"chip = {q(s.chip)}",
                f"sensor = {q(s.name)}", f"# min_rpm = {max(rpm * 0.5, 100):.0f}  # now {rpm:.0f} RPM"]
    return out
