"""The segmenter (include/glcv/segment.h): colinearity + darkness compensation + MRF."""
import numpy as np

from . import _core
from ._lib import ffi

_PRESETS = {"calibrated": 1, "paper": 2}


class Segmenter(_core.Object):
    """Foreground/background segmentation of frames against a background.

        seg = glcv.Segmenter(320, 240, engine="cpu")
        seg.set_background(background)          # or seg.learn(frames)
        mask = seg.segment(frame)                # HxW uint8: 255 foreground, 0 background

    engine: "auto" (GL when a context is current, else the CPU; the GL engine timed fastest),
    "fragment", "compute" (need a current GL context) or "cpu". preset "calibrated" or "paper".
    ts, odc, b1, b2, iterations, adapt_rate: None for the preset's value; they are also
    properties, as are seed (write) and the read-only width, height, engine and preset.
    Frames: HxWx3 or HxWx4 uint8 arrays, order "rgb" or "bgr" (the result is the same: the
    rule takes dot products of colour vectors). context: the Context of a GL engine, kept
    alive as long as the segmenter. Thread rule: one object may be shared between threads; a
    GL engine needs its context current on the calling thread.
    """

    _kind = "segment"

    def __init__(self, width, height, engine="auto", preset="calibrated", ts=None, odc=None, b1=None,
                 b2=None, iterations=None, seed=0, adapt_rate=None, fixed_parameters=False, timing=False,
                 context=None):
        if preset not in _PRESETS:
            raise _core.invalid(f"preset {preset!r}: 'calibrated' or 'paper'", "Segmenter")
        p = ffi.new("glcv_segment_params *")
        p.width = _core.number(width, "width", int)
        p.height = _core.number(height, "height", int)
        p.engine = _core.engine(engine)
        p.preset = _PRESETS[preset]
        p.seed = self._seed(seed)
        p.fixed_parameters = 1 if fixed_parameters else 0
        p.timing = 1 if timing else 0
        p.logger = _core.logger()
        zeros = {}
        for name, value in (("ts", ts), ("odc", odc), ("b1", b1), ("b2", b2), ("adapt_rate", adapt_rate)):
            if value is not None:
                value = _core.number(value, name)
                setattr(p, name, value)
                if value == 0:
                    zeros[name] = value
        if iterations is not None:
            p.iterations = _core.number(iterations, "iterations", int)
            if p.iterations == 0:
                zeros["iterations"] = 0
        self._create(p, context)
        for name, value in zeros.items():  # zero means "default" in the params: set after creation
            setattr(self, name, value)

    @staticmethod
    def _seed(seed):
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise _core.invalid(f"seed: an int, not {seed!r}")
        seed = int(seed)
        if not 0 <= seed < 2**64:
            raise _core.invalid(f"seed {seed}: 0..2^64-1")
        return seed

    # ---- parameters ----
    def get_params(self):
        """The resolved parameters as a dict (the engine in use, the preset's values filled in)."""
        p = ffi.new("glcv_segment_params *")
        self._call("get_params", p)
        return {"width": p.width, "height": p.height, "ts": p.ts, "odc": p.odc, "b1": p.b1, "b2": p.b2,
                "iterations": p.iterations, "seed": int(p.seed), "engine": _core.engine_name(p.engine),
                "adapt_rate": p.adapt_rate, "timing": bool(p.timing),
                "fixed_parameters": bool(p.fixed_parameters),
                "preset": {1: "calibrated", 2: "paper"}.get(p.preset, "?")}

    def _setter(name, kind=float):  # noqa: N805 - builds the properties below
        def get(self):
            return self.get_params()[name]

        def set(self, value):
            self._call(f"set_{name}", _core.number(value, name, kind))
        return property(get, set, doc=f"the parameter {name} (glcv_segment_set_{name})")

    ts = _setter("ts")
    odc = _setter("odc")
    b1 = _setter("b1")
    b2 = _setter("b2")
    iterations = _setter("iterations", int)
    adapt_rate = _setter("adapt_rate")
    del _setter

    @property
    def seed(self):
        return self.get_params()["seed"]

    @seed.setter
    def seed(self, value):
        """Restarts the subset-order PRNG from `value` (0 = the default seed)."""
        self._call("set_seed", self._seed(value))

    width = property(lambda self: self.get_params()["width"])
    height = property(lambda self: self.get_params()["height"])
    engine = property(lambda self: self.get_params()["engine"], doc="the engine in use")
    preset = property(lambda self: self.get_params()["preset"])

    @property
    def size(self):
        p = self.get_params()
        return p["width"], p["height"]

    # ---- background ----
    def set_background(self, background, order="rgb"):
        """Sets the background (HxWx3 or HxWx4) and clears the temporal prior."""
        a, img = _core.frame_struct(background, "set_background", order, gray=False, size=self.size)
        self._call("set_background", img)
        del a

    def learn(self, frames, order="rgb"):
        """Learns the background from frames (an iterable of HxWx3/HxWx4 arrays):
        learn_begin, learn_add of each, learn_end (which calibrates with the calibrated preset).
        When a frame is refused or the iterable raises, learning is abandoned (the background and
        parameters stay as they were) and the error is raised; no frame at all is StateError."""
        self.learn_begin()
        try:
            for f in frames:
                self.learn_add(f, order)
        except BaseException:
            self._abandon("learn")
            raise
        self.learn_end()  # ends learning even when it raises

    def _abandon(self, what):
        """Ends a learning or calibration without a result: begin drops the frames added, end
        with none leaves everything as it was (StateError, expected). Errors here (the object
        closed meanwhile) must not hide the one being raised."""
        try:
            self._call(what + "_begin")
            self._call(what + "_end", *([ffi.new("float *")] if what == "calibrate" else []))
        except _core.Error:
            pass

    def learn_begin(self):
        self._call("learn_begin")

    def learn_add(self, frame, order="rgb"):
        a, img = _core.frame_struct(frame, "learn_add", order, gray=False, size=self.size)
        self._call("learn_add", img)
        del a

    def learn_end(self):
        self._call("learn_end")

    def calibrate(self, frames, order="rgb"):
        """Calibrates the parameters not given explicitly on frames of the scene against the
        current background (glcv_segment_calibrate_*); returns the noise level g."""
        self._call("calibrate_begin")
        try:
            for f in frames:
                a, img = _core.frame_struct(f, "calibrate", order, gray=False, size=self.size)
                self._call("calibrate_add", img)
        except BaseException:
            self._abandon("calibrate")
            raise
        g = ffi.new("float *")
        self._call("calibrate_end", g)
        return float(g[0])

    def background(self):
        """The background the rule uses, HxWx3 RGB."""
        w, h = self.size
        out = np.empty((h, w, 3), np.uint8)
        self._call("read_background", _core.image_struct(out, _core.RGB8))
        return out

    def noise(self):
        """The per-pixel noise factors k(x) in use, HxW float32: the last calibration's, as they have
        followed the scene since (glcv_segment_calibrate_end)."""
        w, h = self.size
        out = np.empty((h, w), np.float32)
        self._call("read_noise", ffi.cast("float *", out.ctypes.data))
        return out

    # ---- frames ----
    def segment(self, frame, order="rgb", out=None):
        """Segments a frame (HxWx3 or HxWx4) and returns its mask: HxW uint8, 255 foreground, 0
        background (into `out` when given: a writable HxW uint8 array)."""
        a, img = _core.frame_struct(frame, "segment", order, gray=False, size=self.size)
        self._call("frame", img, 1)
        del a
        return self.read_mask(out)

    apply = segment

    def read_mask(self, out=None):
        """The last mask, HxW uint8 (into `out` when given)."""
        w, h = self.size
        if out is None:
            out = np.empty((h, w), np.uint8)
        elif not isinstance(out, np.ndarray) or out.dtype != np.uint8 or out.shape != (h, w) or \
                not out.flags.writeable or out.strides[1] != 1:
            raise _core.invalid(f"read_mask: out must be a writable {h}x{w} uint8 array with packed rows")
        self._call("read_mask", _core.image_struct(out, _core.GRAY8))
        return out

    def reset(self):
        """Forgets the temporal prior: the next frame starts from an all-background mask."""
        self._call("reset")

    def timings(self, wait=True):
        """Per-pass GPU times of the last frame whose timer queries are complete (timing=True), in
        ms, as a dict {pass: ms}."""
        out, count = ffi.new("glcv_timing[]", 64), ffi.new("int *")
        self._call("timings", out, 64, count, 1 if wait else 0)
        return _core.timings(out, min(count[0], 64))

    def __repr__(self):
        if self.closed:
            return "<glcv.Segmenter closed>"
        p = self.get_params()
        return f"<glcv.Segmenter {p['width']}x{p['height']} engine {p['engine']} preset {p['preset']}>"
