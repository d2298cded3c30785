/* Checks the pictures a 'glcv stream view --record DIR' wrote, for tests/test_stream.sh.
 *
 *   stream_check source SRC REC --threshold T [--gray] [--first F] [--count N]
 *       REC holds frame_NNNNNN.png for NNNNNN = F, F+1, ... with no gap (exactly N of them with
 *       --count), nothing else; each picture is within T of source frame NNNNNN (SRC's images in
 *       name order; --gray: their luma, as glcv_image_convert computes it) in every byte; and
 *       every byte of a picture either is its byte in the picture before or equals the source's
 *       exactly (a delta sends bytes as they are: the error feedback).
 *   stream_check same A B [--subset]
 *       A and B hold the same frame numbers (--subset: B's are among A's), and those pictures are
 *       identical byte for byte.
 *   stream_check segment SRC REC --threshold T --learn L [--engine E] [--truth TRUTH --after K --margin M]
 *       the 'segment' filter: the checker learns a segmenter (engine E: cpu, or auto as the server
 *       runs it) from the first L source frames as the server does and segments the rest; frames
 *       before L are checked as by 'source'; from L on, as by 'source' against the frame the
 *       server sends: the source where the mask is 1, the segmenter's background (as it is after
 *       segmenting that frame) where it is 0. With TRUTH (the ground truth's images in name order,
 *       255 object), it also looks at where objects were and have gone: in picture n (n >= L + K),
 *       every pixel that an object covered in some frame from L on, that no object came within M
 *       pixels of in frames n - K .. n, and that the mask calls background shows the background
 *       (each byte within T of it), not what the object left there; it fails when no picture has
 *       such a pixel (nothing was checked).
 *   stream_check info REC
 *       prints "first F last L count N" of REC's frame numbers.
 *   stream_check image A.png B.png
 *       the two images have the same size and the same RGB bytes (a window's screenshot against
 *       the picture it shows).
 *
 * Exit status: 0 the check passed, 1 it failed (what and where printed), 2 usage. */
#include "testutil.h"

#include <glcv/glcv.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_REPORTS = 8 };

typedef struct frames {
    long *numbers; /* sorted */
    int count;
} frames;

static int compare_longs(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The frame numbers of REC's frame_NNNNNN.png files; anything else in REC is an error. */
static int list_frames(const char *dir, frames *out)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "stream_check: cannot open %s\n", dir);
        return 1;
    }
    int capacity = 0, rc = 0;
    out->numbers = NULL;
    out->count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        long n = -1;
        char tail[8] = "";
        if (sscanf(e->d_name, "frame_%6ld%7s", &n, tail) != 2 || strcmp(tail, ".png") != 0 || n < 0 ||
            strlen(e->d_name) != strlen("frame_000000.png")) {
            fprintf(stderr, "stream_check: %s/%s is no frame_NNNNNN.png\n", dir, e->d_name);
            rc = 1;
            continue;
        }
        if (out->count == capacity) {
            capacity = capacity ? 2 * capacity : 256;
            out->numbers = realloc(out->numbers, (size_t)capacity * sizeof *out->numbers);
        }
        out->numbers[out->count++] = n;
    }
    closedir(d);
    qsort(out->numbers, (size_t)out->count, sizeof *out->numbers, compare_longs);
    return rc;
}

static int load(const char *dir, long n, glcv_pixel_format format, glcv_image *out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/frame_%06ld.png", dir, n);
    glcv_image_free(out);
    glcv_logger lg = test_logger();
    if (glcv_image_load(path, format, &lg, out) != GLCV_OK) {
        fprintf(stderr, "stream_check: cannot read %s\n", path);
        return 1;
    }
    return 0;
}

/* Source frame n (SRC's images in name order) in `format`. */
static int load_source(const glcv_file_list *src, long n, glcv_pixel_format format, glcv_image *out)
{
    if (n >= src->count) {
        fprintf(stderr, "stream_check: frame %ld, but the source has %d frames\n", n, src->count);
        return 1;
    }
    glcv_image rgb = {0};
    glcv_logger lg = test_logger();
    if (glcv_image_load(src->paths[n], GLCV_PIXEL_RGB8, &lg, &rgb) != GLCV_OK) {
        fprintf(stderr, "stream_check: cannot read %s\n", src->paths[n]);
        return 1;
    }
    glcv_image_free(out);
    int rc = glcv_image_alloc(rgb.width, rgb.height, format, out) != GLCV_OK || glcv_image_convert(&rgb, out) != GLCV_OK;
    glcv_image_free(&rgb);
    return rc;
}

typedef struct tally {
    long bad;     /* bytes that failed */
    int max_diff; /* the largest difference from the source */
    int reports;
} tally;

static void report(tally *t, const char *fmt, long frame, size_t byte, int bpp, int width, int got, int want,
                   const char *what)
{
    t->bad++;
    if (t->reports++ >= MAX_REPORTS)
        return;
    size_t pixel = byte / (size_t)bpp;
    fprintf(stderr, fmt, frame, (int)(pixel % (size_t)width), (int)(pixel / (size_t)width), (int)(byte % (size_t)bpp),
            got, want, what);
}

/* Picture against source within T; against the picture before (prev may be NULL): unchanged or
 * exactly the source. */
static void compare(tally *t, long frame, const glcv_image *pic, const glcv_image *src, const glcv_image *prev,
                    int threshold)
{
    int bpp = glcv_pixel_format_size(pic->format);
    size_t n = (size_t)pic->width * (size_t)pic->height * (size_t)bpp;
    for (size_t i = 0; i < n; i++) {
        int p = pic->data[i], s = src->data[i], d = abs(p - s);
        if (d > t->max_diff)
            t->max_diff = d;
        if (d > threshold)
            report(t, "frame %ld (%d,%d) channel %d: picture %d, source %d (%s)\n", frame, i, bpp, pic->width, p, s,
                   "difference above the threshold");
        else if (prev && p != prev->data[i] && p != s)
            report(t, "frame %ld (%d,%d) channel %d: picture %d, source %d (%s)\n", frame, i, bpp, pic->width, p, s,
                   "changed, but not to the source's value");
    }
}

static int check_contiguous(const frames *f, long first, long count, const char *dir)
{
    if (f->count == 0) {
        fprintf(stderr, "stream_check: %s holds no frames\n", dir);
        return 1;
    }
    if (first >= 0 && f->numbers[0] != first) {
        fprintf(stderr, "stream_check: %s starts at frame %ld, expected %ld\n", dir, f->numbers[0], first);
        return 1;
    }
    for (int i = 1; i < f->count; i++)
        if (f->numbers[i] != f->numbers[i - 1] + 1) {
            fprintf(stderr, "stream_check: %s: frame %ld follows frame %ld (a gap)\n", dir, f->numbers[i],
                    f->numbers[i - 1]);
            return 1;
        }
    if (count >= 0 && f->count != count) {
        fprintf(stderr, "stream_check: %s holds %d frames, expected %ld\n", dir, f->count, count);
        return 1;
    }
    return 0;
}

/* ---- the segmenter's masks, as the server makes them ---------------------------------------- */

typedef struct masker {
    glcv_context *ctx;
    glcv_segment *seg;
    glcv_image mask;
} masker;

static int masker_start(masker *m, const glcv_file_list *src, int learn, const char *engine_name, int w, int h)
{
    glcv_engine_mode engine = GLCV_ENGINE_CPU;
    if (glcv_engine_mode_parse(engine_name, &engine) != GLCV_OK)
        return 2;
    if (engine != GLCV_ENGINE_CPU) {
        glcv_context_params cp = GLCV_CONTEXT_PARAMS(.logger = {NULL, NULL, 0});
        if (glcv_context_create(&cp, &m->ctx) != GLCV_OK)
            engine = GLCV_ENGINE_CPU; /* as the server: auto without a context is the CPU */
    }
    glcv_logger lg = test_logger();
    glcv_segment_params sp = GLCV_SEGMENT_PARAMS(.width = w, .height = h, .engine = engine, .logger = lg);
    glcv_image frame = {0};
    int rc = glcv_segment_create(&sp, &m->seg) != GLCV_OK || glcv_segment_learn_begin(m->seg) != GLCV_OK ||
             glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &m->mask) != GLCV_OK;
    for (int k = 0; k < learn && rc == 0; k++)
        rc = load_source(src, k, GLCV_PIXEL_RGB8, &frame) || glcv_segment_learn_add(m->seg, &frame) != GLCV_OK;
    if (rc == 0)
        rc = glcv_segment_learn_end(m->seg) != GLCV_OK;
    glcv_segment_params got;
    if (rc == 0 && glcv_segment_get_params(m->seg, &got) == GLCV_OK)
        printf("stream_check: segmenter engine %s, Ts %g B1 %g\n", glcv_engine_mode_string(got.engine),
               (double)got.ts, (double)got.b1);
    glcv_image_free(&frame);
    if (rc)
        fprintf(stderr, "stream_check: cannot learn the background\n");
    return rc;
}

static void masker_end(masker *m)
{
    glcv_segment_destroy(&m->seg);
    glcv_image_free(&m->mask);
    glcv_context_destroy(&m->ctx);
}

/* ---- the modes ------------------------------------------------------------------------------ */

static int usage(void)
{
    fprintf(stderr, "usage: stream_check source SRC REC --threshold T [--gray] [--first F] [--count N]\n"
                    "       stream_check same A B [--subset]\n"
                    "       stream_check segment SRC REC --threshold T --learn L [--engine E]\n"
                    "                            [--truth TRUTH --after K --margin M]\n"
                    "       stream_check info REC\n"
                    "       stream_check image A.png B.png\n");
    return 2;
}

typedef struct options {
    int threshold, gray, subset, learn, after, margin;
    long first, count;
    const char *engine, *truth;
} options;

/* Where objects were and have gone, from the ground truth (stream_check segment --truth). */
typedef struct trails {
    glcv_file_list truths;
    glcv_image truth;
    uint8_t *covered; /* per pixel: an object covered it in a frame from L on */
    long *near;       /* per pixel: the last frame an object came within M pixels of it (-1: none) */
    long checked, pictures;
    tally t;
} trails;

/* Takes truth frame n into the trails. */
static int trails_add(trails *tr, const options *o, long n, int w, int h)
{
    glcv_logger lg = test_logger();
    glcv_image_free(&tr->truth);
    if (n >= tr->truths.count || glcv_image_load(tr->truths.paths[n], GLCV_PIXEL_GRAY8, &lg, &tr->truth) != GLCV_OK) {
        fprintf(stderr, "stream_check: no truth for frame %ld in %s\n", n, o->truth);
        return 1;
    }
    if (tr->truth.width != w || tr->truth.height != h) {
        fprintf(stderr, "stream_check: truth %ld is %dx%d, the picture %dx%d\n", n, tr->truth.width,
                tr->truth.height, w, h);
        return 1;
    }
    if (!tr->covered) {
        tr->covered = calloc((size_t)w * (size_t)h, 1);
        tr->near = malloc((size_t)w * (size_t)h * sizeof *tr->near);
        if (!tr->covered || !tr->near)
            return 1;
        for (size_t p = 0; p < (size_t)w * (size_t)h; p++)
            tr->near[p] = -1;
    }
    size_t stride = glcv_image_stride(&tr->truth);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (tr->truth.data[(size_t)y * stride + (size_t)x] < 128)
                continue;
            if (n >= o->learn)
                tr->covered[(size_t)y * (size_t)w + (size_t)x] = 1;
            for (int yy = y - o->margin; yy <= y + o->margin; yy++)
                for (int xx = x - o->margin; xx <= x + o->margin; xx++)
                    if (yy >= 0 && yy < h && xx >= 0 && xx < w)
                        tr->near[(size_t)yy * (size_t)w + (size_t)xx] = n;
        }
    return 0;
}

/* Picture n where objects have gone (and the mask says background) against the background. */
static void trails_check(trails *tr, const options *o, long n, const glcv_image *pic, const glcv_image *mask,
                         const glcv_image *background)
{
    if (n < o->learn + o->after)
        return;
    long here = 0;
    for (size_t p = 0; p < (size_t)pic->width * (size_t)pic->height; p++) {
        if (!tr->covered[p] || tr->near[p] >= n - o->after || mask->data[p] != 0)
            continue;
        here++;
        for (size_t byte = 3 * p; byte < 3 * p + 3; byte++) {
            int d = abs(pic->data[byte] - background->data[byte]);
            if (d > tr->t.max_diff)
                tr->t.max_diff = d;
            if (d > o->threshold)
                report(&tr->t, "frame %ld (%d,%d) channel %d: picture %d, background %d (%s)\n", n, byte, 3,
                       pic->width, pic->data[byte], background->data[byte],
                       "an object left this pixel, but the picture does not show the background");
        }
    }
    tr->checked += here;
    tr->pictures += here > 0;
}

/* The trails' verdict: 0 when there were pixels to check and all showed the background. */
static int trails_finish(trails *tr, const options *o)
{
    int rc = 0;
    if (tr->checked == 0) {
        fprintf(stderr, "stream_check: no picture has a pixel an object had left (learn %d, after %d, margin %d)\n",
                o->learn, o->after, o->margin);
        rc = 1;
    } else if (tr->t.bad) {
        fprintf(stderr, "stream_check: %ld bytes of %ld pixels that objects had left %d frames before or more (in %ld "
                        "pictures) are more than %d from the background (largest difference %d)\n",
                tr->t.bad, tr->checked, o->after, tr->pictures, o->threshold, tr->t.max_diff);
        rc = 1;
    } else {
        printf("stream_check: %ld pixels that objects had left %d frames before or more, in %ld pictures: every byte "
               "within %d of the background (largest difference %d)\n",
               tr->checked, o->after, tr->pictures, o->threshold, tr->t.max_diff);
    }
    glcv_file_list_free(&tr->truths);
    glcv_image_free(&tr->truth);
    free(tr->covered);
    free(tr->near);
    return rc;
}

static int check_source(const char *src_dir, const char *rec_dir, const options *o, int segment)
{
    glcv_file_list src = {0};
    frames f = {0};
    glcv_logger lg = test_logger();
    if (glcv_image_list_folder(src_dir, &lg, &src) != GLCV_OK || src.count == 0) {
        fprintf(stderr, "stream_check: no images in %s\n", src_dir);
        return 1;
    }
    int rc = list_frames(rec_dir, &f);
    if (rc == 0)
        rc = check_contiguous(&f, segment ? 0 : o->first, segment ? (long)src.count : o->count, rec_dir);
    glcv_pixel_format format = o->gray ? GLCV_PIXEL_GRAY8 : GLCV_PIXEL_RGB8;
    glcv_image pic = {0}, prev = {0}, source = {0}, background = {0};
    masker m = {0};
    tally t = {0};
    trails tr = {0};
    if (rc == 0 && segment && o->truth && (glcv_image_list_folder(o->truth, &lg, &tr.truths) != GLCV_OK ||
                                           tr.truths.count != src.count)) {
        fprintf(stderr, "stream_check: %s does not hold a truth for each of the %d frames\n", o->truth, src.count);
        rc = 1;
    }
    for (int i = 0; i < f.count && rc == 0; i++) {
        long n = f.numbers[i];
        rc = load(rec_dir, n, format, &pic) || load_source(&src, n, format, &source);
        if (rc == 0 && segment && o->truth)
            rc = trails_add(&tr, o, n, pic.width, pic.height);
        if (rc == 0 && segment && n == o->learn)
            rc = masker_start(&m, &src, o->learn, o->engine, pic.width, pic.height) ||
                 glcv_image_alloc(pic.width, pic.height, GLCV_PIXEL_RGB8, &background) != GLCV_OK;
        if (rc == 0 && segment && n >= o->learn) {
            /* What the server sends: the frame where the mask is 1, the background elsewhere. */
            rc = glcv_segment_frame(m.seg, &source, 1) != GLCV_OK || glcv_segment_read_mask(m.seg, &m.mask) != GLCV_OK ||
                 glcv_segment_read_background(m.seg, &background) != GLCV_OK;
            for (size_t p = 0; rc == 0 && p < (size_t)source.width * (size_t)source.height; p++)
                if (m.mask.data[p] == 0)
                    memcpy(source.data + 3 * p, background.data + 3 * p, 3);
        }
        if (rc == 0 && (pic.width != source.width || pic.height != source.height)) {
            fprintf(stderr, "stream_check: frame %ld is %dx%d, the source %dx%d\n", n, pic.width, pic.height,
                    source.width, source.height);
            rc = 1;
        }
        if (rc == 0)
            compare(&t, n, &pic, &source, i > 0 ? &prev : NULL, o->threshold);
        if (rc == 0 && segment && o->truth)
            trails_check(&tr, o, n, &pic, &m.mask, &background);
        glcv_image swap = prev;
        prev = pic;
        pic = swap;
    }
    if (rc == 0 && t.bad)
        fprintf(stderr, "stream_check: %ld bytes of %d frames fail (largest difference from the source %d, threshold "
                        "%d)\n",
                t.bad, f.count, t.max_diff, o->threshold);
    if (rc == 0 && !t.bad)
        printf("stream_check: %d frames from %ld: every byte within %d of the source (largest difference %d)%s\n",
               f.count, f.numbers[0], o->threshold, t.max_diff,
               segment ? "; outside the masks, of the segmenter's background" : "");
    if (segment && o->truth)
        rc |= trails_finish(&tr, o);
    masker_end(&m);
    glcv_image_free(&pic);
    glcv_image_free(&prev);
    glcv_image_free(&source);
    glcv_image_free(&background);
    glcv_file_list_free(&src);
    free(f.numbers);
    return rc || t.bad ? 1 : 0;
}

static int check_image(const char *a_path, const char *b_path)
{
    glcv_image a = {0}, b = {0};
    glcv_logger lg = test_logger();
    int rc = glcv_image_load(a_path, GLCV_PIXEL_RGB8, &lg, &a) != GLCV_OK ||
             glcv_image_load(b_path, GLCV_PIXEL_RGB8, &lg, &b) != GLCV_OK;
    if (rc)
        fprintf(stderr, "stream_check: cannot read %s or %s\n", a_path, b_path);
    if (rc == 0 && (a.width != b.width || a.height != b.height)) {
        fprintf(stderr, "stream_check: %s is %dx%d, %s %dx%d\n", a_path, a.width, a.height, b_path, b.width,
                b.height);
        rc = 1;
    }
    long bad = 0;
    size_t n = rc == 0 ? (size_t)a.width * (size_t)a.height * 3 : 0;
    for (size_t i = 0; i < n; i++)
        if (a.data[i] != b.data[i] && bad++ == 0)
            fprintf(stderr, "stream_check: (%d,%d) channel %d: %d in %s, %d in %s\n", (int)(i / 3 % (size_t)a.width),
                    (int)(i / 3 / (size_t)a.width), (int)(i % 3), a.data[i], a_path, b.data[i], b_path);
    if (bad) {
        fprintf(stderr, "stream_check: %ld of %zu bytes differ\n", bad, n);
        rc = 1;
    }
    if (rc == 0)
        printf("stream_check: %s and %s are the same %dx%d picture\n", a_path, b_path, a.width, a.height);
    glcv_image_free(&a);
    glcv_image_free(&b);
    return rc;
}

static int check_same(const char *a_dir, const char *b_dir, int subset)
{
    frames a = {0}, b = {0};
    int rc = list_frames(a_dir, &a) | list_frames(b_dir, &b);
    if (rc == 0 && !subset && a.count != b.count) {
        fprintf(stderr, "stream_check: %s holds %d frames, %s %d\n", a_dir, a.count, b_dir, b.count);
        rc = 1;
    }
    if (rc == 0 && b.count == 0) {
        fprintf(stderr, "stream_check: %s holds no frames\n", b_dir);
        rc = 1;
    }
    glcv_image pa = {0}, pb = {0};
    int ia = 0;
    for (int ib = 0; ib < b.count && rc == 0; ib++) {
        long n = b.numbers[ib];
        while (ia < a.count && a.numbers[ia] < n)
            ia++;
        if (ia == a.count || a.numbers[ia] != n) {
            fprintf(stderr, "stream_check: frame %ld of %s is not in %s\n", n, b_dir, a_dir);
            rc = 1;
            break;
        }
        rc = load(a_dir, n, GLCV_PIXEL_DEFAULT, &pa) || load(b_dir, n, GLCV_PIXEL_DEFAULT, &pb);
        size_t bytes = (size_t)pa.width * (size_t)pa.height * (size_t)glcv_pixel_format_size(pa.format);
        if (rc == 0 && (pa.width != pb.width || pa.height != pb.height || pa.format != pb.format)) {
            fprintf(stderr, "stream_check: frame %ld: %dx%d in %s, %dx%d in %s\n", n, pa.width, pa.height, a_dir,
                    pb.width, pb.height, b_dir);
            rc = 1;
        }
        for (size_t i = 0; rc == 0 && i < bytes; i++)
            if (pa.data[i] != pb.data[i]) {
                fprintf(stderr, "stream_check: frame %ld differs at byte %zu: %d in %s, %d in %s\n", n, i, pa.data[i],
                        a_dir, pb.data[i], b_dir);
                rc = 1;
            }
    }
    if (rc == 0)
        printf("stream_check: %d frames of %s (from %ld) identical to %s's\n", b.count, b_dir, b.numbers[0], a_dir);
    glcv_image_free(&pa);
    glcv_image_free(&pb);
    free(a.numbers);
    free(b.numbers);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return usage();
    options o = {.threshold = -1, .first = 0, .count = -1, .engine = "cpu", .learn = -1, .after = -1, .margin = -1};
    const char *mode = argv[1];
    const char *pos[2] = {NULL, NULL};
    int npos = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (strcmp(a, "--threshold") == 0 && more)
            o.threshold = atoi(argv[++i]);
        else if (strcmp(a, "--gray") == 0)
            o.gray = 1;
        else if (strcmp(a, "--subset") == 0)
            o.subset = 1;
        else if (strcmp(a, "--first") == 0 && more)
            o.first = atol(argv[++i]);
        else if (strcmp(a, "--count") == 0 && more)
            o.count = atol(argv[++i]);
        else if (strcmp(a, "--learn") == 0 && more)
            o.learn = atoi(argv[++i]);
        else if (strcmp(a, "--after") == 0 && more)
            o.after = atoi(argv[++i]);
        else if (strcmp(a, "--margin") == 0 && more)
            o.margin = atoi(argv[++i]);
        else if (strcmp(a, "--truth") == 0 && more)
            o.truth = argv[++i];
        else if (strcmp(a, "--engine") == 0 && more)
            o.engine = argv[++i];
        else if (a[0] != '-' && npos < 2)
            pos[npos++] = a;
        else
            return usage();
    }
    if (strcmp(mode, "info") == 0 && npos == 1) {
        frames f = {0};
        int rc = list_frames(pos[0], &f);
        printf("first %ld last %ld count %d\n", f.count ? f.numbers[0] : -1L, f.count ? f.numbers[f.count - 1] : -1L,
               f.count);
        free(f.numbers);
        return rc;
    }
    if (npos != 2)
        return usage();
    if (strcmp(mode, "same") == 0)
        return check_same(pos[0], pos[1], o.subset);
    if (strcmp(mode, "image") == 0)
        return check_image(pos[0], pos[1]);
    if (o.threshold < 0)
        return usage();
    if (strcmp(mode, "source") == 0)
        return check_source(pos[0], pos[1], &o, 0);
    if (strcmp(mode, "segment") == 0 && o.learn > 0 && (!o.truth || (o.after >= 0 && o.margin >= 0)))
        return check_source(pos[0], pos[1], &o, 1);
    return usage();
}
