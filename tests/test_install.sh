#!/usr/bin/env bash
# glcv as a host application meets it (tests/consumer: a program that links every public function
# and segments a synthetic frame):
#   1. the build tree installed into a prefix, consumed through find_package(glcv) and through
#      pkg-config glcv (--static when the build is a static archive);
#   2. a static archive installed, consumed through find_package(glcv) and through
#      pkg-config --static glcv;
#   3. glcv embedded with add_subdirectory into a project that checks glcv changes nothing of its
#      own settings (build type, flags, options, BUILD_SHARED_LIBS) and builds no tools or tests.
#   test_install.sh BUILD_DIR [SOURCE_DIR [quick|sources]]
# quick (the default) reuses the build it tests: 1; 2 with a static tree configured from the
# sources with the build's features, whose archive is the build's own objects (libglcv_internal.a:
# the same objects libglcv.a is made of), installed by that tree's install rules; 3 configured only
# (its checks are the configure step's). sources builds what quick takes from the build: 2 with the
# archive compiled from the sources, 3 built, linked and run.
set -euo pipefail
build_dir=$1
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "${2:-$here/..}" && pwd)
mode=${3:-quick}
case "$mode" in
    quick|sources) ;;
    *) echo "test_install: unknown mode '$mode' (quick or sources)" >&2; exit 2 ;;
esac
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

# The features of the build under test, for a static tree that must match it.
have() { grep -q "^#define GLCV_HAVE_$1 1" "$build_dir/include/glcv/config.h"; }
features=()
for f in CUDA FFMPEG ZSTD; do
    if have $f; then features+=("-DGLCV_WITH_$f=ON"); else features+=("-DGLCV_WITH_$f=OFF"); fi
done

if [ "$mode" = quick ]; then
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

    internal=$build_dir/libglcv_internal.a
    if [ -e "$internal" ]; then
        log "a static tree configured from the sources, its archive the build's objects, installed"
        quiet cmake -S "$source_dir" -B "$tmp/static-build" -DCMAKE_BUILD_TYPE=Release -DGLCV_SHARED=OFF \
            -DGLCV_BUILD_TESTS=OFF -DGLCV_BUILD_TOOLS=OFF -DGLCV_BUILD_BENCH=OFF -DGLCV_WITH_PYTHON=OFF \
            -DGLCV_WITH_GSTREAMER=OFF "${features[@]}"
        # where that tree's install rules take the archive from (it is not built here)
        archive=$(grep -o '"[^"]*/libglcv\.a"' "$tmp/static-build/cmake_install.cmake" | head -n 1 | tr -d '"')
        [ -n "$archive" ] || { echo "test_install: the static tree installs no libglcv.a" >&2; exit 1; }
        cp "$internal" "$archive"
        quiet cmake --install "$tmp/static-build" --prefix "$tmp/static"
        [ -e "$(find "$tmp/static" -name libglcv.a | head -n 1)" ] || { echo "no libglcv.a installed" >&2; exit 1; }
        consume "$tmp/static" static
    else
        echo "test_install: no libglcv_internal.a in $build_dir: the static archive is left to the 'sources' mode"
    fi

    log "add_subdirectory(glcv): configured (the consumer's checks of what glcv sets)"
    quiet cmake -S "$consumer" -B "$tmp/embedded" -DGLCV_CONSUMER_SOURCE="$source_dir"
else
    log "build and install a static archive from the sources"
    quiet cmake -S "$source_dir" -B "$tmp/static-build" -DCMAKE_BUILD_TYPE=Release -DGLCV_SHARED=OFF \
        -DGLCV_BUILD_TESTS=OFF -DGLCV_BUILD_TOOLS=OFF -DGLCV_BUILD_BENCH=OFF
    quiet cmake --build "$tmp/static-build" -j "$jobs"
    quiet cmake --install "$tmp/static-build" --prefix "$tmp/static"
    [ -e "$(find "$tmp/static" -name libglcv.a | head -n 1)" ] || { echo "no libglcv.a installed" >&2; exit 1; }
    consume "$tmp/static" static

    log "add_subdirectory(glcv): built, linked and run"
    quiet cmake -S "$consumer" -B "$tmp/embedded" -DGLCV_CONSUMER_SOURCE="$source_dir"
    quiet cmake --build "$tmp/embedded" -j "$jobs" --target consumer
    [ -e "$(find "$tmp/embedded" -name libglcv.a | head -n 1)" ] || { echo "embedded glcv is not static" >&2; exit 1; }
    "$tmp/embedded/consumer"
fi
echo "test_install ($mode): passed"
