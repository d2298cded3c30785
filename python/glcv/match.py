"""Template matching (include/glcv/match.h) and Pearson correlation (include/glcv/correlate.h)."""
import collections

import numpy as np

from . import _core
from ._lib import ffi, lib

MatchHit = collections.namedtuple("MatchHit", "x y cx cy score")
MatchHit.__doc__ = "A match: the template's top-left corner (x, y), its centre (cx, cy), the score."


def _metric(name):
    out = ffi.new("int *")
    if not isinstance(name, str) or lib.glcv_match_metric_parse(name.encode(), out) != 0:
        raise _core.invalid(f"metric {name!r}: sad, ssd, linf or zncc")
    return out[0]


class Matcher(_core.Object):
    """A template slid over images of width x height, one score per position.

        m = glcv.Matcher(640, 480, metric="zncc", engine="cpu")
        m.set_template(templ)
        scores = m.match(image)          # HxW float64 score map
        best = m.best(3)                 # [MatchHit(x, y, cx, cy, score), ...]

    format: the channels matched ("gray" default, "rgb", "bgr", "rgba", "bgra"); images and
    templates of any layout are converted. metric "sad" (default), "ssd", "linf", "zncc" (also a
    property). engine "auto", "cuda" or "cpu".
    """

    _kind = "match"

    def __init__(self, width, height, metric="sad", format="gray", engine="auto", nms_distance=None,
                 threads=0, cuda_device=0, cuda_devices=1, context=None):
        p = ffi.new("glcv_match_params *")
        p.width = _core.number(width, "width", int)
        p.height = _core.number(height, "height", int)
        p.format = _core.pixel_format(format)
        p.metric = _metric(metric)
        p.engine = _core.engine(engine)
        if nms_distance is not None:
            p.nms_distance = _core.number(nms_distance, "nms_distance", int)
        p.threads = _core.number(threads, "threads", int)
        p.cuda_device = _core.number(cuda_device, "cuda_device", int)
        p.cuda_devices = _core.number(cuda_devices, "cuda_devices", int)
        p.logger = _core.logger()
        self._create(p, context)
        self._size = (p.width, p.height)

    def get_params(self):
        p = ffi.new("glcv_match_params *")
        self._call("get_params", p)
        return {"width": p.width, "height": p.height, "format": p.format,
                "metric": ffi.string(lib.glcv_match_metric_string(p.metric)).decode(),
                "engine": _core.engine_name(p.engine), "nms_distance": p.nms_distance, "threads": p.threads}

    engine = property(lambda self: self.get_params()["engine"], doc="the engine in use")

    @property
    def metric(self):
        return self.get_params()["metric"]

    @metric.setter
    def metric(self, name):
        self._call("set_metric", _metric(name))

    def set_template(self, template, mask=None, order="rgb"):
        """Sets the template (any layout, 1x1 up to the image's size) and an optional HxW uint8
        mask of its size (nonzero = the pixel counts)."""
        ta, timg = _core.frame_struct(template, "set_template", order)
        ma, mimg = None, ffi.NULL
        if mask is not None:
            if not isinstance(mask, np.ndarray) or mask.ndim != 2:
                raise _core.invalid("set_template: mask must be an HxW uint8 array")
            ma, mimg = _core.frame_struct(mask, "set_template: mask")
        self._call("set_template", timg, mimg)
        del ta, ma

    def set_roi(self, roi):
        """Restricts the search to (x, y, width, height); None: the whole image."""
        if roi is None:
            self._call("set_roi", ffi.NULL)
        else:
            self._call("set_roi", ffi.new("glcv_rect *", _core.rect(roi, "roi")))

    def match(self, image, order="rgb"):
        """Matches the template against an image of the object's size; returns the score map
        (HxW float64: +inf, or -inf for zncc, where nothing was evaluated)."""
        self.match_only(image, order)
        return self.scores()

    def match_only(self, image, order="rgb"):
        """Matches without reading the score map (best() and scores() read it)."""
        a, img = _core.frame_struct(image, "match", order, size=self._size)
        self._call("image", img)
        del a

    def scores(self):
        w, h = self._size
        out = np.empty((h, w), np.float64)
        self._call("read_scores", ffi.cast("double *", out.ctypes.data), w)
        return out

    def normalized(self):
        """The last score map scaled for display: HxW float32, 1 best, 0 worst."""
        w, h = self._size
        out = np.empty((h, w), np.float32)
        self._call("read_normalized", ffi.cast("float *", out.ctypes.data), w)
        return out

    def best(self, k=1):
        """The k best positions of the last map, best first (MatchHit tuples)."""
        k = _core.number(k, "k", int)
        if not 1 <= k <= 1 << 20:
            raise _core.invalid(f"best: k {k}: 1..{1 << 20}")
        hits, count = ffi.new("glcv_match_hit[]", k), ffi.new("int *")
        self._call("best", k, hits, count)
        return [MatchHit(hits[i].x, hits[i].y, hits[i].cx, hits[i].cy, hits[i].score)
                for i in range(min(count[0], k))]


class Correlator(_core.Object):
    """Pearson's correlation coefficient of one reference image against many of its size.

        c = glcv.Correlator(320, 240, engine="cpu")
        c.set_reference(ref)
        r = c.correlate([img1, img2])    # float64 array of coefficients in [-1, 1]

    format "gray" (default) or "rgb": the samples correlated (inputs of any layout are
    converted). engine "auto", "cuda" or "cpu".
    """

    _kind = "correlate"

    def __init__(self, width, height, format="gray", engine="auto", threads=0, batch=0, cuda_device=0,
                 cuda_devices=1, context=None):
        p = ffi.new("glcv_correlate_params *")
        p.width = _core.number(width, "width", int)
        p.height = _core.number(height, "height", int)
        p.format = _core.pixel_format(format)
        p.engine = _core.engine(engine)
        p.threads = _core.number(threads, "threads", int)
        p.batch = _core.number(batch, "batch", int)
        p.cuda_device = _core.number(cuda_device, "cuda_device", int)
        p.cuda_devices = _core.number(cuda_devices, "cuda_devices", int)
        p.logger = _core.logger()
        self._create(p, context)
        self._size = (p.width, p.height)

    def get_params(self):
        p = ffi.new("glcv_correlate_params *")
        self._call("get_params", p)
        return {"width": p.width, "height": p.height, "format": p.format, "engine": _core.engine_name(p.engine),
                "threads": p.threads, "no_simd": bool(p.no_simd), "batch": p.batch}

    engine = property(lambda self: self.get_params()["engine"], doc="the engine in use")

    def set_reference(self, reference, order="rgb"):
        a, img = _core.frame_struct(reference, "set_reference", order, size=self._size)
        self._call("set_reference", img)
        del a

    def _images(self, images, order, what):
        if isinstance(images, np.ndarray):
            raise _core.invalid(f"{what}: a sequence of images (a list), not one array")
        images = list(images)
        if not images:
            raise _core.invalid(f"{what}: no image")
        return _core.frames_structs(images, what, order, True, self._size, len(images))

    def correlate(self, images, order="rgb"):
        """The coefficients of a sequence of images (any layout, the object's size)."""
        self._h  # noqa: B018
        arrays, structs = self._images(images, order, "correlate")
        r = np.empty(len(arrays), np.float64)
        self._call("images", structs, len(arrays), ffi.cast("double *", r.ctypes.data))
        return r

    def correlate_files(self, paths):
        """The coefficients of image files (read and converted by the library)."""
        from .image import _path
        self._h  # noqa: B018
        encoded = [ffi.new("char[]", _path(p, "correlate_files")) for p in paths]
        if not encoded:
            raise _core.invalid("correlate_files: no file")
        r = np.empty(len(encoded), np.float64)
        self._call("files", ffi.new("char *[]", encoded), len(encoded), ffi.cast("double *", r.ctypes.data))
        return r

    def load_bank(self, images, order="rgb"):
        """Copies images into the engine's memory once; run_bank() correlates them."""
        self._h  # noqa: B018
        arrays, structs = self._images(images, order, "load_bank")
        self._call("bank_load", structs, len(arrays))

    def run_bank(self):
        n = self.bank_size
        r = np.empty(max(n, 1), np.float64)
        self._call("bank_run", ffi.cast("double *", r.ctypes.data))
        return r[:n]

    @property
    def bank_size(self):
        return int(self._get("bank_size"))
