#!/usr/bin/env bash
# The storage tests run against a real PostgreSQL on 127.0.0.1:5432 (user postgres, database
# test, trust auth). Start the local server if it is installed but stopped; install and
# configure it from Debian's packages if it is missing. Needs root for the install path.
set -euo pipefail

ready() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }

if ! command -v pg_isready >/dev/null 2>&1 || ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
  echo "ensure-postgres: installing PostgreSQL from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi

if ! ready; then
  version=$(ls /etc/postgresql | sort -V | tail -n1)
  hba=/etc/postgresql/$version/main/pg_hba.conf
  if ! grep -q "rackpulse-tests" "$hba"; then
    # Loopback only, for the test suite on a throwaway machine.
    sed -i '1i host all all 127.0.0.1/32 trust # rackpulse-tests' "$hba"
  fi
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || pg_ctlcluster "$version" main start
  for _ in $(seq 1 30); do ready && break; sleep 1; done
fi
ready || { echo "ensure-postgres: PostgreSQL did not come up on 127.0.0.1:5432" >&2; exit 1; }

if ! psql -h 127.0.0.1 -U postgres -d test -Atc 'select 1' >/dev/null 2>&1; then
  su postgres -c "psql -Atc \"select 1 from pg_database where datname = 'test'\"" | grep -q 1 \
    || su postgres -c "createdb test"
fi
psql -h 127.0.0.1 -U postgres -d test -Atc 'select 1' >/dev/null
echo "ensure-postgres: PostgreSQL is up on 127.0.0.1:5432"
