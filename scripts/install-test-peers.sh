#!/usr/bin/env bash
# The real peers the tests start as their own child processes: FRR (bgpd, zebra, vtysh),
# OpenVPN with an openssl-made PKI, nsenter/mount for a namespace's sysfs, net-snmp snmpd,
# NUT upsd with the dummy-ups driver, Prometheus (promtool) and Alertmanager,
# docker-compose to validate the compose file (no engine runs), Chromium for the browser tests,
# fping, iperf3 and nftables for the probes (real loss inside a test's own network namespace),
# Podman (its Docker-compatible API service) and busybox-static for a tiny image to create containers from,
# sudo (the privilege split's drop-in, checked with visudo), OpenIPMI's BMC simulator and FreeIPMI,
# virsh (libvirt's mock hypervisor), restic, borg and HAProxy.
# Installed from Debian's packages; nothing is started as a service.
set -euo pipefail
missing=()
[ -x /usr/lib/frr/bgpd ] && command -v vtysh >/dev/null || missing+=(frr)
command -v ip >/dev/null || missing+=(iproute2)
command -v openvpn >/dev/null || missing+=(openvpn)
command -v openssl >/dev/null || missing+=(openssl)
command -v nsenter >/dev/null || missing+=(util-linux)
command -v snmpd >/dev/null || missing+=(snmpd)
command -v snmpget >/dev/null || missing+=(snmp)
[ -x /lib/nut/upsd ] && [ -x /lib/nut/dummy-ups ] || missing+=(nut-server)
command -v promtool >/dev/null && command -v prometheus >/dev/null || missing+=(prometheus)
command -v prometheus-alertmanager >/dev/null && command -v amtool >/dev/null || missing+=(prometheus-alertmanager)
command -v docker-compose >/dev/null || missing+=(docker-compose)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v fping >/dev/null || missing+=(fping)
command -v iperf3 >/dev/null || missing+=(iperf3)
command -v nft >/dev/null || missing+=(nftables)
command -v mosquitto >/dev/null && command -v mosquitto_passwd >/dev/null || missing+=(mosquitto)
command -v podman >/dev/null || missing+=(podman)
# podman run works here with runc, not the default crun (../shared/docs/test-peers.md)
command -v runc >/dev/null || missing+=(runc)
[ -x /bin/busybox ] || missing+=(busybox-static)
# the README's API scripts are run as written (tests/test_api_scripts.py)
command -v curl >/dev/null || missing+=(curl)
# the privilege split: serve as an unprivileged user runs stand-ins through sudo (tests/install/)
command -v sudo >/dev/null && command -v visudo >/dev/null || missing+=(sudo)
# IPMI: OpenIPMI's BMC simulator (ipmi_sim, sdrcomp) and FreeIPMI, which the ipmi plug-in runs
command -v ipmi_sim >/dev/null && command -v sdrcomp >/dev/null || missing+=(openipmi)
command -v ipmi-sensors >/dev/null || missing+=(freeipmi-tools)
# libvirt's mock hypervisor (the test driver, no daemon) through virsh, which the libvirt plug-in runs
command -v virsh >/dev/null || missing+=(libvirt-clients)
# the shipped units' exposure figure (tests/install/test_units.py): systemd-analyze, offline
command -v systemd-analyze >/dev/null || missing+=(systemd)
# backups: real restic and borg repositories made in a test's own folder (collectors/host/restic, borg)
command -v restic >/dev/null || missing+=(restic)
command -v borg >/dev/null || missing+=(borgbackup)
# a real HAProxy on loopback with its stats socket (collectors/network/haproxy)
command -v haproxy >/dev/null || missing+=(haproxy)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "install-test-peers: need root to install ${missing[*]}" >&2
  exit 1
fi
# Never let a package start its daemon on this machine (the tests run their own).
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-test-peers: installed ${missing[*]}"
