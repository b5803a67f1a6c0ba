#!/usr/bin/env bash
# Makes sure `prometheus` and `promtool` are on the PATH, for PrometheusIT. On a machine without them, run as
# root: installs Debian's `prometheus` package (no recommends: no node exporter) WITHOUT starting its service
# (that one would listen on 0.0.0.0:9090); the test starts its own Prometheus on 127.0.0.1. Idempotent.
set -euo pipefail

have() {
  command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1
}

if ! have; then
  if [ "$(id -u)" != 0 ]; then
    echo "prometheus/promtool not found, and installing Debian's prometheus package needs root;" \
      "install it (apt-get install --no-install-recommends prometheus) and retry" >&2
    exit 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "prometheus/promtool not found and this is not a Debian-like system (no apt-get); install Prometheus" \
      "so that 'prometheus' and 'promtool' are on the PATH and retry" >&2
    exit 1
  fi
  # keep the package's service from starting: a policy-rc.d saying "no" while installing (unless one exists)
  policy=/usr/sbin/policy-rc.d
  own_policy=false
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# ehrelay ensure-prometheus.sh: no service starts during this install\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    own_policy=true
  fi
  cleanup() {
    if [ "$own_policy" = true ]; then rm -f "$policy"; fi
  }
  trap cleanup EXIT
  echo "installing prometheus (Debian)"
  apt-get update -qq
  NEEDRESTART_SUSPEND=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold prometheus >/dev/null
  cleanup
  trap - EXIT
  # should the service have started anyway (systemd ignoring policy-rc.d), stop it and keep it from starting
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemctl stop prometheus.service >/dev/null 2>&1 || true
    systemctl disable prometheus.service >/dev/null 2>&1 || true
  else
    if [ -x /etc/init.d/prometheus ]; then
      /etc/init.d/prometheus stop >/dev/null 2>&1 || true
    fi
    if command -v update-rc.d >/dev/null 2>&1; then
      update-rc.d prometheus disable >/dev/null 2>&1 || true
    fi
  fi
  if ! have; then
    echo "installed the prometheus package, yet prometheus/promtool are still not on the PATH" >&2
    exit 1
  fi
fi
echo "prometheus: $(prometheus --version 2>&1 | head -1)"
echo "promtool: $(command -v promtool)"
