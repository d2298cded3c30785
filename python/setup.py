"""setuptools hooks of the glcv package (the metadata is in pyproject.toml).

The package loads libglcv through cffi's ABI mode: nothing is compiled. Building it records which
library to load in glcv/_paths.py, as CMake does for the build tree and for 'cmake --install':
the libglcv.so.0 in the libdir of the glcv that pkg-config finds (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig
for a library installed under <prefix>). Where pkg-config knows no glcv, no _paths.py is written
and the package asks the dynamic loader for libglcv.so.0 (a library in /usr/lib or /usr/local/lib).
GLCV_LIBRARY in the environment still wins at run time.
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

PATHS = '''"""Where libglcv is: written by pip's build of the package (python/setup.py), from pkg-config glcv."""


def library():
    return {path!r}
'''


def installed_library():
    """The installed libglcv.so.0 that pkg-config names, or None (with the reason printed)."""
    if not shutil.which("pkg-config"):
        print("glcv: no pkg-config: libglcv.so.0 will be loaded through the dynamic loader's search path")
        return None
    r = subprocess.run(["pkg-config", "--variable=libdir", "glcv"], capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        print("glcv: pkg-config finds no glcv (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig): libglcv.so.0 will be "
              "loaded through the dynamic loader's search path")
        return None
    path = os.path.join(os.path.realpath(r.stdout.strip()), "libglcv.so.0")
    if not os.path.exists(path):
        raise SystemExit(f"glcv: pkg-config glcv names the libdir {r.stdout.strip()}, which has no libglcv.so.0 "
                         "(a static build? the package needs the shared library: -DGLCV_SHARED=ON)")
    print(f"glcv: the package will load {path}")
    return path


class BuildPy(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "glcv", "_paths.py")
        path = installed_library()
        if path:
            with open(target, "w", encoding="utf-8") as f:
                f.write(PATHS.format(path=path))
        elif os.path.exists(target):
            os.unlink(target)


setup(cmdclass={"build_py": BuildPy})
