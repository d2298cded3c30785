#!/usr/bin/env python3
"""The documentation's examples, run as written: every ```sh, ```python and ```c block of README.md
and docs/*.md.

usage: test_examples.py --source SRC --build BUILD --python PYTHON --cc CC --library LIB
                        [--include DIR]... [--list] [FILE.md...]
       (exit 0: every example ran or was skipped as marked; 1: one failed or a marker is wrong)

Each example runs in a fresh temporary folder laid out like a clone of the repository after
'bash scripts/build.sh': the source tree's top-level entries are symbolic links to SRC's (python/
is a copy: pip builds in the folder it is given), and
build/ is a folder where build/release is a link to BUILD and every entry of BUILD has a link of
its own, so build/release/tools/glcv, build/tools/glcv and build/bench/... all name BUILD's files.
The environment points at the build: PATH starts with BUILD/tools, BUILD/examples and BUILD/bench
(and a python3 that is PYTHON, the interpreter the package is built for), PYTHONPATH is
BUILD/python, GST_PLUGIN_PATH is BUILD/gst with a registry of the test's own, and GStreamer's GL
runs headless on EGL as the README says a machine without a display needs
(GST_GL_PLATFORM=egl GST_GL_WINDOW=egl-device GST_GL_API=opengl3); pip may not use an index
(PIP_NO_INDEX=1).

How each block runs:
  ```sh      bash -e -o pipefail BLOCK (a failing command fails the example)
  ```python  PYTHON BLOCK
  ```c       a program (it has main): compiled against the build's library and run; a fragment
             (marked, see below): compiled and linked inside a function, not run
  ``` or another language: text (a synopsis, a diagram), not run
An HTML comment that starts a line right before a block changes that:
  <!-- example: skip (REASON) -->       not run; counted and listed with REASON (hardware, data
                                        from elsewhere, a benchmark of the whole machine)
  <!-- example: continued -->           runs in the folder of the file's previous example, after it
  <!-- example: fragment[; pkg-config: MODULES][; given: C DECLARATIONS] -->
                                        a C fragment; the declarations (and #include lines) go
                                        before the function, at file scope
A marker that marks no block, an unknown marker and a C block that is neither a program nor a
marked fragment fail the test. Examples that need a part this build does not have (the GStreamer
plugin, the Python package, FFmpeg, GLFW) are skipped, saying which; so are those that run
'cmake --build' when a source is newer than the build (they would rebuild the programs other tests
are running: build first, as scripts/build.sh does).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TIMEOUT = 300  # seconds per example
FENCE = re.compile(r"^([ \t]*)```([A-Za-z0-9_+-]*)[^`]*$")
MARKER = re.compile(r"<!--\s*example:(.*?)-->", re.S)
RUN_LANGS = {"sh", "python", "c"}
COPIED = {"python"}  # copied, not linked: pip builds in the folder it is given


class Example:
    def __init__(self, path, line, lang, text, marker, marker_line):
        self.path, self.line, self.lang, self.text = path, line, lang, text
        self.marker, self.marker_line = marker, marker_line
        self.kind, self.reason, self.given, self.pkg = "run", "", "", []

    def where(self):
        return f"{self.path}:{self.line}"


def parse_marker(ex):
    """Sets ex.kind (run, skip, continued, fragment) and its details; returns an error or None."""
    m = ex.marker
    if m is None:
        return None
    body = " ".join(m.split())
    given = ""
    if "given:" in body:
        body, given = body.split("given:", 1)
    parts = [p.strip() for p in body.split(";") if p.strip()]
    if not parts:
        return "an empty example marker"
    head = parts[0]
    if head.startswith("skip"):
        r = re.fullmatch(r"skip\s*\((.+)\)", " ".join(m.split()))
        if not r:
            return "a skip marker must read 'example: skip (REASON)'"
        ex.kind, ex.reason = "skip", r.group(1).strip()
    elif head == "continued":
        if len(parts) > 1 or given:
            return "'example: continued' takes nothing else"
        ex.kind = "continued"
    elif head == "fragment":
        if ex.lang != "c":
            return "'example: fragment' marks C blocks only"
        ex.kind = "fragment"
        for p in parts[1:]:
            if p.startswith("pkg-config:"):
                ex.pkg += p.split(":", 1)[1].split()
            else:
                return f"unknown part '{p}' of a fragment marker"
        # the declarations as written, newlines kept (the comment may span lines)
        if "given:" in m:
            ex.given = m.split("given:", 1)[1].strip()
    else:
        return f"unknown example marker '{head}' (skip (REASON), continued, fragment)"
    if ex.lang not in RUN_LANGS and ex.kind != "skip":
        return f"a '{ex.kind}' marker on a block that is not sh, python or c"
    return None


def extract(path, rel):
    """The code blocks of a Markdown file, with the marker right before each; and marker errors."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    examples, errors = [], []
    used = set()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        start = i
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        body = [l[len(indent):] if l.startswith(indent) else l for l in lines[i + 1:j]]
        # the marker: an HTML comment that ends on the last non-blank line before the fence
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker, marker_line = None, None
        if k >= 0 and lines[k].rstrip().endswith("-->"):
            first = k
            while first >= 0 and not lines[first].lstrip().startswith("<!--"):
                first -= 1
            comment = "\n".join(lines[first:k + 1]) if first >= 0 else ""
            mm = MARKER.search(comment)
            if mm:
                marker, marker_line = mm.group(1), first + 1
                used.add(first + 1)
        ex = Example(rel, start + 1, lang, "\n".join(body) + "\n", marker, marker_line)
        err = parse_marker(ex)
        if err:
            errors.append(f"{rel}:{marker_line}: {err}")
        elif ex.lang == "c" and ex.kind in ("run", "continued") and not re.search(r"\bint\s+main\s*\(", ex.text):
            errors.append(f"{rel}:{start + 1}: a C block that is neither a program (no main) nor marked "
                          "'<!-- example: fragment -->' or skipped")
        examples.append(ex)
        i = j + 1
    # every marker (a comment that starts a line: not one quoted in the text) must mark a block
    for n, l in enumerate(lines, 1):
        if not l.lstrip().startswith("<!--"):
            continue
        rest = "\n".join(lines[n - 1:])
        comment = rest[rest.index("<!--"):]
        end = comment.find("-->")
        if end >= 0 and MARKER.fullmatch(comment[:end + 3]) and n not in used:
            errors.append(f"{rel}:{n}: an example marker that is not right before a code block")
    return examples, errors


class Runner:
    def __init__(self, args):
        self.a = args
        args.include = [os.path.realpath(d) for d in args.include]
        self.build = os.path.realpath(args.build)
        self.source = os.path.realpath(args.source)
        self.top = tempfile.mkdtemp(prefix="glcv_examples.")
        self.bindir = os.path.join(self.top, "bin")
        os.makedirs(self.bindir)
        # python3 on PATH is the interpreter the package is built for
        os.symlink(args.python, os.path.join(self.bindir, "python3"))
        self.folders = {}
        self.count = 0
        config = os.path.join(self.build, "include", "glcv", "config.h")
        try:
            with open(config, encoding="utf-8") as f:
                self.config = f.read()
        except OSError:
            self.config = ""

    def have(self, name):
        return re.search(r"#define\s+" + name + r"\s+1", self.config) is not None

    def env(self):
        e = dict(os.environ)
        for k in ("GLCV_LIBRARY", "GST_PLUGIN_PATH_1_0", "GST_PLUGIN_SYSTEM_PATH_1_0"):
            e.pop(k, None)
        path = [self.bindir] + [os.path.join(self.build, d) for d in ("tools", "examples", "bench")]
        e["PATH"] = os.pathsep.join(path + [e.get("PATH", "/usr/bin:/bin")])
        e["PYTHONPATH"] = os.path.join(self.build, "python")
        e["PYTHONDONTWRITEBYTECODE"] = "1"
        e["GST_PLUGIN_PATH"] = os.path.join(self.build, "gst")
        e["GST_REGISTRY"] = os.path.join(self.top, "gst-registry.bin")
        e.update(GST_GL_PLATFORM="egl", GST_GL_WINDOW="egl-device", GST_GL_API="opengl3")
        # pip never downloads (it needs nothing: --no-deps, setuptools from the system)
        e.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
        return e

    def folder(self):
        """A fresh folder laid out like the repository root after a build."""
        self.count += 1
        d = os.path.join(self.top, f"ex{self.count:03d}")
        os.makedirs(os.path.join(d, "build"))
        for name in sorted(os.listdir(self.source)):
            if name in ("build", "out") or name.startswith("."):
                continue
            if name in COPIED:
                shutil.copytree(os.path.join(self.source, name), os.path.join(d, name), symlinks=True,
                                ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
            else:
                os.symlink(os.path.join(self.source, name), os.path.join(d, name))
        os.symlink(self.build, os.path.join(d, "build", "release"))
        for name in sorted(os.listdir(self.build)):
            if name != "release":
                os.symlink(os.path.join(self.build, name), os.path.join(d, "build", name))
        return d

    def stale(self):
        """A source file changed after the last build (cmake --build would rebuild or reconfigure
        while other tests run the programs), or None. Looked for once: sources against the
        newest object file, CMake files against the last configure."""
        if not hasattr(self, "_stale"):
            self._stale = None
            newest_object = 0.0
            for d, _, names in os.walk(self.build):
                for n in names:
                    if n.endswith(".o"):
                        newest_object = max(newest_object, os.path.getmtime(os.path.join(d, n)))
            stamp = os.path.join(self.build, "CMakeFiles", "Makefile.cmake")
            configured = os.path.getmtime(stamp) if os.path.exists(stamp) else None
            for top in ("src", "include", "shaders", "cuda", "tools", "gst", "examples", "bench", "tests", "python",
                        "cmake", "CMakeLists.txt"):
                path = os.path.join(self.source, top)
                walk = [(self.source, [], [top])] if os.path.isfile(path) else os.walk(path)
                for d, _, names in walk:
                    for n in names:
                        f = os.path.join(d, n)
                        if n.endswith((".c", ".h", ".cu", ".cuh", ".glsl")):
                            limit = newest_object
                        elif n == "CMakeLists.txt" or n.endswith((".cmake", ".in")):
                            limit = configured
                        else:
                            continue
                        if limit and os.path.getmtime(f) > limit:
                            self._stale = os.path.relpath(f, self.source)
                            return self._stale
        return self._stale

    def missing(self, ex):
        """Why this build cannot run the example, or None."""
        t = ex.text
        if re.search(r"\bcmake --build\b", t) and self.stale():
            return f"{self.stale()} changed after the build: cmake --build would rebuild it under the other tests"
        if re.search(r"\bglcv(segment|bgsub|track)\b", t) and \
                not os.path.exists(os.path.join(self.build, "gst", "libgstglcv.so")):
            return "glcv built without GStreamer"
        if (ex.lang == "python" or re.search(r"(import glcv|PYTHONPATH=build)", t)) and \
                not os.path.exists(os.path.join(self.build, "python", "glcv", "__init__.py")):
            return "glcv built without its Python package"
        if re.search(r"(--video|sample-video\.sh|filesrc)", t) and not self.have("GLCV_HAVE_FFMPEG"):
            return "glcv built without FFmpeg"
        for program, folder in (("glcv-demo", "tools"), ("host_app", "examples")):
            if re.search(r"\b" + program + r"\b", t) and not os.path.exists(os.path.join(self.build, folder, program)):
                return f"no {program} in this build (GLFW)"
        return None

    def run(self, argv, cwd, log):
        t0 = time.monotonic()
        try:
            r = subprocess.run(argv, cwd=cwd, env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, timeout=TIMEOUT)
            out, rc = r.stdout.decode(errors="replace"), r.returncode
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode(errors="replace") + f"\n(killed after {TIMEOUT} s)"
            rc = "timeout"
        log.append((argv, rc, out, time.monotonic() - t0))
        return rc == 0

    def compile_c(self, ex, d, log):
        """Compiles a C block (a program, or a fragment inside a function); runs a program."""
        program = re.search(r"\bint\s+main\s*\(", ex.text) is not None
        src = os.path.join(self.top, f"example{self.count:03d}_{ex.line}.c")
        exe = os.path.join(self.top, f"example{self.count:03d}_{ex.line}")
        if program:
            code = f'#line {ex.line + 1} "{ex.path}"\n' + ex.text
        else:
            body, includes = [], []
            for l in ex.text.split("\n"):
                if l.lstrip().startswith("#include"):
                    includes.append(l)
                    body.append("")
                else:
                    body.append(l)
            code = ("#include <glcv/glcv.h>\n#include <stdint.h>\n#include <stddef.h>\n" + "\n".join(includes) +
                    f'\n#line {ex.marker_line} "{ex.path}"\n{ex.given}\n'
                    "void glcv_example(void);\nvoid glcv_example(void)\n{\n"
                    f'#line {ex.line + 1} "{ex.path}"\n' + "\n".join(body) + "\n}\n"
                    "int main(void) { return 0; }\n")
        with open(src, "w", encoding="utf-8") as f:
            f.write(code)
        flags = ["-std=c11", "-Wall", "-Wextra", "-Werror"]
        if not program:
            # a fragment's declarations have no values and some of its results are not looked at
            flags += ["-Wno-unused-variable", "-Wno-unused-but-set-variable", "-Wno-uninitialized",
                      "-Wno-maybe-uninitialized"]
        for inc in self.a.include:
            flags.append("-I" + inc)
        if ex.pkg:
            r = subprocess.run(["pkg-config", "--cflags", "--libs"] + ex.pkg, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                log.append((["pkg-config"] + ex.pkg, r.returncode, r.stdout, 0))
                return False
            pkg = r.stdout.split()
        else:
            pkg = []
        lib = os.path.realpath(self.a.library)
        if lib.endswith(".a"):
            argv = [self.a.cc] + flags + ["-c", src, "-o", exe + ".o"] + [p for p in pkg if not p.startswith("-l")]
            return self.run(argv, d, log)
        argv = [self.a.cc] + flags + [src, "-o", exe, lib, "-Wl,-rpath," + os.path.dirname(lib)] + pkg
        if not self.run(argv, d, log):
            return False
        return self.run([exe], d, log) if program else True

    def example(self, ex, previous):
        """Runs one example; returns (ok, log)."""
        log = []
        if ex.kind == "continued":
            if previous is None:
                log.append(([], "marker", "'example: continued' on a file's first example", 0))
                return False, log
            d = previous
        else:
            d = self.folder()
        self.folders[ex.path] = d
        if ex.lang == "c":
            return self.compile_c(ex, d, log), log
        # the block's file lies outside the folder it runs in
        block = os.path.join(self.top, f"example{self.count:03d}_{ex.line}." + ("py" if ex.lang == "python" else "sh"))
        with open(block, "w", encoding="utf-8") as f:
            f.write(ex.text)
        argv = [self.a.python, block] if ex.lang == "python" else ["bash", "-e", "-o", "pipefail", block]
        return self.run(argv, d, log), log


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--cc", default="cc")
    p.add_argument("--library", required=True, help="the build's libglcv (.so or .a)")
    p.add_argument("--include", action="append", default=[])
    p.add_argument("--list", action="store_true", help="list the examples and what would happen, run nothing")
    p.add_argument("--keep", action="store_true", help="keep the temporary folders")
    p.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/*.md)")
    a = p.parse_args()

    source = os.path.realpath(a.source)
    files = a.files or ["README.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir(os.path.join(source, "docs")) if f.endswith(".md"))
    examples, errors = [], []
    for rel in files:
        ex, err = extract(os.path.join(source, rel), rel)
        examples += ex
        errors += err
    if errors:
        for e in errors:
            print(f"test_examples: {e}")
        print("test_examples: FAILED (markers)")
        return 1

    runner = Runner(a)
    ran, failed, skipped, built_without, text = [], [], {}, {}, 0
    previous = {}  # per file: ("ran", folder) or ("skipped", reason) of its last example
    try:
        for ex in examples:
            if ex.lang not in RUN_LANGS:
                text += 1
                continue
            before = previous.get(ex.path)
            if ex.kind == "continued" and before and before[0] == "skipped":
                why = f"continues an example skipped: {before[1]}"
            else:
                why = ex.reason if ex.kind == "skip" else None
            if why:
                skipped.setdefault(why, []).append(ex.where())
                print(f"-- {ex.where()} {ex.lang}: skipped ({why})")
                previous[ex.path] = ("skipped", why)
                continue
            why = runner.missing(ex)
            if why:
                built_without.setdefault(why, []).append(ex.where())
                print(f"-- {ex.where()} {ex.lang}: skipped ({why})")
                previous[ex.path] = ("skipped", why)
                continue
            if a.list:
                print(f"-- {ex.where()} {ex.lang}: would run ({ex.kind})")
                previous[ex.path] = ("ran", None)
                continue
            t0 = time.monotonic()
            ok, log = runner.example(ex, before[1] if before else None)
            previous[ex.path] = ("ran", runner.folders.get(ex.path))
            took = time.monotonic() - t0
            what = "compiled" if ex.kind == "fragment" else "ran"
            print(f"-- {ex.where()} {ex.lang}: {what if ok else 'FAILED'} ({took:.1f} s)")
            (ran if ok else failed).append(ex)
            if not ok:
                print("   the example:")
                for l in ex.text.rstrip("\n").split("\n"):
                    print("   | " + l)
                for argv, rc, out, secs in log:
                    if rc != 0:
                        print(f"   command: {' '.join(argv)}\n   exit status: {rc} after {secs:.1f} s\n   output:")
                        tail = out.rstrip("\n").split("\n")[-40:]
                        for l in tail:
                            print("   > " + l)
    finally:
        if a.keep:
            print(f"test_examples: folders kept in {runner.top}")
        else:
            shutil.rmtree(runner.top, ignore_errors=True)

    n_skip = sum(len(v) for v in skipped.values())
    n_without = sum(len(v) for v in built_without.values())
    print(f"\ntest_examples: {len(ran)} ran, {len(failed)} failed, {n_skip} skipped as marked, "
          f"{n_without} skipped for this build, {text} text blocks not run")
    # by what they need: the reasons up to their first ':' or ';'
    groups = {}
    for reason, where in skipped.items():
        groups.setdefault(re.split(r"[:;]", reason)[0].strip(), []).extend(where)
    for reason, where in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        print(f"  {len(where)} skipped: {reason} ({', '.join(where)})")
    for reason, where in sorted(built_without.items()):
        print(f"  {len(where)} skipped: {reason} ({', '.join(where)})")
    if failed:
        print("test_examples: FAILED: " + ", ".join(ex.where() for ex in failed))
        return 1
    if not ran and not a.list:
        print("test_examples: FAILED: no example ran")
        return 1
    print("test_examples: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
