#!/usr/bin/env bash
# The Python package installed as Python packages are: pip, in a virtual environment, against a
# libglcv installed elsewhere, with no network:
#   1. cmake --install BUILD into a temporary prefix (the library and glcv.pc);
#   2. PYTHON -m venv --system-site-packages (numpy and cffi are the system's, python3-venv);
#   3. PKG_CONFIG_PATH=<prefix>/lib/pkgconfig pip install --no-build-isolation --no-deps --no-index
#      of a copy of python/ (setup.py records the library pkg-config names);
#   4. from another folder, with no PYTHONPATH, GLCV_LIBRARY or LD_LIBRARY_PATH: the venv's glcv is
#      imported from the venv, loads the prefix's library, has the library's version, and segments a
#      frame; pip uninstall removes it again.
#   test_pip.sh CMAKE BUILD_DIR SOURCE_DIR PYTHON       (exit 0 pass, 1 fail, 77 skip: no venv module)
set -euo pipefail
cmake=$1
build=$(cd "$2" && pwd)
source_dir=$(cd "$3" && pwd)
python=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

log() { printf '== %s\n' "$*"; }
fail() {
    echo "test_pip: FAILED: $*" >&2
    exit 1
}
quiet() {
    if ! "$@" >"$tmp/last.log" 2>&1; then
        cat "$tmp/last.log"
        fail "$*"
    fi
}

"$python" -c "import venv, ensurepip" 2>/dev/null ||
    { echo "test_pip: skipped: $python has no venv with pip (Debian: python3-venv)"; exit 77; }

log "cmake --install into a temporary prefix"
quiet "$cmake" --install "$build" --prefix "$tmp/prefix"
pc=$(find "$tmp/prefix" -name glcv.pc | head -n 1)
[ -n "$pc" ] || fail "no glcv.pc installed"
version=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --modversion glcv)

log "$python -m venv --system-site-packages"
quiet "$python" -m venv --system-site-packages "$tmp/venv"
venv_python=$tmp/venv/bin/python

log "pip install --no-build-isolation --no-deps --no-index ./python"
# a copy: pip builds in the folder it is given (build/, glcv.egg-info)
cp -r "$source_dir/python" "$tmp/src"
rm -rf "$tmp/src/build" "$tmp/src/glcv.egg-info" "$tmp/src/glcv/_paths.py"
clean_env=(env -u PYTHONPATH -u GLCV_LIBRARY -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH PIP_DISABLE_PIP_VERSION_CHECK=1
           PYTHONDONTWRITEBYTECODE=1)
quiet "${clean_env[@]}" PKG_CONFIG_PATH="$(dirname "$pc")" "$venv_python" -m pip install --no-build-isolation \
    --no-deps --no-index --no-cache-dir "$tmp/src"
cat "$tmp/last.log" | grep -E "^(Successfully|  glcv:)" || true

log "import glcv in the venv"
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && "${clean_env[@]}" "$venv_python" - "$tmp/venv" "$tmp/prefix" "$version" <<'EOF'
import os, sys
from importlib import metadata
import numpy as np
import glcv
venv, prefix, version = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2]), sys.argv[3]
assert os.path.realpath(glcv.__file__).startswith(venv + os.sep), f"imported {glcv.__file__}, not the venv's"
assert os.path.realpath(glcv.library_path).startswith(prefix + os.sep), \
    f"loaded {glcv.library_path}, not the library installed in {prefix}"
assert metadata.version("glcv") == version, \
    f"pip's glcv is {metadata.version('glcv')} (python/pyproject.toml), the library {version} (CMakeLists.txt)"
bg = np.tile(np.arange(0, 256, 8, dtype=np.uint8), (24, 1))[:, :, None].repeat(3, axis=2)
frame = bg.copy()
frame[8:16, 12:20] = (250, 20, 20)
with glcv.Segmenter(32, 24, engine="cpu") as seg:
    seg.set_background(bg)
    mask = seg.segment(frame)
assert mask.shape == (24, 32) and mask.dtype == np.uint8, (mask.shape, mask.dtype)
assert mask[10:14, 14:18].min() == 255, f"the changed block is not foreground:\n{mask}"
assert mask[:, :8].max() == 0 and mask[:, 24:].max() == 0, f"foreground far from the change:\n{mask}"
print(f"glcv {metadata.version('glcv')} from {glcv.__file__}, library {glcv.library_path}: "
      f"{int((mask > 0).sum())} foreground pixels")
EOF
) || fail "the pip-installed package does not work"

log "pip uninstall"
quiet "${clean_env[@]}" "$venv_python" -m pip uninstall -y glcv
# (a glcv installed in the system may still import: not the venv's)
left=$(cd "$tmp/cwd" && "${clean_env[@]}" "$venv_python" -c "import glcv; print(glcv.__file__)" 2>/dev/null || true)
case "$left" in
    "$tmp/venv"/*) fail "glcv still imports from the venv after pip uninstall: $left" ;;
esac
echo "test_pip: passed"
