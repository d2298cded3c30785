#!/usr/bin/env bash
# The Debian package (cpack -G DEB) of a build, installed into a clean root and used from there:
#   1. cpack makes glcv_<version>_<arch>.deb from the build (the CPack block of CMakeLists.txt; the
#      build's install script, without CPack's build of the tree first);
#   2. its control fields: the project's version, Depends from dpkg-shlibdeps, and apt-get resolves
#      them on this machine (a simulation: nothing is installed);
#   3. its files: the library, the headers, glcv.pc, the CMake package, the tool, the GStreamer plugin,
#      the Python package, all under the build's install prefix;
#   4. dpkg -x into an empty folder (the root), then from that root only: glcv --version (the build's)
#      and glcv synth (the library at work), a program compiled with pkg-config --cflags --libs glcv
#      (tests/consumer: every public function) that segments a frame, gst-inspect-1.0 glcvsegment,
#      and the Python package imported with the system's python, loading the root's library and
#      segmenting a frame;
#   5. where the prefix is /usr: that the files are where the system looks (ld.so, pkg-config,
#      GStreamer's plugin folder, the interpreter's sys.path).
#   test_package.sh BUILD_DIR SOURCE_DIR [PYTHON]     (exit 0 pass, 1 fail, 77 skip: no dpkg-deb/cpack)
set -euo pipefail
build=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
python=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

log() { printf '== %s\n' "$*"; }
fail() {
    echo "test_package: FAILED: $*" >&2
    exit 1
}
# Runs a command quietly; on failure shows its output and fails.
quiet() {
    if ! "$@" >"$tmp/last.log" 2>&1; then
        cat "$tmp/last.log"
        fail "$*"
    fi
}

for tool in cpack dpkg-deb dpkg-shlibdeps; do
    command -v $tool >/dev/null 2>&1 || { echo "test_package: skipped: no $tool (Debian: cmake, dpkg-dev)"; exit 77; }
done
cache() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
prefix=$(cache CMAKE_INSTALL_PREFIX)
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
[ -n "$version" ] || version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")/\1/p' "$build/CPackConfig.cmake")

log "cpack -G DEB"
# CPack first builds the tree's preinstall target (everything, as 'make install' does) and then runs
# its install script; here the tree is built already, and a build now would relink the programs
# the other tests are running: the install script alone, as CPack runs it after that step.
quiet cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/pkg" -D CPACK_INSTALL_CMAKE_PROJECTS= \
    -D CPACK_INSTALL_SCRIPTS="$build/cmake_install.cmake"
debs=("$tmp"/pkg/*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "cpack made ${#debs[@]} .deb files, not one: $(ls "$tmp/pkg")"
deb=${debs[0]}
echo "$(basename "$deb"): $(du -h "$deb" | cut -f1)"

log "control fields"
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = glcv ] || fail "Package is '$(field Package)', not glcv"
[ "$(field Version)" = "$version" ] || fail "Version is '$(field Version)', the project's is $version"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture is '$(field Architecture)'"
depends=$(field Depends)
echo "Depends: $depends"
# package:library; a library that no installed package holds here (unpacked by hand, as on hosts
# that carry their packages) cannot be named by dpkg-shlibdeps, so it is not looked for
for pair in libepoxy0:libepoxy.so.0 libdeflate0:libdeflate.so.0 libc6:libc.so.6; do
    lib=${pair%%:*}
    if ! dpkg-query -S "*/${pair#*:}" >/dev/null 2>&1; then
        echo "  $lib not looked for: no installed package holds ${pair#*:} here"
        continue
    fi
    [[ $depends == *"$lib"* ]] || fail "Depends lacks $lib (dpkg-shlibdeps did not run?): $depends"
done
if command -v apt-get >/dev/null 2>&1; then
    # Every dependency resolves here (all are installed: they built glcv); nothing is installed.
    if ! apt-get install -s "$deb" >"$tmp/apt.log" 2>&1; then
        cat "$tmp/apt.log"
        fail "apt-get cannot resolve the package's dependencies"
    fi
    grep -q "^Inst glcv " "$tmp/apt.log" || { cat "$tmp/apt.log"; fail "apt-get would not install glcv"; }
fi

log "files"
# perms owner size date time path [-> target]
dpkg-deb -c "$deb" | sed -E 's/^([^ ]+ +){5}//; s/ -> .*//; s|^\./|/|; s|/$||' >"$tmp/files"
has() {
    grep -Eq "^${prefix}/$1\$" "$tmp/files" || fail "the package has no ${prefix}/$1 (files: $(grep -c . "$tmp/files"))"
}
has 'include/glcv/glcv\.h'
has 'include/glcv/config\.h'
has 'lib[^ ]*/pkgconfig/glcv\.pc'
has 'lib[^ ]*/cmake/glcv/glcvConfig\.cmake'
shared=0
if grep -Eq "^${prefix}/lib[^ ]*/libglcv\.so\.0\$" "$tmp/files"; then
    shared=1
else
    has 'lib[^ ]*/libglcv\.a'
fi
tools=0
grep -Eq "^${prefix}/bin/glcv\$" "$tmp/files" && tools=1
gst=0
if [ -e "$build/gst/libgstglcv.so" ]; then
    has 'lib[^ ]*/gstreamer-1\.0/libgstglcv\.so'
    gst=1
fi
pydir=""
if [ -d "$build/python/glcv" ] && [ $shared = 1 ]; then
    has 'lib[^ ]*/python3[^ ]*/glcv/__init__\.py'
    has 'lib[^ ]*/python3[^ ]*/glcv/_paths\.py'
    pydir=$(grep -E "^${prefix}/lib[^ ]*/glcv/__init__\.py\$" "$tmp/files" | sed 's|/glcv/__init__\.py$||')
fi

log "dpkg -x into an empty root"
root=$tmp/root
mkdir "$root"
quiet dpkg -x "$deb" "$root"
libdir=$(dirname "$(find "$root$prefix" -name 'libglcv.so.0' -o -name 'libglcv.a' | head -n 1)")
# nothing of the build tree or of an installed glcv may be used from here on
clean_env=(env -u LD_LIBRARY_PATH -u GLCV_LIBRARY -u PYTHONPATH -u PKG_CONFIG_PATH -u GST_PLUGIN_PATH)

if [ $tools = 1 ]; then
    log "the root's glcv --version and glcv synth"
    want=$("$build/tools/glcv" --version)
    got=$("${clean_env[@]}" "$root$prefix/bin/glcv" --version) || fail "the package's bin/glcv does not run"
    [ "$got" = "$want" ] || fail "the package's glcv says '$got', the build's '$want'"
    echo "$got"
    quiet "${clean_env[@]}" "$root$prefix/bin/glcv" synth -o "$tmp/synth" --frames 2 --size 64x48 --quiet
    [ -s "$tmp/synth/frame_0001.png" ] || fail "glcv synth wrote no frame_0001.png"
    ldd "$root$prefix/bin/glcv" | grep libglcv | grep -q "$root" ||
        fail "the package's glcv loads another libglcv: $(ldd "$root$prefix/bin/glcv" | grep libglcv)"
fi

log "pkg-config --cflags --libs glcv: the consumer (every public function)"
pc=("${clean_env[@]}" PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config)
[ "$("${pc[@]}" --modversion glcv)" = "$version" ] || fail "pkg-config glcv --modversion is not $version"
static=""
[ $shared = 1 ] || static=--static
bash "$source_dir/tests/consumer/make_refs.sh" "$root$prefix/include" "$tmp/refs.c"
# shellcheck disable=SC2046
quiet cc -std=c11 -Wall -Wextra -Werror $("${pc[@]}" --cflags glcv) "$source_dir/tests/consumer/consumer.c" \
    "$tmp/refs.c" -o "$tmp/consumer" $("${pc[@]}" $static --libs glcv)
"${clean_env[@]}" LD_LIBRARY_PATH="$libdir" "$tmp/consumer" "$version" || fail "the consumer failed"

if [ $gst = 1 ]; then
    log "gst-inspect-1.0 glcvsegment from the root"
    if ! "${clean_env[@]}" GST_PLUGIN_PATH="$libdir/gstreamer-1.0" GST_REGISTRY="$tmp/registry.bin" \
            gst-inspect-1.0 glcvsegment >"$tmp/inspect.log" 2>&1; then
        cat "$tmp/inspect.log"
        fail "GStreamer does not load the package's plugin"
    fi
    grep -q "$libdir/gstreamer-1.0/libgstglcv.so" "$tmp/inspect.log" || {
        cat "$tmp/inspect.log"
        fail "gst-inspect-1.0 glcvsegment names another plugin file"
    }
fi

if [ -n "$pydir" ] && [ -n "$python" ]; then
    log "import glcv with $python from the root"
    mkdir "$tmp/cwd"
    (cd "$tmp/cwd" && "${clean_env[@]}" PYTHONPATH="$root$pydir" PYTHONDONTWRITEBYTECODE=1 "$python" - "$root" <<'EOF'
import os, sys
import numpy as np
import glcv
root = os.path.realpath(sys.argv[1])
for what, path in (("package", glcv.__file__), ("library", glcv.library_path)):
    assert os.path.realpath(path).startswith(root + os.sep), f"the {what} is {path}, not the root's"
bg = np.tile(np.arange(0, 256, 8, dtype=np.uint8), (24, 1))[:, :, None].repeat(3, axis=2)
frame = bg.copy()
frame[8:16, 12:20] = (250, 20, 20)
with glcv.Segmenter(32, 24, engine="cpu") as seg:
    seg.set_background(bg)
    mask = seg.segment(frame)
assert mask[10:14, 14:18].min() == 255, f"the changed block is not foreground:\n{mask}"
assert mask[:, :8].max() == 0 and mask[:, 24:].max() == 0, f"foreground far from the change:\n{mask}"
print("import glcv:", glcv.__file__, "loads", glcv.library_path)
EOF
    ) || fail "the package's Python module does not work from the root"
fi

if [ "$prefix" = /usr ]; then
    log "the files are where the system looks for them"
    ldconfig -p >/dev/null 2>&1 && ldirs=$(ldconfig -v -N 2>/dev/null | sed -n 's|^\(/[^:]*\):.*|\1|p')
    case "${libdir#"$root"}" in
        /usr/lib|/lib|/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo none)) ;;
        *) echo "${ldirs:-}" | grep -qx "${libdir#"$root"}" || fail "ld.so does not search ${libdir#"$root"}" ;;
    esac
    if [ $gst = 1 ]; then
        want=$(pkg-config --variable=pluginsdir gstreamer-1.0)
        [ "$libdir/gstreamer-1.0" = "$root$want" ] || fail "the plugin is in ${libdir#"$root"}/gstreamer-1.0, GStreamer looks in $want"
    fi
    if [ -n "$pydir" ] && [ -n "$python" ]; then
        "$python" -c "import sys; sys.exit(0 if '$pydir' in sys.path else 1)" ||
            fail "the Python package is in $pydir, which $python does not search"
    fi
else
    echo "prefix $prefix: the package installs there (for Debian's own layout configure with -DCMAKE_INSTALL_PREFIX=/usr)"
fi
echo "test_package: passed"
