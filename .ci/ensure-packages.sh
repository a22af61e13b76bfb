#!/usr/bin/env bash
# Installs the Debian packages the tests need when their binaries are missing
# (the tests start private clickhouse-server, redis-server and nginx instances,
# and open the demo's HTML reports in headless chromium).
# Without root it says which packages to install and fails.
set -euo pipefail
missing=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ]; }
have clickhouse-server || missing+=(clickhouse-server)
have redis-server || missing+=(redis-server)
have chromium || missing+=(chromium)
have nginx || missing+=(nginx-light)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "tests need the Debian packages: ${missing[*]} (sudo apt-get install -y ${missing[*]})" >&2
  exit 1
fi
echo "installing ${missing[*]} with apt-get" >&2
apt-get update -q >/dev/null
# Installing a server package must not start it as a service (nginx would take port 80): the tests start their own.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
  trap 'rm -f "$policy"' EXIT
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
