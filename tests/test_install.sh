#!/usr/bin/env bash
# Installs glcv from the build tree into a temporary prefix and builds a host application
# against it twice: with CMake's find_package(glcv) and with pkg-config glcv.
set -euo pipefail
build_dir=$1
src_dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build_dir" --prefix "$tmp/prefix" > "$tmp/install.log"
libdir=$(dirname "$(find "$tmp/prefix" -name 'libglcv.so*' -o -name 'libglcv.a' | head -n 1)")
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

echo "== find_package(glcv)"
cmake -S "$src_dir/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/configure.log"
cmake --build "$tmp/consumer" > "$tmp/build.log"
"$tmp/consumer/consumer"

echo "== pkg-config glcv"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc -std=c11 $(pkg-config --cflags glcv) "$src_dir/consumer/consumer.c" -o "$tmp/consumer_pc" $(pkg-config --libs glcv)
"$tmp/consumer_pc"
echo "test_install: passed"
