"""Background subtraction and frame differencing (include/glcv/bgsub.h), for one camera or many
cameras of one size."""
import numpy as np

from . import _core
from ._lib import ffi, lib

_PASSES = {"single": 1, "multi": 2}
_UPLOADS = {"copy": 1, "stream": 2, "stream_blocks": 3, "stream_fused": 4}


class BackgroundSubtractor(_core.Object):
    """VSAM adaptive background subtraction ("vsam") or two- and three-frame differencing
    ("diff2", "diff3") of `streams` cameras of width x height.

        sub = glcv.BackgroundSubtractor(320, 240, method="vsam", engine="cpu")
        sub.learn(first_frames)                 # optional: B and T from the scene
        mask = sub.apply(frame)                  # HxW uint8, 255 foreground

    format: the layout frames are kept in ("rgb" default, "gray", "rgba", "bgr", "bgra"); frames
    of another layout are converted. With streams > 1, apply/process take a sequence of one
    frame per stream and return a list of masks. None leaves a parameter at its default
    (alpha 0.92, c 3, min_threshold 20, absorb 100, vote 5; vote -1: no vote). Thread rule as
    Segmenter's.
    """

    _kind = "bgsub"

    def __init__(self, width, height, method="vsam", streams=1, format="rgb", gray=False, alpha=None,
                 c=None, min_threshold=None, absorb=None, vote=None, engine="auto", passes="single",
                 upload=None, download=False, context=None):
        p = ffi.new("glcv_bgsub_params *")
        p.width = _core.number(width, "width", int)
        p.height = _core.number(height, "height", int)
        p.streams = _core.number(streams, "streams", int)
        if p.streams < 1:
            raise _core.invalid(f"streams {streams}: at least 1", "BackgroundSubtractor")
        m = ffi.new("int *")
        if not isinstance(method, str) or lib.glcv_bgsub_method_parse(method.encode(), m) != 0:
            raise _core.invalid(f"method {method!r}: vsam, diff2 or diff3", "BackgroundSubtractor")
        p.method = m[0]
        p.format = _core.pixel_format(format)
        p.gray = 1 if gray else 0
        for name, value, kind in (("alpha", alpha, float), ("c", c, float), ("min_threshold", min_threshold, float),
                                  ("absorb", absorb, int), ("vote", vote, int)):
            if value is not None:
                setattr(p, name, _core.number(value, name, kind))
        p.engine = _core.engine(engine)
        if passes not in _PASSES:
            raise _core.invalid(f"passes {passes!r}: single or multi", "BackgroundSubtractor")
        p.passes = _PASSES[passes]
        if upload is not None and upload not in _UPLOADS:
            raise _core.invalid(f"upload {upload!r}: None or one of {', '.join(_UPLOADS)}", "BackgroundSubtractor")
        p.upload = _UPLOADS.get(upload, 0)
        p.download = 1 if download else 0
        p.logger = _core.logger()
        self._create(p, context)
        self._streams = p.streams
        self._size = (p.width, p.height)

    def get_params(self):
        """The resolved parameters as a dict (engine in use, packed 1 or -1)."""
        p = ffi.new("glcv_bgsub_params *")
        self._call("get_params", p)
        fmt = {v: k for k, v in _core._FORMATS.items()}
        return {"width": p.width, "height": p.height, "streams": p.streams,
                "method": ffi.string(lib.glcv_bgsub_method_string(p.method)).decode(),
                "format": fmt.get(p.format, "?"), "gray": bool(p.gray), "alpha": p.alpha, "c": p.c,
                "min_threshold": p.min_threshold, "absorb": p.absorb, "vote": p.vote,
                "engine": _core.engine_name(p.engine),
                "passes": {1: "single", 2: "multi"}.get(p.passes, "?"),
                "upload": {v: k for k, v in _UPLOADS.items()}.get(p.upload, "?"),
                "packed": p.packed, "download": bool(p.download)}

    engine = property(lambda self: self.get_params()["engine"], doc="the engine in use")
    streams = property(lambda self: self._streams)

    def _set(self, frames, order, what):
        return _core.frames_structs(frames, what, order, True, self._size, self._streams)

    def process(self, frames, order="rgb"):
        """Processes one frame set (one frame per stream; a single array with one stream)
        without reading the masks."""
        self._h  # noqa: B018
        arrays, structs = self._set(frames, order, "process")
        self._call("frames", structs, self._streams, 1)
        del arrays

    def apply(self, frames, order="rgb"):
        """Processes one frame set and returns its masks: one HxW uint8 array with one stream,
        else a list of them (255 foreground, 0 background). The first set only fills the history
        (empty masks)."""
        self.process(frames, order)
        return self.read_masks()

    def read_masks(self, age=0):
        """The masks of the newest set (age 0) or of the one or two before (1, 2; needs
        download=True)."""
        w, h = self._size
        self._h  # noqa: B018
        masks = [np.empty((h, w), np.uint8) for _ in range(self._streams)]
        structs = ffi.new("glcv_image[]", self._streams)
        for i, m in enumerate(masks):
            _core.image_struct(m, _core.GRAY8, structs[i])
        self._call("read_masks", _core.number(age, "age", int), structs, self._streams)
        return masks[0] if self._streams == 1 else masks

    def learn(self, sets, order="rgb"):
        """Learns B and T from frame sets (an iterable; with one stream, of arrays). When a set is
        refused or the iterable raises, learning is abandoned (B and T stay as they were) and the
        error is raised; no set at all is StateError."""
        self._call("learn_begin")
        try:
            for s in sets:
                arrays, structs = self._set(s, order, "learn")
                self._call("learn_add", structs, self._streams)
        except BaseException:
            try:  # begin drops the sets added; end with none leaves B and T as they were
                self._call("learn_begin")
                self._call("learn_end")
            except _core.Error:
                pass
            raise
        self._call("learn_end")  # ends learning even when it raises

    def state(self, stream=0):
        """(background, threshold) of a stream as float32 arrays, HxW or HxWx3 (the library keeps
        them in 8.8 fixed point: value * 256)."""
        w, h = self._size
        self._h  # noqa: B018
        channels = 1 if self.get_params()["gray"] else 3
        b = np.empty((h, w, channels), np.uint16)
        t = np.empty((h, w, channels), np.uint16)
        self._call("read_state", _core.number(stream, "stream", int), ffi.cast("uint16_t *", b.ctypes.data),
                   ffi.cast("uint16_t *", t.ctypes.data))
        shape = (h, w) if channels == 1 else (h, w, 3)
        return (b.reshape(shape) / np.float32(256)).astype(np.float32), \
            (t.reshape(shape) / np.float32(256)).astype(np.float32)

    def reset(self):
        """Forgets the frame history; B and T stay."""
        self._call("reset")

    def __repr__(self):
        if self.closed:
            return "<glcv.BackgroundSubtractor closed>"
        p = self.get_params()
        return f"<glcv.BackgroundSubtractor {p['method']} {p['width']}x{p['height']} x{p['streams']} engine {p['engine']}>"
