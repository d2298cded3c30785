"""A headless OpenGL context (include/glcv/context.h), for the GL engines."""
from . import _core
from ._lib import ffi, lib


class Context(_core.Object):
    """A headless GL context (EGL device platform, else surfaceless), current on the calling
    thread once created. GL engines run in the context current on the calling thread: create the
    Context first, then the objects, pass it to them (context=ctx) so it outlives them, and call
    make_current() on a thread before using them there (a context is current on one thread at a
    time). Raises NoContextError when no GL context can be had.

        with glcv.Context() as ctx:
            print(ctx.description)
    """

    _kind = "context"

    def __init__(self, surfaceless_only=False, min_gl_version=0, cuda_device=None):
        params = ffi.new("glcv_context_params *")
        params.surfaceless_only = 1 if surfaceless_only else 0
        params.min_gl_version = _core.number(min_gl_version, "min_gl_version", int)
        if cuda_device is not None:
            params.match_cuda_device = 1
            params.cuda_device = _core.number(cuda_device, "cuda_device", int)
        params.logger = _core.logger()
        self._create(params, None)

    def make_current(self):
        """Makes the context current on the calling thread."""
        self._call("make_current")

    def describe(self):
        """"<GL_RENDERER> | <GL_VERSION> | <EGL platform>"."""
        return ffi.string(self._get("describe")).decode()

    description = property(describe)

    @property
    def cuda_device(self):
        """The CUDA device of the context's EGL device, or -1."""
        return int(self._get("cuda_device"))

    def close(self):
        """Destroys the context (objects made in it should be closed first)."""
        super().close()

    def _destroy(self, ptr):
        lib.glcv_context_destroy(ptr)

    def __repr__(self):
        return "<glcv.Context closed>" if self.closed else f"<glcv.Context {self.describe()}>"


def gl_context_current():
    """True when some OpenGL context is current on the calling thread."""
    return bool(lib.glcv_gl_context_current())
