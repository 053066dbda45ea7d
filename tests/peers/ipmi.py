"""A real BMC to read: OpenIPMI's simulator `ipmi_sim` (Debian's openipmi) serving IPMI over LAN
on 127.0.0.2 and a free UDP port, with sensors whose records `sdrcomp` compiles from the text
below (written from ipmi_sim_cmd(5), ipmi_lan(5) and the IPMI 2.0 SDR formats, section 43).

127.0.0.2, not 127.0.0.1: FreeIPMI takes "localhost" and 127.0.0.1 for this host's own BMC.
The simulator's console (a TCP port on 127.0.0.1) is how a test changes a sensor or adds a SEL
entry while rackpulse reads it. It has no DCMI (`Get Power Reading` answers "invalid command")."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

from tests.peers import free_port, stop_all

USER, PASSWORD = "monitor", "s3cret#pw!1"  # a "#": what a config file must carry whole, not as a comment
PSU2, FAN3, REDUNDANCY = 9, 3, 10  # sensor numbers

_MC = """sdr type 18
	device_slave_address	0x20
	device_channel_number	0
	chassis			true
	ipmb_event_gen		false
	ipmb_event_recv		false
	fru_inventory		false
	sel			true
	sdr			true
	sensor			true
	entity_id		system_board
	entity_instance		1
	id_string		"rackpulse sim"
endsdr
"""


def _threshold(num: int, name: str, stype: str, unit: str, m: int, limits: dict[str, int], entity: str) -> str:
    returns = "".join(f"\treturn_{k}\t\ttrue\n" for k in limits)
    values = "".join(f"\t{k}_thresh\t\t{v}\n" for k, v in limits.items())
    return (f"sdr type 1\n\tsensor_owner_id\t\t0x20\n\tsensor_owner_lun\t0\n\tchannel_number\t\t0\n"
            f"\tsensor_number\t\t{num}\n\tentity_id\t\t{entity}\n\tentity_instance\t\t1\n"
            "\tinit_scanning\t\ttrue\n\tinit_events\t\ttrue\n\tinit_thresholds\t\ttrue\n\tinit_sensor_type\ttrue\n"
            "\tdefault_event_gen_on\ttrue\n\tdefault_sensor_scan_on\ttrue\n\tsensor_auto_rearm\ttrue\n"
            "\tsensor_threshold_access\tsettable\n\tsensor_event_msg_ctrl\tper_state\n"
            f"\tsensor_type\t\t{stype}\n\tevent_reading_type_code\t1\n{returns}"
            "\tanalog_data_format\tunsigned\n\trate_unit\t\tnone\n\tmodifier_unit\t\tnone\n\tpercentage\t\tfalse\n"
            f"\tbase_unit\t\t{unit}\n\tmodifier_unit_code\tunspecified\n\tlinearization\t\tlinear\n\tm\t\t\t{m}\n"
            "\ttolerance\t\t0\n\tb\t\t\t0\n\taccuracy\t\t1\n\taccuracy_exp\t\t0\n\tsensor_direction\tinput\n"
            "\tr_exp\t\t\t0\n\tb_exp\t\t\t0\n\tsensor_maximum\t\t255\n\tsensor_minimum\t\t0\n"
            f"{values}\tid_string\t\t\"{name}\"\nendsdr\n")


def _discrete(num: int, name: str, stype: str, code: str, entity: str, instance: int) -> str:
    events = "".join(f"\tassert_event{i}\t\ttrue\n\tdeassert_event{i}\t\ttrue\n\tevent{i}_state_ret\ttrue\n"
                     for i in range(7))
    return (f"sdr type 2\n\tsensor_owner_id\t\t0x20\n\tsensor_owner_lun\t0\n\tchannel_number\t\t0\n"
            f"\tsensor_number\t\t{num}\n\tentity_id\t\t{entity}\n\tentity_instance\t\t{instance}\n"
            "\tinit_scanning\t\ttrue\n\tinit_events\t\ttrue\n\tinit_sensor_type\ttrue\n"
            "\tdefault_event_gen_on\ttrue\n\tdefault_sensor_scan_on\ttrue\n\tsensor_auto_rearm\ttrue\n"
            f"\tsensor_type\t\t{stype}\n\tevent_reading_type_code\t{code}\n{events}\tid_string\t\t\"{name}\"\nendsdr\n")


SDRS = _MC + "".join([
    _threshold(1, "CPU Temp", "Temperature", "degrees_C", 1, {"unc": 75, "uc": 90, "unr": 100}, "processor"),
    # fans read in steps of 60 RPM (m = 60): lower critical 600, lower non-critical 900
    _threshold(2, "Fan1", "Fan", "RPM", 60, {"lc": 10, "lnc": 15}, "fan_cooling_device"),
    _threshold(FAN3, "Fan3", "Fan", "RPM", 60, {"lc": 10, "lnc": 15}, "fan_cooling_device"),
    _discrete(8, "PSU1 Status", "Power_Supply", "0x6f", "power_supply", 1),
    _discrete(PSU2, "PSU2 Status", "Power_Supply", "0x6f", "power_supply", 2),
    _discrete(REDUNDANCY, "PS Redundancy", "Power_Unit", "0x0b", "power_unit", 1),
])

EMU = f"""mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr
sel_enable 0x20 100 0x0a
sensor_add 0x20 0 1 0x01 0x01
sensor_set_value 0x20 0 1 40 0
sensor_set_threshold 0x20 0 1 settable 111000 100 90 75 00 00 00
sensor_add 0x20 0 2 0x04 0x01
sensor_set_value 0x20 0 2 80 0
sensor_set_threshold 0x20 0 2 settable 000011 00 00 00 00 10 15
sensor_add 0x20 0 {FAN3} 0x04 0x01
sensor_set_value 0x20 0 {FAN3} 82 0
sensor_set_threshold 0x20 0 {FAN3} settable 000011 00 00 00 00 10 15
sensor_add 0x20 0 8 0x08 0x6f
sensor_set_bit_clr_rest 0x20 0 8 0 1 0
sensor_add 0x20 0 {PSU2} 0x08 0x6f
sensor_set_bit_clr_rest 0x20 0 {PSU2} 0 1 0
sensor_add 0x20 0 {REDUNDANCY} 0x09 0x0b
sensor_set_bit_clr_rest 0x20 0 {REDUNDANCY} 0 1 0
mc_enable 0x20
"""

# A SEL record as sel_add takes it: record type 02h, a zero timestamp (4 bytes), generator 20h,
# EvM rev 04h, then sensor type, sensor number, event dir/type, event data 1-3 (IPMI 2.0, 32.1).
UNCORRECTABLE_ECC = "0x02 0x00 0x00 0x00 0x00 0x20 0x00 0x04 0x0c 0x20 0x6f 0x31 0x00 0x02"  # module 2
CORRECTABLE_ECC = "0x02 0x00 0x00 0x00 0x00 0x20 0x00 0x04 0x0c 0x20 0x6f 0x30 0x00 0x01"


def free_udp_port(host: str = "127.0.0.2") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class IpmiSim:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.port = free_udp_port()
        self.console = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.password_file = base / "bmc-password"

    def up(self) -> None:
        b = self.base
        (b / "main.sdrs").write_text(SDRS)
        subprocess.run(["sdrcomp", "-o", str(b / "main.bsdr"), str(b / "main.sdrs")], check=True, capture_output=True)
        state = b / "state" / "ipmi_sim" / "rp"
        state.mkdir(parents=True)
        (state / "sdr.20.main").write_bytes((b / "main.bsdr").read_bytes())
        (b / "lan.conf").write_text(f"""name "rp"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.2 {self.port}
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
  user 2 true "{USER}" "{PASSWORD}" user 10 none md2 md5 straight
console 127.0.0.1 {self.console}
""")
        (b / "sim.emu").write_text(EMU)
        self.password_file.write_text(PASSWORD + "\n")
        self.password_file.chmod(0o600)
        self.proc = subprocess.Popen(["ipmi_sim", "-c", str(b / "lan.conf"), "-f", str(b / "sim.emu"),
                                      "-s", str(b / "state"), "-n"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=(b / "sim.log").open("wb"),
                                     # SIGPIPE stays ignored, as in this process: a console client that
                                     # hangs up before the prompt is written must not kill the BMC.
                                     restore_signals=False)
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.console), timeout=5) as s:
                    if s.recv(4096):  # its prompt: the emulator has read its command file and serves
                        return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"ipmi_sim did not start: {(b / 'sim.log').read_text()[-500:]}") from None
                time.sleep(0.1)

    def down(self) -> None:
        if self.proc is not None:
            stop_all([self.proc])

    def command(self, *lines: str) -> str:
        """Emulator commands (ipmi_sim_cmd(5)) through the console; what it answered."""
        out = b""
        with socket.create_connection(("127.0.0.1", self.console), timeout=10) as s:
            for line in lines:
                s.sendall(line.encode() + b"\n")
                # Each command is answered, then the prompt "> " comes back.
                while not out.rstrip().endswith(b">") or line.encode() not in out:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    out += chunk
                out += b"\n"
        return out.decode(errors="replace")

    def set_fan3(self, steps: int) -> None:
        self.command(f"sensor_set_value 0x20 0 {FAN3} {steps} 1")

    def psu2_fails(self, failed: bool) -> None:
        self.command(f"sensor_set_bit 0x20 0 {PSU2} 1 {1 if failed else 0} 1")

    def redundancy(self, lost: bool) -> None:
        self.command(f"sensor_set_bit_clr_rest 0x20 0 {REDUNDANCY} {1 if lost else 0} 1 1")

    def sel_add(self, record: str) -> None:
        answer = self.command(f"sel_add 0x20 {record}")
        assert "Added record" in answer, answer
