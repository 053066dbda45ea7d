"""The demo's OpenVPN server site-b: three clients in a status file (version 3), and a tun
whose queue silently drops packets (the tuning hint's case)."""

from __future__ import annotations

from pathlib import Path

from collectors.scenes import atomic_write


def write_scene(root: Path, t: float) -> None:
    now = 1_795_000_000 + int(t)
    clients = [("laptop-anna", "198.51.100.23:51123", "10.8.0.2", 4_000_000 + int(t) * 9000),
               ("phone-ben", "203.0.113.77:40311", "10.8.0.3", 800_000 + int(t) * 1500),
               ("site-b-gw", "192.0.2.10:1194", "10.8.0.4", 90_000_000 + int(t) * 250_000)]
    lines = ["TITLE,OpenVPN 2.6.14 x86_64-pc-linux-gnu [SSL (OpenSSL)] [LZO] [LZ4] [EPOLL] [MH/PKTINFO] [AEAD] [DCO]",
             f"TIME,2026-11-22 12:00:00,{now}",
             "HEADER,CLIENT_LIST,Common Name,Real Address,Virtual Address,Virtual IPv6 Address,Bytes Received,"
             "Bytes Sent,Connected Since,Connected Since (time_t),Username,Client ID,Peer ID,Data Channel Cipher"]
    for i, (cn, real, virt, b) in enumerate(clients):
        lines.append(f"CLIENT_LIST,{cn},{real},{virt},,{b},{b * 3},2026-11-22 08:00:00,{now - 14400},UNDEF,{i},{i},"
                     "AES-256-GCM")
    lines += ["HEADER,ROUTING_TABLE,Virtual Address,Common Name,Real Address,Last Ref,Last Ref (time_t)",
              "GLOBAL_STATS,Max bcast/mcast queue length,0", "END"]
    # OpenVPN rewrites it every `status` seconds, changed or not: the collector checks its age
    atomic_write(root / "run/openvpn/site-b.status", "\n".join(lines) + "\n", touch=True)
    tun = root / "sys/class/net/tun0"
    # The tunnel that silently drops: in the evening rush (story seconds 120-200) its queue overflows.
    atomic_write(tun / "statistics/tx_dropped", f"{int(min(max(t - 120, 0), 80) * 3.5)}\n")
    atomic_write(tun / "statistics/rx_dropped", "0\n")
    atomic_write(tun / "statistics/tx_bytes", f"{int(t) * 2_500_000}\n")
    atomic_write(tun / "statistics/rx_bytes", f"{int(t) * 900_000}\n")
    atomic_write(tun / "tx_queue_len", "500\n")
    atomic_write(tun / "mtu", "1500\n")
    atomic_write(root / "etc/openvpn/server/site-b.conf",
                  "dev tun0\nproto udp\nport 1194\nserver 10.8.0.0 255.255.255.0\nkeepalive 10 60\n")
