/* glcv background subtraction: VSAM adaptive background subtraction (Collins et al., CMU VSAM
 * 2000, as Temizel et al. build it on the GPU in GPU Gems 3 chapter 34) and frame differencing,
 * for one camera or many cameras of one size at once.
 *
 * Per pixel and channel (values 0..255; B and T kept in 8.8 fixed point, so every engine gives
 * the same bits), with I_n the current frame and I_n-1, I_n-2 the two before it:
 *   DIFF2   foreground where |I_n - I_n-1| > T
 *   DIFF3   foreground where |I_n - I_n-1| > T and |I_n - I_n-2| > T
 *   VSAM    moving where |I_n - I_n-1| > T and |I_n - I_n-2| > T; foreground where |I_n - B| > T;
 *           B and T adapt where the pixel is neither moving nor foreground:
 *             B <- alpha B + (1 - alpha) I_n
 *             T <- max(min_threshold, alpha T + (1 - alpha) c |I_n - B|)
 * In colour a pixel moves, or is foreground, where any of its channels does. T is per pixel and
 * channel: min_threshold until learned (glcv_bgsub_learn_*), which measures it on the scene.
 * Two additions to the chapter's VSAM, measured in docs/QUALITY.md:
 *   - Updating B and T only where the pixel is not foreground (Collins et al. update where it is
 *     not moving) keeps the inside of uniform objects, which frame differences miss, out of the
 *     background. So that a real change of the scene (a parked car, a light switched on) is not
 *     foreground for ever, a counter per pixel goes up on every frame the pixel is foreground
 *     without moving and down on every background frame; at `absorb` the pixel adapts again.
 *   - The mask is a 3 x 3 majority: a pixel is foreground where at least `vote` of the nine
 *     pixels around it (itself included, clamped at the edges) are (all methods).
 * The exact integer arithmetic is written in src/bgsub_internal.h.
 *
 * Many cameras: `streams` cameras of one size are one object. Their frames are handed over as a
 * set (one image per stream, or one texture array already on the GPU), uploaded in one transfer
 * and processed by one draw or dispatch per pass for all streams (GL texture arrays, one layer per
 * stream).
 *
 * Engines: FRAGMENT and COMPUTE (GL passes in the current context; GL 3.3 core, compute 4.3) and
 * CPU (the same integer arithmetic in C: the fallback and the tests' oracle). AUTO (the default)
 * picks as the segmenter does (glcv/segment.h), CPU when no GL context is current. CUDA is
 * INVALID_ARGUMENT. Every engine gives the same masks, backgrounds and thresholds, bit for bit.
 *
 * Thread safety: every function locks the object's mutex. Every function that uses GL follows
 * the GL rules of glcv/core.h.
 */
#ifndef GLCV_BGSUB_H
#define GLCV_BGSUB_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct glcv_bgsub glcv_bgsub;

/* 0 (DEFAULT) is VSAM. */
typedef enum glcv_bgsub_method {
    GLCV_BGSUB_DEFAULT = 0,
    GLCV_BGSUB_VSAM = 1,
    GLCV_BGSUB_DIFF2 = 2,
    GLCV_BGSUB_DIFF3 = 3
} glcv_bgsub_method;

/* "vsam", "diff2", "diff3" ("vsam" for DEFAULT); "?" for unknown values. */
GLCV_API const char *glcv_bgsub_method_string(glcv_bgsub_method method);
/* Parses the names above; INVALID_ARGUMENT for anything else. */
GLCV_API glcv_status glcv_bgsub_method_parse(const char *name, glcv_bgsub_method *out);

/* How the GL engines lay out the work (the CPU engine ignores it). 0 (DEFAULT) is SINGLE. */
typedef enum glcv_bgsub_passes {
    GLCV_BGSUB_PASSES_DEFAULT = 0,
    /* One pass decides every pixel and writes B, T and the counter together (multiple render
     * targets, or image stores); a second one takes the vote into the mask. */
    GLCV_BGSUB_SINGLE_PASS = 1,
    /* The chapter's chain of kernels: moving pixels, foreground, counter, background,
     * threshold, each a pass of its own, then the vote. Slower (docs/PERFORMANCE.md); kept for
     * comparison. */
    GLCV_BGSUB_MULTI_PASS = 2
} glcv_bgsub_passes;

/* How the GL engines bring a frame set to the GPU. Each moves the set once from the pinned
 * staging memory. 0 (DEFAULT), the fastest measured in each case (docs/PERFORMANCE.md): with the
 * COMPUTE engine and OpenGL 4.4, STREAM for packed gray frames and STREAM_FUSED for frames of one
 * pixel per texel whose width is a multiple of 4 (single pass; its masks are made one set later
 * unless asked for, see there); COPY otherwise. */
typedef enum glcv_bgsub_upload {
    GLCV_BGSUB_UPLOAD_DEFAULT = 0,
    /* A buffer copy (glCopyBufferSubData: the copy engine, while the passes of the set before
     * run) into the device's frame ring. */
    GLCV_BGSUB_UPLOAD_COPY = 1,
    /* The first pass reads the frames from the pinned memory itself and writes them into the
     * frame ring as it goes; with params.download the vote also writes the masks straight into
     * the host's download memory. COMPUTE with OpenGL 4.4 only (else UNSUPPORTED). Each
     * invocation reads the words that hold its own pixel: side by side for packed gray, in
     * scattered pieces for 3 bytes a pixel. */
    GLCV_BGSUB_UPLOAD_STREAM = 2,
    /* As STREAM, but the first pass reads the set in contiguous blocks (a work group's 64
     * invocations of 4 pixels each read their 64 x 4 pixels in 16-byte loads, neighbour beside
     * neighbour, through shared memory), B, T, the counter and the decisions are kept in buffers
     * in the order of the pixels (each invocation reads and writes its 4 pixels' state in 16-byte
     * words), and the vote writes a word of 4 mask bytes per invocation. Frames of one pixel per
     * texel whose width is a multiple of 4, SINGLE_PASS, and a set whose state fits in one GL
     * storage block (GL_MAX_SHADER_STORAGE_BLOCK_SIZE; 16 bytes a pixel); otherwise it is STREAM,
     * which get_params then says. COMPUTE with OpenGL 4.4 only (else UNSUPPORTED). */
    GLCV_BGSUB_UPLOAD_STREAM_BLOCKS = 3,
    /* As STREAM_BLOCKS, with one dispatch per set: it reads and decides the new set while it
     * votes the set before and writes that set's masks, so that frames in and masks out cross
     * the bus at once. Latency: a set's masks are made during the next set's dispatch. Asking
     * for the newest set's masks (read_masks or map_masks with age 0, mask_texture) makes them
     * then, by a pass of their own; with params.download, a caller that reads one set behind
     * (age 1) gets them from the next set's dispatch, without that pass (without
     * params.download the dispatch votes nothing: only the newest set's masks can be asked for).
     * Falls back as STREAM_BLOCKS does. COMPUTE with OpenGL 4.4 only (else UNSUPPORTED). */
    GLCV_BGSUB_UPLOAD_STREAM_FUSED = 4
} glcv_bgsub_upload;

/* Zero fields mean defaults. */
typedef struct glcv_bgsub_params {
    int width;   /* required, 1..16384 */
    int height;  /* required, 1..16384 */
    int streams; /* cameras processed together, default 1; 1..2048 (and at most the GL's
                  * GL_MAX_ARRAY_TEXTURE_LAYERS) */
    glcv_bgsub_method method; /* default VSAM */
    /* The layout of the frames the object takes (GRAY8, RGB8, RGBA8, BGR8, BGRA8; default RGB8).
     * Frames in this layout are uploaded as they are; frames in another one are converted on the
     * host first. */
    glcv_pixel_format format;
    /* Nonzero: work on luma, Y = (77 R + 150 G + 29 B + 128) >> 8, as the chapter does (always so
     * when `format` is GRAY8). Default 0: the three colour channels. */
    int gray;
    float alpha;         /* 0 < alpha < 1; default 0.92 (the chapter's) */
    float c;             /* T's multiple of |I - B|, 0 < c <= 16; default 3 (the chapter's) */
    float min_threshold; /* T never falls below it, 0..255; default 20 (the chapter's) */
    /* VSAM: frames a pixel stays foreground without moving before it adapts again (a change
     * of the scene becomes background), 1..255; default 100 (4 s at 25 fps, 8 / (1 - alpha)). */
    int absorb;
    /* Pixels of the 3 x 3 that must be foreground for the mask to say foreground, 1..9;
     * default 5 (majority); -1: no vote, each pixel's own decision. */
    int vote;
    glcv_engine_mode engine;  /* default AUTO; FRAGMENT, COMPUTE or CPU (CUDA: INVALID_ARGUMENT) */
    glcv_bgsub_passes passes; /* default SINGLE */
    glcv_bgsub_upload upload; /* default: see glcv_bgsub_upload */
    /* Gray only: 1 packs 4 horizontally adjacent pixels into one RGBA8 texel (the chapter's
     * 32-bit access), -1 keeps one pixel per texel, 0 (default) packs when width % 4 == 0.
     * Masks and images read back are the same either way. */
    int packed;
    /* Nonzero: every frame set's masks are downloaded into host memory as soon as they are made
     * (one transfer per set, overlapped with the next set's work), so that glcv_bgsub_read_masks
     * with age 1 does not wait. Default 0: masks are read when asked for. */
    int download;
    int timing; /* nonzero: GPU timer queries per pass (glcv_bgsub_timings) */
    glcv_logger logger;
} glcv_bgsub_params;

#define GLCV_BGSUB_PARAMS(...) ((glcv_bgsub_params){__VA_ARGS__})

/* Creates the object. Errors: INVALID_ARGUMENT (NULL, sizes, NaN or out-of-range parameters,
 * packed = 1 for a width that is not a multiple of 4 or for colour), NO_CONTEXT (FRAGMENT or
 * COMPUTE without a current context), UNSUPPORTED (GL too old, size or streams above the GL's
 * limits), GL, OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_bgsub_create(const glcv_bgsub_params *params, glcv_bgsub **out);

/* Destroys the object and its GL objects (with its context current; otherwise they are left to
 * die with the context). Accepts NULL and &NULL. */
GLCV_API void glcv_bgsub_destroy(glcv_bgsub **bgsub);

/* The resolved parameters (engine: the one in use; packed: 1 or -1). */
GLCV_API glcv_status glcv_bgsub_get_params(glcv_bgsub *bgsub, glcv_bgsub_params *out);

/* Processes one frame set: frames[i] is stream i's frame (count == streams; the object's size;
 * any format but see params.format; any stride). The first set only fills the history (B is
 * its frame unless learned; the masks are empty); DIFF3 and VSAM need two sets before the first
 * frame difference. With `wait` nonzero the call returns when the GPU is done; otherwise the
 * passes are queued. Errors: INVALID_ARGUMENT, SIZE_MISMATCH, STATE (learning), GL. */
GLCV_API glcv_status glcv_bgsub_frames(glcv_bgsub *bgsub, const glcv_image *frames, int count, int wait);

/* Zero-copy input: fills out[0..count-1] (count == streams) with images in params.format whose
 * pixels lie in persistently mapped upload memory (plain host memory with the CPU engine), one
 * block for the whole set. Fill them, then call glcv_bgsub_frames_mapped: the set goes to the GPU
 * in one transfer and the memory is not copied on the host. Valid until frames_mapped returns,
 * or until another set is processed (glcv_bgsub_frames, frames_texture): frames_mapped is then
 * STATE, as without map_frames. Errors: INVALID_ARGUMENT, GL, OUT_OF_MEMORY; frames_mapped:
 * STATE (no map_frames since the last set; learning), GL. */
GLCV_API glcv_status glcv_bgsub_map_frames(glcv_bgsub *bgsub, glcv_image *out, int count);
GLCV_API glcv_status glcv_bgsub_frames_mapped(glcv_bgsub *bgsub, int wait);

/* Processes one frame set already on the GPU (frames decoded by CUDA into a texture array, say):
 * `texture` is a GL_TEXTURE_2D_ARRAY of the current context with at least `streams` layers, layer
 * i holding stream i's frame (further layers are not read); level 0 of the object's size, internal
 * format GL_RGBA8 or GL_RGB8 (alpha unused); row 0 of a layer is row 0 of the frame, as in a
 * glcv_image (the order in which glTexSubImage3D takes a host image's rows). Everything that
 * follows - masks, B, T, counters - is bit for bit what glcv_bgsub_frames gives for the same
 * pixels as host images. The GL engines copy the layers within GPU memory, in params.format
 * (GRAY8: their luma, by a pass of its own), to where the passes read a host set - the frame ring,
 * or for the streamed uploads a buffer they read as they read the staging memory - so every upload
 * mode runs as for host frames and no pixel crosses the bus. The CPU engine reads them back first
 * (with a GL context current). The texture is read, never modified; the copy is queued before the
 * call returns, so later GL commands, and CUDA through its map, may write it at once. `wait` as
 * for glcv_bgsub_frames; the host's GL state is restored. Thread safety: the object's lock; the GL
 * rules of glcv/core.h (the texture is a name of the context current on the calling thread).
 * Errors: INVALID_ARGUMENT (0, not a texture, not a 2D array, no level 0, fewer layers than
 * streams), SIZE_MISMATCH, UNSUPPORTED (another internal format, base level not 0), STATE
 * (learning), NO_CONTEXT (none current; GL engines: the object's context not current), GL,
 * OUT_OF_MEMORY (CPU engine). */
GLCV_API glcv_status glcv_bgsub_frames_texture(glcv_bgsub *bgsub, unsigned int texture, int wait);

/* Learning: begin, add N >= 1 frame sets, end. B becomes the per-pixel median of up to 16 of the
 * sets (evenly spaced) and T the spread of the learned frames around it, c times the median of
 * |I - B| and at least min_threshold, per pixel and channel; the counters restart at 0, and so
 * does the frame history.
 * Processing in between is STATE. Learning keeps up to 16 frames per stream in host memory.
 * begin starts, or starts again, dropping the sets added so far. An add that fails leaves learning
 * open with the sets added before it: add more or end. End ends learning whatever it returns
 * (except NO_CONTEXT, which changes nothing): with no set added it returns STATE and B, T, the
 * counters and the frame history stay as they were before begin; when it fails otherwise
 * (OUT_OF_MEMORY, GL) they stay as they were too, on the CPU engine. So begin followed by end
 * abandons a learning (the rule of glcv_segment_learn_begin in glcv/segment.h).
 * Errors: as frames; STATE for add/end without begin, or end with no set; OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_bgsub_learn_begin(glcv_bgsub *bgsub);
GLCV_API glcv_status glcv_bgsub_learn_add(glcv_bgsub *bgsub, const glcv_image *frames, int count);
/* As learn_add, with the set from a frames array as glcv_bgsub_frames_texture takes it: read back
 * into host memory (where learning keeps its frames) whatever the engine, so a GL context must be
 * current. Errors: those of learn_add and, for the texture, those of frames_texture. */
GLCV_API glcv_status glcv_bgsub_learn_add_texture(glcv_bgsub *bgsub, unsigned int texture);
GLCV_API glcv_status glcv_bgsub_learn_end(glcv_bgsub *bgsub);

/* Reads masks (255 foreground, 0 background) into out[0..count-1], GRAY8 images of the object's
 * size in the caller's memory (any stride), count == streams. `age` 0: the newest set (waits for
 * the GPU); 1 or 2: the set 1 or 2 before it (with params.download, usually without waiting).
 * Errors: INVALID_ARGUMENT, SIZE_MISMATCH, STATE (no such set yet; an age above 0 without
 * params.download), GL. */
GLCV_API glcv_status glcv_bgsub_read_masks(glcv_bgsub *bgsub, int age, glcv_image *out, int count);

/* As read_masks, without a copy: out[i] becomes stream i's mask (GRAY8, tightly packed) in the
 * object's own memory - the download buffer with the GL engines - read-only and valid until the
 * next call that processes a set. Errors as read_masks. */
GLCV_API glcv_status glcv_bgsub_map_masks(glcv_bgsub *bgsub, int age, glcv_image *out, int count);

/* The state of one stream in 8.8 fixed point (value * 256), width * height * channels uint16
 * each (channels 1 gray, 3 colour; row-major, channels interleaved); either pointer may be NULL.
 * Waits for the GPU. Errors: INVALID_ARGUMENT (stream out of range), STATE (no frame yet), GL. */
GLCV_API glcv_status glcv_bgsub_read_state(glcv_bgsub *bgsub, int stream, uint16_t *background,
                                           uint16_t *threshold);

/* The newest set's masks as one GL_TEXTURE_2D_ARRAY, one layer per stream: GL_R8, width x height,
 * 1.0 (255) foreground; packed gray: GL_RGBA8, width/4 x height, texel x holding the pixels
 * 4x..4x+3 in r, g, b, a. Owned by the object, valid until it is destroyed. Two textures take
 * turns (one set's masks are read back while the next set's are made): ask again after every
 * set. GPU engines only: 0 with the CPU engine or before the first set. With
 * GLCV_BGSUB_UPLOAD_STREAM_FUSED the call makes the masks first (a pass, in the object's context,
 * which must be current: else 0). 0 (logged) whenever the object's context is not current. */
GLCV_API unsigned int glcv_bgsub_mask_texture(glcv_bgsub *bgsub);

/* Forgets the frame history (the next set starts it again); B and T stay. */
GLCV_API glcv_status glcv_bgsub_reset(glcv_bgsub *bgsub);

/* Per-pass GPU times of the most recent set whose timer queries are complete (params.timing):
 * as glcv_segment_timings (errors too). */
GLCV_API glcv_status glcv_bgsub_timings(glcv_bgsub *bgsub, glcv_timing *out, int capacity, int *count, int wait);

#ifdef __cplusplus
}
#endif
#endif
