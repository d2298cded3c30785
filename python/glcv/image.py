"""Image files (include/glcv/image.h): imread, imwrite, imageinfo and the decoder's pixel limit."""
import os

import numpy as np

from . import _core
from ._lib import ffi, lib

_READ_FORMATS = {None: 0, "gray": _core.GRAY8, "rgb": _core.RGB8, "rgba": _core.RGBA8,
                 "bgr": _core.RGB8, "bgra": _core.RGBA8}


def _path(path, what):
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise _core.invalid(f"{what}: a path, not {path!r}")
    path = os.fsencode(path)
    if not path or b"\0" in path:
        raise _core.invalid(f"{what}: {path!r} is not a path")
    return path


def imread(path, mode="rgb"):
    """Reads a PNG, JPEG, BMP, TGA or PNM file (glcv_image_load) into a new array: mode "rgb"
    (HxWx3, the default), "bgr" (HxWx3, as cv2.imread), "rgba" or "bgra" (HxWx4), "gray" (HxW),
    or None (the file's own channels: HxW, HxWx3 or HxWx4 in RGB order).
    Raises FileError (missing or unreadable), CorruptDataError, LimitError, InvalidArgumentError."""
    if mode not in _READ_FORMATS:
        raise _core.invalid(f"imread: mode {mode!r}: gray, rgb, rgba, bgr, bgra or None")
    img = ffi.new("glcv_image *")
    _core.call("glcv_image_load", _path(path, "imread"), _READ_FORMATS[mode],
               ffi.new("glcv_logger *", _core.logger()), img)
    h, w = img.height, img.width
    try:
        channels = lib.glcv_pixel_format_size(img.format)
        rows = np.frombuffer(ffi.buffer(img.data, img.stride * img.height), np.uint8)
        out = rows.reshape(img.height, img.stride)[:, :img.width * channels].copy()
    finally:
        lib.glcv_image_free(img)
    out = out.reshape(h, w) if channels == 1 else out.reshape(h, w, channels)
    if mode in ("bgr", "bgra"):
        out = np.ascontiguousarray(out[:, :, [2, 1, 0] + ([3] if channels == 4 else [])])
    return out


def imwrite(path, image, order="rgb", fast=False):
    """Writes an HxW, HxWx3 or HxWx4 uint8 array as a PNG file (glcv_image_save_png_level;
    `order` says whether colour arrays are "rgb" or "bgr"; `fast` the FAST level). The file is
    written under a temporary name and renamed. Raises FileError, InvalidArgumentError."""
    array, img = _core.frame_struct(image, "imwrite", order)
    _core.call("glcv_image_save_png_level", _path(path, "imwrite"), img, 1 if fast else 0,
               ffi.new("glcv_logger *", _core.logger()))
    del array


def imageinfo(path):
    """(width, height, channels) of an image file, without decoding it."""
    w, h, c = ffi.new("int *"), ffi.new("int *"), ffi.new("int *")
    _core.call("glcv_image_info", _path(path, "imageinfo"), w, h, c, ffi.new("glcv_logger *", _core.logger()))
    return w[0], h[0], c[0]


def set_max_pixels(n):
    """Sets the largest image imread decodes, in pixels (process-wide; clamped to 1..2^30);
    returns the limit now in force."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise _core.invalid(f"set_max_pixels: an int, not {n!r}")
    return int(lib.glcv_image_set_max_pixels(min(max(int(n), 1), 2**30)))


def max_pixels():
    """The largest image imread decodes, in pixels."""
    return int(lib.glcv_image_max_pixels())
