#!/usr/bin/env bash
# glcv as a host application meets it (tests/consumer: a program that links every public function
# and segments a synthetic frame):
#   1. the build tree installed into a prefix, consumed through find_package(glcv) and through
#      pkg-config glcv (--static when the build is a static archive);
#   2. a static archive built from the sources and installed, consumed through find_package(glcv)
#      and through pkg-config --static glcv;
#   3. glcv embedded with add_subdirectory into a project that checks glcv changes nothing of its
#      own settings (build type, flags, options, BUILD_SHARED_LIBS) and builds no tools or tests.
#   test_install.sh BUILD_DIR [SOURCE_DIR]
set -euo pipefail
build_dir=$1
here=$(cd "$(dirname "$0")" && pwd)
source_dir=${2:-$(cd "$here/.." && pwd)}
consumer=$here/consumer
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jobs=$(nproc 2>/dev/null || echo 2)

log() { printf '== %s\n' "$*"; }
# Runs a command quietly; on failure shows its output and fails.
quiet() {
    local out=$tmp/last.log
    if ! "$@" > "$out" 2>&1; then
        cat "$out"
        echo "test_install: failed: $*" >&2
        exit 1
    fi
}

# consume PREFIX NAME: find_package and pkg-config builds against an installed glcv in PREFIX.
consume() {
    local prefix=$1 name=$2
    local libdir
    libdir=$(dirname "$(find "$prefix" -name 'libglcv.so' -o -name 'libglcv.a' | head -n 1)")
    local version
    version=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --modversion glcv)

    log "$name: find_package(glcv)"
    quiet cmake -S "$consumer" -B "$tmp/$name-cmake" -DCMAKE_PREFIX_PATH="$prefix"
    quiet cmake --build "$tmp/$name-cmake" --target consumer
    "$tmp/$name-cmake/consumer" "$version"

    local static=""
    [ -e "$libdir/libglcv.a" ] && static=--static
    log "$name: pkg-config $static glcv"
    bash "$consumer/make_refs.sh" "$prefix/include" "$tmp/$name-refs.c"
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Wextra -Werror $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags glcv) \
        "$consumer/consumer.c" "$tmp/$name-refs.c" -o "$tmp/$name-pc" \
        $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config $static --libs glcv)
    LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/$name-pc" "$version"
}

log "install the build tree"
quiet cmake --install "$build_dir" --prefix "$tmp/installed"
consume "$tmp/installed" installed

# the installed tools run from the prefix, and from a copy of it elsewhere, with no library path
if [ -e "$tmp/installed/bin/glcv" ]; then
    log "installed bin/glcv --version, in place and moved"
    want=$(LD_LIBRARY_PATH="" "$build_dir/tools/glcv" --version)
    got=$(env -u LD_LIBRARY_PATH "$tmp/installed/bin/glcv" --version) || {
        echo "test_install: the installed bin/glcv does not run" >&2
        exit 1
    }
    cp -a "$tmp/installed" "$tmp/moved"
    rm -rf "$tmp/installed-hidden" && mv "$tmp/installed" "$tmp/installed-hidden"
    moved=$(env -u LD_LIBRARY_PATH "$tmp/moved/bin/glcv" --version) || {
        echo "test_install: bin/glcv of a moved prefix does not run" >&2
        exit 1
    }
    mv "$tmp/installed-hidden" "$tmp/installed"
    if [ "$got" != "$want" ] || [ "$moved" != "$want" ]; then
        echo "test_install: installed bin/glcv says '$got' (moved: '$moved'), the build's '$want'" >&2
        exit 1
    fi
fi

log "build and install a static archive from the sources"
quiet cmake -S "$source_dir" -B "$tmp/static-build" -DCMAKE_BUILD_TYPE=Release -DGLCV_SHARED=OFF \
    -DGLCV_BUILD_TESTS=OFF -DGLCV_BUILD_TOOLS=OFF -DGLCV_BUILD_BENCH=OFF
quiet cmake --build "$tmp/static-build" -j "$jobs"
quiet cmake --install "$tmp/static-build" --prefix "$tmp/static"
[ -e "$(find "$tmp/static" -name libglcv.a | head -n 1)" ] || { echo "no libglcv.a installed" >&2; exit 1; }
consume "$tmp/static" static

log "add_subdirectory(glcv)"
quiet cmake -S "$consumer" -B "$tmp/embedded" -DGLCV_CONSUMER_SOURCE="$source_dir"
quiet cmake --build "$tmp/embedded" -j "$jobs" --target consumer
[ -e "$(find "$tmp/embedded" -name libglcv.a | head -n 1)" ] || { echo "embedded glcv is not static" >&2; exit 1; }
"$tmp/embedded/consumer"
echo "test_install: passed"
