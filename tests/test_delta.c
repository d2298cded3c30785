/* Frame-delta coding on the CPU engine (glcv/delta.h): the checksum against known values and its
 * two implementations against each other; synthetic video (moving objects, noise, a brightness
 * ramp, a scene cut) encoded and decoded at several thresholds, layouts, formats, sizes, with
 * masks, forced keyframes, snapshots and compression, every byte of every picture checked against
 * a model of the reference written here; the decoder against corrupt, truncated, oversized and
 * out-of-order packets; every rejection of the header parser; argument and state errors; texture
 * inputs (their part is skipped when no GL context can be made). */
#include "testutil.h"

#include "delta_internal.h"

#include <epoxy/gl.h>

#include <stdarg.h>
#include <string.h>

static glcv_logger lg;

/* ---- a logger that keeps the last error, for the rejections' messages -------------------------- */

static char last_error[1024];

static void keep_error(void *user, glcv_log_level level, const char *message)
{
    (void)user;
    if (level == GLCV_LOG_ERROR)
        snprintf(last_error, sizeof last_error, "%s", message);
    const char *v = getenv("GLCV_TEST_VERBOSE");
    if (v && *v == '1')
        fprintf(stderr, "  (expected) %s\n", message);
}

static const glcv_logger quiet = {keep_error, NULL, GLCV_LOG_ERROR};

/* Whether the last error logged contains `text` (NULL: anything or nothing). */
static int logged(const char *text)
{
    return !text || strstr(last_error, text) != NULL;
}

/* Checks that `expr` returns `want` and that the last error logged contains `text` (NULL: any). */
#define CHECK_REJECT(expr, want, text)                                                                        \
    do {                                                                                                      \
        last_error[0] = 0;                                                                                    \
        glcv_status got_ = (expr);                                                                            \
        CHECK(got_ == (want) && logged(text), "%s: '%s', expected '%s'; the log says '%s', expected '%s'",   \
              #expr, glcv_status_string(got_), glcv_status_string(want), last_error, (text) ? (text) : "-"); \
    } while (0)

static const glcv_pixel_format formats[] = {GLCV_PIXEL_GRAY8, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGBA8, GLCV_PIXEL_BGR8,
                                            GLCV_PIXEL_BGRA8};
static const char *format_name(glcv_pixel_format f)
{
    static const char *names[] = {"?", "GRAY8", "RGB8", "RGBA8", "BGR8", "BGRA8"};
    return (int)f >= 1 && (int)f <= 5 ? names[f] : "?";
}

static const char *layout_name(int l)
{
    static const char *names[] = {"default", "raw", "indices", "bitmap"};
    return l >= 0 && l <= 3 ? names[l] : "?";
}

/* ---- CRC-32C ------------------------------------------------------------------------------------ */

static void check_crc(void)
{
    const char *digits = "123456789";
    uint32_t (*const impl[])(uint32_t, const void *, size_t) = {glcv_delta_crc32c, glcv_delta_crc32c_portable,
                                                                glcv_delta_crc32c_hw};
    const char *impl_name[] = {"glcv_delta_crc32c", "portable", "sse4.2"};
    /* RFC 3720 B.4 (iSCSI): 32 bytes of 0, of 0xFF, incrementing, decrementing. */
    uint8_t v[4][32];
    for (int i = 0; i < 32; i++) {
        v[0][i] = 0;
        v[1][i] = 0xFF;
        v[2][i] = (uint8_t)i;
        v[3][i] = (uint8_t)(31 - i);
    }
    const uint32_t want_v[4] = {0x8A9136AAu, 0x62A8AB43u, 0x46DD794Eu, 0x113FDB5Cu};
    for (int m = 0; m < 3; m++) {
        uint32_t c = impl[m](0, digits, 9);
        CHECK(c == 0xE3069283u, "%s(\"123456789\") = 0x%08x, expected 0xe3069283", impl_name[m], c);
        c = impl[m](impl[m](0, digits, 4), digits + 4, 5);
        CHECK(c == 0xE3069283u, "%s in two parts = 0x%08x, expected 0xe3069283", impl_name[m], c);
        CHECK(impl[m](0, digits, 0) == 0, "%s of nothing is 0x%08x, not 0", impl_name[m], impl[m](0, digits, 0));
        for (int k = 0; k < 4; k++) {
            c = impl[m](0, v[k], 32);
            CHECK(c == want_v[k], "%s of RFC 3720 vector %d = 0x%08x, expected 0x%08x", impl_name[m], k, c, want_v[k]);
        }
    }
    CHECK(glcv_delta_crc32c(0x1234, NULL, 10) == 0x1234, "NULL data changed the CRC");
    printf("crc32c: SSE4.2 %s\n", glcv_delta_crc32c_hw_available() ? "used" : "not available (portable only)");

    /* Random buffers of many lengths (across the 3 x 256 and 3 x 8192 rounds) at every alignment. */
    size_t max = 3 * 8192 * 2 + 3 * 256 + 64;
    uint8_t *buf = malloc(max + 8);
    uint64_t rng = 12345;
    for (size_t i = 0; i < max + 8; i++)
        buf[i] = (uint8_t)test_rand(&rng);
    int compared = 0, bad = 0;
    for (size_t len = 0; len <= max && bad < 5; len += len < 100 ? 1 : len < 1000 ? 7 : 331) {
        for (int align = 0; align < 8 && bad < 5; align++) {
            uint32_t seed = (uint32_t)test_rand(&rng);
            uint32_t a = glcv_delta_crc32c_portable(seed, buf + align, len);
            uint32_t b = glcv_delta_crc32c_hw(seed, buf + align, len);
            uint32_t c = glcv_delta_crc32c(seed, buf + align, len);
            compared++;
            if (a != b || a != c) {
                bad++;
                CHECK(0, "length %zu alignment %d from 0x%08x: portable 0x%08x, sse4.2 0x%08x, public 0x%08x", len,
                      align, seed, a, b, c);
            }
        }
    }
    /* A bytewise CRC written here, on a few lengths. */
    for (size_t len = 0; len < 2000; len += 97) {
        uint32_t c = 0xFFFFFFFFu;
        for (size_t i = 0; i < len; i++) {
            c ^= buf[i];
            for (int b = 0; b < 8; b++)
                c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        }
        c = ~c;
        CHECK(glcv_delta_crc32c(0, buf, len) == c, "length %zu: 0x%08x, bit by bit 0x%08x", len,
              glcv_delta_crc32c(0, buf, len), c);
    }
    printf("crc32c: %d buffers, portable and SSE4.2 agree\n", compared);
    free(buf);
}

/* ---- synthetic video --------------------------------------------------------------------------- */

typedef struct video {
    int w, h;
    int frames;
    int cut;   /* the scene changes at this frame */
    int noise; /* each byte +- noise */
} video;

static int clamp255(int v)
{
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* Frame t in RGB8: a textured background (its negative from the cut on), a brightness ramp of one
 * level a frame over frames 100..139, three small objects moving all the time, a large one moving
 * over frames 20..59 only, and noise. */
static void make_frame(const video *v, int t, uint8_t *rgb)
{
    uint64_t rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)(t + 1) * 0x100000001B3ull;
    int ramp = t < 100 ? 0 : t < 140 ? t - 100 : 40;
    for (int y = 0; y < v->h; y++)
        for (int x = 0; x < v->w; x++) {
            uint8_t *px = rgb + ((size_t)y * v->w + x) * 3;
            for (int c = 0; c < 3; c++) {
                int b = 20 + (x * 7 + y * 3 + c * 40 + (x * y) % 17) % 180;
                if (t >= v->cut) /* the scene cut: the negative of the scene before */
                    b = 255 - b;
                px[c] = (uint8_t)clamp255(b + ramp);
            }
        }
    /* objects: x0, y0, w, h, dx, dy, colour */
    int objects[4][7] = {{2, 3, 5, 4, 1, 0, 230},
                         {40, 30, 3, 3, -2, 1, 10},
                         {10, 20, 4, 6, 1, -1, 128},
                         {0, 8, 24, 20, 0, 0, 200}};
    int big_t = t < 20 ? 0 : t < 60 ? t - 20 : 40;
    objects[3][0] = 3 * big_t % (v->w > 0 ? v->w : 1);
    for (int o = 0; o < 4; o++) {
        int ox = objects[o][0] + (o < 3 ? objects[o][4] * t : 0), oy = objects[o][1] + objects[o][5] * t;
        ox = ((ox % v->w) + v->w) % v->w;
        oy = ((oy % v->h) + v->h) % v->h;
        for (int y = oy; y < oy + objects[o][3] && y < v->h; y++)
            for (int x = ox; x < ox + objects[o][2] && x < v->w; x++)
                for (int c = 0; c < 3; c++)
                    rgb[((size_t)y * v->w + x) * 3 + c] = (uint8_t)(objects[o][6] + 15 * c);
    }
    if (v->noise)
        for (size_t i = 0; i < (size_t)v->w * v->h * 3; i++)
            rgb[i] = (uint8_t)clamp255(rgb[i] + (int)(test_rand(&rng) % (2 * (unsigned)v->noise + 1)) - v->noise);
}

/* The mask of frame t: a window 3/4 of the size that moves around. */
static void make_mask(const video *v, int t, uint8_t *mask, size_t stride)
{
    int mw = v->w * 3 / 4 + 1, mh = v->h * 3 / 4 + 1, ox = (t / 3) % (v->w - mw + 1), oy = (t / 5) % (v->h - mh + 1);
    for (int y = 0; y < v->h; y++)
        for (int x = 0; x < v->w; x++)
            mask[(size_t)y * stride + x] = (x >= ox && x < ox + mw && y >= oy && y < oy + mh) ? (uint8_t)(1 + x % 200)
                                                                                            : 0;
}

/* ---- encoding and decoding a video, checked against a model of the reference ------------------- */

typedef struct run_cfg {
    glcv_pixel_format stream; /* the encoder's format */
    glcv_pixel_format input;  /* the frames' format */
    int threshold;            /* params.threshold (GLCV_DELTA_LOSSLESS or 1..255) */
    glcv_delta_layout layout;
    int interval;    /* params.keyframe_interval */
    int force_every; /* FORCE_KEY on frames t % force_every == force_every - 1 (0: never) */
    int masked;
    int join;       /* a receiver joins with a snapshot after frame `join` (0: none) */
    int compress;   /* also compress every packet and decode that */
    size_t padding; /* bytes after each row of the input frames */
} run_cfg;

typedef struct run_stats {
    int packets[4];          /* per layout */
    size_t bytes[4];         /* per layout */
    int fallbacks;           /* RAW because the records would not be smaller */
    size_t delta_bytes;      /* uncompressed deltas */
    size_t delta_compressed; /* the same deltas after glcv_delta_compress */
    int compressed_packets;
} run_stats;

/* The first byte where a and b differ, as where and how much; 1 if they differ. */
static int report_diff(const char *what, const char *run, int t, const uint8_t *a, const uint8_t *b, size_t n,
                       int w, int bpp)
{
    size_t first = n, count = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) {
            if (first == n)
                first = i;
            count++;
        }
    if (!count)
        return 0;
    size_t px = first / (size_t)bpp;
    CHECK(0, "%s, frame %d: %s differ in %zu bytes; first at x %zu y %zu channel %zu: %d, expected %d", run, t, what,
          count, px % (size_t)w, px / (size_t)w, first % (size_t)bpp, a[first], b[first]);
    return 1;
}

static int expect_header(const char *run, int t, const glcv_delta_header *h, const glcv_delta_header *want)
{
    int ok = h->frame == want->frame && h->key == want->key && h->snapshot == want->snapshot &&
             h->layout == want->layout && h->records == want->records && h->raw_bytes == want->raw_bytes &&
             h->payload_bytes == want->payload_bytes && h->width == want->width && h->height == want->height &&
             h->format == want->format && h->threshold == want->threshold && h->compression == want->compression;
    CHECK(ok,
          "%s, frame %d: header frame %llu key %d snapshot %d layout %s records %u raw %u payload %u %dx%d %s "
          "threshold %d; expected frame %llu key %d snapshot %d layout %s records %u raw %u payload %u %dx%d %s "
          "threshold %d",
          run, t, (unsigned long long)h->frame, h->key, h->snapshot, layout_name(h->layout), h->records, h->raw_bytes,
          h->payload_bytes, h->width, h->height, format_name(h->format), h->threshold,
          (unsigned long long)want->frame, want->key, want->snapshot, layout_name(want->layout), want->records,
          want->raw_bytes, want->payload_bytes, want->width, want->height, format_name(want->format),
          want->threshold);
    return ok;
}

/* The picture of a decoder, checked against `want`. */
static int check_picture(const char *what, const char *run, int t, glcv_delta_decoder *dec, const uint8_t *want,
                         const video *v, glcv_pixel_format fmt, uint64_t frame)
{
    glcv_image pic;
    uint64_t got_frame = 0;
    glcv_status st = glcv_delta_decoder_picture(dec, &pic, &got_frame);
    CHECK(st == GLCV_OK, "%s, frame %d: %s picture: %s", run, t, what, glcv_status_string(st));
    if (st != GLCV_OK)
        return 1;
    int bpp = glcv_pixel_format_size(fmt);
    CHECK(pic.width == v->w && pic.height == v->h && pic.format == fmt && got_frame == frame &&
              glcv_image_stride(&pic) == (size_t)v->w * (size_t)bpp,
          "%s, frame %d: %s picture is %dx%d %s frame %llu, expected %dx%d %s frame %llu", run, t, what, pic.width,
          pic.height, format_name(pic.format), (unsigned long long)got_frame, v->w, v->h, format_name(fmt),
          (unsigned long long)frame);
    return report_diff(what, run, t, pic.data, want, (size_t)v->w * v->h * (size_t)bpp, v->w, bpp);
}

/* Encodes the video with `cfg` on the CPU engine and decodes every packet; the model of the
 * reference is kept here from the rule of delta.h, so every packet's header, every picture and the
 * encoder's reference are checked against it, byte for byte. Returns nonzero on a failure. */
static int run_video(const char *run, const video *v, const run_cfg *cfg, run_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    int failed = test_failures;
    int w = v->w, h = v->h, bpp = glcv_pixel_format_size(cfg->stream);
    int thr = cfg->threshold == GLCV_DELTA_LOSSLESS ? 0 : cfg->threshold;
    size_t n = (size_t)w * h * (size_t)bpp, px = (size_t)w * h;
    glcv_delta *enc = NULL;
    glcv_delta_decoder *dec = NULL, *late = NULL, *zdec = NULL;
    CHECK_OK(glcv_delta_create(&GLCV_DELTA_PARAMS(.width = w, .height = h, .format = cfg->stream,
                                                  .threshold = cfg->threshold, .keyframe_interval = cfg->interval,
                                                  .layout = cfg->layout, .engine = GLCV_ENGINE_CPU, .logger = lg),
                                &enc));
    CHECK_OK(glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.logger = lg), &dec));
    CHECK_OK(glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.logger = lg), &late));
    CHECK_OK(glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.logger = lg), &zdec));
    if (!enc || !dec || !late || !zdec)
        goto done;
    uint8_t *rgb = malloc(px * 3), *model = calloc(n, 1), *ref = malloc(n), *zbuf = malloc(64 + n);
    glcv_image input = test_image_make(w, h, cfg->input, (size_t)w * glcv_pixel_format_size(cfg->input) + cfg->padding);
    glcv_image expect = test_image_make(w, h, cfg->stream, 0);
    glcv_image mask = test_image_make(w, h, GLCV_PIXEL_GRAY8, (size_t)w + cfg->padding);
    glcv_image rgb_im = {rgb, w, h, 0, GLCV_PIXEL_RGB8};
    int joined = 0;
    long since_key = 0;
    for (int t = 0; t < v->frames; t++) {
        make_frame(v, t, rgb);
        CHECK_OK(glcv_image_convert(&rgb_im, &input));
        CHECK_OK(glcv_image_convert(&input, &expect)); /* what the encoder sees: the input in its format */
        if (cfg->masked)
            make_mask(v, t, mask.data, glcv_image_stride(&mask));
        int forced = cfg->force_every && t % cfg->force_every == cfg->force_every - 1;
        /* The rule: which bytes change, the layout, the keyframes. */
        int key = t == 0 || forced || (cfg->interval > 0 && since_key + 1 >= cfg->interval);
        size_t k = 0;
        glcv_delta_layout layout = GLCV_DELTA_RAW;
        if (!key) {
            for (size_t i = 0; i < n; i++)
                k += abs(expect.data[i] - model[i]) > thr &&
                     (!cfg->masked || mask.data[(i / (size_t)bpp / (size_t)w) * glcv_image_stride(&mask) +
                                                (i / (size_t)bpp) % (size_t)w]);
            size_t bi = glcv_delta_layout_bytes(GLCV_DELTA_INDICES, n, k),
                   bb = glcv_delta_layout_bytes(GLCV_DELTA_BITMAP, n, k);
            layout = cfg->layout != GLCV_DELTA_LAYOUT_DEFAULT ? cfg->layout
                     : bi <= bb                              ? GLCV_DELTA_INDICES
                                                             : GLCV_DELTA_BITMAP;
            if (glcv_delta_layout_bytes(layout, n, k) >= n) {
                layout = GLCV_DELTA_RAW;
                key = 1;
                stats->fallbacks++;
            }
        }
        size_t raw = key ? n : glcv_delta_layout_bytes(layout, n, k);
        glcv_delta_header want = {.version = 1, .frame = (uint64_t)t, .width = w, .height = h, .format = cfg->stream,
                                  .key = key, .layout = layout, .threshold = thr, .records = (uint32_t)(key ? n : k),
                                  .payload_bytes = (uint32_t)raw, .raw_bytes = (uint32_t)raw};
        const uint8_t *packet = NULL;
        size_t bytes = 0;
        glcv_status st = glcv_delta_encode(enc, &input, cfg->masked ? &mask : NULL,
                                           forced ? GLCV_DELTA_FORCE_KEY : 0, &packet, &bytes);
        CHECK(st == GLCV_OK, "%s, frame %d: encode: %s", run, t, glcv_status_string(st));
        if (st != GLCV_OK)
            break;
        glcv_delta_header got;
        CHECK_OK(glcv_delta_header_parse(packet, bytes, &got, &lg));
        CHECK(bytes == 64 + raw, "%s, frame %d: %zu bytes, expected %zu", run, t, bytes, 64 + raw);
        if (!expect_header(run, t, &got, &want))
            break;
        stats->packets[layout]++;
        stats->bytes[layout] += bytes;
        /* The model: a keyframe is the frame; a delta moves the changed bytes to the frame. */
        for (size_t i = 0; i < n; i++) {
            int allowed = !cfg->masked || mask.data[(i / (size_t)bpp / (size_t)w) * glcv_image_stride(&mask) +
                                                    (i / (size_t)bpp) % (size_t)w];
            if (key || (abs(expect.data[i] - model[i]) > thr && allowed))
                model[i] = expect.data[i];
        }
        since_key = key ? 0 : since_key + 1;
        /* Every receiver's picture is the model; |picture - frame| <= threshold everywhere (inside the
         * mask with one). */
        st = glcv_delta_decode(dec, packet, bytes);
        CHECK(st == GLCV_OK, "%s, frame %d: decode: %s", run, t, glcv_status_string(st));
        if (check_picture("the decoder's", run, t, dec, model, v, cfg->stream, (uint64_t)t))
            break;
        glcv_image ref_im = {ref, w, h, 0, cfg->stream};
        CHECK_OK(glcv_delta_read_reference(enc, &ref_im));
        if (report_diff("the encoder's reference and the model", run, t, ref, model, n, w, bpp))
            break;
        for (size_t i = 0; i < n; i++) {
            int allowed = !cfg->masked || mask.data[(i / (size_t)bpp / (size_t)w) * glcv_image_stride(&mask) +
                                                    (i / (size_t)bpp) % (size_t)w];
            if (allowed && abs(model[i] - expect.data[i]) > thr) {
                size_t p = i / (size_t)bpp;
                CHECK(0, "%s, frame %d: x %zu y %zu channel %zu: picture %d, frame %d, more than %d apart", run, t,
                      p % (size_t)w, p / (size_t)w, i % (size_t)bpp, model[i], expect.data[i], thr);
                break;
            }
        }
        if (joined) {
            st = glcv_delta_decode(late, packet, bytes);
            CHECK(st == GLCV_OK, "%s, frame %d: the late receiver's decode: %s", run, t, glcv_status_string(st));
            if (check_picture("the late receiver's", run, t, late, model, v, cfg->stream, (uint64_t)t))
                break;
        }
        if (cfg->compress && glcv_delta_can_compress()) {
            size_t zbytes = 0;
            st = glcv_delta_compress(packet, bytes, 3, zbuf, 64 + n, &zbytes, &lg);
            CHECK(st == GLCV_OK, "%s, frame %d: compress: %s", run, t, glcv_status_string(st));
            CHECK(zbytes <= bytes, "%s, frame %d: compressed to %zu bytes from %zu", run, t, zbytes, bytes);
            glcv_delta_header zh;
            CHECK_OK(glcv_delta_header_parse(zbuf, zbytes, &zh, &lg));
            CHECK((zh.compression == GLCV_DELTA_ZSTD) == (zbytes < bytes) && zh.raw_bytes == got.raw_bytes &&
                      zh.frame == got.frame && zh.records == got.records,
                  "%s, frame %d: the compressed header (compression %d, raw %u, %zu of %zu bytes) does not match", run,
                  t, (int)zh.compression, zh.raw_bytes, zbytes, bytes);
            stats->compressed_packets += zh.compression == GLCV_DELTA_ZSTD;
            if (!key) {
                stats->delta_bytes += bytes;
                stats->delta_compressed += zbytes;
            }
            st = glcv_delta_decode(zdec, zbuf, zbytes);
            CHECK(st == GLCV_OK, "%s, frame %d: decoding the compressed packet: %s", run, t, glcv_status_string(st));
            if (check_picture("the compressed stream's", run, t, zdec, model, v, cfg->stream, (uint64_t)t))
                break;
        }
        if (cfg->join && t == cfg->join) {
            /* A snapshot of the reference after frame t: the late receiver joins with it. (It takes
             * the encoder's packet memory: last.) */
            const uint8_t *snap = NULL;
            size_t snap_bytes = 0;
            CHECK_OK(glcv_delta_snapshot(enc, &snap, &snap_bytes));
            glcv_delta_header sh, swant = {.version = 1, .frame = (uint64_t)t, .width = w, .height = h,
                                           .format = cfg->stream, .key = 1, .snapshot = 1, .layout = GLCV_DELTA_RAW,
                                           .threshold = thr, .records = (uint32_t)n, .payload_bytes = (uint32_t)n,
                                           .raw_bytes = (uint32_t)n};
            CHECK_OK(glcv_delta_header_parse(snap, snap_bytes, &sh, &lg));
            expect_header(run, t, &sh, &swant);
            CHECK_OK(glcv_delta_decode(late, snap, snap_bytes));
            joined = 1;
            if (check_picture("the late receiver's snapshot", run, t, late, model, v, cfg->stream, (uint64_t)t))
                break;
        }
    }
    free(rgb);
    free(model);
    free(ref);
    free(zbuf);
    test_image_release(&input);
    test_image_release(&expect);
    test_image_release(&mask);
done:
    glcv_delta_destroy(&enc);
    glcv_delta_decoder_destroy(&dec);
    glcv_delta_decoder_destroy(&late);
    glcv_delta_decoder_destroy(&zdec);
    return test_failures != failed;
}

static void print_stats(const char *run, const run_stats *s)
{
    printf("%-34s raw %3d (%7zu B)  indices %3d (%7zu B)  bitmap %3d (%7zu B)  fallbacks %d", run, s->packets[1],
           s->bytes[1], s->packets[2], s->bytes[2], s->packets[3], s->bytes[3], s->fallbacks);
    if (s->delta_bytes)
        printf("  deltas zstd %zu -> %zu B", s->delta_bytes, s->delta_compressed);
    printf("\n");
}

static void check_video(void)
{
    const video v = {64, 48, 240, 180, 3};
    const int thresholds[] = {GLCV_DELTA_LOSSLESS, 1, 8, 40};
    const glcv_delta_layout layouts[] = {GLCV_DELTA_LAYOUT_DEFAULT, GLCV_DELTA_INDICES, GLCV_DELTA_BITMAP};
    char run[128];
    run_stats s;
    /* Thresholds and layouts on RGB: keyframes every 100 frames, forced ones every 71, a receiver
     * that joins at frame 45, every packet compressed too. */
    for (int ti = 0; ti < 4; ti++)
        for (int li = 0; li < 3; li++) {
            run_cfg cfg = {.stream = GLCV_PIXEL_RGB8, .input = GLCV_PIXEL_RGB8, .threshold = thresholds[ti],
                           .layout = layouts[li], .interval = 100, .force_every = 71, .join = 45, .compress = 1};
            snprintf(run, sizeof run, "RGB8 threshold %d %s", thresholds[ti], layout_name(layouts[li]));
            run_video(run, &v, &cfg, &s);
            print_stats(run, &s);
            if (thresholds[ti] == 8) {
                /* The default's choice: both layouts and the fallback to RAW on this video. */
                if (layouts[li] == GLCV_DELTA_LAYOUT_DEFAULT)
                    CHECK(s.packets[GLCV_DELTA_INDICES] > 0 && s.packets[GLCV_DELTA_BITMAP] > 0 && s.fallbacks > 0,
                          "%s: indices %d, bitmap %d, fallbacks %d: every case should occur", run,
                          s.packets[GLCV_DELTA_INDICES], s.packets[GLCV_DELTA_BITMAP], s.fallbacks);
                if (glcv_delta_can_compress())
                    CHECK(s.delta_compressed < s.delta_bytes, "%s: deltas compressed to %zu bytes from %zu", run,
                          s.delta_compressed, s.delta_bytes);
            }
        }
    /* Only the first keyframe and the RAW fallbacks (the scene cut, the brightness steps). */
    run_cfg only_first = {.stream = GLCV_PIXEL_RGB8, .input = GLCV_PIXEL_RGB8, .threshold = 8, .interval = -1};
    run_video("RGB8 threshold 8, interval -1", &v, &only_first, &s);
    CHECK(s.packets[GLCV_DELTA_RAW] == 1 + s.fallbacks && s.fallbacks > 0,
          "interval -1: %d RAW packets, %d fallbacks: the scene cut should be one", s.packets[GLCV_DELTA_RAW],
          s.fallbacks);
    /* Every format as the stream's, from frames in every other format (gray from colour: the luma),
     * with padded rows; masks. */
    const video shorter = {64, 48, 120, 90, 3};
    for (int si = 0; si < 5; si++)
        for (int ii = 0; ii < 5; ii++) {
            run_cfg cfg = {.stream = formats[si], .input = formats[ii], .threshold = 8, .interval = 50,
                           .join = 30, .padding = 5, .masked = ii == 2};
            snprintf(run, sizeof run, "%s from %s%s", format_name(formats[si]), format_name(formats[ii]),
                     cfg.masked ? ", masked" : "");
            run_video(run, &shorter, &cfg, &s);
        }
    /* Masks at each threshold and layout. */
    for (int ti = 0; ti < 4; ti++)
        for (int li = 0; li < 3; li++) {
            run_cfg cfg = {.stream = GLCV_PIXEL_RGBA8, .input = GLCV_PIXEL_RGB8, .threshold = thresholds[ti],
                           .layout = layouts[li], .interval = 60, .masked = 1, .join = 20};
            snprintf(run, sizeof run, "RGBA8 masked threshold %d %s", thresholds[ti], layout_name(layouts[li]));
            run_video(run, &shorter, &cfg, &s);
        }
    /* Odd sizes, every format. */
    const int sizes[][2] = {{1, 1}, {3, 5}, {17, 13}, {5, 3}, {70, 1}};
    for (int zi = 0; zi < 5; zi++)
        for (int si = 0; si < 5; si++)
            for (int m = 0; m < 2; m++) {
                video small = {sizes[zi][0], sizes[zi][1], 40, 25, 2};
                run_cfg cfg = {.stream = formats[si], .input = GLCV_PIXEL_RGB8, .threshold = m ? 1 : 8,
                               .interval = 15, .force_every = 11, .masked = m, .join = 7, .compress = 1};
                snprintf(run, sizeof run, "%dx%d %s%s", small.w, small.h, format_name(formats[si]),
                         m ? " masked" : "");
                run_video(run, &small, &cfg, &s);
            }
}

/* Bytes outside the mask never change between keyframes, on a still mask of half the frame. */
static void check_mask_freezes(void)
{
    const int w = 40, h = 30, frames = 50;
    glcv_delta *enc = NULL;
    glcv_delta_decoder *dec = NULL;
    CHECK_OK(glcv_delta_create(&GLCV_DELTA_PARAMS(.width = w, .height = h, .threshold = 4, .keyframe_interval = 20,
                                                  .engine = GLCV_ENGINE_CPU, .logger = lg),
                                &enc));
    CHECK_OK(glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.logger = lg), &dec));
    glcv_image frame = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), mask = test_image_make(w, h, GLCV_PIXEL_GRAY8, 0);
    uint8_t *prev = malloc((size_t)w * h * 3);
    uint64_t rng = 77;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            mask.data[y * w + x] = x < w / 2 ? 255 : 0;
    int keys = 0, frozen_checked = 0;
    for (int t = 0; t < frames && enc && dec; t++) {
        for (size_t i = 0; i < (size_t)w * h * 3; i++)
            frame.data[i] = (uint8_t)test_rand(&rng); /* everything changes, everywhere */
        const uint8_t *packet;
        size_t bytes;
        CHECK_OK(glcv_delta_encode(enc, &frame, &mask, 0, &packet, &bytes));
        glcv_delta_header hd;
        CHECK_OK(glcv_delta_header_parse(packet, bytes, &hd, &lg));
        CHECK_OK(glcv_delta_decode(dec, packet, bytes));
        glcv_image pic;
        CHECK_OK(glcv_delta_decoder_picture(dec, &pic, NULL));
        keys += hd.key;
        CHECK(hd.key == (t % 20 == 0), "frame %d: key %d", t, hd.key);
        for (int y = 0; y < h && !hd.key; y++)
            for (int x = w / 2; x < w; x++)
                for (int c = 0; c < 3; c++) {
                    size_t i = ((size_t)y * w + x) * 3 + c;
                    frozen_checked++;
                    if (pic.data[i] != prev[i]) {
                        CHECK(0, "frame %d: x %d y %d channel %d outside the mask changed from %d to %d", t, x, y, c,
                              prev[i], pic.data[i]);
                        y = h;
                        x = w;
                        break;
                    }
                }
        /* Inside the mask the picture follows the frame. */
        for (size_t i = 0; i < (size_t)w * h * 3; i++)
            if (mask.data[i / 3] && abs(pic.data[i] - frame.data[i]) > 4) {
                CHECK(0, "frame %d: byte %zu inside the mask is %d, the frame %d", t, i, pic.data[i], frame.data[i]);
                break;
            }
        memcpy(prev, pic.data, (size_t)w * h * 3);
    }
    CHECK(keys == 3 && frozen_checked > 0, "%d keyframes, %d frozen bytes checked", keys, frozen_checked);
    free(prev);
    test_image_release(&frame);
    test_image_release(&mask);
    glcv_delta_destroy(&enc);
    glcv_delta_decoder_destroy(&dec);
}

/* ---- packets of a small stream, for the rejections ------------------------------------------------ */

#define SW 24
#define SH 16
#define SN (SW * SH * 3)

typedef struct stream {
    uint8_t *packet[6];
    size_t bytes[6];
    int count;
} stream;

/* Frame 0 (a keyframe), 1 (a few bytes: INDICES), 2 (a band: BITMAP), 3 (compressible: a large flat
 * change, BITMAP), 4 and 5 (few bytes). */
static void make_stream(stream *s, glcv_pixel_format fmt, int w, int h)
{
    memset(s, 0, sizeof *s);
    glcv_delta *enc = NULL;
    CHECK_OK(glcv_delta_create(&GLCV_DELTA_PARAMS(.width = w, .height = h, .format = fmt, .keyframe_interval = -1,
                                                  .engine = GLCV_ENGINE_CPU, .logger = lg),
                                &enc));
    glcv_image f = test_image_make(w, h, fmt, 0);
    size_t n = (size_t)w * h * (size_t)glcv_pixel_format_size(fmt);
    uint64_t rng = 4242;
    for (int t = 0; t < 6 && enc; t++) {
        if (t == 0)
            for (size_t i = 0; i < n; i++)
                f.data[i] = (uint8_t)(test_rand(&rng) % 200);
        if (t == 1 || t >= 4)
            for (int j = 0; j < 3; j++)
                f.data[(size_t)(test_rand(&rng) % n)] += 50;
        if (t == 2)
            for (size_t i = n / 4; i < n / 4 + n / 10; i++)
                f.data[i] += 30;
        if (t == 3)
            for (size_t i = 0; i < n / 2; i += 2)
                f.data[i] = 250;
        const uint8_t *p;
        size_t b;
        CHECK_OK(glcv_delta_encode(enc, &f, NULL, 0, &p, &b));
        s->packet[t] = malloc(b);
        memcpy(s->packet[t], p, b);
        s->bytes[t] = b;
        s->count++;
    }
    test_image_release(&f);
    glcv_delta_destroy(&enc);
}

static void free_stream(stream *s)
{
    for (int i = 0; i < s->count; i++)
        free(s->packet[i]);
}

/* A copy of the decoder's picture and frame, to check that a rejected packet left them alone. */
typedef struct saved {
    uint8_t *data;
    size_t bytes;
    uint64_t frame;
    int w, h;
} saved;

static saved save_picture(glcv_delta_decoder *dec)
{
    saved s = {0};
    glcv_image pic;
    if (glcv_delta_decoder_picture(dec, &pic, &s.frame) == GLCV_OK) {
        s.bytes = glcv_image_stride(&pic) * (size_t)pic.height;
        s.data = malloc(s.bytes);
        memcpy(s.data, pic.data, s.bytes);
        s.w = pic.width;
        s.h = pic.height;
    }
    return s;
}

static int same_picture(glcv_delta_decoder *dec, const saved *s)
{
    glcv_image pic;
    uint64_t frame = 0;
    if (glcv_delta_decoder_picture(dec, &pic, &frame) != GLCV_OK)
        return s->data == NULL;
    return s->data && pic.width == s->w && pic.height == s->h && frame == s->frame &&
           memcmp(pic.data, s->data, s->bytes) == 0;
}

/* Decodes `bytes` of `p`, expecting `want` and the picture as it was. */
static int reject(glcv_delta_decoder *dec, const uint8_t *p, size_t bytes, glcv_status want, const char *what,
                  size_t at)
{
    saved before = save_picture(dec);
    last_error[0] = 0;
    glcv_status st = glcv_delta_decode(dec, p, bytes);
    char message[sizeof last_error];
    memcpy(message, last_error, sizeof message); /* what the decode said, not the picture getter */
    int kept = same_picture(dec, &before), ok = st == want && kept;
    CHECK(ok, "%s at %zu: '%s' (expected '%s'), picture %s; log: %s", what, at, glcv_status_string(st),
          glcv_status_string(want), kept ? "kept" : "CHANGED", message);
    memcpy(last_error, message, sizeof message);
    free(before.data);
    return ok;
}

/* The bytes the corruption test flips: every byte of the header, about 60 of the payload spread
 * evenly, and the last one. */
static size_t next_flip(size_t at, size_t bytes)
{
    if (at < 64 || at + 1 >= bytes)
        return at + 1;
    size_t next = at + 1 + (bytes - 64) / 61;
    return next < bytes ? next : bytes - 1;
}

static glcv_delta_decoder *decoder_after(const stream *s, int upto, size_t max_bytes)
{
    glcv_delta_decoder *dec = NULL;
    CHECK_OK(glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.max_bytes = max_bytes, .logger = quiet), &dec));
    for (int i = 0; i < upto && dec; i++)
        CHECK_OK(glcv_delta_decode(dec, s->packet[i], s->bytes[i]));
    return dec;
}

static void check_corruption(void)
{
    stream s;
    make_stream(&s, GLCV_PIXEL_RGB8, SW, SH);
    if (s.count != 6)
        return;
    glcv_delta_header h[6];
    for (int t = 0; t < 6; t++)
        CHECK_OK(glcv_delta_header_parse(s.packet[t], s.bytes[t], &h[t], &lg));
    CHECK(h[0].key && h[1].layout == GLCV_DELTA_INDICES && h[2].layout == GLCV_DELTA_BITMAP &&
              h[3].layout == GLCV_DELTA_BITMAP,
          "the small stream's layouts are %s %s %s %s", layout_name(h[0].layout), layout_name(h[1].layout),
          layout_name(h[2].layout), layout_name(h[3].layout));

    /* Packets to corrupt: each of the stream, and frame 3 compressed. */
    uint8_t *zpacket = malloc(s.bytes[3]);
    size_t zbytes = 0;
    if (glcv_delta_can_compress()) {
        CHECK_OK(glcv_delta_compress(s.packet[3], s.bytes[3], 1, zpacket, s.bytes[3], &zbytes, &lg));
        glcv_delta_header zh;
        CHECK_OK(glcv_delta_header_parse(zpacket, zbytes, &zh, &lg));
        CHECK(zh.compression == GLCV_DELTA_ZSTD && zbytes < s.bytes[3], "frame 3 did not compress (%zu of %zu bytes)",
              zbytes, s.bytes[3]);
    }
    int corruptions = 0;
    for (int t = 0; t < 5; t++) {
        const uint8_t *orig = t < 4 ? s.packet[t] : zpacket;
        size_t bytes = t < 4 ? s.bytes[t] : zbytes;
        int frame = t < 4 ? t : 3;
        if (bytes == 0)
            continue;
        glcv_delta_decoder *dec = decoder_after(&s, frame, 0);
        if (!dec)
            continue;
        uint8_t *p = malloc(bytes + 200);
        memcpy(p, orig, bytes);
        char what[64];
        snprintf(what, sizeof what, "packet %d%s, byte flipped", frame, t == 4 ? " (compressed)" : "");
        /* Every byte of the header, sampled bytes of the payload, each with three flips. */
        const uint8_t flips[] = {0x01, 0x80, 0xFF};
        int stop = 0;
        for (size_t at = 0; at < bytes && !stop; at = next_flip(at, bytes)) {
            for (int f = 0; f < 3 && !stop; f++) {
                p[at] ^= flips[f];
                stop = !reject(dec, p, bytes, GLCV_ERROR_CORRUPT_DATA, what, at);
                p[at] ^= flips[f];
                corruptions++;
            }
        }
        memcpy(p, orig, bytes);
        /* Every shorter length, and garbage after the packet. */
        snprintf(what, sizeof what, "packet %d%s, truncated", frame, t == 4 ? " (compressed)" : "");
        for (size_t len = 0; len < bytes; len++)
            if (!reject(dec, p, len, GLCV_ERROR_CORRUPT_DATA, what, len))
                break;
        snprintf(what, sizeof what, "packet %d%s, with trailing bytes", frame, t == 4 ? " (compressed)" : "");
        for (size_t extra = 1; extra <= 200; extra += extra < 9 ? 1 : 50) {
            memset(p + bytes, extra == 1 ? 0 : 0xAB, extra);
            reject(dec, p, bytes + extra, GLCV_ERROR_CORRUPT_DATA, what, extra);
        }
        /* And it still decodes. */
        CHECK_OK(glcv_delta_decode(dec, p, bytes));
        free(p);
        glcv_delta_decoder_destroy(&dec);
    }
    printf("corruption: %d flipped packets rejected\n", corruptions);

    /* Oversized: a picture above max_bytes. */
    glcv_delta_decoder *dec = decoder_after(&s, 0, SN - 1);
    if (dec) {
        reject(dec, s.packet[0], s.bytes[0], GLCV_ERROR_CORRUPT_DATA, "a keyframe above max_bytes", 0);
        CHECK(strstr(last_error, "max_bytes") != NULL, "the log says '%s'", last_error);
    }
    glcv_delta_decoder_destroy(&dec);
    dec = decoder_after(&s, 0, SN);
    if (dec)
        CHECK_OK(glcv_delta_decode(dec, s.packet[0], s.bytes[0]));
    glcv_delta_decoder_destroy(&dec);

    /* Out of order: a skipped frame, a repeated one, one from before; a delta before any keyframe. */
    dec = decoder_after(&s, 2, 0);
    if (dec) {
        reject(dec, s.packet[3 + 1], s.bytes[4], GLCV_ERROR_STATE, "frame 4 after frame 1 (skipped)", 4);
        reject(dec, s.packet[1], s.bytes[1], GLCV_ERROR_STATE, "frame 1 after frame 1 (repeated)", 1);
        CHECK(strstr(last_error, "wait for a keyframe") != NULL, "the log says '%s'", last_error);
        CHECK_OK(glcv_delta_decode(dec, s.packet[2], s.bytes[2]));
        reject(dec, s.packet[1], s.bytes[1], GLCV_ERROR_STATE, "frame 1 after frame 2 (old)", 1);
        /* A keyframe of any number replaces the picture: frame 0 again, then 1 follows. */
        CHECK_OK(glcv_delta_decode(dec, s.packet[0], s.bytes[0]));
        CHECK_OK(glcv_delta_decode(dec, s.packet[1], s.bytes[1]));
    }
    glcv_delta_decoder_destroy(&dec);
    dec = decoder_after(&s, 0, 0);
    if (dec) {
        reject(dec, s.packet[1], s.bytes[1], GLCV_ERROR_STATE, "a delta before any keyframe", 1);
        CHECK(strstr(last_error, "no keyframe") != NULL, "the log says '%s'", last_error);
    }
    glcv_delta_decoder_destroy(&dec);

    /* A delta of another size, and of another format, after a keyframe of this stream. */
    stream other_size, other_format;
    make_stream(&other_size, GLCV_PIXEL_RGB8, SW + 1, SH);
    make_stream(&other_format, GLCV_PIXEL_BGR8, SW, SH);
    dec = decoder_after(&s, 1, 0);
    if (dec && other_size.count == 6 && other_format.count == 6) {
        reject(dec, other_size.packet[1], other_size.bytes[1], GLCV_ERROR_STATE, "a delta of another size", 1);
        CHECK(strstr(last_error, "25x16") != NULL, "the log says '%s'", last_error);
        reject(dec, other_format.packet[1], other_format.bytes[1], GLCV_ERROR_STATE, "a delta of another format", 1);
        /* A keyframe of another size replaces the picture; its deltas follow. */
        CHECK_OK(glcv_delta_decode(dec, other_size.packet[0], other_size.bytes[0]));
        CHECK_OK(glcv_delta_decode(dec, other_size.packet[1], other_size.bytes[1]));
        glcv_image pic;
        CHECK_OK(glcv_delta_decoder_picture(dec, &pic, NULL));
        CHECK(pic.width == SW + 1, "the picture is %d wide after a keyframe %d wide", pic.width, SW + 1);
    }
    glcv_delta_decoder_destroy(&dec);
    free_stream(&other_size);
    free_stream(&other_format);

    /* Payloads whose checksums are right and whose records are not. */
    dec = decoder_after(&s, 1, 0);
    uint8_t *p = malloc(s.bytes[2] + 64);
    if (dec && h[1].records >= 2) {
        size_t b = s.bytes[1], k = h[1].records;
        memcpy(p, s.packet[1], b);
        uint8_t tmp[4]; /* swap the first two indices */
        memcpy(tmp, p + 64, 4);
        memcpy(p + 64, p + 68, 4);
        memcpy(p + 68, tmp, 4);
        glcv_delta_packet_seal(p, b);
        reject(dec, p, b, GLCV_ERROR_CORRUPT_DATA, "indices out of order", 0);
        CHECK(strstr(last_error, "does not follow") != NULL, "the log says '%s'", last_error);
        memcpy(p, s.packet[1], b);
        memcpy(p + 68, p + 64, 4); /* an index twice */
        glcv_delta_packet_seal(p, b);
        reject(dec, p, b, GLCV_ERROR_CORRUPT_DATA, "an index repeated", 0);
        memcpy(p, s.packet[1], b);
        uint32_t big = SN; /* the last index at N */
        for (int i = 0; i < 4; i++)
            p[64 + 4 * (k - 1) + (size_t)i] = (uint8_t)(big >> (8 * i));
        glcv_delta_packet_seal(p, b);
        reject(dec, p, b, GLCV_ERROR_CORRUPT_DATA, "an index at N", 0);
        CHECK(strstr(last_error, "outside the frame") != NULL, "the log says '%s'", last_error);
        /* The bitmap of frame 2 with one bit more and one bit less. */
        glcv_delta_decode(dec, s.packet[1], s.bytes[1]);
        b = s.bytes[2];
        for (int more = 0; more < 2; more++) {
            memcpy(p, s.packet[2], b);
            for (size_t i = 64; i < 64 + SN / 8; i++)
                if ((p[i] != 0xFF && more) || (p[i] != 0 && !more)) {
                    p[i] = more ? (uint8_t)(p[i] | (uint8_t)(p[i] + 1)) : (uint8_t)(p[i] & (p[i] - 1));
                    break;
                }
            glcv_delta_packet_seal(p, b);
            reject(dec, p, b, GLCV_ERROR_CORRUPT_DATA, more ? "a bitmap bit more" : "a bitmap bit less", 0);
            CHECK(strstr(last_error, "bitmap bits set") != NULL, "the log says '%s'", last_error);
        }
    }
    glcv_delta_decoder_destroy(&dec);
    free(p);

    /* A bit past N (a frame of 5 x 3 RGB: 45 bytes, 6 bytes of bitmap, 3 bits past the end). */
    stream odd;
    make_stream(&odd, GLCV_PIXEL_RGB8, 5, 3);
    dec = decoder_after(&odd, 1, 0);
    glcv_delta_header oh;
    if (dec && odd.count == 6 && glcv_delta_header_parse(odd.packet[1], odd.bytes[1], &oh, &lg) == GLCV_OK) {
        /* Rewrite frame 1 as a bitmap of the same records plus the bit past the end. */
        size_t nb = 6, b = 64 + nb + oh.records + 1;
        uint8_t *q = calloc(1, b);
        glcv_delta_header bh = oh;
        bh.layout = GLCV_DELTA_BITMAP;
        bh.records = 1;
        bh.raw_bytes = bh.payload_bytes = (uint32_t)(nb + 1);
        glcv_delta_header_write(&bh, q);
        q[64 + 5] = 0x20; /* bit 5 of byte 5: frame byte 45 */
        glcv_delta_packet_seal(q, 64 + nb + 1);
        reject(dec, q, 64 + nb + 1, GLCV_ERROR_CORRUPT_DATA, "a bitmap bit past N", 0);
        CHECK(strstr(last_error, "past the frame") != NULL, "the log says '%s'", last_error);
        q[64 + 5] = 0x04; /* bit 2 of byte 5: frame byte 42, inside */
        glcv_delta_packet_seal(q, 64 + nb + 1);
        CHECK_OK(glcv_delta_decode(dec, q, 64 + nb + 1));
        free(q);
    }
    glcv_delta_decoder_destroy(&dec);
    free_stream(&odd);

    /* Compressed payloads that are not what the header says. */
    if (glcv_delta_can_compress() && zbytes) {
        dec = decoder_after(&s, 3, 0);
        uint8_t *q = malloc(zbytes + 64);
        glcv_delta_header zh;
        CHECK_OK(glcv_delta_header_parse(zpacket, zbytes, &zh, &lg));
        /* raw_bytes one more than the frame holds (and records one more, so the header agrees). */
        memcpy(q, zpacket, zbytes);
        glcv_delta_header hh = zh;
        hh.records++;
        hh.raw_bytes++;
        glcv_delta_header_write(&hh, q);
        glcv_delta_packet_seal(q, zbytes);
        reject(dec, q, zbytes, GLCV_ERROR_CORRUPT_DATA, "a compressed payload shorter than raw_bytes", 0);
        /* Not a Zstandard frame. */
        memcpy(q, zpacket, zbytes);
        q[64] ^= 0xFF;
        glcv_delta_packet_seal(q, zbytes);
        reject(dec, q, zbytes, GLCV_ERROR_CORRUPT_DATA, "a compressed payload that is not Zstandard", 0);
        CHECK(strstr(last_error, "Zstandard") != NULL, "the log says '%s'", last_error);
        /* A frame cut short (the header says so: payload_bytes one less). */
        memcpy(q, zpacket, zbytes);
        hh = zh;
        hh.payload_bytes--;
        glcv_delta_header_write(&hh, q);
        glcv_delta_packet_seal(q, zbytes - 1);
        reject(dec, q, zbytes - 1, GLCV_ERROR_CORRUPT_DATA, "a Zstandard frame cut short", 0);
        CHECK(strstr(last_error, "whole Zstandard frame") != NULL, "the log says '%s'", last_error);
        /* And the real one decodes. */
        CHECK_OK(glcv_delta_decode(dec, zpacket, zbytes));
        free(q);
        glcv_delta_decoder_destroy(&dec);
    } else if (!glcv_delta_can_compress()) {
        /* Without Zstandard a compressed packet is UNSUPPORTED. */
        dec = decoder_after(&s, 3, 0);
        uint8_t *q = malloc(s.bytes[3]);
        memcpy(q, s.packet[3], s.bytes[3]);
        glcv_delta_header hh = h[3];
        hh.compression = GLCV_DELTA_ZSTD;
        hh.payload_bytes = 100;
        glcv_delta_header_write(&hh, q);
        glcv_delta_packet_seal(q, 164);
        reject(dec, q, 164, GLCV_ERROR_UNSUPPORTED, "a compressed packet without Zstandard", 0);
        free(q);
        glcv_delta_decoder_destroy(&dec);
    }
    free(zpacket);
    free_stream(&s);
}

/* ---- the header parser's rejections ----------------------------------------------------------------- */

/* A valid header of a w x h RGB frame: a keyframe, or a delta with k records in `layout`. */
static glcv_delta_header valid_header(int key, glcv_delta_layout layout, uint32_t k)
{
    size_t n = 20 * 10 * 3;
    glcv_delta_header h = {.version = 1, .frame = 7, .width = 20, .height = 10, .format = GLCV_PIXEL_RGB8,
                           .key = key, .layout = key ? GLCV_DELTA_RAW : layout, .threshold = 8,
                           .records = key ? (uint32_t)n : k};
    h.raw_bytes = h.payload_bytes = (uint32_t)glcv_delta_layout_bytes(h.layout, n, h.records);
    return h;
}

static void parse_case(const glcv_delta_header *h, const char *text, const char *what)
{
    uint8_t buf[64];
    glcv_delta_header_write(h, buf);
    glcv_delta_header out;
    last_error[0] = 0;
    glcv_status st = glcv_delta_header_parse(buf, sizeof buf, &out, &quiet);
    CHECK(st == GLCV_ERROR_CORRUPT_DATA && strstr(last_error, text), "%s: '%s', log '%s' (expected '%s')", what,
          glcv_status_string(st), last_error, text);
}

/* Patches `bytes` at `at`, reseals, parses: expects CORRUPT_DATA with `text`. */
static void patch_case(size_t at, const void *bytes, size_t count, int seal, const char *text, const char *what)
{
    uint8_t buf[64];
    glcv_delta_header h = valid_header(0, GLCV_DELTA_INDICES, 3);
    glcv_delta_header_write(&h, buf);
    memcpy(buf + at, bytes, count);
    if (seal)
        glcv_delta_packet_seal(buf, sizeof buf);
    glcv_delta_header out;
    last_error[0] = 0;
    glcv_status st = glcv_delta_header_parse(buf, sizeof buf, &out, &quiet);
    CHECK(st == GLCV_ERROR_CORRUPT_DATA && strstr(last_error, text), "%s: '%s', log '%s' (expected '%s')", what,
          glcv_status_string(st), last_error, text);
}

static void check_parser(void)
{
    uint8_t buf[64];
    glcv_delta_header out, h;
    /* The valid ones parse, field for field. */
    for (int c = 0; c < 3; c++) {
        h = valid_header(c == 0, c == 1 ? GLCV_DELTA_INDICES : GLCV_DELTA_BITMAP, 5);
        h.snapshot = c == 0;
        h.checksum = 0xDEADBEEF;
        h.frame = 0x0123456789ABCDEFull;
        glcv_delta_header_write(&h, buf);
        CHECK_OK(glcv_delta_header_parse(buf, sizeof buf, &out, &lg));
        CHECK(out.version == 1 && out.checksum == h.checksum, "case %d: version %d checksum 0x%08x", c, out.version,
              out.checksum);
        expect_header("a written header", c, &out, &h);
    }
    /* The bytes: the magic first, little-endian fields at their offsets. */
    h = valid_header(0, GLCV_DELTA_INDICES, 5);
    h.frame = 0x0102030405060708ull;
    glcv_delta_header_write(&h, buf);
    CHECK(memcmp(buf, "GLCVDLTA", 8) == 0 && buf[8] == 1 && buf[9] == 0 && buf[10] == 64 && buf[12] == 0 &&
              buf[16] == 8 && buf[23] == 1 && buf[24] == 20 && buf[28] == 10 && buf[32] == GLCV_PIXEL_RGB8 &&
              buf[33] == GLCV_DELTA_INDICES && buf[35] == 8 && buf[36] == 5 && buf[40] == 25 && buf[44] == 25,
          "the header's bytes are not at the offsets of docs/STREAM.md");
    CHECK(glcv_delta_crc32c(0, buf, 48) == (uint32_t)(buf[52] | buf[53] << 8 | buf[54] << 16 | (uint32_t)buf[55] << 24),
          "bytes 52..55 are not the CRC of bytes 0..47");

    CHECK_REJECT(glcv_delta_header_parse(NULL, 64, &out, &quiet), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_header_parse(buf, 64, NULL, &quiet), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_header_parse(buf, 63, &out, &quiet), GLCV_ERROR_INVALID_ARGUMENT, "64 bytes");
    CHECK_OK(glcv_delta_header_parse(buf, 64, &out, NULL));

    patch_case(0, "X", 1, 1, "bad magic", "magic");
    patch_case(8, "\x02", 1, 1, "version 2", "version");
    patch_case(10, "\x3F", 1, 1, "header size 63", "header size");
    patch_case(20, "\x01", 1, 0, "header CRC", "a flipped frame number");
    patch_case(52, "\x01", 1, 0, "header CRC", "the header CRC");
    for (int r = 56; r < 64; r++)
        patch_case((size_t)r, "\x01", 1, 1, "reserved byte", "a reserved byte");
    patch_case(13, "\x01", 1, 1, "unknown flags", "flag bit 8");
    patch_case(12, "\x04", 1, 1, "unknown flags", "flag bit 2");

    const int bad_sizes[][2] = {{0, 10}, {20, 0}, {16385, 10}, {20, 16385}, {-1, 10}};
    for (int i = 0; i < 5; i++) {
        h = valid_header(1, 0, 0);
        h.width = bad_sizes[i][0];
        h.height = bad_sizes[i][1];
        parse_case(&h, "outside 1..16384", "size");
    }
    h = valid_header(1, 0, 0);
    h.format = GLCV_PIXEL_DEFAULT;
    parse_case(&h, "unknown pixel format 0", "format 0");
    h.format = (glcv_pixel_format)6;
    parse_case(&h, "unknown pixel format 6", "format 6");
    /* The largest frame: 16384 x 16384 x 4 = 2^30 bytes, a valid header (N >= 2^31 cannot happen
     * within the size limits; the parser still checks it). */
    h = valid_header(1, 0, 0);
    h.width = h.height = GLCV_DELTA_MAX_SIZE;
    h.format = GLCV_PIXEL_RGBA8;
    h.records = h.raw_bytes = h.payload_bytes = 1u << 30;
    glcv_delta_header_write(&h, buf);
    CHECK_OK(glcv_delta_header_parse(buf, sizeof buf, &out, &lg));

    h = valid_header(0, GLCV_DELTA_INDICES, 3);
    h.layout = GLCV_DELTA_LAYOUT_DEFAULT;
    parse_case(&h, "unknown layout 0", "layout 0");
    h.layout = (glcv_delta_layout)4;
    parse_case(&h, "unknown layout 4", "layout 4");
    h = valid_header(0, GLCV_DELTA_INDICES, 3);
    h.compression = (glcv_delta_compression)2;
    parse_case(&h, "unknown compression 2", "compression 2");
    h = valid_header(0, GLCV_DELTA_INDICES, 3);
    h.snapshot = 1;
    parse_case(&h, "snapshot that is not a keyframe", "snapshot without key");
    h = valid_header(0, GLCV_DELTA_INDICES, 3);
    h.key = 1;
    parse_case(&h, "keyframe whose layout is not RAW", "key with indices");
    h = valid_header(1, 0, 0);
    h.key = 0;
    parse_case(&h, "RAW packet that is not a keyframe", "RAW without key");
    h = valid_header(0, GLCV_DELTA_BITMAP, 601);
    parse_case(&h, "601 records in a frame of 600", "records > N");
    h = valid_header(1, 0, 0);
    h.records = 599;
    parse_case(&h, "keyframe of 599 records", "RAW records != N");
    h = valid_header(0, GLCV_DELTA_INDICES, 3);
    h.raw_bytes = h.payload_bytes = 16;
    parse_case(&h, "raw_bytes 16", "indices raw_bytes");
    h = valid_header(0, GLCV_DELTA_BITMAP, 3);
    h.raw_bytes = h.payload_bytes = 3;
    parse_case(&h, "raw_bytes 3", "bitmap raw_bytes");
    h = valid_header(1, 0, 0);
    h.raw_bytes = h.payload_bytes = 599;
    parse_case(&h, "raw_bytes 599", "RAW raw_bytes");
    h = valid_header(0, GLCV_DELTA_INDICES, 120); /* 600 bytes of records for a frame of 600 */
    parse_case(&h, "not fewer than the frame", "indices as large as the frame");
    h = valid_header(0, GLCV_DELTA_BITMAP, 525); /* 75 + 525 */
    parse_case(&h, "not fewer than the frame", "a bitmap as large as the frame");
    h = valid_header(0, GLCV_DELTA_INDICES, 3);
    h.payload_bytes = 14;
    parse_case(&h, "uncompressed payload_bytes 14", "uncompressed payload != raw");
    h = valid_header(0, GLCV_DELTA_INDICES, 3);
    h.compression = GLCV_DELTA_ZSTD;
    parse_case(&h, "compressed payload_bytes 15", "compressed payload == raw");
    h.payload_bytes = 0;
    parse_case(&h, "compressed payload_bytes 0", "compressed payload 0");
    h.payload_bytes = 16;
    parse_case(&h, "compressed payload_bytes 16", "compressed payload > raw");
    h.payload_bytes = 14;
    glcv_delta_header_write(&h, buf);
    CHECK_OK(glcv_delta_header_parse(buf, sizeof buf, &out, &lg));
    h = valid_header(0, GLCV_DELTA_INDICES, 0); /* an empty delta: valid, and never compressed */
    glcv_delta_header_write(&h, buf);
    CHECK_OK(glcv_delta_header_parse(buf, sizeof buf, &out, &lg));
    h.compression = GLCV_DELTA_ZSTD;
    h.payload_bytes = 1;
    parse_case(&h, "compressed payload_bytes 1", "an empty delta compressed");
}

/* ---- compression's arguments ---------------------------------------------------------------------- */

static void check_compress_arguments(void)
{
    stream s;
    make_stream(&s, GLCV_PIXEL_RGB8, SW, SH);
    if (s.count != 6)
        return;
    size_t b = s.bytes[3], got = 0;
    uint8_t *out = malloc(b + 16);
    CHECK(glcv_delta_compress_bound(b) >= b, "compress_bound(%zu) = %zu", b, glcv_delta_compress_bound(b));
    CHECK_REJECT(glcv_delta_compress(NULL, b, 1, out, b, &got, &quiet), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_compress(s.packet[3], b, 1, NULL, b, &got, &quiet), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_compress(s.packet[3], b, 1, out, b, NULL, &quiet), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_compress(s.packet[3], b, 20, out, b, &got, &quiet), GLCV_ERROR_INVALID_ARGUMENT, "level");
    CHECK_REJECT(glcv_delta_compress(s.packet[3], b, -1, out, b, &got, &quiet), GLCV_ERROR_INVALID_ARGUMENT, "level");
    CHECK_REJECT(glcv_delta_compress(s.packet[3], b, 1, out, glcv_delta_compress_bound(b) - 1, &got, &quiet),
                 GLCV_ERROR_INVALID_ARGUMENT, "capacity");
    CHECK_REJECT(glcv_delta_compress(s.packet[3], b, 1, s.packet[3] + 10, b, &got, &quiet),
                 GLCV_ERROR_INVALID_ARGUMENT, "overlaps");
    if (!glcv_delta_can_compress()) {
        CHECK_REJECT(glcv_delta_compress(s.packet[3], b, 1, out, b, &got, &quiet), GLCV_ERROR_UNSUPPORTED, NULL);
    } else {
        /* Not a packet; a packet of the wrong length; a bad checksum; compressed already. */
        uint8_t junk[300];
        memset(junk, 0x41, sizeof junk);
        CHECK_REJECT(glcv_delta_compress(junk, sizeof junk, 1, out, b, &got, &quiet), GLCV_ERROR_CORRUPT_DATA,
                     "bad magic");
        CHECK_REJECT(glcv_delta_compress(s.packet[3], b - 1, 1, out, b, &got, &quiet), GLCV_ERROR_CORRUPT_DATA, NULL);
        CHECK_REJECT(glcv_delta_compress(junk, 10, 1, out, b, &got, &quiet), GLCV_ERROR_CORRUPT_DATA, "shorter");
        uint8_t *p = malloc(b);
        memcpy(p, s.packet[3], b);
        p[b - 1] ^= 1;
        CHECK_REJECT(glcv_delta_compress(p, b, 1, out, b, &got, &quiet), GLCV_ERROR_CORRUPT_DATA, "checksum");
        CHECK_OK(glcv_delta_compress(s.packet[3], b, 0, out, b, &got, &lg));
        CHECK(got < b, "frame 3 (%zu bytes) compressed to %zu", b, got);
        memcpy(p, out, got);
        CHECK_REJECT(glcv_delta_compress(p, got, 1, out, b, &got, &quiet), GLCV_ERROR_CORRUPT_DATA, "already");
        /* Incompressible: copied as it is. Random bytes as a keyframe of 24 x 16. */
        glcv_delta *enc = NULL;
        CHECK_OK(glcv_delta_create(&GLCV_DELTA_PARAMS(.width = SW, .height = SH, .engine = GLCV_ENGINE_CPU, .logger = lg),
                                    &enc));
        glcv_image f = test_image_make(SW, SH, GLCV_PIXEL_RGB8, 0);
        uint64_t rng = 99;
        for (size_t i = 0; i < SN; i++)
            f.data[i] = (uint8_t)test_rand(&rng);
        const uint8_t *kp;
        size_t kb;
        if (enc && glcv_delta_encode(enc, &f, NULL, 0, &kp, &kb) == GLCV_OK) {
            uint8_t *o = malloc(kb);
            CHECK_OK(glcv_delta_compress(kp, kb, 19, o, kb, &got, &lg));
            CHECK(got == kb && memcmp(o, kp, kb) == 0, "an incompressible packet of %zu bytes became %zu", kb, got);
            free(o);
        }
        /* A delta with no records (64 bytes) is copied too. */
        if (enc && glcv_delta_encode(enc, &f, NULL, 0, &kp, &kb) == GLCV_OK) {
            uint8_t o[64];
            CHECK(kb == 64, "an unchanged frame gave %zu bytes", kb);
            CHECK_OK(glcv_delta_compress(kp, kb, 1, o, sizeof o, &got, &lg));
            CHECK(got == 64 && memcmp(o, kp, 64) == 0, "an empty delta became %zu bytes", got);
        }
        test_image_release(&f);
        glcv_delta_destroy(&enc);
        free(p);
    }
    free(out);
    free_stream(&s);
}

/* ---- arguments and states ------------------------------------------------------------------------ */

static void check_arguments(void)
{
    glcv_delta *d = NULL;
    glcv_delta_params p = GLCV_DELTA_PARAMS(.width = 16, .height = 8, .engine = GLCV_ENGINE_CPU, .logger = quiet);
    CHECK_REJECT(glcv_delta_create(NULL, &d), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_create(&p, NULL), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    struct {
        const char *what;
        glcv_delta_params p;
    } bad[] = {
        {"width 0", GLCV_DELTA_PARAMS(.width = 0, .height = 8, .logger = quiet)},
        {"width -3", GLCV_DELTA_PARAMS(.width = -3, .height = 8, .logger = quiet)},
        {"width 16385", GLCV_DELTA_PARAMS(.width = 16385, .height = 8, .logger = quiet)},
        {"height 0", GLCV_DELTA_PARAMS(.width = 16, .height = 0, .logger = quiet)},
        {"height 16385", GLCV_DELTA_PARAMS(.width = 16, .height = 16385, .logger = quiet)},
        {"format 6", GLCV_DELTA_PARAMS(.width = 16, .height = 8, .format = (glcv_pixel_format)6, .logger = quiet)},
        {"format -1", GLCV_DELTA_PARAMS(.width = 16, .height = 8, .format = (glcv_pixel_format)-1, .logger = quiet)},
        {"threshold 256", GLCV_DELTA_PARAMS(.width = 16, .height = 8, .threshold = 256, .logger = quiet)},
        {"threshold -2", GLCV_DELTA_PARAMS(.width = 16, .height = 8, .threshold = -2, .logger = quiet)},
        {"threshold INT_MIN", GLCV_DELTA_PARAMS(.width = 16, .height = 8, .threshold = -2147483647 - 1, .logger = quiet)},
        {"interval -2", GLCV_DELTA_PARAMS(.width = 16, .height = 8, .keyframe_interval = -2, .logger = quiet)},
        {"layout RAW", GLCV_DELTA_PARAMS(.width = 16, .height = 8, .layout = GLCV_DELTA_RAW, .logger = quiet)},
        {"layout 4", GLCV_DELTA_PARAMS(.width = 16, .height = 8, .layout = (glcv_delta_layout)4, .logger = quiet)},
        {"engine CUDA", GLCV_DELTA_PARAMS(.width = 16, .height = 8, .engine = GLCV_ENGINE_CUDA, .logger = quiet)},
        {"engine 9", GLCV_DELTA_PARAMS(.width = 16, .height = 8, .engine = (glcv_engine_mode)9, .logger = quiet)},
        {"engine -1", GLCV_DELTA_PARAMS(.width = 16, .height = 8, .engine = (glcv_engine_mode)-1, .logger = quiet)},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d = (glcv_delta *)&p; /* must become NULL */
        last_error[0] = 0;
        glcv_status st = glcv_delta_create(&bad[i].p, &d);
        CHECK(st == GLCV_ERROR_INVALID_ARGUMENT && d == NULL && last_error[0], "%s: '%s', log '%s'", bad[i].what,
              glcv_status_string(st), last_error);
        glcv_delta_destroy(&d);
    }
    /* FRAGMENT and COMPUTE need a current context (there is none yet). */
    CHECK_REJECT(glcv_delta_create(&GLCV_DELTA_PARAMS(.width = 16, .height = 8, .engine = GLCV_ENGINE_FRAGMENT,
                                                      .logger = quiet),
                                   &d),
                 GLCV_ERROR_NO_CONTEXT, NULL);
    CHECK(d == NULL, "a failed create left an object");
    CHECK_REJECT(glcv_delta_create(&GLCV_DELTA_PARAMS(.width = 16, .height = 8, .engine = GLCV_ENGINE_COMPUTE,
                                                      .logger = quiet),
                                   &d),
                 GLCV_ERROR_NO_CONTEXT, NULL);
    /* Defaults: AUTO without a context is the CPU engine. */
    CHECK_OK(glcv_delta_create(&GLCV_DELTA_PARAMS(.width = 16, .height = 8, .threshold = GLCV_DELTA_LOSSLESS,
                                                  .keyframe_interval = -1, .logger = quiet),
                               &d));
    glcv_delta_params got;
    CHECK_REJECT(glcv_delta_get_params(NULL, &got), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_get_params(d, NULL), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_OK(glcv_delta_get_params(d, &got));
    CHECK(got.engine == GLCV_ENGINE_CPU && got.format == GLCV_PIXEL_RGB8 && got.threshold == GLCV_DELTA_LOSSLESS &&
              got.keyframe_interval == -1,
          "resolved: engine %d format %d threshold %d interval %d", got.engine, got.format, got.threshold,
          got.keyframe_interval);
    glcv_delta_destroy(&d);
    CHECK(d == NULL, "destroy did not clear the pointer");
    glcv_delta_destroy(&d);
    glcv_delta_destroy(NULL);
    CHECK_OK(glcv_delta_create(&p, &d));
    CHECK_OK(glcv_delta_get_params(d, &got));
    CHECK(got.threshold == 8 && got.keyframe_interval == 300 && got.format == GLCV_PIXEL_RGB8 &&
              got.layout == GLCV_DELTA_LAYOUT_DEFAULT,
          "defaults: threshold %d interval %d format %d layout %d", got.threshold, got.keyframe_interval, got.format,
          got.layout);

    /* Encoding. */
    glcv_image f = test_image_make(16, 8, GLCV_PIXEL_RGB8, 0), m = test_image_make(16, 8, GLCV_PIXEL_GRAY8, 0);
    glcv_image small = test_image_make(15, 8, GLCV_PIXEL_RGB8, 0), mrgb = test_image_make(16, 8, GLCV_PIXEL_RGB8, 0);
    glcv_image msmall = test_image_make(16, 7, GLCV_PIXEL_GRAY8, 0);
    const uint8_t *pk = NULL;
    size_t pb = 0;
    glcv_image nodata = f, badstride = f, badformat = f;
    nodata.data = NULL;
    badstride.stride = 47;
    badformat.format = (glcv_pixel_format)9;
    CHECK_REJECT(glcv_delta_encode(NULL, &f, NULL, 0, &pk, &pb), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_encode(d, NULL, NULL, 0, &pk, &pb), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_encode(d, &f, NULL, 0, NULL, &pb), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_encode(d, &f, NULL, 0, &pk, NULL), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_encode(d, &f, NULL, 2, &pk, &pb), GLCV_ERROR_INVALID_ARGUMENT, "flags");
    CHECK_REJECT(glcv_delta_encode(d, &f, NULL, -1, &pk, &pb), GLCV_ERROR_INVALID_ARGUMENT, "flags");
    CHECK_REJECT(glcv_delta_encode(d, &nodata, NULL, 0, &pk, &pb), GLCV_ERROR_INVALID_ARGUMENT, "frame");
    CHECK_REJECT(glcv_delta_encode(d, &badstride, NULL, 0, &pk, &pb), GLCV_ERROR_INVALID_ARGUMENT, "frame");
    CHECK_REJECT(glcv_delta_encode(d, &badformat, NULL, 0, &pk, &pb), GLCV_ERROR_INVALID_ARGUMENT, "frame");
    CHECK_REJECT(glcv_delta_encode(d, &small, NULL, 0, &pk, &pb), GLCV_ERROR_SIZE_MISMATCH, "15x8");
    CHECK_REJECT(glcv_delta_encode(d, &f, &mrgb, 0, &pk, &pb), GLCV_ERROR_INVALID_ARGUMENT, "GRAY8");
    CHECK_REJECT(glcv_delta_encode(d, &f, &msmall, 0, &pk, &pb), GLCV_ERROR_SIZE_MISMATCH, "mask");
    CHECK(pk == NULL && pb == 0, "a failed encode left a packet");
    CHECK_REJECT(glcv_delta_encode_texture(d, 0, 0, 0, &pk, &pb), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_encode_texture(NULL, 1, 0, 0, &pk, &pb), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_encode_texture(d, 1, 0, 0, &pk, &pb), GLCV_ERROR_NO_CONTEXT, "context");
    /* Nothing encoded yet: no snapshot, no reference. */
    glcv_image ref = test_image_make(16, 8, GLCV_PIXEL_RGB8, 0), ref_small = test_image_make(16, 9, GLCV_PIXEL_RGB8, 0);
    glcv_image ref_gray = test_image_make(16, 8, GLCV_PIXEL_GRAY8, 0);
    CHECK_REJECT(glcv_delta_snapshot(d, &pk, &pb), GLCV_ERROR_STATE, "no reference");
    CHECK_REJECT(glcv_delta_snapshot(NULL, &pk, &pb), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_snapshot(d, NULL, &pb), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_snapshot(d, &pk, NULL), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_read_reference(d, &ref), GLCV_ERROR_STATE, "no reference");
    CHECK_REJECT(glcv_delta_read_reference(NULL, &ref), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_read_reference(d, NULL), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_read_reference(d, &ref_small), GLCV_ERROR_SIZE_MISMATCH, NULL);
    CHECK_REJECT(glcv_delta_read_reference(d, &ref_gray), GLCV_ERROR_INVALID_ARGUMENT, "format");
    /* The failed calls numbered nothing: the first frame is frame 0, a keyframe. */
    CHECK_OK(glcv_delta_encode(d, &f, &m, 0, &pk, &pb));
    glcv_delta_header h;
    CHECK_OK(glcv_delta_header_parse(pk, pb, &h, &lg));
    CHECK(h.frame == 0 && h.key, "the first frame after errors is frame %llu key %d", (unsigned long long)h.frame,
          h.key);
    CHECK_OK(glcv_delta_snapshot(d, &pk, &pb));
    CHECK_OK(glcv_delta_read_reference(d, &ref));
    glcv_timing tm[4];
    int count = -1;
    CHECK_REJECT(glcv_delta_timings(NULL, tm, 4, &count, 0), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_timings(d, tm, 4, NULL, 0), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_timings(d, NULL, 4, &count, 0), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_timings(d, tm, -1, &count, 0), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_OK(glcv_delta_timings(d, tm, 4, &count, 0));
    CHECK(count == 1 && tm[0].clock == GLCV_CLOCK_HOST && tm[0].ms >= 0, "CPU timings: %d, clock %d", count,
          count > 0 ? (int)tm[0].clock : -1);
    /* Frame 1 is a delta; snapshots do not change what comes next. */
    CHECK_OK(glcv_delta_encode(d, &f, NULL, 0, &pk, &pb));
    CHECK_OK(glcv_delta_header_parse(pk, pb, &h, &lg));
    CHECK(h.frame == 1 && !h.key && pb == 64, "frame 1: %llu key %d %zu bytes", (unsigned long long)h.frame, h.key, pb);
    glcv_delta_destroy(&d);
    test_image_release(&f);
    test_image_release(&m);
    test_image_release(&small);
    test_image_release(&mrgb);
    test_image_release(&msmall);
    test_image_release(&ref);
    test_image_release(&ref_small);
    test_image_release(&ref_gray);

    /* The decoder. */
    glcv_delta_decoder *dec = NULL;
    CHECK_REJECT(glcv_delta_decoder_create(NULL, &dec), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.logger = quiet), NULL),
                 GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.max_bytes = (size_t)1 << 31, .logger = quiet),
                                           &dec),
                 GLCV_ERROR_INVALID_ARGUMENT, "max_bytes");
    CHECK(dec == NULL, "a failed decoder create left an object");
    CHECK_REJECT(glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.max_bytes = SIZE_MAX, .logger = quiet), &dec),
                 GLCV_ERROR_INVALID_ARGUMENT, "max_bytes");
    CHECK_OK(glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.max_bytes = 1, .logger = quiet), &dec));
    glcv_delta_decoder_destroy(&dec);
    CHECK_OK(glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.logger = quiet), &dec));
    glcv_image pic;
    uint64_t frame;
    uint8_t byte = 0;
    CHECK_REJECT(glcv_delta_decode(NULL, &byte, 1), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_decode(dec, NULL, 100), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_decode(dec, &byte, 0), GLCV_ERROR_CORRUPT_DATA, "shorter than a header");
    CHECK_REJECT(glcv_delta_decoder_picture(NULL, &pic, &frame), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_decoder_picture(dec, NULL, &frame), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    CHECK_REJECT(glcv_delta_decoder_picture(dec, &pic, &frame), GLCV_ERROR_STATE, "no picture");
    glcv_delta_decoder_destroy(&dec);
    CHECK(dec == NULL, "decoder destroy did not clear the pointer");
    glcv_delta_decoder_destroy(&dec);
    glcv_delta_decoder_destroy(NULL);
    CHECK(glcv_delta_can_compress() == GLCV_HAVE_ZSTD, "can_compress %d, GLCV_HAVE_ZSTD %d", glcv_delta_can_compress(),
          GLCV_HAVE_ZSTD);
}

/* ---- texture inputs (CPU engine) --------------------------------------------------------------------- */

/* Texture frames (GL_RGBA8, GL_RGB8) and mask textures (GL_R8) give the packets the same pixels
 * give from host memory, in every stream format. */
static void check_textures(void)
{
    glcv_context *ctx = NULL;
    glcv_context_params cp = {0};
    cp.logger = quiet;
    glcv_status st = glcv_context_create(&cp, &ctx);
    if (st != GLCV_OK) {
        printf("texture inputs: skipped (no OpenGL context: %s)\n", glcv_status_string(st));
        return;
    }
    printf("GL context: %s\n", glcv_context_describe(ctx));
    const int w = 33, h = 17;
    size_t px = (size_t)w * h;
    uint8_t *rgba = malloc(px * 4), *rgb = malloc(px * 3), *maskpx = malloc(px);
    unsigned int tex_rgba = test_texture_make(GL_RGBA8, GL_RGBA, w, h, NULL);
    unsigned int tex_rgb = test_texture_make(GL_RGB8, GL_RGB, w, h, NULL);
    unsigned int tex_mask = test_texture_make(GL_R8, GL_RED, w, h, NULL);
    uint64_t rng = 5;
    int compared = 0;
    for (int fi = 0; fi < 5; fi++)
        for (int src = 0; src < 2; src++) {
            glcv_delta *a = NULL, *b = NULL;
            glcv_delta_params p = GLCV_DELTA_PARAMS(.width = w, .height = h, .format = formats[fi], .threshold = 3,
                                                    .keyframe_interval = 4, .engine = GLCV_ENGINE_CPU, .logger = lg);
            CHECK_OK(glcv_delta_create(&p, &a));
            CHECK_OK(glcv_delta_create(&p, &b));
            for (int t = 0; t < 8 && a && b; t++) {
                for (size_t i = 0; i < px * 4; i++)
                    rgba[i] = t == 0 || test_rand(&rng) % 4 == 0 ? (uint8_t)test_rand(&rng) : rgba[i];
                for (size_t i = 0; i < px; i++) {
                    memcpy(rgb + 3 * i, rgba + 4 * i, 3);
                    maskpx[i] = (i + (size_t)t) % 7 < 3 ? 0 : (uint8_t)(128 + i % 128); /* 0, or > 127 */
                }
                int masked = t % 2;
                test_texture_upload(src ? tex_rgb : tex_rgba, 0, src ? GL_RGB : GL_RGBA, w, h, src ? rgb : rgba, 0);
                test_texture_upload(tex_mask, 0, GL_RED, w, h, maskpx, 0);
                glcv_image frame = {src ? rgb : rgba, w, h, 0, src ? GLCV_PIXEL_RGB8 : GLCV_PIXEL_RGBA8};
                glcv_image mask = {maskpx, w, h, 0, GLCV_PIXEL_GRAY8};
                const uint8_t *pa, *pb;
                size_t ba, bb;
                CHECK_OK(glcv_delta_encode(a, &frame, masked ? &mask : NULL, 0, &pa, &ba));
                st = glcv_delta_encode_texture(b, src ? tex_rgb : tex_rgba, masked ? tex_mask : 0, 0, &pb, &bb);
                CHECK(st == GLCV_OK, "%s from a %s texture, frame %d: %s", format_name(formats[fi]),
                      src ? "GL_RGB8" : "GL_RGBA8", t, glcv_status_string(st));
                if (st != GLCV_OK)
                    break;
                compared++;
                if (ba != bb || memcmp(pa, pb, ba) != 0) {
                    size_t at = 0;
                    while (at < ba && at < bb && pa[at] == pb[at])
                        at++;
                    CHECK(0, "%s from a %s texture, frame %d%s: packets of %zu and %zu bytes differ from byte %zu",
                          format_name(formats[fi]), src ? "GL_RGB8" : "GL_RGBA8", t, masked ? " (masked)" : "", ba, bb,
                          at);
                    break;
                }
            }
            glcv_delta_destroy(&a);
            glcv_delta_destroy(&b);
        }
    /* A texture of another size; a name that is not a texture. */
    glcv_delta *d = NULL;
    CHECK_OK(glcv_delta_create(&GLCV_DELTA_PARAMS(.width = w + 1, .height = h, .engine = GLCV_ENGINE_CPU,
                                                  .logger = quiet),
                                &d));
    const uint8_t *pk;
    size_t pb;
    CHECK_REJECT(glcv_delta_encode_texture(d, tex_rgba, 0, 0, &pk, &pb), GLCV_ERROR_SIZE_MISMATCH, NULL);
    CHECK_REJECT(glcv_delta_encode_texture(d, 987654, 0, 0, &pk, &pb), GLCV_ERROR_INVALID_ARGUMENT, NULL);
    glcv_delta_destroy(&d);
    printf("texture inputs: %d frames gave the packets of their host pixels\n", compared);
    GLuint texs[3] = {tex_rgba, tex_rgb, tex_mask};
    glDeleteTextures(3, texs);
    free(rgba);
    free(rgb);
    free(maskpx);
    glcv_context_destroy(&ctx);
}

int main(void)
{
    lg = test_logger();
    check_crc();
    check_parser();
    check_arguments();
    check_compress_arguments();
    check_corruption();
    check_mask_freezes();
    check_video();
    check_textures();
    return test_finish("test_delta");
}
