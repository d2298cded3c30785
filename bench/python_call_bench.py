#!/usr/bin/env python3
"""The cost of calling libglcv from Python through ctypes and through cffi's ABI mode.

Each call through both bindings, numpy arrays passed as each binding passes them fastest (ctypes:
the array's ctypes.data; cffi: ffi.from_buffer, which the package uses for C-contiguous arrays),
a glcv_image filled per call:
  status_string   glcv_status_string(1): the call itself, one int in, one char * out
  get_params      glcv_segment_get_params(seg, &params): a struct filled through a pointer
  image_arg       building the glcv_image argument of a numpy frame (no call): what every frame
                  argument adds
  segment         glcv_segment_frame + glcv_segment_read_mask of a 320x240 RGB frame on the CPU
                  engine: the realistic call, where the binding's share is what matters

usage: python_call_bench.py [--library build/release/libglcv.so] [--repeat N] [--segments N]
Prints one line per call and binding: the median over 7 runs of the mean time per call.
"""
import argparse
import ctypes
import statistics
import time

import cffi
import numpy as np

W, H = 320, 240

CDEF = """
typedef struct { void *fn; void *user; int max_level; } glcv_logger;
typedef struct {
    int width, height; float ts, odc, b1, b2; int iterations; uint64_t seed; int engine;
    float adapt_rate; int timing; int fixed_parameters; glcv_logger logger; int preset; int streams;
} glcv_segment_params;
typedef struct { uint8_t *data; int width; int height; size_t stride; int format; } glcv_image;
const char *glcv_status_string(int status);
int glcv_segment_create(const glcv_segment_params *params, void **out);
void glcv_segment_destroy(void **seg);
int glcv_segment_get_params(void *seg, glcv_segment_params *out);
int glcv_segment_set_background(void *seg, const glcv_image *background);
int glcv_segment_frame(void *seg, const glcv_image *frame, int wait);
int glcv_segment_read_mask(void *seg, glcv_image *out);
"""


class CLogger(ctypes.Structure):
    _fields_ = [("fn", ctypes.c_void_p), ("user", ctypes.c_void_p), ("max_level", ctypes.c_int)]


class CSegmentParams(ctypes.Structure):
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int), ("ts", ctypes.c_float),
                ("odc", ctypes.c_float), ("b1", ctypes.c_float), ("b2", ctypes.c_float),
                ("iterations", ctypes.c_int), ("seed", ctypes.c_uint64), ("engine", ctypes.c_int),
                ("adapt_rate", ctypes.c_float), ("timing", ctypes.c_int),
                ("fixed_parameters", ctypes.c_int), ("logger", CLogger), ("preset", ctypes.c_int),
                ("streams", ctypes.c_int)]


class CImage(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("width", ctypes.c_int), ("height", ctypes.c_int),
                ("stride", ctypes.c_size_t), ("format", ctypes.c_int)]


RGB8, GRAY8, CPU = 2, 1, 4


def timed(fn, repeat):
    runs = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        runs.append((time.perf_counter() - t0) / repeat)
    return statistics.median(runs)


def ctypes_calls(path, frame, background, mask):
    lib = ctypes.CDLL(path)
    lib.glcv_status_string.argtypes = [ctypes.c_int]
    lib.glcv_status_string.restype = ctypes.c_char_p
    lib.glcv_segment_create.argtypes = [ctypes.POINTER(CSegmentParams), ctypes.POINTER(ctypes.c_void_p)]
    lib.glcv_segment_destroy.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.glcv_segment_get_params.argtypes = [ctypes.c_void_p, ctypes.POINTER(CSegmentParams)]
    lib.glcv_segment_set_background.argtypes = [ctypes.c_void_p, ctypes.POINTER(CImage)]
    lib.glcv_segment_frame.argtypes = [ctypes.c_void_p, ctypes.POINTER(CImage), ctypes.c_int]
    lib.glcv_segment_read_mask.argtypes = [ctypes.c_void_p, ctypes.POINTER(CImage)]
    seg = ctypes.c_void_p()
    params = CSegmentParams(width=W, height=H, engine=CPU)
    assert lib.glcv_segment_create(ctypes.byref(params), ctypes.byref(seg)) == 0

    def image(a, fmt):
        return CImage(a.ctypes.data, a.shape[1], a.shape[0], a.strides[0], fmt)

    assert lib.glcv_segment_set_background(seg, ctypes.byref(image(background, RGB8))) == 0
    out = CSegmentParams()

    def segment():
        if lib.glcv_segment_frame(seg, ctypes.byref(image(frame, RGB8)), 1) != 0:
            raise RuntimeError("frame")
        if lib.glcv_segment_read_mask(seg, ctypes.byref(image(mask, GRAY8))) != 0:
            raise RuntimeError("mask")

    calls = {"status_string": lambda: lib.glcv_status_string(1),
             "get_params": lambda: lib.glcv_segment_get_params(seg, ctypes.byref(out)),
             "image_arg": lambda: ctypes.byref(image(frame, RGB8)),
             "segment": segment}
    return calls, lambda: lib.glcv_segment_destroy(ctypes.byref(seg))


def cffi_calls(path, frame, background, mask):
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    lib = ffi.dlopen(path)
    segp = ffi.new("void **")
    params = ffi.new("glcv_segment_params *", {"width": W, "height": H, "engine": CPU})
    assert lib.glcv_segment_create(params, segp) == 0
    seg = segp[0]

    def image(a, fmt):
        return ffi.new("glcv_image *", (ffi.from_buffer("uint8_t[]", a), a.shape[1], a.shape[0], a.strides[0], fmt))

    assert lib.glcv_segment_set_background(seg, image(background, RGB8)) == 0
    out = ffi.new("glcv_segment_params *")

    def segment():
        if lib.glcv_segment_frame(seg, image(frame, RGB8), 1) != 0:
            raise RuntimeError("frame")
        if lib.glcv_segment_read_mask(seg, image(mask, GRAY8)) != 0:
            raise RuntimeError("mask")

    calls = {"status_string": lambda: lib.glcv_status_string(1),
             "get_params": lambda: lib.glcv_segment_get_params(seg, out),
             "image_arg": lambda: image(frame, RGB8),
             "segment": segment}
    return calls, lambda: lib.glcv_segment_destroy(segp)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--library", default="build/release/libglcv.so")
    ap.add_argument("--repeat", type=int, default=100000, help="calls per run of the trivial calls")
    ap.add_argument("--segments", type=int, default=100, help="calls per run of the segment call")
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    background = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
    frame = background.copy()
    frame[80:160, 100:200] = 255 - frame[80:160, 100:200]
    mask = np.zeros((H, W), np.uint8)
    print(f"{'call':14s} {'binding':8s} {'us per call':>12s}")
    for name, make in (("ctypes", ctypes_calls), ("cffi-abi", cffi_calls)):
        calls, done = make(a.library, frame, background, mask)
        for call, fn in calls.items():
            n = a.segments if call == "segment" else a.repeat
            fn()
            print(f"{call:14s} {name:8s} {timed(fn, n) * 1e6:12.3f}")
        done()
        assert mask.max() == 255 and mask.min() == 0, "the segment call gave no mask"


if __name__ == "__main__":
    main()
