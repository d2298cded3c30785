#!/usr/bin/env python3
"""Tests of the Python package glcv: every class on the CPU engines with checked values, and every
kind of bad input (wrong dtype, shape, size, layout, NaN parameters, use after close), which must
raise glcv.Error subclasses, never crash.

usage: test_api.py           the API on the CPU engines (no GL, no CUDA needed)
       test_api.py --layout PATH/TO/glcv_py_struct_layout
                             the structs' sizes and offsets as cffi sees them equal the C compiler's
       test_api.py --gl      the GL engines in a headless Context (exit 77 without one)
       test_api.py --cuda    the CUDA engines against the CPU's (exit 77 without a CUDA device)
Exit status 0 pass, 1 fail, 77 skip.
"""
import gc
import logging
import math
import os
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

import glcv
from glcv import _core

W, H = 64, 48


def scene(seed=1, w=W, h=H):
    """A textured background and a frame with a square (rows 12..31, columns 20..43) inverted."""
    rng = np.random.default_rng(seed)
    bg = rng.integers(40, 216, (h, w, 3), dtype=np.uint8)
    frame = bg.copy()
    frame[12:32, 20:44] = 255 - frame[12:32, 20:44]
    return bg, frame


def square_mask(w=W, h=H):
    """The square of scene() grown by a pixel a side: the 3x3 windows that overlap it change."""
    m = np.zeros((h, w), np.uint8)
    m[11:33, 19:45] = 255
    return m


def disc_frames(n, w=W, h=H):
    """Frames of a saturated red disc of radius 7 moving right on a grey background (RGB)."""
    yy, xx = np.mgrid[0:h, 0:w]
    frames = []
    for i in range(n):
        f = np.full((h, w, 3), 128, np.uint8)
        cx, cy = 16 + 2 * i, 24
        f[(xx - cx) ** 2 + (yy - cy) ** 2 <= 49] = (220, 30, 30)
        frames.append(f)
    return frames


def differ(a, b):
    """Where and how many pixels of two masks differ, for failure messages."""
    d = np.argwhere(a != b)
    return f"{len(d)} pixels differ, first at (row, col) {d[:5].tolist()}"


class Errors(unittest.TestCase):
    def test_status_and_error_fields(self):
        self.assertEqual(glcv.status_string(1), "invalid argument")
        with self.assertRaises(glcv.InvalidArgumentError) as cm:
            glcv.Segmenter(0, 10, engine="cpu")
        e = cm.exception
        self.assertIsInstance(e, glcv.Error)
        self.assertIsInstance(e, ValueError)
        self.assertEqual(e.status, 1)
        self.assertEqual(e.name, "GLCV_ERROR_INVALID_ARGUMENT")
        self.assertTrue(e.message, "the logger's message is carried")
        self.assertEqual(e.function, "glcv_segment_create")
        self.assertIn(e.message, str(e))

    def test_state_error_message(self):
        with glcv.Segmenter(W, H, engine="cpu") as seg:
            with self.assertRaises(glcv.StateError) as cm:
                seg.segment(scene()[1])
        self.assertEqual(cm.exception.status, 3)
        self.assertEqual(cm.exception.function, "glcv_segment_frame")

    def test_logging_module_gets_the_lines(self):
        records = []

        class Keep(logging.Handler):
            def emit(self, record):
                records.append(record)

        h = Keep()
        logging.getLogger("glcv").addHandler(h)
        try:
            with self.assertRaises(glcv.Error) as cm:
                glcv.Segmenter(W, H, engine="cpu", ts=float("nan"))
        finally:
            logging.getLogger("glcv").removeHandler(h)
        self.assertTrue(any(r.levelno == logging.ERROR and r.getMessage() == cm.exception.message
                            for r in records), [r.getMessage() for r in records])

    def test_log_function(self):
        got = []
        glcv.set_log_function(lambda level, msg: got.append((level, msg)))
        try:
            with self.assertRaises(glcv.InvalidArgumentError):
                glcv.Segmenter(W, H, engine="cpu", b1=-1)
            glcv.set_log_function(lambda level, msg: 1 / 0)  # raising in the callback is dropped
            with self.assertRaises(glcv.InvalidArgumentError):
                glcv.Segmenter(W, H, engine="cpu", b1=-1)
        finally:
            glcv.set_log_function(None)
        self.assertTrue(got and got[-1][0] == 1, got)
        with self.assertRaises(TypeError):
            glcv.set_log_function(5)

    def test_nothing_printed(self):
        code = ("import glcv\n"
                "try:\n    glcv.Segmenter(0, 0)\nexcept glcv.Error:\n    pass\n"
                "s = glcv.Segmenter(8, 8)\n")  # auto without a context: falls back to the CPU (logged)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout + r.stderr, "")


class Frames(unittest.TestCase):
    def setUp(self):
        self.seg = glcv.Segmenter(W, H, engine="cpu")
        self.bg, self.frame = scene()
        self.seg.set_background(self.bg)

    def tearDown(self):
        self.seg.close()

    def test_mask_values(self):
        m = self.seg.segment(self.frame)
        self.assertEqual(m.shape, (H, W))
        self.assertEqual(m.dtype, np.uint8)
        self.assertTrue(set(np.unique(m)) <= {0, 255})
        truth = square_mask()
        self.assertLessEqual(np.count_nonzero(m != truth), 40, differ(m, truth))
        self.assertEqual(np.count_nonzero(m[:, :12]), 0)

    def test_rgba_bgr_and_padded_rows_give_the_same_mask(self):
        ref = self.seg.segment(self.frame)
        variants = {
            "bgr": (self.frame[:, :, ::-1].copy(), "bgr"),
            "rgba": (np.dstack([self.frame, np.full((H, W), 255, np.uint8)]), "rgb"),
            "bgra view": (np.dstack([self.frame[:, :, ::-1], np.zeros((H, W), np.uint8)]), "bgr"),
            "padded rows": (np.pad(self.frame, ((0, 0), (0, 9), (0, 0)))[:, :W], "rgb"),
            "fortran order": (np.asfortranarray(self.frame), "rgb"),
            "every other column": (np.repeat(self.frame, 2, axis=1)[:, ::2], "rgb"),
            "read-only": (self.frame.copy(), "rgb"),
        }
        variants["read-only"][0].flags.writeable = False
        for name, (f, order) in variants.items():
            self.seg.reset()
            self.seg.set_background(self.bg)
            m = self.seg.segment(f, order=order)
            self.assertTrue(np.array_equal(m, ref), f"{name}: {differ(m, ref)}")

    def test_zero_copy_where_the_layout_allows(self):
        padded = np.pad(self.frame, ((0, 0), (0, 9), (0, 0)))[:, :W]
        self.assertIs(_core.as_frame(padded, "t")[0], padded)
        self.assertIs(_core.as_frame(self.frame, "t")[0], self.frame)
        strided = np.repeat(self.frame, 2, axis=1)[:, ::2]
        copy = _core.as_frame(strided, "t")[0]
        self.assertIsNot(copy, strided)
        self.assertTrue(copy.flags.c_contiguous and np.array_equal(copy, strided))
        flipped = self.frame[::-1]
        self.assertTrue(_core.as_frame(flipped, "t")[0].strides[0] > 0)

    def test_bad_frames(self):
        bad = {
            "float32": self.frame.astype(np.float32),
            "int16": self.frame.astype(np.int16),
            "bool": self.frame > 100,
            "2 channels": self.frame[:, :, :2],
            "5 channels": np.zeros((H, W, 5), np.uint8),
            "4-D": self.frame[None],
            "1-D": self.frame.ravel(),
            "gray": self.frame[:, :, 0],
            "empty": np.zeros((0, W, 3), np.uint8),
            "list": self.frame.tolist(),
            "None": None,
        }
        for name, f in bad.items():
            with self.assertRaises(glcv.InvalidArgumentError, msg=name) as cm:
                self.seg.segment(f)
            self.assertEqual(cm.exception.status, 1, name)
        with self.assertRaises(glcv.SizeMismatchError) as cm:
            self.seg.segment(self.frame[:-1])
        self.assertEqual(cm.exception.status, 2)
        with self.assertRaises(glcv.InvalidArgumentError):
            self.seg.segment(self.frame, order="hsv")
        for out in (np.zeros((H, W), np.float32), np.zeros((H, W + 1), np.uint8), "x",
                    np.zeros((H, W), np.uint8)[:, ::-1]):
            with self.assertRaises(glcv.InvalidArgumentError):
                self.seg.segment(self.frame, out=out)
        ro = np.zeros((H, W), np.uint8)
        ro.flags.writeable = False
        with self.assertRaises(glcv.InvalidArgumentError):
            self.seg.read_mask(ro)

    def test_out_argument(self):
        out = np.full((H, W), 7, np.uint8)
        m = self.seg.segment(self.frame, out=out)
        self.assertIs(m, out)
        self.assertTrue(set(np.unique(out)) <= {0, 255})


class Segmenter(unittest.TestCase):
    def test_params_and_properties(self):
        with glcv.Segmenter(W, H, engine="cpu", preset="paper", iterations=0, seed=7) as seg:
            p = seg.get_params()
            self.assertEqual((p["ts"], p["odc"], p["b1"], p["b2"]), (310, 5800, 2, 200))
            self.assertEqual(p["iterations"], 0)
            self.assertEqual((seg.engine, seg.preset, seg.size, seg.seed), ("cpu", "paper", (W, H), 7))
            seg.ts = 0
            seg.odc = 1234.5
            seg.iterations = 3
            seg.adapt_rate = 0.25
            self.assertEqual((seg.ts, seg.odc, seg.iterations, seg.adapt_rate), (0, 1234.5, 3, 0.25))
            for name, value in (("ts", float("nan")), ("odc", float("inf")), ("b1", 0), ("b2", -5),
                                ("iterations", 1.5), ("iterations", -1), ("adapt_rate", 2.0),
                                ("ts", "3000"), ("ts", None), ("iterations", True), ("iterations", 2**40)):
                before = getattr(seg, name)
                with self.assertRaises(glcv.InvalidArgumentError, msg=f"{name}={value!r}"):
                    setattr(seg, name, value)
                self.assertEqual(getattr(seg, name), before, f"{name} changed by a refused value")
            for seed in (-1, 2**64, 1.5, "1"):
                with self.assertRaises(glcv.InvalidArgumentError):
                    seg.seed = seed
            with self.assertRaises(AttributeError):
                seg.engine = "cpu"

    def test_bad_creation(self):
        for kwargs in ({"ts": float("nan")}, {"odc": -1}, {"b2": float("inf")}, {"engine": "gpu"},
                       {"engine": 3}, {"engine": "cuda"}, {"preset": "fast"}, {"iterations": 1001}):
            with self.assertRaises(glcv.InvalidArgumentError, msg=str(kwargs)):
                glcv.Segmenter(W, H, **{"engine": "cpu", **kwargs})
        for size in ((-1, 5), (5, 0), (1.5, 3), ("64", 48), (2**40, 2)):
            with self.assertRaises(glcv.InvalidArgumentError, msg=str(size)):
                glcv.Segmenter(*size, engine="cpu")

    def test_learn_calibrates_and_background(self):
        bg, frame = scene()
        rng = np.random.default_rng(3)
        noisy = [np.clip(bg.astype(np.int16) + rng.integers(-3, 4, bg.shape), 0, 255).astype(np.uint8)
                 for _ in range(5)]
        with glcv.Segmenter(W, H, engine="cpu") as seg:
            seg.learn(noisy)
            p = seg.get_params()
            self.assertNotEqual(p["ts"], 3000.0, "learning calibrates Ts")
            b = seg.background()
            self.assertEqual(b.shape, (H, W, 3))
            self.assertLessEqual(int(np.abs(b.astype(int) - bg).max()), 3)
            k = seg.noise()
            self.assertEqual(k.shape, (H, W))
            self.assertGreaterEqual(float(k.min()), 1.0)
            m = seg.segment(frame)
            truth = square_mask()
            self.assertLessEqual(np.count_nonzero(m != truth), 60, differ(m, truth))
            g = seg.calibrate(noisy[:3])
            self.assertTrue(math.isfinite(g) and g >= 0)
            with self.assertRaises(glcv.StateError):
                seg.learn_end()
            with self.assertRaises(glcv.InvalidArgumentError):
                seg.learn([frame.astype(np.float64)])

    def test_failed_learn_leaves_the_object_usable(self):
        bg, frame = scene()
        rng = np.random.default_rng(5)
        noisy = [np.clip(bg.astype(np.int16) + rng.integers(-3, 4, bg.shape), 0, 255).astype(np.uint8)
                 for _ in range(4)]

        def raising():
            yield noisy[0]
            raise KeyError("the source broke")

        for preset in ("calibrated", "paper"):
            with glcv.Segmenter(W, H, engine="cpu", preset=preset) as seg, \
                    glcv.Segmenter(W, H, engine="cpu", preset=preset) as twin:
                with self.assertRaises(glcv.StateError, msg="no frame"):
                    seg.learn([])
                seg.set_background(bg)  # learning is over
                seg.learn(noisy)
                twin.learn(noisy)
                for bad, error in ((list, glcv.StateError), (lambda: [noisy[0], bg[:10]], glcv.SizeMismatchError),
                                   (lambda: [noisy[0], bg.astype(np.float32)], glcv.InvalidArgumentError),
                                   (raising, KeyError)):
                    with self.assertRaises(error, msg=f"{preset}: learn, {error.__name__}"):
                        seg.learn(bad())
                    with self.assertRaises(error, msg=f"{preset}: calibrate, {error.__name__}"):
                        seg.calibrate(bad())
                    self.assertEqual(seg.get_params(), twin.get_params(), f"{preset}: parameters changed")
                    self.assertTrue(np.array_equal(seg.background(), twin.background()),
                                    f"{preset}: the background changed")
                    self.assertTrue(np.array_equal(seg.noise(), twin.noise()), f"{preset}: the noise changed")
                    m, t = seg.segment(frame), twin.segment(frame)
                    self.assertTrue(np.array_equal(m, t), differ(m, t))

    def test_use_after_close(self):
        seg = glcv.Segmenter(W, H, engine="cpu")
        bg, frame = scene()
        seg.set_background(bg)
        seg.close()
        self.assertTrue(seg.closed)
        seg.close()  # again: nothing
        for call in (lambda: seg.segment(frame), lambda: seg.set_background(bg), lambda: seg.ts,
                     lambda: setattr(seg, "ts", 1.0), seg.reset, seg.read_mask, seg.get_params,
                     lambda: seg.learn([bg]), seg.background, seg.__enter__):
            with self.assertRaises(glcv.StateError) as cm:
                call()
            self.assertEqual(cm.exception.status, 3)
        self.assertIn("closed", repr(seg))

    def test_context_manager_and_del(self):
        with glcv.Segmenter(W, H, engine="cpu") as seg:
            self.assertFalse(seg.closed)
        self.assertTrue(seg.closed)
        for _ in range(50):  # freed by __del__: no growth, no crash
            s = glcv.Segmenter(320, 240, engine="cpu")
            del s
        gc.collect()
        s = glcv.Segmenter.__new__(glcv.Segmenter)  # never created: closing it is harmless
        s.close()
        del s

    def test_threads_share_an_object(self):
        bg, frame = scene()
        with glcv.Segmenter(W, H, engine="cpu", adapt_rate=0) as seg:
            seg.set_background(bg)
            ref = seg.segment(frame).copy()
            errors = []

            def work():
                try:
                    for _ in range(10):
                        seg.reset()
                        seg.segment(frame)
                except Exception as e:  # noqa: BLE001
                    errors.append(e)

            ts = [threading.Thread(target=work) for _ in range(3)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            self.assertEqual(errors, [])
            seg.reset()
            self.assertTrue(np.array_equal(seg.segment(frame), ref))


    def test_close_while_another_thread_segments(self):
        bg, frame = scene(w=320, h=240)
        seg = glcv.Segmenter(320, 240, engine="cpu")
        seg.set_background(bg)
        seen, started = [], threading.Event()

        def work():
            try:
                while True:
                    seg.segment(frame)
                    started.set()
            except glcv.StateError as e:  # the object was closed between two calls
                seen.append(e)
            started.set()

        t = threading.Thread(target=work)
        t.start()
        started.wait(60)
        seg.close()  # waits for the call in progress
        t.join(60)
        self.assertEqual(len(seen), 1)
        self.assertIn("closed", str(seen[0]))


class BackgroundSubtractor(unittest.TestCase):
    def test_vsam(self):
        bg, frame = scene()
        with glcv.BackgroundSubtractor(W, H, engine="cpu") as sub:
            p = sub.get_params()
            self.assertEqual((p["method"], p["engine"], p["vote"], p["absorb"]), ("vsam", "cpu", 5, 100))
            self.assertAlmostEqual(p["alpha"], 0.92, places=6)
            sub.learn([bg] * 3)
            b, t = sub.state()
            self.assertEqual(b.shape, (H, W, 3))
            self.assertTrue(np.array_equal(b, bg.astype(np.float32)), "B is the learned frames' median")
            self.assertGreaterEqual(float(t.min()), 20.0)
            self.assertTrue(np.array_equal(sub.apply(bg), np.zeros((H, W), np.uint8)))
            sub.apply(bg)
            m = sub.apply(frame)
            truth = np.zeros((H, W), np.uint8)  # per pixel: the square itself (its corners lose the vote)
            truth[12:32, 20:44] = 255
            self.assertLessEqual(np.count_nonzero(m != truth), 8, differ(m, truth))
            sub.reset()
            with self.assertRaises(glcv.InvalidArgumentError):
                sub.state(1)

    def test_failed_learn_leaves_the_object_usable(self):
        bg, frame = scene()

        def raising():
            yield bg
            raise KeyError("the source broke")

        with glcv.BackgroundSubtractor(W, H, engine="cpu") as sub, \
                glcv.BackgroundSubtractor(W, H, engine="cpu") as twin:
            with self.assertRaises(glcv.StateError, msg="no set"):
                sub.learn([])
            sub.apply(bg)  # learning is over
            sub.reset()
            for s in (sub, twin):
                s.learn([bg] * 3)
                s.apply(bg)
            for bad, error in (([], glcv.StateError), ([bg, bg[:10]], glcv.SizeMismatchError),
                               ([bg, bg.astype(np.float32)], glcv.InvalidArgumentError), (raising(), KeyError)):
                with self.assertRaises(error, msg=f"{bad!r:.40}"):
                    sub.learn(bad)
                for a, b in zip(sub.state(), twin.state()):
                    self.assertTrue(np.array_equal(a, b), "B or T changed through a failed learn()")
                m, t = sub.apply(frame), twin.apply(frame)
                self.assertTrue(np.array_equal(m, t), differ(m, t))
            sub.process(frame)

    def test_streams_and_bad_input(self):
        bg, frame = scene()
        with glcv.BackgroundSubtractor(W, H, method="diff2", streams=2, engine="cpu", format="gray") as sub:
            first = sub.apply([bg[:, :, ::-1], bg[:, :, ::-1]], order="bgr")
            self.assertEqual(len(first), 2)
            masks = sub.apply([bg[:, :, ::-1], frame[:, :, ::-1]], order="bgr")
            self.assertEqual(np.count_nonzero(masks[0]), 0)
            self.assertGreater(np.count_nonzero(masks[1][12:32, 20:44]), 300)
            self.assertEqual(np.count_nonzero(masks[1][:, :12]), 0)
            with self.assertRaises(glcv.InvalidArgumentError):
                sub.apply([bg])
            with self.assertRaises(glcv.InvalidArgumentError):
                sub.apply([bg, bg.astype(np.float32)])
            with self.assertRaises(glcv.SizeMismatchError):
                sub.apply([bg, bg[:10]])
            with self.assertRaises(glcv.StateError):
                sub.read_masks(age=2)  # two sets so far: none two before the newest
            with self.assertRaises(glcv.InvalidArgumentError):
                sub.read_masks(age=3)
        for kwargs in ({"method": "mog2"}, {"alpha": float("nan")}, {"alpha": 1.0}, {"c": -1}, {"vote": 10},
                       {"format": "yuv"}, {"streams": 0}, {"passes": "many"}, {"upload": "dma"},
                       {"engine": "cuda"}):
            with self.assertRaises(glcv.InvalidArgumentError, msg=str(kwargs)):
                glcv.BackgroundSubtractor(W, H, **{"engine": "cpu", **kwargs})
        sub.close()
        with self.assertRaises(glcv.StateError):
            sub.apply([bg, bg])


class Tracker(unittest.TestCase):
    def test_follows_a_disc(self):
        frames = disc_frames(8)
        with glcv.Tracker(W, H, engine="cpu", method="camshift") as tr:
            self.assertEqual(tr.get_params()["hue_bins"], 60)
            hist = tr.compute_hist(frames[0], (9, 17, 15, 15))
            self.assertEqual(hist.shape, (60, 1))
            self.assertEqual(float(hist.max()), 255.0)
            self.assertEqual(int(np.argmax(hist[:, 0])), 0, "red's hue (OpenCV H 0) is in the first bin")
            oid = tr.add(hist, (9, 17, 15, 15))
            self.assertEqual(oid, 0)
            self.assertTrue(np.array_equal(tr.get_hist(oid), hist))
            for i, f in enumerate(frames):
                (r,) = tr.track(f)
                self.assertEqual((r.id, r.stream, r.lost), (0, 0, 0))
                self.assertAlmostEqual(r.cx, 16 + 2 * i + 0.5, delta=1.0, msg=f"frame {i}: {r}")
                self.assertAlmostEqual(r.cy, 24.5, delta=1.0)
                self.assertGreater(r.m00, 0)
            # BGR frames with order="bgr" are the same frames
            tr.set_window(oid, (9, 17, 15, 15))
            a = tr.track(frames[0])
            tr.set_window(oid, (9, 17, 15, 15))
            b = tr.track(frames[0][:, :, ::-1], order="bgr")
            self.assertEqual(a, b)
            mask = np.zeros((H, W), np.uint8)
            tr.set_window(oid, (9, 17, 15, 15))
            (r,) = tr.track(frames[0], mask)
            self.assertEqual(r.m00, 0, "an all-background mask counts no pixel")
            tr.remove(oid)
            with self.assertRaises(glcv.InvalidArgumentError):
                tr.remove(oid)

    def test_dcf_is_the_default(self):
        frames = disc_frames(8)
        with glcv.Tracker(W, H) as tr:
            p = tr.get_params()
            self.assertEqual((p["method"], p["engine"]), ("dcf", "cpu"))
            oid = tr.add(None, (9, 17, 15, 15))
            for i, f in enumerate(frames):
                (r,) = tr.track(f)
                self.assertEqual((r.id, r.lost, r.iterations, r.distance), (oid, 0, 0, -1.0), f"frame {i}: {r}")
                self.assertAlmostEqual(r.cx, 16 + 2 * i + 0.5, delta=1.0, msg=f"frame {i}: {r}")
                self.assertAlmostEqual(r.cy, 24.5, delta=1.0)
                if i == 0:
                    self.assertEqual((r.cx, r.cy, r.width, r.height, r.peak), (16.5, 24.5, 15, 15, 0.0))
                else:
                    self.assertGreater(r.peak, 0)
            # BGR frames with order="bgr" give the same boxes
            tr.set_window(oid, (9, 17, 15, 15))
            tr.track(frames[0])
            a = tr.track(frames[1])
            tr.set_window(oid, (9, 17, 15, 15))
            tr.track(frames[0][:, :, ::-1], order="bgr")
            b = tr.track(frames[1][:, :, ::-1], order="bgr")
            self.assertEqual(a, b)
        with glcv.Tracker(W, H, method="camshift", engine="cpu") as tr:
            with self.assertRaises(glcv.InvalidArgumentError):
                tr.add(None, (9, 17, 15, 15))

    def test_histograms(self):
        frames = disc_frames(1)
        with glcv.Tracker(W, H, engine="cpu", method="camshift", sat_bins=4, hue_bins=30) as tr:
            h = tr.compute_hist(frames[0], (9, 17, 15, 15))
            self.assertEqual(h.shape, (30, 4))
            w = tr.weight_background(h, frames[0], (9, 17, 15, 15))
            self.assertEqual(w.shape, (30, 4))
            self.assertEqual(glcv.hist_distance(h, h), 0.0)
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "h.txt")
                glcv.save_hists(path, [h, w])
                back = glcv.load_hists(path)
                self.assertEqual(len(back), 2)
                self.assertTrue(np.array_equal(back[0], h))
                with self.assertRaises(glcv.FileError):
                    glcv.load_hists(os.path.join(d, "missing.txt"))
                with open(path, "w") as f:
                    f.write("glcv-track-hist 1\nhist 2 1\n1 300\n")
                with self.assertRaises(glcv.CorruptDataError):
                    glcv.load_hists(path)
            pts = glcv.box_points(10, 10, 4, 2, 0)
            self.assertEqual(pts.shape, (4, 2))
            self.assertEqual(glcv.box_bounds(10, 10, 4, 4, 0, 100, 100), (8, 8, 5, 5))
            self.assertEqual(glcv.box_bounds(float("nan"), 10, 4, 4, 0, 100, 100)[2:], (0, 0))
            bad_hists = {"NaN": np.full((30, 4), np.nan, np.float32), "256": np.full((30, 4), 256.0),
                         "bins": np.zeros((60, 1)), "shape": np.zeros((2, 2, 2)), "list": [1, 2],
                         "too many bins": np.zeros((4097,)), "complex": np.zeros((30, 4), complex)}
            for name, bad in bad_hists.items():
                with self.assertRaises(glcv.InvalidArgumentError, msg=name):
                    tr.add(bad, (0, 0, 5, 5))
            for region in ((0, 0, 0, 5), (1, 2, 3), "abc", (2**40, 0, 1, 1), None, (0.5, 0, 5, 5),
                           (0, 0, 5, 5.25), ("1", 0, 5, 5), (True, 0, 5, 5), (0, 0, float("nan"), 5),
                           (0, 0, float("inf"), 5), (0, 0, 5, 5, 5), (0, 0, np.float32(4.5), 5)):
                with self.assertRaises(glcv.InvalidArgumentError, msg=str(region)):
                    tr.compute_hist(frames[0], region)
            # integral values of any number type are integers, as for the other int arguments
            same = tr.compute_hist(frames[0], (0, 0, 5, 5))
            for region in ((0.0, 0, 5.0, 5), np.array([0, 0, 5, 5]), (np.int64(0), 0, np.float64(5), 5)):
                self.assertTrue(np.array_equal(tr.compute_hist(frames[0], region), same), str(region))
            hist = tr.compute_hist(frames[0], (0, 0, 5, 5))
            with self.assertRaises(glcv.InvalidArgumentError):
                tr.add(hist, (0, 0, 5.5, 5))
            with self.assertRaises(glcv.InvalidArgumentError):
                tr.set_window(0, (0.5, 0, 5, 5))
            with self.assertRaises(glcv.InvalidArgumentError):
                tr.compute_hist(frames[0], (0, 0, 5, 5), mask=np.zeros((H, W, 3), np.uint8))
            with self.assertRaises(glcv.InvalidArgumentError):
                tr.compute_hist(frames[0][:, :, 0], (0, 0, 5, 5))
            with self.assertRaises(glcv.SizeMismatchError):
                tr.compute_hist(frames[0], (0, 0, 5, 5), mask=np.zeros((H, W - 1), np.uint8))
            with self.assertRaises(glcv.InvalidArgumentError):
                tr.set_limits(0, 200, 100)
            with self.assertRaises(glcv.StateError):
                tr.results()

    def test_bad_creation_and_closed(self):
        for kwargs in ({"window": "round"}, {"hue_bins": 181}, {"epsilon": float("nan")}, {"engine": "fragment"},
                       {"sat_bins": 300}, {"lost_criteria": 16}, {"recovery": "never"}, {"streams": 0},
                       {"method": "kcf"}, {"method": "dcf", "engine": "compute"}):
            with self.assertRaises(glcv.InvalidArgumentError, msg=str(kwargs)):
                glcv.Tracker(W, H, **{"engine": "cpu", **kwargs})
        tr = glcv.Tracker(W, H, engine="cpu")
        tr.close()
        with self.assertRaises(glcv.StateError):
            tr.track(disc_frames(1)[0])
        with self.assertRaises(glcv.StateError):
            tr.add(np.zeros(60), (0, 0, 5, 5))


class Matcher(unittest.TestCase):
    def test_finds_the_template(self):
        rng = np.random.default_rng(5)
        img = rng.integers(0, 256, (H, W, 3), dtype=np.uint8)
        templ = img[21:31, 37:49]
        with glcv.Matcher(W, H, engine="cpu") as m:
            self.assertEqual((m.metric, m.engine), ("sad", "cpu"))
            m.set_template(templ)
            s = m.match(img)
            self.assertEqual(s.shape, (H, W))
            self.assertEqual(s[21, 37], 0.0)
            self.assertEqual(s[H - 1, W - 1], math.inf)
            (hit,) = m.best(1)
            self.assertEqual((hit.x, hit.y, hit.cx, hit.cy, hit.score), (37, 21, 43, 26, 0.0))
            m.metric = "zncc"
            m.match_only(img)
            hit = m.best(2)[0]
            self.assertEqual((hit.x, hit.y), (37, 21))
            self.assertAlmostEqual(hit.score, 1.0, places=6)
            n = m.normalized()
            self.assertEqual(float(n[21, 37]), 1.0)
            m.set_roi((0, 0, 30, 30))
            hit = m.match(img) is not None and m.best(1)[0]
            self.assertLessEqual(hit.x + 12, 30)
            m.set_roi(None)
            with self.assertRaises(glcv.InvalidArgumentError):
                m.metric = "l3"
            with self.assertRaises(glcv.InvalidArgumentError):
                m.set_template(np.zeros((H + 1, 4), np.uint8))
            with self.assertRaises(glcv.InvalidArgumentError):
                m.set_template(templ, mask=np.zeros(templ.shape[:2], np.uint8))  # keeps no pixel
            with self.assertRaises(glcv.InvalidArgumentError):
                m.best(0)
            with self.assertRaises(glcv.InvalidArgumentError):
                m.set_roi((0, 0, 0, 4))
            for roi in ((0.5, 0, 30, 30), (0, 0, 30, 29.9), ("0", 0, 30, 30)):
                with self.assertRaises(glcv.InvalidArgumentError, msg=str(roi)):
                    m.set_roi(roi)
        with self.assertRaises(glcv.StateError):
            m.best(1)
        with glcv.Matcher(W, H, engine="cpu") as m:
            with self.assertRaises(glcv.StateError):
                m.match(img)


class Correlator(unittest.TestCase):
    def test_coefficients(self):
        rng = np.random.default_rng(9)
        ref = rng.integers(0, 256, (H, W), dtype=np.uint8)
        other = rng.integers(0, 256, (H, W), dtype=np.uint8)
        with glcv.Correlator(W, H, engine="cpu") as c:
            with self.assertRaises(glcv.StateError):
                c.correlate([ref])
            c.set_reference(ref)
            r = c.correlate([ref, 255 - ref, other, np.full((H, W), 9, np.uint8)])
            self.assertEqual(r[0], 1.0)
            self.assertEqual(r[1], -1.0)
            self.assertLess(abs(r[2]), 0.1)
            self.assertEqual(r[3], 0.0)
            rgb = np.dstack([ref] * 3)
            self.assertEqual(c.correlate([rgb])[0], 1.0, "colour converted to gray")
            self.assertEqual(c.bank_size, 0)
            c.load_bank([ref, other])
            self.assertEqual(c.bank_size, 2)
            self.assertTrue(np.array_equal(c.run_bank(), r[[0, 2]]))
            with tempfile.TemporaryDirectory() as d:
                glcv.imwrite(os.path.join(d, "a.png"), ref)
                self.assertEqual(c.correlate_files([os.path.join(d, "a.png")])[0], 1.0)
                with self.assertRaises(glcv.FileError):
                    c.correlate_files([os.path.join(d, "none.png")])
            for bad in ([], ref, [ref.astype(np.float32)], [ref[:5]]):
                with self.assertRaises((glcv.InvalidArgumentError, glcv.SizeMismatchError)):
                    c.correlate(bad)
        with self.assertRaises(glcv.InvalidArgumentError):
            glcv.Correlator(W, H, format="bgra", engine="cpu")


class Images(unittest.TestCase):
    def test_roundtrip_and_errors(self):
        bg, _ = scene()
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "x.png")
            glcv.imwrite(p, bg)
            self.assertEqual(glcv.imageinfo(p), (W, H, 3))
            self.assertTrue(np.array_equal(glcv.imread(p), bg))
            self.assertTrue(np.array_equal(glcv.imread(p, "bgr"), bg[:, :, ::-1]))
            rgba = glcv.imread(p, "rgba")
            self.assertTrue(np.array_equal(rgba[:, :, :3], bg) and (rgba[:, :, 3] == 255).all())
            gray = glcv.imread(p, "gray")
            c = bg.astype(np.int32)
            expect = (77 * c[:, :, 0] + 150 * c[:, :, 1] + 29 * c[:, :, 2] + 128) >> 8
            self.assertTrue(np.array_equal(gray, expect.astype(np.uint8)))
            glcv.imwrite(p, bg[:, :, ::-1], order="bgr", fast=True)
            self.assertTrue(np.array_equal(glcv.imread(p, None), bg))
            glcv.imwrite(p, gray)
            self.assertEqual(glcv.imread(p, None).shape, (H, W))
            with self.assertRaises(glcv.FileError) as cm:
                glcv.imread(os.path.join(d, "missing.png"))
            self.assertIsInstance(cm.exception, OSError)
            self.assertTrue(cm.exception.message)
            bad = os.path.join(d, "bad.png")
            with open(bad, "wb") as f:
                f.write(b"\x89PNG\r\n\x1a\nnot really")
            with self.assertRaises(glcv.CorruptDataError):
                glcv.imread(bad)
            limit = glcv.max_pixels()
            try:
                self.assertEqual(glcv.set_max_pixels(100), 100)
                with self.assertRaises(glcv.LimitError):
                    glcv.imread(p)
            finally:
                glcv.set_max_pixels(limit)
            for args in ((p, "hsv"), (5,), ("",), ("a\0b",)):
                with self.assertRaises(glcv.InvalidArgumentError, msg=str(args)):
                    glcv.imread(*args)
            with self.assertRaises(glcv.InvalidArgumentError):
                glcv.imwrite(p, bg.astype(np.float32))
            with self.assertRaises(glcv.FileError):
                glcv.imwrite(os.path.join(d, "no", "such", "dir.png"), bg)

    def test_fifo_is_refused_at_once(self):
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "pipe.png")
            os.mkfifo(fifo)
            for read in (glcv.imread, glcv.imageinfo):
                got = []

                def work():
                    try:
                        read(fifo)
                    except glcv.Error as e:
                        got.append(e)

                t = threading.Thread(target=work, daemon=True)
                t.start()
                t.join(10)
                if t.is_alive():  # blocked in open(): a writer lets it go on, then fail
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                    t.join(10)
                    self.fail(f"{read.__name__} of a FIFO blocked for 10 s")
                self.assertEqual(len(got), 1, f"{read.__name__} of a FIFO raised nothing")
                self.assertIsInstance(got[0], glcv.FileError)
                self.assertIn("pipe.png", got[0].message)
                self.assertIn("is not a regular file (a FIFO)", got[0].message)


class NoContext(unittest.TestCase):
    def test_gl_engine_without_context(self):
        result = []

        def work():  # a new thread has no current context
            try:
                glcv.Segmenter(W, H, engine="fragment")
                result.append(None)
            except glcv.Error as e:
                result.append(e)

        t = threading.Thread(target=work)
        t.start()
        t.join()
        self.assertIsInstance(result[0], glcv.NoContextError)
        self.assertEqual(result[0].status, 4)


# ---- GL engines --------------------------------------------------------------------------------


class GL(unittest.TestCase):
    ctx = None

    def test_context(self):
        self.assertIn(" | ", self.ctx.description)
        self.assertTrue(glcv.gl_context_current())
        self.ctx.make_current()
        self.assertEqual(self.ctx.cuda_device, -1 if self.ctx.cuda_device == -1 else self.ctx.cuda_device)

    def test_segmenter_engines_agree_with_the_cpu(self):
        bg, frame = scene(w=97, h=61)
        masks = {}
        for engine in ("cpu", "fragment", "compute", "auto"):
            with glcv.Segmenter(97, 61, engine=engine, context=self.ctx) as seg:
                if engine != "auto":
                    self.assertEqual(seg.engine, engine)
                else:
                    self.assertIn(seg.engine, ("fragment", "compute"))
                seg.set_background(bg)
                masks[engine] = [seg.segment(frame).copy(), seg.segment(frame[:, :, ::-1], order="bgr").copy()]
                self.assertTrue(np.array_equal(seg.background(), bg))
        for engine in ("fragment", "compute", "auto"):
            for i in range(2):
                self.assertTrue(np.array_equal(masks[engine][i], masks["cpu"][i]),
                                f"{engine} frame {i}: {differ(masks[engine][i], masks['cpu'][i])}")

    def test_bgsub_engines_agree(self):
        bg, frame = scene()
        out = {}
        for engine in ("cpu", "fragment", "compute"):
            with glcv.BackgroundSubtractor(W, H, engine=engine, context=self.ctx) as sub:
                sub.learn([bg])
                out[engine] = [sub.apply(f).copy() for f in (bg, bg, frame, frame)] + list(sub.state())
        for engine in ("fragment", "compute"):
            for a, b in zip(out[engine], out["cpu"]):
                self.assertTrue(np.array_equal(a, b), engine)

    def test_closed_context(self):
        ctx = glcv.Context()
        seg = glcv.Segmenter(W, H, engine="fragment", context=ctx)
        seg.set_background(scene()[0])
        seg.close()
        ctx.close()
        with self.assertRaises(glcv.StateError):
            ctx.make_current()
        with self.assertRaises(glcv.StateError):
            ctx.describe()
        self.ctx.make_current()
        # an object whose context is gone: NO_CONTEXT, not a crash
        ctx2 = glcv.Context()
        seg2 = glcv.Segmenter(W, H, engine="fragment")
        ctx2.close()
        self.ctx.make_current()
        with self.assertRaises(glcv.NoContextError):
            seg2.set_background(scene()[0])
        seg2.close()


# ---- CUDA engines ------------------------------------------------------------------------------


class Cuda(unittest.TestCase):
    def test_tracker_matcher_correlator_agree_with_the_cpu(self):
        frames = disc_frames(6)
        res = {}
        for engine in ("cpu", "cuda"):
            with glcv.Tracker(W, H, engine=engine, method="camshift") as tr:
                tr.add(tr.compute_hist(frames[0], (9, 17, 15, 15)), (9, 17, 15, 15))
                res[engine] = [tr.track(f) for f in frames]
        self.assertEqual(res["cuda"], res["cpu"])
        rng = np.random.default_rng(2)
        img = rng.integers(0, 256, (H, W), dtype=np.uint8)
        scores = {}
        for engine in ("cpu", "cuda"):
            with glcv.Matcher(W, H, engine=engine) as m, glcv.Correlator(W, H, engine=engine) as c:
                m.set_template(img[5:15, 7:20])
                c.set_reference(img)
                scores[engine] = (m.match(img), c.correlate([img, 255 - img, img[::-1]]))
        self.assertTrue(np.array_equal(scores["cuda"][0], scores["cpu"][0]))
        self.assertTrue(np.array_equal(scores["cuda"][1], scores["cpu"][1]))


def check_layout(program):
    """Compares the C compiler's sizes and offsets (struct_layout.c) with cffi's."""
    from glcv._lib import ffi
    out = subprocess.run([program], capture_output=True, text=True, check=True, timeout=60).stdout
    bad = 0
    for line in out.splitlines():
        name, value = line.split()
        struct, _, field = name.partition(".")
        mine = ffi.offsetof(struct, field) if field else ffi.sizeof(struct)
        if mine != int(value):
            print(f"FAIL: {name}: C {value}, cffi {mine}")
            bad += 1
    print(f"{len(out.splitlines())} sizes and offsets compared, {bad} differ")
    return 1 if bad or not out else 0


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "--api"
    if mode == "--layout" and len(sys.argv) == 3:
        return check_layout(sys.argv[2])
    loader = unittest.TestLoader()
    if mode == "--gl":
        try:
            GL.ctx = glcv.Context()
        except glcv.Error as e:
            print(f"test_api --gl: no GL context ({e}): skipped")
            return 77
        print("test_api --gl:", GL.ctx.description)
        suite = loader.loadTestsFromTestCase(GL)
    elif mode == "--cuda":
        try:
            glcv.Tracker(8, 8, engine="cuda", method="camshift").close()
        except glcv.UnsupportedError as e:
            print(f"test_api --cuda: no CUDA device ({e}): skipped")
            return 77
        suite = loader.loadTestsFromTestCase(Cuda)
    elif mode == "--api":
        suite = unittest.TestSuite(loader.loadTestsFromTestCase(c) for c in
                                   (Errors, Frames, Segmenter, BackgroundSubtractor, Tracker, Matcher,
                                    Correlator, Images, NoContext))
    else:
        print("usage: test_api.py [--gl | --cuda | --layout PROGRAM]", file=sys.stderr)
        return 2
    print("glcv library:", glcv.library_path)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if GL.ctx is not None:
        GL.ctx.close()
    if not result.wasSuccessful():
        return 1
    if result.testsRun == 0 or len(result.skipped) == result.testsRun:
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
