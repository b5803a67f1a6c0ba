#!/usr/bin/env bash
# Makes sure the base image of the node containers exists (a Debian bookworm with a Java 17 JRE).
# 1. present already: nothing to do;  2. a registry pull of a standard JRE image, where a registry answers;
# 3. otherwise build it here: debootstrap (minbase) + openjdk-17-jre-headless, then docker import.
# Needs a running Docker engine; step 3 needs root (it installs debootstrap when missing).
set -euo pipefail

IMAGE="${EHRELAY_BASE_IMAGE:-ehrelay/jre17:bookworm}"
PULL="${EHRELAY_BASE_PULL:-eclipse-temurin:17-jre}"

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "base image $IMAGE: present"
  exit 0
fi

if timeout 120 docker pull "$PULL" >/dev/null 2>&1; then
  docker tag "$PULL" "$IMAGE"
  echo "base image $IMAGE: pulled $PULL"
  exit 0
fi
echo "base image $IMAGE: no registry pull ($PULL); building it with debootstrap"

if [ "$(id -u)" != 0 ]; then
  echo "building the base image needs root (debootstrap, chroot)" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq
  NEEDRESTART_SUSPEND=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

start=$(date +%s)
ROOTFS="$(mktemp -d /var/tmp/ehrelay-rootfs.XXXXXX)"
cleanup() {
  umount "$ROOTFS/proc" 2>/dev/null || true
  rm -rf "$ROOTFS"
}
trap cleanup EXIT

debootstrap --variant=minbase bookworm "$ROOTFS" >/dev/null
# ca-certificates-java (a dependency of the JRE) needs /proc in the chroot
mount -t proc proc "$ROOTFS/proc"
chroot "$ROOTFS" /bin/sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  --no-install-recommends openjdk-17-jre-headless iproute2 procps >/dev/null && apt-get clean \
  && rm -rf /var/lib/apt/lists/*'
umount "$ROOTFS/proc"

tar -C "$ROOTFS" -c . | docker import \
  -c 'ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64' \
  -c 'ENV PATH=/usr/lib/jvm/java-17-openjdk-amd64/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  - "$IMAGE" >/dev/null
echo "base image $IMAGE: built in $(( $(date +%s) - start )) s"
