"""OpenVPN instances: status file and/or management interface, plus the tun/tap device's
drop counters and queue length, and tuning hints drawn from both.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from collectors.base import (
    DEFAULT_MAX_BYTES,
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    MetricSpec,
    ParseError,
    Runner,
    Sample,
    host_path,
    read_line,
    read_text,
)
from collectors.context import HostContext
from collectors.network.openvpn.config import Instance
from collectors.network.openvpn.state import Client, Hint, Interface, OpenvpnState
from collectors.network.openvpn.state import Instance as VpnInstance
from collectors.network.openvpn.status import (
    VpnStatus,
    parse_load_stats,
    parse_openvpn_config,
    parse_state,
    parse_status,
)


class Management:
    """A minimal client for OpenVPN's management interface (TCP or unix socket)."""

    def __init__(self, address: str, password: str | None, timeout: float) -> None:
        self.address, self.password, self.timeout = address, password, timeout
        self.sock: socket.socket | None = None
        self.buf = bytearray()
        self.read_total = 0  # a management interface that never stops answering must not grow this process

    def __enter__(self) -> Management:
        try:
            if self.address.startswith("/"):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(self.timeout)
                s.connect(self.address)
            else:
                host, _, port = self.address.rpartition(":")
                s = socket.create_connection((host.strip("[]"), int(port)), timeout=self.timeout)
        except (OSError, ValueError) as exc:
            raise CollectorError(f"management {self.address}: cannot connect: {exc}") from None
        s.settimeout(self.timeout)
        self.sock = s
        # The password prompt "ENTER PASSWORD:" has no newline after it; the banner has.
        first = self._line(prompt=b"ENTER PASSWORD:")
        if first.startswith("ENTER PASSWORD"):
            if not self.password:
                raise CollectorError(f"management {self.address}: asks for a password and none is configured")
            self._send(self.password)
            # A wrong password is answered by the prompt again, not by an error line.
            answer = self._line(prompt=b"ENTER PASSWORD:")
            while answer.startswith(">") or not answer.strip():
                answer = self._line(prompt=b"ENTER PASSWORD:")
            if not answer.startswith("SUCCESS"):
                raise CollectorError(f"management {self.address}: password refused ({answer[:80]})")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.sock is not None:
            try:
                self._send("quit")
            except OSError:
                pass
            self.sock.close()

    def _send(self, line: str) -> None:
        assert self.sock is not None
        self.sock.sendall(line.encode() + b"\n")

    def _line(self, prompt: bytes | None = None) -> str:
        assert self.sock is not None
        line = read_line(self.sock, self.buf, f"management {self.address}", self.timeout, prompt)
        self.read_total += len(line) + 1
        if self.read_total > DEFAULT_MAX_BYTES:
            raise CollectorError(f"management {self.address}: output exceeded {DEFAULT_MAX_BYTES} bytes")
        return line

    def command(self, cmd: str, multiline: bool) -> str:
        """Send a command; return its reply (up to END for multi-line ones), skipping >notifications."""
        self._send(cmd)
        lines = []
        while True:
            line = self._line()
            if line.startswith(">"):
                continue
            if line.startswith("ERROR"):
                raise CollectorError(f"management {self.address}: {cmd!r}: {line}")
            lines.append(line)
            if not multiline or line == "END":
                return "\n".join(lines)


@dataclass
class Tun:
    """A tun's counters now, and what changed since the previous poll."""

    iface: dict[str, int] = field(default_factory=dict)
    iface_error: str | None = None
    drops_delta: int | None = None
    seconds: float | None = None
    rate: float | None = None  # bytes sent per second
    rx_rate: float | None = None


def read_interface(sys_root: Path, name: str) -> dict[str, int]:
    base = sys_root / "class" / "net" / name
    out: dict[str, int] = {}
    if not base.is_dir():
        raise CollectorError(f"interface {name} not found under {sys_root / 'class' / 'net'}")
    for key, rel in (("tx_dropped", "statistics/tx_dropped"), ("rx_dropped", "statistics/rx_dropped"),
                     ("tx_bytes", "statistics/tx_bytes"), ("rx_bytes", "statistics/rx_bytes"),
                     ("tx_queue_len", "tx_queue_len"), ("mtu", "mtu")):
        try:
            out[key] = int(read_text(base / rel).strip())
        except (OSError, ValueError):
            continue
    return out


def tuning_hints(inst: Instance, iface: dict[str, int], drops_delta: int | None, seconds: float | None,
                 conf: dict[str, list[str]] | None, rate_bytes: float | None) -> list[Hint]:
    """What to change, each with what was seen and the config line to add."""
    hints = []
    where = inst.config_file or "the instance's config"
    qlen = iface.get("tx_queue_len")
    if drops_delta and drops_delta > 0 and qlen is not None and qlen < 1000:
        hints.append(Hint(
            saw=f"{drops_delta} packets dropped on {inst.interface} in the last {seconds or 0:.1f}s with a transmit "
                f"queue of {qlen}",
            do=f"raise the tun queue: add `txqueuelen 1000` to {where} (or `ip link set {inst.interface} "
               "txqueuelen 1000` now)",
        ))
    if conf is not None and inst.path_mtu and inst.path_mtu < 1500 and not ({"tun-mtu", "mssfix", "fragment"} & set(conf)):
        hints.append(Hint(
            saw=f"the path MTU is {inst.path_mtu} but {where} sets none of tun-mtu, mssfix, fragment",
            do=f"add `mssfix {inst.path_mtu} mtu` (OpenVPN 2.6) so TCP inside the tunnel never needs fragmenting",
        ))
    fast = (inst.link_mbps or 0) >= 50 or (rate_bytes or 0) > 5e6
    if conf is not None and fast and not ({"sndbuf", "rcvbuf"} & set(conf)):
        hints.append(Hint(
            saw=f"a fast link ({inst.link_mbps or (rate_bytes or 0) * 8 / 1e6:.0f} Mbit/s) with socket buffers left "
                "to the OS",
            do='add `sndbuf 524288`, `rcvbuf 524288`, `push "sndbuf 524288"` and `push "rcvbuf 524288"`',
        ))
    return hints


class OpenvpnCollector(Collector):
    name: ClassVar[str] = "openvpn"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_openvpn_up": MetricSpec("1 if the instance answered (status file fresh or management up).",
                                           states=("down", "up")),
        "rackpulse_openvpn_clients": MetricSpec("Connected, authenticated clients."),
        "rackpulse_openvpn_client_received_bytes_total": MetricSpec("Bytes received from a client.", "counter"),
        "rackpulse_openvpn_client_sent_bytes_total": MetricSpec("Bytes sent to a client.", "counter"),
        "rackpulse_openvpn_received_bytes_total": MetricSpec("Bytes the instance received in all.", "counter"),
        "rackpulse_openvpn_sent_bytes_total": MetricSpec("Bytes the instance sent in all.", "counter"),
        "rackpulse_interface_transmit_dropped_total": MetricSpec("Packets the interface dropped on transmit.",
                                                                 "counter"),
        "rackpulse_interface_receive_dropped_total": MetricSpec("Packets the interface dropped on receive.", "counter"),
        "rackpulse_interface_tx_queue_length": MetricSpec("The interface's transmit queue length (txqueuelen)."),
        "rackpulse_interface_mtu_bytes": MetricSpec("The interface's MTU."),
    }

    def __init__(self, host_root: Path, instances: Sequence[Instance], timeout: float = 5.0,
                 max_status_age: float = 120.0) -> None:
        self.host_root = host_root
        self.instances = list(instances)
        self.timeout = timeout
        self.max_status_age = max_status_age
        self._last: dict[str, tuple[float, dict[str, int]]] = {}

    def collect(self) -> CollectResult:
        if not self.instances:
            from collectors.base import NoData

            raise NoData("no OpenVPN instances configured")
        result = CollectResult()
        views = []
        for inst in self.instances:
            try:
                views.append(self._instance(inst, result))
            except (CollectorError, OSError) as exc:
                result.warnings.append(f"{inst.name}: {exc}")
                result.samples.append(Sample.of("rackpulse_openvpn_up", 0, instance=inst.name))
                views.append(VpnInstance(name=inst.name, up=False, error=str(exc)))
        if all(not v.up for v in views):
            raise CollectorError("; ".join(result.warnings))
        result.state = OpenvpnState(instances=views)
        return result

    def _password(self, inst: Instance) -> str | None:
        if not inst.management_password_file:
            return None
        lines = read_text(Path(inst.management_password_file)).splitlines()
        return lines[0].strip() if lines else None

    def _read_status(self, inst: Instance) -> tuple[VpnStatus, tuple[int, int, int] | None, str | None]:
        """The instance's status, load stats and state: from its management interface, else its
        status file (which must be fresh)."""
        if inst.management:
            with Management(inst.management, self._password(inst), self.timeout) as m:
                status = parse_status(m.command("status 3", multiline=True))
                load = parse_load_stats(m.command("load-stats", multiline=False))
                return status, load, parse_state(m.command("state", multiline=True))
        if not inst.status_file:
            raise CollectorError("neither status_file nor management is configured")
        path = host_path(self.host_root, inst.status_file)
        try:
            age = time.time() - path.stat().st_mtime
            text = read_text(path)
        except FileNotFoundError:
            raise CollectorError(f"status file {path} does not exist (is the instance running?)") from None
        except PermissionError:
            raise CollectorError(f"status file {path}: permission denied") from None
        try:
            status = parse_status(text)
        except ParseError as exc:
            raise ParseError(f"{path}: {exc}") from None
        if age > self.max_status_age:
            raise CollectorError(f"status file {path} is {age:.0f}s old: the instance is not updating it")
        return status, None, None

    def _tun(self, inst: Instance, result: CollectResult) -> Tun:
        """The tun's counters and what changed since the last poll: drops, send and receive rates."""
        out = Tun()
        if not inst.interface:
            return out
        sys_root = Path(inst.sys_root) if inst.sys_root else host_path(self.host_root, "/sys")
        try:
            iface = read_interface(sys_root, inst.interface)
        except CollectorError as exc:
            out.iface_error = str(exc)
            result.warnings.append(f"{inst.name}: {exc}")
            return out
        out.iface = iface
        now = time.monotonic()
        il = {"interface": inst.interface}
        for metric, key in (("rackpulse_interface_transmit_dropped_total", "tx_dropped"),
                            ("rackpulse_interface_receive_dropped_total", "rx_dropped"),
                            ("rackpulse_interface_tx_queue_length", "tx_queue_len"),
                            ("rackpulse_interface_mtu_bytes", "mtu")):
            if key in iface:
                result.samples.append(Sample.of(metric, iface[key], **il))
        prev = self._last.get(inst.name)
        if prev and any(iface.get(k, 0) < prev[1].get(k, 0) for k in ("tx_dropped", "tx_bytes", "rx_bytes")):
            prev = None  # a counter went back: the tun was recreated (OpenVPN restarted), start again
        if prev:
            seconds = out.seconds = now - prev[0]
            out.drops_delta = iface.get("tx_dropped", 0) - prev[1].get("tx_dropped", 0)
            if seconds > 0:
                out.rate = (iface.get("tx_bytes", 0) - prev[1].get("tx_bytes", 0)) / seconds
                out.rx_rate = (iface.get("rx_bytes", 0) - prev[1].get("rx_bytes", 0)) / seconds
        self._last[inst.name] = (now, iface)
        return out

    def _instance(self, inst: Instance, result: CollectResult) -> VpnInstance:
        status, load, state = self._read_status(inst)
        labels = {"instance": inst.name}
        s = result.samples
        s.append(Sample.of("rackpulse_openvpn_up", 1, **labels))
        s.append(Sample.of("rackpulse_openvpn_clients", len(status.clients), **labels))
        per_cn: dict[str, list[int]] = {}
        for c in status.clients:
            acc = per_cn.setdefault(c.common_name, [0, 0])
            acc[0] += c.bytes_received
            acc[1] += c.bytes_sent
        for cn, (rx, tx) in sorted(per_cn.items()):
            s.append(Sample.of("rackpulse_openvpn_client_received_bytes_total", rx, common_name=cn, **labels))
            s.append(Sample.of("rackpulse_openvpn_client_sent_bytes_total", tx, common_name=cn, **labels))
        bytes_in, bytes_out = (load[1], load[2]) if load else (status.bytes_in, status.bytes_out)
        s.append(Sample.of("rackpulse_openvpn_received_bytes_total", bytes_in, **labels))
        s.append(Sample.of("rackpulse_openvpn_sent_bytes_total", bytes_out, **labels))
        tun = self._tun(inst, result)
        conf = None
        if inst.config_file:
            try:
                conf = parse_openvpn_config(read_text(host_path(self.host_root, inst.config_file)))
            except OSError as exc:
                result.warnings.append(f"{inst.name}: config file: {exc}")
        rate, rx_rate = tun.rate, tun.rx_rate
        hints = tuning_hints(inst, tun.iface, tun.drops_delta, tun.seconds, conf, rate)
        result.entities.append(Entity("vpn_instance", inst.name, {"mode": status.mode, "state": state,
                                                                  "interface": inst.interface}))
        return VpnInstance(
            name=inst.name, up=True, mode=status.mode, state=state, title=status.title,
            clients=[Client(common_name=c.common_name, real_address=c.real_address, virtual_address=c.virtual_address,
                            bytes_received=c.bytes_received, bytes_sent=c.bytes_sent,
                            connected_since=c.connected_since) for c in status.clients],
            undef_clients=status.undef_clients, bytes_in=bytes_in, bytes_out=bytes_out, interface=inst.interface,
            iface=Interface(**tun.iface), iface_error=tun.iface_error, drops_delta=tun.drops_delta, hints=hints,
            tx_rate_bytes=rate if rate is not None and rate >= 0 else None,
            rx_rate_bytes=rx_rate if rx_rate is not None and rx_rate >= 0 else None,
        )


# -- plug-in -----------------------------------------------------------------------------

def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.openvpn]."""
    return OpenvpnCollector(host.root, c.instances,
                            c.command_timeout, c.max_status_age)
