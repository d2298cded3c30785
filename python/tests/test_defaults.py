"""One default per parameter: the parameters that the glcv tool, the Python package and the GStreamer
elements share with the library (segmenter, background subtractor, tracker) must default to what
the library resolves for a params struct of zeros (its *_get_params), and the three interfaces to
the same value. Any difference is printed (which parameter, which interface, both values) and fails.

usage: test_defaults.py --glcv PATH/TO/glcv [--gst] [--gst-inspect gst-inspect-1.0] [--track-header PATH]
    (PYTHONPATH: the build's python folder; GST_PLUGIN_PATH: the build's gst folder)
Exit status 0 pass, 1 a difference, 77 skipped (no library to load).

The GStreamer part runs when gst-inspect-1.0 finds the elements; without them it says so, and fails
with --gst (the plugin was built).
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys

try:
    import glcv
    from glcv import _core
    from glcv._lib import ffi, lib
except (ImportError, OSError) as e:  # no package or no library: nothing to compare
    print(f"test_defaults: cannot load glcv ({e}): skipped")
    sys.exit(77)

W, H = 64, 48

# A value an interface leaves to the library (passes 0, the struct's "default").
LIBRARY = "the library's"

# Deliberate differences from the library's zero value, with the reason; the interfaces must all
# give this value instead (so a change on one side still fails).
EXCEPTIONS = {
    ("tracker", "window"): (
        "adaptive",
        "the tools and Python track with the adaptive window, measured far better on OTB Crossing "
        "(docs/QUALITY.md: mean IoU 0.404 against 0.250 with cv::CamShift's box); the C struct's 0 "
        "keeps cv::CamShift's box for callers who port OpenCV code"),
}

FAILURES = []


def fail(text):
    FAILURES.append(text)
    print("FAIL:", text)


# ---- the library: a params struct of zeros, resolved -----------------------------------------------

def resolved(kind):
    """The resolved params of a CPU-engine object created with zeros (width, height, engine aside)."""
    p = ffi.new(f"glcv_{kind}_params *")
    p.width, p.height = W, H
    p.engine = _core.engine("cpu")  # the resolved values of every other field are the engine's alike
    obj = ffi.new(f"glcv_{kind} **")
    st = getattr(lib, f"glcv_{kind}_create")(p, obj)
    if st != 0:
        raise SystemExit(f"test_defaults: glcv_{kind}_create with zero params failed: status {st}")
    out = ffi.new(f"glcv_{kind}_params *")
    getattr(lib, f"glcv_{kind}_get_params")(obj[0], out)
    getattr(lib, f"glcv_{kind}_destroy")(obj)
    return out


def enum_name(table, value):
    return {v: k for k, v in table.items()}.get(value, f"?{value}")


def library_defaults():
    s, b, t = resolved("segment"), resolved("bgsub"), resolved("track")
    return {
        "segmenter": {
            "ts": s.ts, "odc": s.odc, "b1": s.b1, "b2": s.b2, "iterations": s.iterations, "seed": int(s.seed),
            "adapt_rate": s.adapt_rate, "preset": enum_name({"calibrated": 1, "paper": 2}, s.preset),
            "fixed_parameters": bool(s.fixed_parameters), "engine": "auto"},
        "bgsub": {
            "method": ffi.string(lib.glcv_bgsub_method_string(b.method)).decode(), "alpha": b.alpha, "c": b.c,
            "min_threshold": b.min_threshold, "absorb": b.absorb, "vote": b.vote, "gray": bool(b.gray),
            "passes": enum_name({"single": 1, "multi": 2}, b.passes), "engine": "auto"},
        "tracker": {
            "method": enum_name({"camshift": 1, "dcf": 2}, t.method), "hue_bins": t.hue_bins, "sat_bins": t.sat_bins, "epsilon": t.epsilon,
            "max_iterations": t.max_iterations, "window": enum_name({"opencv": 1, "paper": 2, "adaptive": 3}, t.window),
            "aspect": t.aspect, "min_mass": t.min_mass, "max_distance": t.max_distance,
            "lost_criteria": t.lost_criteria, "recovery": enum_name({"frame": 1, "none": 2}, t.recovery),
            "recovery_interval": t.recovery_interval, "min_window_area": t.min_window_area,
            "reset_width": t.reset_width, "engine": "auto"},
    }


def track_limits(header):
    """The tracker's s_min, v_min, v_max (set_limits, no params field): the header's 'Defaults a, b, c'."""
    with open(header) as f:
        text = f.read()
    m = re.search(r"s_min <= S and v_min <= V <= v_max\. Defaults (\d+), (\d+), (\d+)", text)
    if not m:
        raise SystemExit(f"test_defaults: {header} states no 'Defaults a, b, c' for glcv_track_set_limits")
    return dict(zip(("s_min", "v_min", "v_max"), map(int, m.groups())))


# ---- the interfaces ----------------------------------------------------------------------------------

def python_defaults():
    """The Python classes made with their defaults (engine cpu, so that no GL or CUDA is needed)."""
    import inspect
    got = {}
    with glcv.Segmenter(W, H, engine="cpu") as seg:
        p = seg.get_params()
        got["segmenter"] = {k: p[k] for k in ("ts", "odc", "b1", "b2", "iterations", "seed", "adapt_rate",
                                              "preset", "fixed_parameters")}
    with glcv.BackgroundSubtractor(W, H, engine="cpu") as sub:
        p = sub.get_params()
        got["bgsub"] = {k: p[k] for k in ("method", "alpha", "c", "min_threshold", "absorb", "vote", "gray",
                                          "passes")}
    with glcv.Tracker(W, H, engine="cpu") as tr:
        p = tr.get_params()
        got["tracker"] = {k: p[k] for k in ("method", "hue_bins", "sat_bins", "epsilon", "max_iterations", "window",
                                            "aspect", "min_mass", "max_distance", "lost_criteria", "recovery",
                                            "recovery_interval", "min_window_area", "reset_width")}
    for group, cls in (("segmenter", glcv.Segmenter), ("bgsub", glcv.BackgroundSubtractor),
                       ("tracker", glcv.Tracker)):
        got[group]["engine"] = inspect.signature(cls).parameters["engine"].default
    return got


def option_blocks(text):
    """The option entries of a help text: {"--name": its text, continuation lines included}."""
    blocks, name = {}, None
    for line in text.splitlines():
        m = re.match(r"^ {2}(?:-\w, )?(--[\w-]+)", line)
        if m:
            name = m.group(1)
            blocks[name] = line
        elif name and re.match(r"^ {4,}\S", line):
            blocks[name] += " " + line.strip()
        else:
            name = None
    return blocks


def bracket(blocks, option, where):
    """The default an option's help states in brackets: the first of "[a | b]" (a preset's), as text."""
    if option not in blocks:
        fail(f"{where}: the help has no {option}")
        return None
    found = re.findall(r"\[([^\]]*)\]", blocks[option])
    if not found:
        fail(f"{where}: the help of {option} states no default in brackets")
        return None
    return found[-1].split("|")[0].strip()


def number(text):
    text = re.match(r"^\s*(0x[0-9a-fA-F]+|[-+]?[0-9.]+(?:e[-+]?\d+)?)", text).group(1)
    if text.lower().startswith("0x"):
        return int(text, 16)
    return int(text) if re.match(r"^[-+]?\d+$", text) else float(text)


def cli_defaults(glcv_path):
    def helptext(*args):
        r = subprocess.run([glcv_path, *args, "--help"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise SystemExit(f"test_defaults: {glcv_path} {' '.join(args)} --help: exit {r.returncode}")
        return r.stdout

    seg_help, track_help = helptext("segment"), helptext("track")
    seg, trk = option_blocks(seg_help), option_blocks(track_help)
    where = "glcv segment --help"
    got = {"segmenter": {}, "bgsub": {}, "tracker": {}}
    # Ts and B1/B2 are "60 g" and "10 g": before any learning the help says what g is and what
    # they are then ("those for g = 50: Ts 3000, B1 = B2 = 500").
    m = re.search(r"for g = (\d+):\s*Ts (\d+), B1 = B2 = (\d+)", " ".join(seg_help.split()))
    if not m:
        fail(f"{where}: no 'for g = N: Ts T, B1 = B2 = B' for the values before learning")
    else:
        g, ts, b = map(float, m.groups())
        got["segmenter"].update(ts=ts, b1=b, b2=b)
        for option, field, stated in (("--Ts", "ts", ts), ("--B1", "b1", b), ("--B2", "b2", b)):
            text = bracket(seg, option, where)
            if text and re.match(r"^[\d.]+ g$", text) and number(text) * g != stated:
                fail(f"{where}: {option} [{text}] with g = {g:g} is not {stated:g}, the value it states")
    for option, field in (("--Odc", "odc"), ("--iterations", "iterations"), ("--seed", "seed"),
                          ("--adapt", "adapt_rate")):
        text = bracket(seg, option, where)
        if text is not None:
            got["segmenter"][field] = number(text)
    if "--paper-defaults" in seg:  # a flag: the other preset unless given
        got["segmenter"]["preset"] = "calibrated"
    got["segmenter"]["engine"] = bracket(seg, "--engine", where)
    for option, field in (("--alpha", "alpha"), ("--c", "c"), ("--min-threshold", "min_threshold"),
                          ("--absorb", "absorb"), ("--vote", "vote")):
        text = bracket(seg, option, where)
        if text is not None:
            got["bgsub"][field] = number(text)
    got["bgsub"]["passes"] = bracket(seg, "--passes", where)
    got["bgsub"]["gray"] = False  # a flag: off unless given
    got["bgsub"]["engine"] = got["segmenter"]["engine"]
    where = "glcv track --help"
    for option, field in (("--bins", "hue_bins"), ("--sat-bins", "sat_bins")):
        text = bracket(trk, option, where)
        if text is not None:
            got["tracker"][field] = number(text)
    got["tracker"]["window"] = bracket(trk, "--window", where)
    got["tracker"]["method"] = bracket(trk, "--method", where)
    got["tracker"]["engine"] = bracket(trk, "--engine", where)
    text = bracket(trk, "--smin", where)
    if text:
        got["tracker"].update(zip(("s_min", "v_min", "v_max"), (int(v) for v in text.split(","))))
    return got


def gst_properties(inspect, element):
    r = subprocess.run([inspect, element], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return None
    props, name = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"^  ([\w-]+)\s+: (.*)$", line)
        if m:
            name = m.group(1)
            props[name] = {"blurb": m.group(2), "default": None}
            continue
        m = re.search(r'Default:\s+(?:\S+, )?"([^"]*)"|Default:\s+(\S+)', line)
        if name and m and props[name]["default"] is None:
            props[name]["default"] = m.group(1) if m.group(1) is not None else m.group(2)
    return props


def gst_value(prop):
    """A property's default as the element means it: "(-1: the preset's)" defers to the library,
    "(-1: 8)" or "(0: 0x5EED)" names the value its sentinel stands for."""
    d = prop["default"]
    m = re.search(r"\(" + re.escape(d) + r": ([^)]*)\)", prop["blurb"])
    if m:
        meaning = m.group(1)
        return number(meaning) if re.match(r"^\s*(0x[0-9a-fA-F]+|[-+]?[0-9.]+)", meaning) else LIBRARY
    if d in ("true", "false"):
        return d == "true"
    try:
        return number(d) if re.match(r"^[-+]?(0x[0-9a-fA-F]+|[0-9.]+(e[-+]?\d+)?)$", d) else d
    except AttributeError:
        return d


GST = {
    "segmenter": ("glcvsegment", {"ts": "ts", "odc": "odc", "b1": "b1", "b2": "b2", "iterations": "iterations",
                                  "seed": "seed", "adapt_rate": "adapt-rate", "preset": "preset",
                                  "fixed_parameters": "fixed-parameters", "engine": "engine"}),
    "bgsub": ("glcvbgsub", {"method": "method", "alpha": "alpha", "c": "c", "min_threshold": "min-threshold",
                            "absorb": "absorb", "vote": "vote", "gray": "gray", "passes": "passes",
                            "engine": "engine"}),
    "tracker": ("glcvtrack", {"method": "method", "hue_bins": "bins", "sat_bins": "sat-bins", "epsilon": "epsilon",
                              "max_iterations": "max-iterations", "window": "window", "aspect": "aspect",
                              "min_mass": "min-mass", "max_distance": "max-distance",
                              "lost_criteria": "lost-criteria", "recovery": "recovery",
                              "recovery_interval": "recovery-interval", "min_window_area": "min-window-area",
                              "reset_width": "reset-width", "engine": "engine", "s_min": "s-min",
                              "v_min": "v-min", "v_max": "v-max"}),
}

LOST_FLAGS = {"iterations": 1, "mass": 2, "histogram": 4, "peak": 8}


def gst_defaults(inspect):
    got, learn = {}, {}
    for group, (element, names) in GST.items():
        props = gst_properties(inspect, element)
        if props is None:
            return None, None
        got[group] = {}
        for field, prop in names.items():
            if prop not in props:
                fail(f"{element}: no property {prop}")
                continue
            v = gst_value(props[prop])
            if field == "lost_criteria" and isinstance(v, str):
                v = sum(LOST_FLAGS[f] for f in v.split("+"))
            got[group][field] = v
        if "learn-frames" in props:
            learn[element] = gst_value(props["learn-frames"])
    return got, learn


# ---- the comparison ----------------------------------------------------------------------------------

def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b) and type(a) is type(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
    return a == b


def compare(library, interfaces):
    checked = 0
    for group, fields in library.items():
        for field, want in fields.items():
            expected, reason = want, None
            if (group, field) in EXCEPTIONS:
                expected, reason = EXCEPTIONS[(group, field)]
                if same(expected, want):
                    fail(f"{group}.{field}: listed as a deliberate difference, but the library's default is "
                         f"{want!r} too: take it off the list")
            for name, got in interfaces.items():
                if field not in got.get(group, {}):
                    continue
                value = got[group][field]
                checked += 1
                if value == LIBRARY and reason is None:
                    continue
                if not same(value, expected) and reason:
                    fail(f"{group}.{field}: {name} defaults to {value!r}, not {expected!r}, the value every "
                         f"interface takes instead of the library's {want!r}: {reason}")
                elif not same(value, expected):
                    fail(f"{group}.{field}: {name} defaults to {value!r}, the library to {want!r}")
    return checked


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--glcv", required=True)
    ap.add_argument("--gst", action="store_true", help="the plugin was built: its elements must be found")
    ap.add_argument("--gst-inspect", default=shutil.which("gst-inspect-1.0"))
    ap.add_argument("--track-header",
                    default=os.path.join(os.path.dirname(__file__), "..", "..", "include", "glcv", "track.h"))
    a = ap.parse_args()

    library = library_defaults()
    library["tracker"].update(track_limits(a.track_header))
    interfaces = {"Python": python_defaults(), "glcv (its --help)": cli_defaults(a.glcv)}
    learn, gst = {}, None
    if a.gst_inspect and os.environ.get("GST_PLUGIN_PATH"):
        gst, learn = gst_defaults(a.gst_inspect)
    if gst is not None:
        interfaces["GStreamer (gst-inspect-1.0)"] = gst
    elif a.gst:
        fail(f"gst-inspect-1.0 ({a.gst_inspect}) finds no glcv elements in GST_PLUGIN_PATH "
             f"({os.environ.get('GST_PLUGIN_PATH')}), though the plugin was built")
    else:
        print("test_defaults: no GStreamer plugin, gst-inspect-1.0 or GST_PLUGIN_PATH: GStreamer not compared")

    checked = compare(library, interfaces)
    # Learning from frames is the elements' (the tool and Python take the count from the caller):
    # both elements learn alike.
    if len(set(map(str, learn.values()))) > 1:
        fail("learn-frames: " + ", ".join(f"{e} defaults to {v}" for e, v in learn.items()))
    elif learn:
        checked += len(learn)
    for group, fields in library.items():
        print(f"{group}: " + ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                                       for k, v in fields.items()))
    if learn:
        print("learn-frames: " + ", ".join(f"{e} {v}" for e, v in learn.items()))
    print(f"test_defaults: {checked} defaults of {', '.join(interfaces)} compared, {len(FAILURES)} differ")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
