"""What every class of the package shares: the errors, the log forwarding, frames as numpy
arrays, and the base of the objects (close, context manager, __del__)."""
import logging
import threading

import numpy as np

from ._lib import ffi, lib

# ---- statuses and errors ---------------------------------------------------------------------

STATUS_NAMES = {
    0: "GLCV_OK",
    1: "GLCV_ERROR_INVALID_ARGUMENT",
    2: "GLCV_ERROR_SIZE_MISMATCH",
    3: "GLCV_ERROR_STATE",
    4: "GLCV_ERROR_NO_CONTEXT",
    5: "GLCV_ERROR_UNSUPPORTED",
    6: "GLCV_ERROR_GL",
    7: "GLCV_ERROR_OUT_OF_MEMORY",
    8: "GLCV_ERROR_IO",
    9: "GLCV_ERROR_CORRUPT_DATA",
    10: "GLCV_ERROR_CUDA",
    11: "GLCV_ERROR_LIMIT",
}


class Error(Exception):
    """A glcv call failed. `status` is the library's glcv_status code, `name` its name
    ("GLCV_ERROR_INVALID_ARGUMENT"), `message` what the library logged about it (the last
    message of the call; None when it logged nothing), `function` the C function (or the Python
    method, for checks made before any call)."""

    def __init__(self, status, message=None, function=None):
        self.status = int(status)
        self.name = STATUS_NAMES.get(self.status, f"GLCV_STATUS_{self.status}")
        self.message = message
        self.function = function
        text = ffi.string(lib.glcv_status_string(self.status)).decode()
        if message:
            text += ": " + message
        if function:
            text += f" ({function})"
        super().__init__(text)


class InvalidArgumentError(Error, ValueError):
    """GLCV_ERROR_INVALID_ARGUMENT: a bad value, array, shape, dtype or enum name."""


class SizeMismatchError(Error, ValueError):
    """GLCV_ERROR_SIZE_MISMATCH: an image whose size differs from the object's."""


class StateError(Error):
    """GLCV_ERROR_STATE: a call out of order, or an object used after close()."""


class NoContextError(Error):
    """GLCV_ERROR_NO_CONTEXT: no GL context current (or none could be created)."""


class UnsupportedError(Error):
    """GLCV_ERROR_UNSUPPORTED: missing from this build, driver, device or processor."""


class GLError(Error):
    """GLCV_ERROR_GL: a GL error, a shader or framebuffer failure."""


class OutOfMemoryError(Error, MemoryError):
    """GLCV_ERROR_OUT_OF_MEMORY."""


class FileError(Error, OSError):
    """GLCV_ERROR_IO: a file could not be opened, read or written."""

    def __init__(self, status, message=None, function=None):
        Error.__init__(self, status, message, function)


class CorruptDataError(Error):
    """GLCV_ERROR_CORRUPT_DATA: a file that cannot be decoded."""


class CudaError(Error):
    """GLCV_ERROR_CUDA: a CUDA call failed."""


class LimitError(Error):
    """GLCV_ERROR_LIMIT: an input above a resource limit the caller can raise."""


_ERROR_CLASSES = {1: InvalidArgumentError, 2: SizeMismatchError, 3: StateError, 4: NoContextError,
                  5: UnsupportedError, 6: GLError, 7: OutOfMemoryError, 8: FileError,
                  9: CorruptDataError, 10: CudaError, 11: LimitError}


def error(status, message=None, function=None):
    """The exception for a status: the subclass of Error that names it."""
    return _ERROR_CLASSES.get(int(status), Error)(status, message, function)


def invalid(message, function=None):
    return InvalidArgumentError(1, message, function)


# ---- logging -----------------------------------------------------------------------------------

LOG = logging.getLogger("glcv")
LOG.addHandler(logging.NullHandler())  # a library prints nothing unless the application says so
_LEVELS = {1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO, 4: logging.DEBUG}
_log_function = None


def set_log_function(fn):
    """Sends the library's log lines to fn(level, message) (level 1 error, 2 warning, 3 info,
    4 debug) instead of the "glcv" logger of Python's logging module; None restores that. The
    function may be called from any thread that calls into glcv; what it raises is dropped."""
    global _log_function
    if fn is not None and not callable(fn):
        raise TypeError("set_log_function: a callable or None")
    _log_function = fn


class _Messages(threading.local):
    """The last message the library logged on this thread, kept per call for the errors."""
    last = None


_messages = _Messages()


@ffi.callback("void(void *, int, const char *)")
def _on_log(user, level, message):
    try:
        text = ffi.string(message).decode("utf-8", "replace") if message != ffi.NULL else ""
        if level <= 2 or _messages.last is None:
            _messages.last = text
        fn = _log_function
        if fn is not None:
            fn(int(level), text)
        else:
            LOG.log(_LEVELS.get(level, logging.DEBUG), "%s", text)
    except BaseException:  # noqa: B902 - an exception must not cross into C
        pass


def logger():
    """A glcv_logger that forwards to Python: DEBUG lines only when they would be used."""
    debug = _log_function is not None or LOG.isEnabledFor(logging.DEBUG)
    return (_on_log, ffi.NULL, 4 if debug else 3)


def check(status, function):
    """Raises the error of a status (with this thread's last logged message) unless it is OK."""
    if status != 0:
        message, _messages.last = _messages.last, None
        raise error(status, message, function)


def call(function, *args):
    """Calls lib.<function>(*args) and raises its error."""
    _messages.last = None
    check(getattr(lib, function)(*args), function)


# ---- pixel formats and frames ------------------------------------------------------------------

GRAY8, RGB8, RGBA8, BGR8, BGRA8 = 1, 2, 3, 4, 5
_FORMATS = {"gray": GRAY8, "rgb": RGB8, "rgba": RGBA8, "bgr": BGR8, "bgra": BGRA8}
_CHANNELS = {GRAY8: 1, RGB8: 3, RGBA8: 4, BGR8: 3, BGRA8: 4}


def pixel_format(name, what="format"):
    """A pixel format from its name ("gray", "rgb", "rgba", "bgr", "bgra") or its number."""
    if isinstance(name, str) and name.lower() in _FORMATS:
        return _FORMATS[name.lower()]
    if isinstance(name, (int, np.integer)) and not isinstance(name, bool) and int(name) in _CHANNELS:
        return int(name)
    raise invalid(f"{what} {name!r}: one of {', '.join(_FORMATS)}")


def frame_format(array, order, what):
    """The glcv_pixel_format of an array: HxW gray, HxWx3 and HxWx4 in `order` ("rgb" or
    "bgr")."""
    if order not in ("rgb", "bgr"):
        raise invalid(f"{what}: order {order!r}: 'rgb' or 'bgr'")
    if array.ndim == 2 or (array.ndim == 3 and array.shape[2] == 1):
        return GRAY8
    if array.ndim == 3 and array.shape[2] in (3, 4):
        return {("rgb", 3): RGB8, ("bgr", 3): BGR8, ("rgb", 4): RGBA8, ("bgr", 4): BGRA8}[
            (order, array.shape[2])]
    raise invalid(f"{what}: shape {array.shape}: HxW, HxWx3 or HxWx4")


def as_frame(frame, what, order="rgb", gray=True, size=None):
    """Checks a frame and returns (array, format): the caller's array itself when its rows may be
    given to the library as they are (each row's pixels packed, rows any positive distance apart),
    a C-contiguous copy otherwise. Raises InvalidArgumentError for anything else."""
    if not isinstance(frame, np.ndarray):
        raise invalid(f"{what}: a numpy array, not {type(frame).__name__}")
    if frame.dtype != np.uint8:
        raise invalid(f"{what}: dtype {frame.dtype}: uint8 (0..255)")
    fmt = frame_format(frame, order, what)
    if fmt == GRAY8 and not gray:
        raise invalid(f"{what}: a colour frame (HxWx3 or HxWx4), not gray")
    h, w = frame.shape[:2]
    if h < 1 or w < 1:
        raise invalid(f"{what}: an empty array {frame.shape}")
    if size is not None and (w, h) != size:
        raise SizeMismatchError(2, f"{what}: {w}x{h}, the object's size is {size[0]}x{size[1]}")
    channels = _CHANNELS[fmt]
    packed = frame.ndim == 2 and frame.strides[1] == 1 or \
        frame.ndim == 3 and frame.strides[2] == 1 and frame.strides[1] == channels or \
        frame.ndim == 3 and channels == 1 and frame.strides[1] == 1
    if not packed or frame.strides[0] < w * channels:
        frame = np.ascontiguousarray(frame)
    return frame, fmt


def image_struct(array, fmt, out=None):
    """A glcv_image over a numpy array (which must stay alive while the struct is used)."""
    img = out if out is not None else ffi.new("glcv_image *")
    # from_buffer costs 0.5 us where ctypes.data costs 1.3 (bench/python_call_bench.py's machine);
    # it takes only contiguous arrays
    img.data = ffi.from_buffer("uint8_t[]", array) if array.flags.c_contiguous else \
        ffi.cast("uint8_t *", array.ctypes.data)
    img.height, img.width = array.shape[0], array.shape[1]
    img.stride = array.strides[0]
    img.format = fmt
    return img


def frame_struct(frame, what, order="rgb", gray=True, size=None):
    """(array, glcv_image *) of a frame argument: keep the array alive as long as the struct."""
    array, fmt = as_frame(frame, what, order, gray, size)
    return array, image_struct(array, fmt)


def frames_structs(frames, what, order, gray, size, count):
    """(arrays, glcv_image[count]) of a sequence of frames, one per stream."""
    if isinstance(frames, np.ndarray) and count == 1 and frames.ndim in (2, 3) and \
            not (frames.ndim == 3 and frames.shape[2] > 4):
        frames = [frames]
    frames = list(frames)
    if len(frames) != count:
        raise invalid(f"{what}: {len(frames)} frames for {count} streams")
    arrays, structs = [], ffi.new("glcv_image[]", count)
    for i, f in enumerate(frames):
        a, fmt = as_frame(f, f"{what}[{i}]", order, gray, size)
        arrays.append(a)
        image_struct(a, fmt, structs[i])
    return arrays, structs


def rect(value, what):
    """A glcv_rect from (x, y, width, height): integers, as number(kind=int) takes them (an
    integral float such as 4.0 is one; 0.5, a string or a bool is refused, never truncated)."""
    try:
        items = list(value)
    except TypeError:
        items = None
    if items is None or len(items) != 4:
        raise invalid(f"{what}: (x, y, width, height) of ints, not {value!r}")
    x, y, w, h = (number(v, f"{what} {name} in {value!r}", int)
                  for v, name in zip(items, ("x", "y", "width", "height")))
    return ffi.new("glcv_rect *", (x, y, w, h))[0]


def engine(name, what="engine"):
    """An engine from its name ("auto", "fragment", "compute", "cpu", "cuda")."""
    if not isinstance(name, str):
        raise invalid(f"{what}: a name, not {name!r}")
    out = ffi.new("int *")
    if lib.glcv_engine_mode_parse(name.encode(), out) != 0:
        raise invalid(f"{what} {name!r}: auto, fragment, compute, cpu or cuda")
    return out[0]


def engine_name(mode):
    return ffi.string(lib.glcv_engine_mode_string(mode)).decode()


def number(value, what, kind=float):
    """A float or an int argument, refusing what is not a number (bools included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise invalid(f"{what}: a number, not {value!r}")
    if kind is int:
        if isinstance(value, (float, np.floating)) and not float(value).is_integer():
            raise invalid(f"{what}: an integer, not {value!r}")
        value = int(value)
        if not -2**31 <= value < 2**31:
            raise invalid(f"{what}: {value} does not fit in an int")
        return value
    return float(value)


def timings(structs, count):
    return {ffi.string(structs[i].name).decode(): float(structs[i].ms) for i in range(count)}


# ---- objects -----------------------------------------------------------------------------------


class Object:
    """The base of the classes that own a library object: close() (also on leaving a `with`
    block, and when garbage-collected) destroys it, and any later use raises StateError."""

    _kind = "object"          # the C prefix: glcv_<kind>_destroy
    _handle = ffi.NULL

    def _create(self, params, context):
        self._context = context  # kept alive as long as the object: destroyed after it
        # close() on one thread waits for a call on another to return (the C object would be
        # freed under it); the C functions lock the object themselves.
        self._lock = threading.Lock()
        out = ffi.new(f"glcv_{self._kind} **")
        call(f"glcv_{self._kind}_create", params, out)
        self._ptr = out

    @property
    def _h(self):
        ptr = getattr(self, "_ptr", None)
        if ptr is None or ptr[0] == ffi.NULL:
            raise StateError(3, f"the {type(self).__name__} is closed", type(self).__name__)
        return ptr[0]

    def _call(self, function, *args):
        with self._guard():
            call(f"glcv_{self._kind}_{function}", self._h, *args)

    def _get(self, function):
        """lib.glcv_<kind>_<function>(handle) for the functions that return a value, not a status."""
        with self._guard():
            return getattr(lib, f"glcv_{self._kind}_{function}")(self._h)

    def _guard(self):
        lock = getattr(self, "_lock", None)
        if lock is None:
            raise StateError(3, f"the {type(self).__name__} is closed", type(self).__name__)
        return lock

    def close(self):
        """Destroys the library object (with a GL engine: in its context, made current when it
        was given at creation). Calling it again does nothing."""
        ptr, lock = getattr(self, "_ptr", None), getattr(self, "_lock", None)
        if ptr is None or lock is None:
            return
        with lock:
            if ptr[0] == ffi.NULL:
                return
            ctx = getattr(self, "_context", None)
            if ctx is not None and not ctx.closed and not lib.glcv_gl_context_current():
                lib.glcv_context_make_current(ctx._ptr[0])
            self._destroy(ptr)
            self._context = None

    def _destroy(self, ptr):
        getattr(lib, f"glcv_{self._kind}_destroy")(ptr)

    @property
    def closed(self):
        ptr = getattr(self, "_ptr", None)
        return ptr is None or ptr[0] == ffi.NULL

    def __enter__(self):
        self._h  # noqa: B018 - refuses a closed object
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing may escape a finaliser
            pass
