"""Probes: what a host can reach and how well, from where it stands (ping, HTTP, TCP, TLS, iperf3)."""
