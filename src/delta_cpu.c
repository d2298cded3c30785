/* Frame-delta coding on the CPU: the engine steps of delta_internal.h, the fallback and the tests'
 * oracle. The difference runs 16 bytes at a time (SSE2, which every x86-64 has; plain C
 * elsewhere) into a bitmap of the changed bytes; the mask joins it as a bitmap too, each pixel's
 * bit spread over its bytes' bits by a table; the records are read off the bitmap a 64-bit word
 * at a time. */
#include "delta_internal.h"

#include "core_internal.h"
#include "gl.h"

#include <glcv/image.h>

#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* spread[bpp][v]: the 8 bits of v (8 pixels' mask), each repeated bpp times (8 bpp bits). */
static uint32_t spread[5][256];
static pthread_once_t spread_once = PTHREAD_ONCE_INIT;

static void spread_init(void)
{
    for (int bpp = 1; bpp <= 4; bpp++)
        for (unsigned v = 0; v < 256; v++) {
            uint32_t s = 0;
            for (int b = 0; b < 8; b++)
                if (v >> b & 1)
                    s |= ((1u << bpp) - 1) << (bpp * b);
            spread[bpp][v] = s;
        }
}

static size_t words_of(size_t n)
{
    return (n + 63) / 64;
}

glcv_status glcv_delta_cpu_init(glcv_delta *d)
{
    glcv_delta_cpu *c = &d->cpu;
    c->ref = calloc(d->n, 1);
    c->cur = calloc(d->n, 1);
    c->bits = calloc(words_of(d->n), sizeof(uint64_t));
    if (!c->ref || !c->cur || !c->bits) {
        glcv_delta_cpu_free(d);
        return glcv_fail(&d->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "delta: no memory for frames of %zu bytes", d->n);
    }
    pthread_once(&spread_once, spread_init);
    return GLCV_OK;
}

void glcv_delta_cpu_free(glcv_delta *d)
{
    glcv_delta_cpu *c = &d->cpu;
    free(c->ref);
    free(c->cur);
    free(c->pixmask);
    free(c->bits);
    memset(c, 0, sizeof *c);
}

/* ---- load ------------------------------------------------------------------------------------- */

/* The frame texture, read back in the stream's format (gray through RGB and the luma of
 * glcv_image_convert). */
static glcv_status load_texture(glcv_delta *d, unsigned int texture, glcv_image *cur)
{
    const glcv_logger *lg = &d->p.logger;
    int w = d->p.width, h = d->p.height;
    GLenum format = d->p.format == GLCV_PIXEL_RGBA8  ? GL_RGBA
                    : d->p.format == GLCV_PIXEL_BGR8  ? GL_BGR
                    : d->p.format == GLCV_PIXEL_BGRA8 ? GL_BGRA
                                                      : GL_RGB;
    if (d->p.format != GLCV_PIXEL_GRAY8)
        return glcv_gl_read_bytes(texture, w, h, format, cur->data, lg);
    glcv_image rgb = {malloc((size_t)w * (size_t)h * 3), w, h, 0, GLCV_PIXEL_RGB8};
    if (!rgb.data)
        return glcv_fail(lg, GLCV_ERROR_OUT_OF_MEMORY, "delta: no memory to read texture %u", texture);
    glcv_status st = glcv_gl_read_bytes(texture, w, h, GL_RGB, rgb.data, lg);
    if (st == GLCV_OK)
        st = glcv_image_convert(&rgb, cur);
    free(rgb.data);
    return st;
}

glcv_status glcv_delta_cpu_load(glcv_delta *d, const glcv_image *frame, unsigned int frame_tex, const glcv_image *mask,
                                unsigned int mask_tex)
{
    glcv_delta_cpu *c = &d->cpu;
    int w = d->p.width, h = d->p.height;
    glcv_image cur = {c->cur, w, h, 0, d->p.format};
    glcv_status st = frame ? glcv_image_convert(frame, &cur) : load_texture(d, frame_tex, &cur);
    if (st != GLCV_OK)
        return st;
    c->mask = NULL;
    if (!mask && !mask_tex)
        return GLCV_OK;
    size_t px = (size_t)w * (size_t)h;
    if (!c->pixmask && !(c->pixmask = malloc(px)))
        return glcv_fail(&d->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "delta: no memory for a mask");
    if (mask) {
        size_t stride = glcv_image_stride(mask);
        for (int y = 0; y < h; y++) {
            const uint8_t *src = mask->data + stride * (size_t)y;
            uint8_t *dst = c->pixmask + (size_t)w * (size_t)y;
            for (int x = 0; x < w; x++)
                dst[x] = src[x] != 0;
        }
    } else {
        if ((st = glcv_gl_read_bytes(mask_tex, w, h, GL_RED, c->pixmask, &d->p.logger)) != GLCV_OK)
            return st;
        for (size_t i = 0; i < px; i++) /* red > 0.5 */
            c->pixmask[i] = c->pixmask[i] > 127;
    }
    c->mask = c->pixmask;
    return GLCV_OK;
}

/* ---- count ------------------------------------------------------------------------------------ */

/* out[w], for `words` words: bit b set where |cur - ref| > threshold at byte 64 w + b. */
static void changed_words(const uint8_t *cur, const uint8_t *ref, size_t words, int threshold, uint64_t *out)
{
#if defined(__SSE2__)
    const __m128i t = _mm_set1_epi8((char)threshold), zero = _mm_setzero_si128();
    for (size_t w = 0; w < words; w++, cur += 64, ref += 64) {
        uint64_t bits = 0;
        for (int q = 0; q < 4; q++) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(cur + 16 * q));
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(ref + 16 * q));
            __m128i diff = _mm_or_si128(_mm_subs_epu8(a, b), _mm_subs_epu8(b, a));
            __m128i same = _mm_cmpeq_epi8(_mm_subs_epu8(diff, t), zero); /* diff <= threshold */
            bits |= (uint64_t)((unsigned)_mm_movemask_epi8(same) ^ 0xFFFFu) << (16 * q);
        }
        out[w] = bits;
    }
#else
    for (size_t w = 0; w < words; w++, cur += 64, ref += 64) {
        uint64_t bits = 0;
        for (int b = 0; b < 64; b++)
            bits |= (uint64_t)(abs(cur[b] - ref[b]) > threshold) << b;
        out[w] = bits;
    }
#endif
}

/* The bits of 64 pixels of the mask (1 may change). */
static uint64_t mask_word(const uint8_t *mask)
{
    uint64_t bits = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    for (int q = 0; q < 4; q++) {
        __m128i m = _mm_loadu_si128((const __m128i *)(const void *)(mask + 16 * q));
        bits |= (uint64_t)((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(m, zero)) ^ 0xFFFFu) << (16 * q);
    }
#else
    for (int b = 0; b < 64; b++)
        bits |= (uint64_t)(mask[b] != 0) << b;
#endif
    return bits;
}

/* The changed bytes of pixels [0, px) (px a multiple of 64) where the mask allows: 64 pixels, bpp
 * words at a time, the mask's 64 bits spread to bpp words by the table. */
static void changed_words_masked(const glcv_delta *d, size_t px, uint64_t *out)
{
    const glcv_delta_cpu *c = &d->cpu;
    int bpp = d->bpp;
    for (size_t p = 0; p < px; p += 64) {
        uint64_t *o = out + p / 64 * (size_t)bpp;
        changed_words(c->cur + p * (size_t)bpp, c->ref + p * (size_t)bpp, (size_t)bpp, d->threshold, o);
        uint64_t m = mask_word(c->mask + p);
        if (bpp == 1) {
            o[0] &= m;
            continue;
        }
        uint8_t allow[32];
        for (int j = 0; j < 8; j++) {
            uint32_t s = spread[bpp][(m >> (8 * j)) & 0xFF];
            for (int i = 0; i < bpp; i++)
                allow[j * bpp + i] = (uint8_t)(s >> (8 * i));
        }
        for (int i = 0; i < bpp; i++) {
            uint64_t a = 0;
            for (int b = 0; b < 8; b++)
                a |= (uint64_t)allow[8 * i + b] << (8 * b);
            o[i] &= a;
        }
    }
}

glcv_status glcv_delta_cpu_count(glcv_delta *d, uint32_t *k)
{
    glcv_delta_cpu *c = &d->cpu;
    uint64_t *bits = (uint64_t *)(void *)c->bits;
    size_t n = d->n, words = words_of(n), done = 0;
    memset(bits, 0, words * sizeof *bits);
    if (c->mask) {
        size_t px = (size_t)d->p.width * (size_t)d->p.height / 64 * 64;
        changed_words_masked(d, px, bits);
        done = px * (size_t)d->bpp;
    } else {
        changed_words(c->cur, c->ref, n / 64, d->threshold, bits);
        done = n / 64 * 64;
    }
    for (size_t i = done; i < n; i++) /* the rest, a byte at a time */
        if (abs(c->cur[i] - c->ref[i]) > d->threshold && (!c->mask || c->mask[i / (size_t)d->bpp]))
            bits[i / 64] |= (uint64_t)1 << (i % 64);
    size_t total = 0;
    for (size_t w = 0; w < words; w++)
        total += (size_t)__builtin_popcountll(bits[w]);
    *k = (uint32_t)total;
    return GLCV_OK;
}

/* ---- records, key, reference ------------------------------------------------------------------ */

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

glcv_status glcv_delta_cpu_records(glcv_delta *d, glcv_delta_layout layout, uint32_t k, uint8_t *out)
{
    glcv_delta_cpu *c = &d->cpu;
    const uint64_t *bits = (const uint64_t *)(const void *)c->bits;
    size_t n = d->n, words = words_of(n), bitmap_bytes = (n + 7) / 8;
    uint8_t *deltas = out + (layout == GLCV_DELTA_INDICES ? 4 * (size_t)k : bitmap_bytes);
    if (layout == GLCV_DELTA_BITMAP)
        for (size_t i = 0; i < bitmap_bytes; i++) /* little-endian whatever the host */
            out[i] = (uint8_t)(bits[i / 8] >> (8 * (i % 8)));
    uint8_t *cur = c->cur, *ref = c->ref;
    size_t r = 0;
    for (size_t w = 0; w < words; w++) {
        uint64_t word = bits[w];
        size_t base = 64 * w;
        if (word == UINT64_MAX && layout == GLCV_DELTA_BITMAP) { /* 64 changed bytes in a row */
            const uint64_t high = 0x8080808080808080ull;
            for (size_t q = 0; q < 64; q += 8) { /* 8 bytes a subtraction, bytewise mod 256 */
                uint64_t x, y;
                memcpy(&x, cur + base + q, 8);
                memcpy(&y, ref + base + q, 8);
                x = ((x | high) - (y & ~high)) ^ ((x ^ ~y) & high);
                memcpy(deltas + r + q, &x, 8);
            }
            memcpy(ref + base, cur + base, 64);
            r += 64;
            continue;
        }
        for (; word; word &= word - 1) {
            size_t i = base + (size_t)__builtin_ctzll(word);
            if (layout == GLCV_DELTA_INDICES)
                put_le32(out + 4 * r, (uint32_t)i);
            deltas[r++] = (uint8_t)(cur[i] - ref[i]);
            ref[i] = cur[i];
        }
    }
    if (r != k) /* the bitmap is count's: this cannot happen */
        return glcv_fail(&d->p.logger, GLCV_ERROR_STATE, "delta: %zu changed bytes, counted %u", r, k);
    return GLCV_OK;
}

glcv_status glcv_delta_cpu_key(glcv_delta *d, uint8_t *out)
{
    glcv_delta_cpu *c = &d->cpu;
    memcpy(out, c->cur, d->n);
    uint8_t *t = c->ref; /* the frame becomes the reference; the old one is the next frame's room */
    c->ref = c->cur;
    c->cur = t;
    return GLCV_OK;
}

glcv_status glcv_delta_cpu_reference(glcv_delta *d, uint8_t *out)
{
    memcpy(out, d->cpu.ref, d->n);
    return GLCV_OK;
}
