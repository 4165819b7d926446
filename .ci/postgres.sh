#!/usr/bin/env bash
# Installs Debian's PostgreSQL server programs (initdb, pg_ctl) if missing:
# the PostgreSQL store's tests and benchmark start a throwaway cluster with
# them (server/internal/pgtest). Used by .ci/run and `make bench`.
set -euo pipefail
if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq postgresql >/dev/null
