"""The power half of `rackpulse demo`: a 12 V battery UPS behind a simulated upsd that goes
on battery (and then low) for a while, and an hwmon tree with a 12 V rail and an HBA fan
that stalls."""

from __future__ import annotations

import socketserver
from collections.abc import Callable

from app.demo.peer import DemoPeer, serve_in_thread


def ups_vars(t: float) -> dict[str, str]:
    t = t % 240
    if 150 <= t < 190:
        low = t >= 180
        charge = max(100 - (t - 150) * 2.3, 5)
        return {"ups.status": "OB DISCHRG LB" if low else "OB DISCHRG", "battery.charge": f"{charge:.0f}",
                "battery.voltage": f"{12.7 - (t - 150) * 0.06:.2f}", "battery.runtime": f"{int(charge * 15)}",
                "input.voltage": "0.0", "output.voltage": "230.0", "ups.load": "31"}
    charging = 190 <= t < 230
    return {"ups.status": "OL CHRG" if charging else "OL", "battery.charge": "80" if charging else "100",
            "battery.voltage": "13.9" if charging else "13.6", "battery.runtime": "1500", "input.voltage": "231.0",
            "output.voltage": "230.0", "ups.load": "23"}


class _Handler(socketserver.StreamRequestHandler):
    clock: Callable[[], float]

    def handle(self) -> None:
        for raw in self.rfile:
            cmd = raw.decode(errors="replace").strip()
            if cmd == "LIST UPS":
                out = ["BEGIN LIST UPS", 'UPS ups12v "12 V battery UPS (demo)"', "END LIST UPS"]
            elif cmd == "LIST VAR ups12v":
                # ups.load of its ups.realpower.nominal: the UPS's draw, a source on /energy (the NAS behind it)
                variables = {"device.model": "Back-UPS ES 700G (demo)", "battery.voltage.nominal": "12.0",
                             "ups.realpower.nominal": "405",
                             **ups_vars(self.clock())}
                out = ["BEGIN LIST VAR ups12v", *[f'VAR ups12v {k} "{v}"' for k, v in variables.items()],
                       "END LIST VAR ups12v"]
            elif cmd.startswith(("USERNAME", "PASSWORD")):
                out = ["OK"]
            elif cmd == "LOGOUT":
                self.wfile.write(b"OK Goodbye\n")
                return
            else:
                out = ["ERR UNKNOWN-COMMAND"]
            self.wfile.write(("\n".join(out) + "\n").encode())


def start_upsd(clock: Callable[[], float]) -> DemoPeer:
    """A tiny upsd speaking NUT's protocol on a free loopback port."""
    handler = type("DemoUpsd", (_Handler,), {"clock": staticmethod(clock)})
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    return serve_in_thread(server, "demo-upsd", 0.05)


DEMO_HWMON = {
    "rails": [{"name": "12V battery bus", "chip": "nct6798", "sensor": "in4", "multiplier": 12.0, "min": 11.4,
               "max": 14.6}],
    "fans": [{"name": "HBA fan", "chip": "nct6798", "sensor": "fan2"},
             {"name": "case fan", "chip": "nct6798", "sensor": "fan1"},
             {"name": "PSU fan (no tach)", "holds": "k10temp/temp1", "max_celsius": 70}],
}


# The bill on /energy: a day rate, a cheaper night, and a budget the lab stays within. The
# servers' BMCs report their draw too, inside the rack plug's; this NAS's CPUs (RAPL) inside the UPS's.
DEMO_ENERGY = {"price_per_kwh": 0.30, "currency": "EUR", "monthly_budget": 400.0,
               "inside": {"r720": "rack", "r430": "rack", "cpu": "ups12v"},
               "tariffs": [{"from": "22:00", "to": "06:00", "price": 0.24}]}
