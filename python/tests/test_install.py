#!/usr/bin/env python3
"""The installed package loads the installed library: cmake --install into a temporary prefix,
then import glcv from <prefix>/<python dir> with nothing else pointing at the build tree.

usage: test_install.py CMAKE BUILD_DIR PYTHON_INSTALL_DIR      (exit 0 pass, 1 fail)
"""
import os
import subprocess
import sys
import tempfile

CHECK = """
import os, sys, glcv, numpy as np
prefix = sys.argv[1]
path = os.path.realpath(glcv.library_path)
assert path.startswith(os.path.realpath(prefix) + os.sep), f"loaded {path}, not the installed library"
assert os.path.basename(glcv.library_path) == "libglcv.so.0", glcv.library_path
assert os.path.realpath(glcv.__file__).startswith(os.path.realpath(prefix)), glcv.__file__
with glcv.Segmenter(16, 8, engine="cpu") as seg:
    seg.set_background(np.zeros((8, 16, 3), np.uint8))
    assert seg.segment(np.zeros((8, 16, 3), np.uint8)).max() == 0
try:
    glcv.Segmenter(0, 0)
except glcv.InvalidArgumentError:
    pass
print("installed package:", glcv.__file__, "library:", glcv.library_path)
"""


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    cmake, build, pydir = sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="glcv_py_install.") as prefix:
        r = subprocess.run([cmake, "--install", build, "--prefix", prefix], capture_output=True, text=True,
                           timeout=600)
        if r.returncode != 0:
            print(f"test_install: cmake --install failed:\n{r.stdout}{r.stderr}")
            return 1
        env = {k: v for k, v in os.environ.items() if k not in ("GLCV_LIBRARY", "LD_LIBRARY_PATH")}
        env["PYTHONPATH"] = os.path.join(prefix, pydir)
        r = subprocess.run([sys.executable, "-c", CHECK, prefix], capture_output=True, text=True, env=env,
                           cwd=prefix, timeout=120)
        print(r.stdout + r.stderr, end="")
        if r.returncode != 0:
            print("test_install: FAILED")
            return 1
        # GLCV_LIBRARY names another library: it wins, and a wrong one is a clear ImportError
        env["GLCV_LIBRARY"] = os.path.join(prefix, "no", "libglcv.so")
        r = subprocess.run([sys.executable, "-c", "import glcv"], capture_output=True, text=True, env=env,
                           cwd=prefix, timeout=120)
        if r.returncode == 0 or "ImportError" not in r.stderr or "GLCV_LIBRARY" not in r.stderr:
            print(f"test_install: a wrong GLCV_LIBRARY was not refused clearly:\n{r.stderr}")
            return 1
    print("test_install: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
