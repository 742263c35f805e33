#!/usr/bin/env bash
# Installs every Debian package memwall needs; does nothing when they are all present.
set -euo pipefail
packages=(
  cmake g++ make pkg-config
  libsimgrid-dev libboost-graph-dev libyaml-cpp-dev libhdf5-dev
  catch2 libcli11-dev nlohmann-json3-dev libjemalloc-dev
  python3-h5py python3-numpy python3-matplotlib
  slurmctld slurmd slurm-client munge
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
