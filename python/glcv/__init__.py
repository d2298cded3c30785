"""glcv: GPU video analysis - segmentation, background subtraction, CAMSHIFT tracking, template
matching and correlation - over the C library libglcv (loaded with cffi's ABI mode).

Frames are numpy uint8 arrays: HxWx3 or HxWx4 in RGB order, or BGR with order="bgr"; HxW for
gray. Errors raise glcv.Error (a subclass per status); the library's log lines go to the
"glcv" logger of the logging module. See docs/integration.md ("Python").
"""
from ._core import (Error, InvalidArgumentError, SizeMismatchError, StateError, NoContextError,
                    UnsupportedError, GLError, OutOfMemoryError, FileError, CorruptDataError,
                    CudaError, LimitError, STATUS_NAMES, set_log_function)
from ._lib import library_path
from .bgsub import BackgroundSubtractor
from .context import Context, gl_context_current
from .image import imread, imwrite, imageinfo, max_pixels, set_max_pixels
from .match import Correlator, Matcher, MatchHit
from .segment import Segmenter
from .track import (Tracker, TrackResult, box_bounds, box_points, hist_distance, load_hists,
                    save_hists)

__all__ = ["Error", "InvalidArgumentError", "SizeMismatchError", "StateError", "NoContextError",
           "UnsupportedError", "GLError", "OutOfMemoryError", "FileError", "CorruptDataError",
           "CudaError", "LimitError", "STATUS_NAMES", "set_log_function", "library_path",
           "BackgroundSubtractor", "Context", "gl_context_current", "imread", "imwrite", "imageinfo",
           "max_pixels", "set_max_pixels", "Correlator", "Matcher", "MatchHit", "Segmenter",
           "Tracker", "TrackResult", "box_bounds", "box_points", "hist_distance", "load_hists",
           "save_hists", "status_string"]


def status_string(status):
    """The library's short text of a status code ("invalid argument")."""
    from ._lib import ffi, lib
    return ffi.string(lib.glcv_status_string(int(status))).decode()
