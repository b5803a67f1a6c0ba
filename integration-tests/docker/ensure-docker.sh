#!/usr/bin/env bash
# Makes sure a Docker engine answers, then that the node base images exist (Java 17, and Java 11 for
# Java11ContainersIT). On a machine where `docker` is only a client and this runs as root: installs Debian's
# docker.io and starts dockerd in the background.
# On a machine with Docker already running, it only checks. Idempotent.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

if ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "no Docker engine answers, and installing one needs root; start Docker and retry" >&2
    exit 1
  fi
  if ! command -v dockerd >/dev/null 2>&1; then
    echo "installing docker.io (Debian)"
    apt-get update -qq
    NEEDRESTART_SUSPEND=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
  fi
  echo "starting dockerd"
  setsid nohup dockerd >/var/log/ehrelay-dockerd.log 2>&1 < /dev/null &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  if ! docker info >/dev/null 2>&1; then
    echo "dockerd did not start; see /var/log/ehrelay-dockerd.log" >&2
    tail -20 /var/log/ehrelay-dockerd.log >&2 || true
    exit 1
  fi
fi
echo "docker engine: $(docker info --format '{{.ServerVersion}}')"
"$here/base-image.sh" 17
# the Java 11 suite's nodes (Java11ContainersIT)
"$here/base-image.sh" 11
