#!/usr/bin/env bash
# Makes sure a base image of the node containers exists: `base-image.sh` (or `17`) a Debian bookworm with a Java 17
# JRE, the container suites' nodes; `base-image.sh 11` a Debian bullseye with its Java 11 JRE, the Java 11 suite's.
# 1. present already: nothing to do;  2. a registry pull of a standard JRE image, where a registry answers;
# 3. otherwise build it here: debootstrap (minbase) + openjdk-<n>-jre-headless, then docker import.
# Needs a running Docker engine; step 3 needs root (it installs debootstrap when missing).
set -euo pipefail

JAVA="${1:-17}"
case "$JAVA" in
  17)
    IMAGE="${EHRELAY_BASE_IMAGE:-ehrelay/jre17:bookworm}"
    PULL="${EHRELAY_BASE_PULL:-eclipse-temurin:17-jre}"
    SUITE=bookworm
    ;;
  11)
    IMAGE="${EHRELAY_BASE_IMAGE_11:-ehrelay/jre11:bullseye}"
    PULL="${EHRELAY_BASE_PULL_11:-eclipse-temurin:11-jre}"
    SUITE=bullseye
    ;;
  *)
    echo "usage: base-image.sh [17|11]" >&2
    exit 2
    ;;
esac
JRE="openjdk-$JAVA-jre-headless"
JAVA_HOME_DIR="/usr/lib/jvm/java-$JAVA-openjdk-amd64"

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

debootstrap --variant=minbase "$SUITE" "$ROOTFS" >/dev/null
# ca-certificates-java (a dependency of the JRE) needs /proc in the chroot
mount -t proc proc "$ROOTFS/proc"
chroot "$ROOTFS" /bin/sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  --no-install-recommends '"$JRE"' iproute2 procps >/dev/null && apt-get clean \
  && rm -rf /var/lib/apt/lists/*'
umount "$ROOTFS/proc"

tar -C "$ROOTFS" -c . | docker import \
  -c "ENV JAVA_HOME=$JAVA_HOME_DIR" \
  -c "ENV PATH=$JAVA_HOME_DIR/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  - "$IMAGE" >/dev/null
echo "base image $IMAGE: built in $(( $(date +%s) - start )) s"
