#!/usr/bin/env bash
# Every rackpulse benchmark, printing figures (no pass/fail). Run from the repo root:
#   make bench        (or: bash bench/run-all.sh with the venv's python on PATH)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
if ! command -v wrk >/dev/null || ! command -v prometheus-node-exporter >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk prometheus-node-exporter >/dev/null
fi
bash scripts/ensure-postgres.sh
echo "== $(date -u +%FT%TZ) $(nproc) cores, $(python3 --version), SQLite $($PY -c 'import sqlite3; print(sqlite3.sqlite_version)')"
$PY bench/ingest.py
$PY bench/chart_query.py
$PY bench/web.py
$PY bench/db_size_year.py
$PY bench/network_cycle.py
$PY bench/host_cycle.py
$PY bench/storage_cycle.py
$PY bench/remote_write.py
$PY bench/heatpump_poll.py
$PY bench/alerts.py
$PY bench/agents.py
$PY bench/agent_footprint.py
$PY bench/agent_floor.py
$PY bench/trust.py
$PY bench/ingest_memory.py
$PY bench/energy_page.py
$PY bench/sparklines.py
$PY bench/demo_cpu.py
$PY bench/demo_rss.py
$PY bench/hostile.py
$PY bench/data_watch.py
