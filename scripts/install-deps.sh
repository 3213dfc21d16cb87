#!/bin/sh
# Install texc's build and test dependencies from Debian's archive, only those missing.
# Idempotent: a second run installs nothing. Called by `make demo` and `make test`.
set -e
PKGS="re2c bison make gcc clang libclang-rt-14-dev llvm-19-dev llvm-19-tools ocl-icd-opencl-dev opencl-headers \
pocl-opencl-icd clinfo libxgboost-dev libcjson-dev libopenblas-dev libdnnl-dev python3 \
libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata chromium libpng-dev g++ \
lld openssh-server openssh-client openmpi-bin libopenmpi-dev qemu-user-static gcc-aarch64-linux-gnu \
libc6-dev-arm64-cross"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "install-deps: installing:$missing"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# lit is shipped inside llvm-19-tools on Debian; fall back to PyPI only if it is absent.
if [ ! -e /usr/lib/llvm-19/build/utils/lit/lit.py ] && ! command -v lit >/dev/null 2>&1; then
  python3 -m pip install -q lit
fi
exit 0
