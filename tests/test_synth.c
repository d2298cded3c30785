/* Synthetic scene: determinism, ground truth, noise, illumination, the dark object, parameter
 * checks, the challenges (a shaking camera, objects that stop and go, gusts in the foliage). No GL
 * needed. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static glcv_synth *make(glcv_synth_params p)
{
    glcv_synth *s = NULL;
    glcv_status st = glcv_synth_create(&p, &s);
    CHECK(st == GLCV_OK && s != NULL, "glcv_synth_create: %s", glcv_status_string(st));
    return s;
}

/* A generator with the default parameters, reported into *p (the parameters it resolved). */
static glcv_synth *make_default(glcv_synth_params *p)
{
    glcv_synth *s = make(GLCV_SYNTH_PARAMS(0));
    if (s)
        glcv_synth_get_params(s, p);
    return s;
}

/* A frame and its truth mask, allocated at the generator's size. */
typedef struct rendered {
    glcv_image frame;
    glcv_image truth;
} rendered;

static void render(const glcv_synth *s, int index, glcv_pixel_format format, rendered *r)
{
    glcv_synth_params p;
    glcv_synth_get_params(s, &p);
    CHECK_OK(glcv_image_alloc(p.width, p.height, format, &r->frame));
    CHECK_OK(glcv_image_alloc(p.width, p.height, GLCV_PIXEL_GRAY8, &r->truth));
    CHECK_OK(glcv_synth_frame(s, index, &r->frame, &r->truth));
}

static void release(rendered *r)
{
    glcv_image_free(&r->frame);
    glcv_image_free(&r->truth);
}

static size_t bytes_of(const glcv_image *img)
{
    return img->stride * (size_t)img->height;
}

/* Index of the first differing byte, or -1. */
static long first_difference(const glcv_image *a, const glcv_image *b)
{
    size_t n = bytes_of(a);
    if (n != bytes_of(b))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (a->data[i] != b->data[i])
            return (long)i;
    return -1;
}

static uint64_t fnv1a(const uint8_t *data, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ data[i]) * 0x100000001b3ull;
    return h;
}

static void test_defaults(void)
{
    glcv_synth_params p;
    glcv_synth *s = make_default(&p);
    if (!s)
        return;
    CHECK(p.width == 320 && p.height == 240, "default size %dx%d", p.width, p.height);
    CHECK(p.frames == 60, "default frames %d", p.frames);
    CHECK(p.objects == 4, "default objects %d", p.objects);
    CHECK(p.noise_sigma == 2.0f, "default noise %g", (double)p.noise_sigma);
    CHECK(p.illumination_gain == 0.85f, "default gain %g", (double)p.illumination_gain);
    CHECK(p.seed == 1, "default seed %u", (unsigned)p.seed);

    /* The background stays well inside the 8-bit range. */
    glcv_image bg;
    CHECK_OK(glcv_image_alloc(p.width, p.height, GLCV_PIXEL_RGB8, &bg));
    CHECK_OK(glcv_synth_background(s, &bg));
    int lo = 255, hi = 0;
    for (size_t i = 0; bg.data && i < bytes_of(&bg); i++) {
        lo = bg.data[i] < lo ? bg.data[i] : lo;
        hi = bg.data[i] > hi ? bg.data[i] : hi;
    }
    CHECK(lo >= 20 && hi <= 235, "background values %d..%d, expected within 20..235", lo, hi);

    /* A golden checksum: the same frame on every machine and compiler. */
    rendered r;
    render(s, 7, GLCV_PIXEL_RGB8, &r);
    uint64_t hf = fnv1a(r.frame.data, bytes_of(&r.frame));
    uint64_t ht = fnv1a(r.truth.data, bytes_of(&r.truth));
    uint64_t hb = fnv1a(bg.data, bytes_of(&bg));
    printf("checksums: frame 7 %016llx, truth 7 %016llx, background %016llx\n", (unsigned long long)hf,
           (unsigned long long)ht, (unsigned long long)hb);
    CHECK(hf == 0x56118609e2a8d9a0ull, "frame 7 checksum %016llx differs from the reference", (unsigned long long)hf);
    CHECK(ht == 0x1f6b1b190c47009dull, "truth 7 checksum %016llx differs from the reference", (unsigned long long)ht);
    CHECK(hb == 0xddfe71b7fd8d7d3aull, "background checksum %016llx differs from the reference", (unsigned long long)hb);
    release(&r);
    glcv_image_free(&bg);
    glcv_synth_destroy(&s);
    CHECK(s == NULL, "destroy did not clear the pointer");
}

static void test_determinism(void)
{
    glcv_synth_params p = GLCV_SYNTH_PARAMS(.width = 160, .height = 120, .frames = 40, .seed = 42);
    glcv_synth *a = make(p), *b = make(p);
    if (!a || !b)
        return;

    /* Same parameters, two generators: byte-identical frames and truth. */
    for (int k = 0; k < 40; k += 13) {
        rendered ra, rb;
        render(a, k, GLCV_PIXEL_RGBA8, &ra);
        render(b, k, GLCV_PIXEL_RGBA8, &rb);
        long d = first_difference(&ra.frame, &rb.frame);
        CHECK(d < 0, "frame %d differs between two generators at byte %ld", k, d);
        d = first_difference(&ra.truth, &rb.truth);
        CHECK(d < 0, "truth %d differs between two generators at byte %ld", k, d);
        release(&ra);
        release(&rb);
    }

    /* Frame 23 rendered after all the others equals frame 23 rendered first. */
    rendered first, again;
    render(b, 23, GLCV_PIXEL_RGB8, &first);
    for (int k = 0; k < 40; k++) {
        rendered r;
        render(a, k, GLCV_PIXEL_RGB8, &r);
        if (k == 23) {
            long d = first_difference(&r.frame, &first.frame);
            CHECK(d < 0, "frame 23 in order differs from frame 23 out of order at byte %ld", d);
        }
        release(&r);
    }
    render(b, 23, GLCV_PIXEL_RGB8, &again);
    long d = first_difference(&again.frame, &first.frame);
    CHECK(d < 0, "frame 23 rendered again differs at byte %ld", d);
    d = first_difference(&again.truth, &first.truth);
    CHECK(d < 0, "truth 23 rendered again differs at byte %ld", d);
    release(&again);

    /* Another seed: other noise. */
    glcv_synth_params q = p;
    q.seed = 43;
    glcv_synth *c = make(q);
    if (c) {
        rendered rc;
        render(c, 23, GLCV_PIXEL_RGB8, &rc);
        size_t n = bytes_of(&rc.frame), differ = 0;
        for (size_t i = 0; i < n; i++)
            differ += rc.frame.data[i] != first.frame.data[i];
        CHECK(differ > n / 2, "seed 43 vs 42: only %zu of %zu bytes differ", differ, n);
        release(&rc);
        glcv_synth_destroy(&c);
    }
    release(&first);
    glcv_synth_destroy(&a);
    glcv_synth_destroy(&b);
}

/* Truth is never empty; without noise and illumination change, background pixels equal the
 * clean background exactly, and the noise has the requested strength. */
static void test_truth_and_noise(void)
{
    glcv_synth *clean = make(GLCV_SYNTH_PARAMS(.noise_sigma = -1.0f, .illumination_gain = 1.0f));
    glcv_synth *noisy = make(GLCV_SYNTH_PARAMS(.noise_sigma = 3.0f, .illumination_gain = 1.0f, .seed = 5));
    if (!clean || !noisy)
        return;
    glcv_synth_params p;
    glcv_synth_get_params(clean, &p);
    glcv_image bg;
    CHECK_OK(glcv_image_alloc(p.width, p.height, GLCV_PIXEL_RGBA8, &bg));
    CHECK_OK(glcv_synth_background(clean, &bg));
    if (!bg.data)
        return;

    int empty_frames = 0, mismatches = 0, bad_alpha = 0;
    double sum = 0, sum2 = 0;
    long samples = 0;
    for (int k = 0; k < p.frames; k++) {
        rendered r, rn;
        render(clean, k, GLCV_PIXEL_RGBA8, &r);
        render(noisy, k, GLCV_PIXEL_RGBA8, &rn);
        long covered = 0;
        for (int i = 0; i < p.width * p.height; i++) {
            const uint8_t *f = r.frame.data + 4 * i, *b = bg.data + 4 * i, *fn = rn.frame.data + 4 * i;
            CHECK(r.truth.data[i] == 0 || r.truth.data[i] == 255, "truth value %d at pixel %d", r.truth.data[i], i);
            CHECK(rn.truth.data[i] == r.truth.data[i], "noise changed the truth at frame %d pixel %d", k, i);
            bad_alpha += f[3] != 255 || fn[3] != 255;
            if (r.truth.data[i]) {
                covered++;
                continue;
            }
            if (memcmp(f, b, 3) != 0 && mismatches++ < 5)
                CHECK(0, "frame %d pixel (%d,%d): (%d,%d,%d) but background (%d,%d,%d)", k, i % p.width,
                      i / p.width, f[0], f[1], f[2], b[0], b[1], b[2]);
            for (int c = 0; c < 3; c++) {
                double e = (double)fn[c] - (double)f[c];
                sum += e;
                sum2 += e * e;
                samples++;
            }
        }
        empty_frames += covered == 0;
        CHECK(covered > 0, "frame %d: empty truth mask", k);
        CHECK(covered < (long)p.width * p.height / 2, "frame %d: %ld of %d pixels are objects", k, covered,
              p.width * p.height);
        release(&r);
        release(&rn);
    }
    CHECK(mismatches == 0, "%d background pixels differ from the clean background", mismatches);
    CHECK(bad_alpha == 0, "%d pixels with alpha != 255", bad_alpha);
    double mean = sum / (double)samples;
    double sd = sqrt(sum2 / (double)samples - mean * mean);
    printf("noise: mean %.4f, sd %.4f (sigma 3)\n", mean, sd);
    CHECK(fabs(mean) < 0.05, "noise mean %.4f, expected ~0", mean);
    CHECK(fabs(sd - 3.0) < 0.15, "noise sd %.4f, expected 3 +- 0.15", sd);
    glcv_image_free(&bg);
    glcv_synth_destroy(&clean);
    glcv_synth_destroy(&noisy);
}

/* Illumination ramps to the gain; the dark object moves over bright background. */
static void test_illumination_and_dark_object(void)
{
    glcv_synth_params p;
    glcv_synth *s = make_default(&p);
    if (!s)
        return;
    const int n = p.width * p.height;
    glcv_image bg;
    CHECK_OK(glcv_image_alloc(p.width, p.height, GLCV_PIXEL_RGB8, &bg));
    CHECK_OK(glcv_synth_background(s, &bg));
    if (!bg.data)
        return;

    rendered first, last;
    render(s, 0, GLCV_PIXEL_RGB8, &first);
    render(s, p.frames - 1, GLCV_PIXEL_RGB8, &last);
    double s0 = 0, s1 = 0;
    for (int i = 0; i < n; i++) {
        if (first.truth.data[i] || last.truth.data[i])
            continue;
        for (int c = 0; c < 3; c++) {
            s0 += first.frame.data[3 * i + c];
            s1 += last.frame.data[3 * i + c];
        }
    }
    double ratio = s1 / s0, want = (double)p.illumination_gain;
    printf("illumination: last/first background brightness %.4f (gain %.4f)\n", ratio, want);
    CHECK(fabs(ratio - want) <= 0.02 * want, "brightness ratio %.4f, expected %.4f within 2%%", ratio, want);
    release(&first);
    release(&last);

    int frames_with_dark = 0;
    for (int k = 0; k < p.frames; k++) {
        rendered r;
        render(s, k, GLCV_PIXEL_RGB8, &r);
        int found = 0;
        for (int i = 0; i < n && !found; i++) {
            if (!r.truth.data[i])
                continue;
            const uint8_t *f = r.frame.data + 3 * i, *b = bg.data + 3 * i;
            found = f[0] + f[1] + f[2] < 100 && b[0] + b[1] + b[2] > 300;
        }
        frames_with_dark += found;
        release(&r);
    }
    printf("dark object over bright background in %d of %d frames\n", frames_with_dark, p.frames);
    CHECK(frames_with_dark * 10 >= p.frames * 8, "dark object over bright background in only %d of %d frames",
          frames_with_dark, p.frames);
    glcv_image_free(&bg);
    glcv_synth_destroy(&s);
}

/* Every object count and odd sizes render; truth stays 0/255. */
static void test_sizes_and_objects(void)
{
    for (int objects = 1; objects <= 16; objects += 5) {
        glcv_synth *s = make(GLCV_SYNTH_PARAMS(.width = 97, .height = 61, .frames = 3, .objects = objects));
        if (!s)
            continue;
        rendered r;
        render(s, 2, GLCV_PIXEL_RGB8, &r);
        long covered = 0;
        for (int i = 0; i < 97 * 61; i++)
            covered += r.truth.data[i] != 0;
        CHECK(covered > 0, "%d objects: empty truth", objects);
        release(&r);
        glcv_synth_destroy(&s);
    }
    glcv_synth *tiny = make(GLCV_SYNTH_PARAMS(.width = 1, .height = 1, .frames = 1));
    if (tiny) {
        rendered r;
        render(tiny, 0, GLCV_PIXEL_RGBA8, &r);
        CHECK(r.frame.data[3] == 255, "1x1 alpha %d", r.frame.data[3]);
        release(&r);
        glcv_synth_destroy(&tiny);
    }
    /* A frame without a truth image. */
    glcv_synth *s = make(GLCV_SYNTH_PARAMS(.width = 16, .height = 8, .frames = 2));
    if (s) {
        glcv_image f;
        CHECK_OK(glcv_image_alloc(16, 8, GLCV_PIXEL_RGB8, &f));
        CHECK_OK(glcv_synth_frame(s, 1, &f, NULL));
        glcv_image_free(&f);
        glcv_synth_destroy(&s);
    }
}

static void test_invalid(void)
{
    glcv_synth *s = (glcv_synth *)&s; /* must be set to NULL on error */
    const glcv_synth_params bad[] = {
        GLCV_SYNTH_PARAMS(.width = -1),
        GLCV_SYNTH_PARAMS(.width = 16385),
        GLCV_SYNTH_PARAMS(.height = -5),
        GLCV_SYNTH_PARAMS(.height = 20000),
        GLCV_SYNTH_PARAMS(.frames = -1),
        GLCV_SYNTH_PARAMS(.objects = -1),
        GLCV_SYNTH_PARAMS(.objects = 17),
        GLCV_SYNTH_PARAMS(.noise_sigma = NAN),
        GLCV_SYNTH_PARAMS(.noise_sigma = INFINITY),
        GLCV_SYNTH_PARAMS(.illumination_gain = NAN),
        GLCV_SYNTH_PARAMS(.illumination_gain = -INFINITY),
        GLCV_SYNTH_PARAMS(.illumination_gain = -0.5f),
        GLCV_SYNTH_PARAMS(.challenges = 8),                                     /* an unknown bit */
        GLCV_SYNTH_PARAMS(.challenges = GLCV_SYNTH_GUSTS),                      /* no foliage */
        GLCV_SYNTH_PARAMS(.challenges = GLCV_SYNTH_JITTER, .track = GLCV_SYNTH_TRACK_FAST),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        s = (glcv_synth *)&s;
        glcv_status st = glcv_synth_create(&bad[i], &s);
        CHECK(st == GLCV_ERROR_INVALID_ARGUMENT, "bad params #%zu: '%s', expected invalid argument", i,
              glcv_status_string(st));
        CHECK(s == NULL, "bad params #%zu: out not NULL", i);
    }
    glcv_synth_params ok = GLCV_SYNTH_PARAMS(.width = 32, .height = 16, .frames = 5);
    CHECK_STATUS(glcv_synth_create(NULL, &s), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_synth_create(&ok, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_synth_destroy(NULL);
    s = NULL;
    glcv_synth_destroy(&s);

    s = make(ok);
    if (!s)
        return;
    glcv_image rgb, gray, small, bgr;
    CHECK_OK(glcv_image_alloc(32, 16, GLCV_PIXEL_RGB8, &rgb));
    CHECK_OK(glcv_image_alloc(32, 16, GLCV_PIXEL_GRAY8, &gray));
    CHECK_OK(glcv_image_alloc(31, 16, GLCV_PIXEL_RGB8, &small));
    CHECK_OK(glcv_image_alloc(32, 16, GLCV_PIXEL_BGR8, &bgr));
    glcv_image small_gray;
    CHECK_OK(glcv_image_alloc(32, 15, GLCV_PIXEL_GRAY8, &small_gray));
    CHECK_STATUS(glcv_synth_frame(s, -1, &rgb, &gray), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_synth_frame(s, 5, &rgb, &gray), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_synth_frame(NULL, 0, &rgb, &gray), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_synth_frame(s, 0, NULL, &gray), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_synth_frame(s, 0, &gray, &gray), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_synth_frame(s, 0, &bgr, &gray), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_synth_frame(s, 0, &rgb, &rgb), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_synth_frame(s, 0, &small, &gray), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_synth_frame(s, 0, &rgb, &small_gray), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_synth_background(NULL, &rgb), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_synth_background(s, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_synth_background(s, &gray), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_synth_background(s, &small), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_OK(glcv_synth_frame(s, 4, &rgb, &gray));
    glcv_image_free(&rgb);
    glcv_image_free(&gray);
    glcv_image_free(&small);
    glcv_image_free(&bgr);
    glcv_image_free(&small_gray);
    glcv_synth_destroy(&s);
}

/* ---- challenges ------------------------------------------------------------------------------ */

/* JITTER: each frame is the frame without it moved by the offset the camera took (-2..2 each way,
 * found by trying them all), its truth with it; frame 0 is not moved, and the offsets vary. */
static void test_jitter(void)
{
    glcv_synth_params p = GLCV_SYNTH_PARAMS(.width = 96, .height = 72, .frames = 24, .noise_sigma = -1.0f,
                                            .seed = 9, .scene = GLCV_SYNTH_DYNAMIC);
    glcv_synth *still = make(p);
    p.challenges = GLCV_SYNTH_JITTER;
    glcv_synth *shaken = make(p);
    if (!still || !shaken)
        return;
    int moved = 0, distinct = 0, seen[25] = {0};
    for (int f = 0; f < p.frames; f++) {
        rendered a, b;
        render(still, f, GLCV_PIXEL_RGB8, &a);
        render(shaken, f, GLCV_PIXEL_RGB8, &b);
        int found = -1;
        /* the interior (2 pixels off every edge, where the edges are repeated) */
        for (int k = 0; k < 25 && found < 0; k++) {
            int ox = k % 5 - 2, oy = k / 5 - 2, same = 1;
            for (int y = 2; y < p.height - 2 && same; y++)
                for (int x = 2; x < p.width - 2 && same; x++)
                    same = !memcmp(b.frame.data + (size_t)y * b.frame.stride + 3 * (size_t)x,
                                   a.frame.data + (size_t)(y + oy) * a.frame.stride + 3 * (size_t)(x + ox), 3) &&
                           b.truth.data[(size_t)y * b.truth.stride + (size_t)x] ==
                               a.truth.data[(size_t)(y + oy) * a.truth.stride + (size_t)(x + ox)];
            if (same)
                found = k;
        }
        CHECK(found >= 0, "jitter, frame %d: not the still frame moved by -2..2 pixels", f);
        CHECK(f > 0 || found == 12, "jitter: frame 0 moved (offset %d,%d)", found % 5 - 2, found / 5 - 2);
        if (found >= 0) {
            moved += found != 12;
            distinct += !seen[found]++;
        }
        release(&a);
        release(&b);
    }
    CHECK(moved >= p.frames / 2 && distinct >= 6, "jitter: %d of %d frames moved, %d different offsets", moved,
          p.frames, distinct);
    glcv_synth_destroy(&still);
    glcv_synth_destroy(&shaken);
}

/* STOP_GO: one object; its truth stands still for runs of at least 11 frame pairs and moves in
 * between, and it stays in the truth while still. Without it the object never stops. */
static void test_stop_go(void)
{
    for (int stop_go = 0; stop_go <= 1; stop_go++) {
        glcv_synth *s = make(GLCV_SYNTH_PARAMS(.width = 120, .height = 90, .frames = 150, .objects = 1,
                                               .noise_sigma = -1.0f, .challenges = stop_go ? GLCV_SYNTH_STOP_GO : 0u));
        if (!s)
            return;
        rendered prev = {0};
        int run = 0, longest = 0, moving = 0, empty = 0;
        for (int f = 0; f < 150; f++) {
            rendered r;
            render(s, f, GLCV_PIXEL_RGB8, &r);
            size_t on = 0;
            for (int y = 0; y < 90; y++)
                for (int x = 0; x < 120; x++)
                    on += r.truth.data[(size_t)y * r.truth.stride + (size_t)x] != 0;
            empty += on == 0;
            if (f > 0) {
                int still = first_difference(&prev.truth, &r.truth) < 0;
                run = still ? run + 1 : 0;
                moving += !still;
                longest = run > longest ? run : longest;
                release(&prev);
            }
            prev = r;
        }
        release(&prev);
        if (stop_go)
            CHECK(longest >= 11 && moving >= 40 && empty == 0,
                  "stop-go: longest still run %d frames (>= 11), %d moving frames (>= 40), %d empty truths", longest,
                  moving, empty);
        else
            CHECK(longest <= 2, "without stop-go the object stood still for %d frames", longest);
        glcv_synth_destroy(&s);
    }
}

/* GUSTS: the foliage's change from frame to frame (mean absolute difference in its region, no
 * noise) spans more - calmer spells, stronger bursts - than its steady sway; nothing else moves
 * differently (outside the foliage the frames are the same bytes). */
static void test_gusts(void)
{
    glcv_synth_params p = GLCV_SYNTH_PARAMS(.width = 160, .height = 120, .frames = 120, .objects = 1,
                                            .noise_sigma = -1.0f, .scene = GLCV_SYNTH_DYNAMIC, .seed = 3);
    glcv_synth *steady = make(p);
    p.challenges = GLCV_SYNTH_GUSTS;
    glcv_synth *gusty = make(p);
    if (!steady || !gusty)
        return;
    glcv_image region;
    CHECK_OK(glcv_image_alloc(160, 120, GLCV_PIXEL_GRAY8, &region));
    CHECK_OK(glcv_synth_dynamic_region(steady, &region));
    /* the foliage: the region's part in the upper right quarter (the flickering patches are upper
     * left, the water below) */
    double lo[2] = {1e30, 1e30}, hi[2] = {0, 0};
    rendered prev[2];
    memset(prev, 0, sizeof prev);
    long outside_diff = 0;
    for (int f = 0; f < p.frames; f++) {
        rendered r[2];
        render(steady, f, GLCV_PIXEL_RGB8, &r[0]);
        render(gusty, f, GLCV_PIXEL_RGB8, &r[1]);
        for (int y = 0; y < 120; y++)
            for (int x = 0; x < 160; x++)
                if (!(x >= 80 && y < 60 && region.data[(size_t)y * region.stride + (size_t)x]))
                    outside_diff += memcmp(r[0].frame.data + (size_t)y * r[0].frame.stride + 3 * (size_t)x,
                                           r[1].frame.data + (size_t)y * r[1].frame.stride + 3 * (size_t)x, 3) != 0;
        for (int k = 0; k < 2 && f > 0; k++) {
            double sum = 0;
            int n = 0;
            for (int y = 0; y < 44; y++)
                for (int x = 106; x < 160; x++, n++)
                    for (int c = 0; c < 3; c++)
                        sum += fabs((double)r[k].frame.data[(size_t)y * r[k].frame.stride + 3 * (size_t)x + (size_t)c] -
                                    (double)prev[k].frame.data[(size_t)y * prev[k].frame.stride + 3 * (size_t)x + (size_t)c]);
            double d = sum / (3.0 * n);
            lo[k] = d < lo[k] ? d : lo[k];
            hi[k] = d > hi[k] ? d : hi[k];
        }
        for (int k = 0; k < 2; k++) {
            if (f > 0)
                release(&prev[k]);
            prev[k] = r[k];
        }
    }
    release(&prev[0]);
    release(&prev[1]);
    CHECK(outside_diff == 0, "gusts changed %ld pixels outside the foliage", outside_diff);
    CHECK(hi[1] >= 1.3 * hi[0] && lo[1] <= 0.8 * lo[0],
          "gusts: the foliage's change per frame spans %.2f..%.2f, steady %.2f..%.2f (expected calmer and stronger)",
          lo[1], hi[1], lo[0], hi[0]);
    glcv_image_free(&region);
    glcv_synth_destroy(&steady);
    glcv_synth_destroy(&gusty);
}

int main(void)
{
    test_defaults();
    test_determinism();
    test_truth_and_noise();
    test_illumination_and_dark_object();
    test_sizes_and_objects();
    test_invalid();
    test_jitter();
    test_stop_go();
    test_gusts();
    return test_finish("test_synth");
}
