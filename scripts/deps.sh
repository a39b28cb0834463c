#!/usr/bin/env bash
# scripts/deps.sh: install the Debian packages libiwarp needs, only if missing.
# Needs root for apt-get; without root it only reports what is missing.
set -euo pipefail

PKGS=(build-essential autoconf automake libtool pkg-config
      liburing-dev libisal-dev check libsubunit-dev libpcap-dev
      clang libclang-rt-14-dev clang-format tshark iproute2 python3
      gnuplot-nox nftables
      libssl-dev openssl  # opt-in TLS (io/tls.c); openssl: test certificates
      abigail-tools debhelper lintian  # ABI check; Debian packages (make check-deb)
      libibverbs-dev librdmacm-dev)  # compat/ builds against rdma-core headers
PKGS+=(rdmacm-utils perftest qperf libfabric-bin)  # unmodified programs of tests/compat_programs.sh
PKGS+=(openmpi-bin libopenmpi-dev)  # the mpi_pingpong row of tests/compat_programs.sh

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep 'install ok installed' >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#PKGS[@]} packages present"
	exit 0
fi
echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: not root; install these first: apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
