"""The tracker (include/glcv/track.h): correlation filters (DCF) or CAMSHIFT, and histograms."""
import collections

import numpy as np

from . import _core
from ._lib import ffi, lib

MAX_BINS = 4096
_WINDOWS = {"opencv": 1, "paper": 2, "adaptive": 3}
_METHODS = {"camshift": 1, "dcf": 2}
_RECOVERY = {"frame": 1, "none": 2}

TrackResult = collections.namedtuple(
    "TrackResult", "id stream cx cy width height angle bbox window iterations lost reasons "
                   "m00 m10 m01 m11 m20 m02 measured distance peak")
TrackResult.__doc__ = """One object's result for the last frame (glcv_track_result): the rotated
box (cx, cy, width, height, angle), its bounding box bbox and the next search window as
(x, y, width, height), the mean-shift iterations, lost and reasons (glcv_track_lost bits: 1
iterations, 2 mass, 4 histogram, 8 peak), the moments and the window they were measured in, the
Bhattacharyya distance to the model (CAMSHIFT), and the correlation peak's peak-to-sidelobe ratio
(DCF; -1 with CAMSHIFT)."""


def _rect_tuple(r):
    return (r.x, r.y, r.width, r.height)


def hist_struct(hist, what="hist"):
    """A glcv_track_hist from a 2-D array of hue_bins x sat_bins values 0..255 (1-D: hue only)."""
    if not isinstance(hist, np.ndarray):
        raise _core.invalid(f"{what}: a numpy array of hue_bins x sat_bins values, not {type(hist).__name__}")
    if hist.ndim == 1:
        hist = hist.reshape(-1, 1)
    if hist.ndim != 2 or not 1 <= hist.size <= MAX_BINS:
        raise _core.invalid(f"{what}: shape {hist.shape}: (hue_bins,) or (hue_bins, sat_bins), at most "
                            f"{MAX_BINS} bins")
    if not np.issubdtype(hist.dtype, np.number) or np.issubdtype(hist.dtype, np.complexfloating):
        raise _core.invalid(f"{what}: dtype {hist.dtype}: real numbers 0..255")
    h = ffi.new("glcv_track_hist *")
    h.hue_bins, h.sat_bins = hist.shape
    values = np.frombuffer(ffi.buffer(h.value), np.float32)
    values[:hist.size] = hist.astype(np.float32).ravel()
    return h


def hist_array(h):
    """The hue_bins x sat_bins float32 array of a glcv_track_hist."""
    n = h.hue_bins * h.sat_bins
    return np.frombuffer(ffi.buffer(h.value), np.float32)[:n].reshape(h.hue_bins, h.sat_bins).copy()


def save_hists(path, hists):
    """Writes histograms (a sequence of arrays) to a histogram file (glcv_track_hist_save)."""
    from .image import _path
    hists = list(hists)
    if not hists:
        raise _core.invalid("save_hists: no histogram")
    structs = ffi.new("glcv_track_hist[]", len(hists))
    for i, a in enumerate(hists):
        ffi.memmove(ffi.addressof(structs, i), hist_struct(a, f"hists[{i}]"), ffi.sizeof("glcv_track_hist"))
    _core.call("glcv_track_hist_save", _path(path, "save_hists"), structs, len(hists),
               ffi.new("glcv_logger *", _core.logger()))


def load_hists(path, capacity=1024):
    """Reads the histograms of a histogram file: a list of hue_bins x sat_bins arrays."""
    from .image import _path
    capacity = _core.number(capacity, "capacity", int)
    if capacity < 1:
        raise _core.invalid(f"load_hists: capacity {capacity}: at least 1")
    structs, count = ffi.new("glcv_track_hist[]", capacity), ffi.new("int *")
    _core.call("glcv_track_hist_load", _path(path, "load_hists"), structs, capacity, count,
               ffi.new("glcv_logger *", _core.logger()))
    return [hist_array(structs[i]) for i in range(min(count[0], capacity))]


def hist_distance(a, b):
    """The Bhattacharyya distance of two histograms of the same bins (0 same, 1 disjoint)."""
    out = ffi.new("double *")
    _core.call("glcv_track_hist_distance", hist_struct(a, "a"), hist_struct(b, "b"), out)
    return float(out[0])


def box_points(cx, cy, width, height, angle):
    """The four corners of a rotated box, a 4x2 float32 array (as cv::RotatedRect::points)."""
    x, y = ffi.new("float[4]"), ffi.new("float[4]")
    lib.glcv_track_box_points(*(_core.number(v, "box") for v in (cx, cy, width, height, angle)), x, y)
    return np.array([[x[i], y[i]] for i in range(4)], np.float32)


def box_bounds(cx, cy, width, height, angle, frame_width, frame_height):
    """The bounding box (x, y, width, height) of a rotated box, clipped to the frame."""
    r = lib.glcv_track_box_bounds(*(_core.number(v, "box") for v in (cx, cy, width, height, angle)),
                                  _core.number(frame_width, "frame_width", int),
                                  _core.number(frame_height, "frame_height", int))
    return _rect_tuple(r)


class Tracker(_core.Object):
    """Tracking of objects through frames of width x height, by correlation filters ("dcf", the
    default, as glcv track's and glcvtrack's) or by CAMSHIFT ("camshift").

        tr = glcv.Tracker(320, 240, engine="cpu", window="adaptive")
        oid = tr.add(None, (x, y, w, h))                 # dcf: learned from the next frame
        # camshift: tr.add(tr.compute_hist(frame, (x, y, w, h)), (x, y, w, h))
        for frame in frames:
            for r in tr.track(frame):                     # TrackResult per object
                print(r.id, r.bbox, r.lost)

    method "dcf" (a box: its filters learn from the next frame tracked) or "camshift" (a model
    histogram). engine "auto" (CUDA when a device can be used, else the CPU), "cuda" or "cpu".
    window
    "adaptive" (the default, as glcv track's and glcvtrack's: an upright box of guarded size and a
    Kalman filter that predicts the search window), "opencv" (cv::CamShift's rotated box, the C
    struct's default) or "paper". Histograms are
    hue_bins x sat_bins float32 arrays of values 0..255. Frames: HxWx3 or HxWx4 uint8 with
    order "rgb" or "bgr" (this matters: hue), masks HxW uint8 (nonzero = foreground). None keeps
    a parameter's default (see glcv_track_params).
    """

    _kind = "track"

    def __init__(self, width, height, engine="auto", streams=1, max_objects=None, method="dcf", hue_bins=None,
                 sat_bins=None, window="adaptive", epsilon=None, max_iterations=None, aspect=None,
                 min_mass=None, max_distance=None, lost_criteria=None, recovery="frame",
                 recovery_interval=None, min_window_area=None, reset_width=None, cuda_device=0,
                 cuda_devices=1, context=None):
        p = ffi.new("glcv_track_params *")
        p.width = _core.number(width, "width", int)
        p.height = _core.number(height, "height", int)
        p.streams = _core.number(streams, "streams", int)
        if p.streams < 1:
            raise _core.invalid(f"streams {streams}: at least 1", "Tracker")
        p.engine = _core.engine(engine)
        if method not in _METHODS:
            raise _core.invalid(f"method {method!r}: dcf or camshift", "Tracker")
        p.method = _METHODS[method]
        if window not in _WINDOWS:
            raise _core.invalid(f"window {window!r}: opencv, paper or adaptive", "Tracker")
        p.window = _WINDOWS[window]
        if recovery not in _RECOVERY:
            raise _core.invalid(f"recovery {recovery!r}: frame or none", "Tracker")
        p.recovery = _RECOVERY[recovery]
        for name, value, kind in (("max_objects", max_objects, int), ("hue_bins", hue_bins, int),
                                  ("sat_bins", sat_bins, int), ("epsilon", epsilon, float),
                                  ("max_iterations", max_iterations, int), ("aspect", aspect, float),
                                  ("min_mass", min_mass, float), ("max_distance", max_distance, float),
                                  ("recovery_interval", recovery_interval, int),
                                  ("min_window_area", min_window_area, int), ("reset_width", reset_width, int)):
            if value is not None:
                setattr(p, name, _core.number(value, name, kind))
        if lost_criteria is not None:
            lc = _core.number(lost_criteria, "lost_criteria", int)
            if not 0 <= lc <= 15:
                raise _core.invalid(f"lost_criteria {lost_criteria}: glcv_track_lost bits 0..15", "Tracker")
            p.lost_criteria = lc
        p.cuda_device = _core.number(cuda_device, "cuda_device", int)
        p.cuda_devices = _core.number(cuda_devices, "cuda_devices", int)
        p.logger = _core.logger()
        self._create(p, context)
        self._size = (p.width, p.height)
        self._streams = p.streams

    def get_params(self):
        """The resolved parameters as a dict (`engine` the one in use)."""
        p = ffi.new("glcv_track_params *")
        self._call("get_params", p)
        return {"width": p.width, "height": p.height, "streams": p.streams, "max_objects": p.max_objects,
                "method": {v: k for k, v in _METHODS.items()}.get(p.method, "?"),
                "hue_bins": p.hue_bins, "sat_bins": p.sat_bins, "epsilon": p.epsilon,
                "max_iterations": p.max_iterations,
                "window": {v: k for k, v in _WINDOWS.items()}.get(p.window, "?"), "aspect": p.aspect,
                "min_mass": p.min_mass, "max_distance": p.max_distance, "lost_criteria": p.lost_criteria,
                "recovery": {v: k for k, v in _RECOVERY.items()}.get(p.recovery, "?"),
                "recovery_interval": p.recovery_interval, "min_window_area": p.min_window_area,
                "reset_width": p.reset_width, "engine": _core.engine_name(p.engine),
                "cuda_device": p.cuda_device, "cuda_devices": p.cuda_devices}

    engine = property(lambda self: self.get_params()["engine"], doc="the engine in use")

    def set_limits(self, s_min, v_min, v_max):
        """Bradski's limits: a pixel counts where s_min <= S and v_min <= V <= v_max."""
        self._call("set_limits", _core.number(s_min, "s_min", int), _core.number(v_min, "v_min", int),
                   _core.number(v_max, "v_max", int))

    def _mask(self, mask, what):
        if mask is None:
            return None, ffi.NULL
        if not isinstance(mask, np.ndarray) or mask.ndim != 2 and not (mask.ndim == 3 and mask.shape[2] == 1):
            raise _core.invalid(f"{what}: an HxW uint8 array or None")
        return _core.frame_struct(mask, what, "rgb", True, self._size)

    def compute_hist(self, frame, region, mask=None, order="rgb"):
        """The model histogram of `region` (x, y, width, height) of a frame, counting pixels
        where `mask` is nonzero (None: all); hue_bins x sat_bins float32, largest bin 255."""
        fa, fimg = _core.frame_struct(frame, "compute_hist", order, gray=False, size=self._size)
        ma, mimg = self._mask(mask, "compute_hist: mask")
        out = ffi.new("glcv_track_hist *")
        self._call("hist_compute", fimg, mimg, _core.rect(region, "region"), out)
        del fa, ma
        return hist_array(out)

    def weight_background(self, hist, frame, region, order="rgb"):
        """The background-weighted version of `hist` (Comaniciu et al. 2003): bins common in the
        ring around `region` lose weight. Returns a new array."""
        h = hist_struct(hist)
        fa, fimg = _core.frame_struct(frame, "weight_background", order, gray=False, size=self._size)
        self._call("hist_weight_background", fimg, _core.rect(region, "region"), h)
        del fa
        return hist_array(h)

    def add(self, hist, window, stream=0):
        """Adds an object with a model histogram (None with "dcf") and its first search window
        (with "dcf": its box, learned from the next frame); returns its id."""
        out = ffi.new("int *")
        self._call("add_to_stream", _core.number(stream, "stream", int),
                   ffi.NULL if hist is None else hist_struct(hist), _core.rect(window, "window"), out)
        return out[0]

    def remove(self, object_id):
        self._call("remove", _core.number(object_id, "id", int))

    def set_window(self, object_id, window):
        """Sets an object's search window for the next frame and clears its lost state."""
        self._call("set_window", _core.number(object_id, "id", int), _core.rect(window, "window"))

    def get_hist(self, object_id):
        """An object's model histogram."""
        out = ffi.new("glcv_track_hist *")
        self._call("get_hist", _core.number(object_id, "id", int), out)
        return hist_array(out)

    def track(self, frames, masks=None, order="rgb"):
        """Tracks every object in a frame (with streams > 1: a sequence of one frame per stream;
        masks None or one HxW uint8 mask per frame) and returns the results, a list of
        TrackResult in increasing id order."""
        self._h  # noqa: B018
        arrays, structs = _core.frames_structs(frames, "track", order, False, self._size, self._streams)
        margs, mstructs = None, ffi.NULL
        if masks is not None:
            if self._streams == 1 and isinstance(masks, np.ndarray):
                masks = [masks]
            masks = list(masks)
            if any(not isinstance(m, np.ndarray) or m.ndim != 2 for m in masks):
                raise _core.invalid("track: masks must be HxW uint8 arrays")
            margs, mstructs = _core.frames_structs(masks, "track: masks", "rgb", True, self._size,
                                                   self._streams)
        self._call("frames", structs, mstructs, self._streams)
        del arrays, margs
        return self.results()

    def results(self):
        """The results of the last frame (or set), as track() returns them."""
        cap = self.get_params()["max_objects"]
        out, count = ffi.new("glcv_track_result[]", cap), ffi.new("int *")
        self._call("results", out, cap, count)
        res = []
        for i in range(min(count[0], cap)):
            r = out[i]
            res.append(TrackResult(r.id, r.stream, r.cx, r.cy, r.width, r.height, r.angle, _rect_tuple(r.bbox),
                                   _rect_tuple(r.window), r.iterations, r.lost, r.reasons, r.m00, r.m10, r.m01,
                                   r.m11, r.m20, r.m02, _rect_tuple(r.measured), r.distance, r.peak))
        return res

    def __repr__(self):
        if self.closed:
            return "<glcv.Tracker closed>"
        p = self.get_params()
        return f"<glcv.Tracker {p['width']}x{p['height']} {p['method']} engine {p['engine']}>"
