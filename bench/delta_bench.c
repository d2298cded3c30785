/* delta_bench: the frame-delta codec's CPU engine and decoder on 1920x1080 RGB frames - encode and
 * decode times per frame (medians) and packet sizes, for a keyframe and for frames where 1 % and
 * 20 % of the bytes changed, the changes scattered at random or in one block; with --zstd also the
 * compressed sizes and the time of glcv_delta_compress.
 *
 * usage: delta_bench [--runs N] [--zstd LEVEL]
 *
 * Frames alternate between A (a textured picture) and B (A with the changed bytes + 50), so every
 * frame changes the same bytes against the reference; the threshold is the default (8). Decoding
 * times are of glcv_delta_decode on the packets of the same run, in order (checksum, checks, apply);
 * encoding times of glcv_delta_encode from host memory (load, difference, records, checksum). */
#define _POSIX_C_SOURCE 200809L

#include <glcv/glcv.h>

#include "benchutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 1920, H = 1080, N = W * H * 3 };

static uint64_t rng_state = 88172645463325252ull;

static uint64_t next_random(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

typedef struct row {
    const char *name;
    double fraction; /* of the bytes changed; 0: keyframes */
    int block;       /* the changes in one block of rows, else scattered */
} row;

static const char *layout_name(glcv_delta_layout l)
{
    return l == GLCV_DELTA_RAW ? "raw" : l == GLCV_DELTA_INDICES ? "indices" : l == GLCV_DELTA_BITMAP ? "bitmap" : "?";
}

int main(int argc, char **argv)
{
    int runs = 31, zstd_level = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--zstd") == 0 && i + 1 < argc)
            zstd_level = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: delta_bench [--runs N] [--zstd LEVEL]\n");
            return 2;
        }
    }
    if (runs < 1)
        runs = 1;
    if (zstd_level && !glcv_delta_can_compress()) {
        fprintf(stderr, "delta_bench: this build has no Zstandard\n");
        return 1;
    }
    const row rows[] = {{"keyframe", 0, 0},
                        {"1% scattered", 0.01, 0},
                        {"1% in a block", 0.01, 1},
                        {"20% scattered", 0.20, 0},
                        {"20% in a block", 0.20, 1}};
    glcv_image a, b;
    if (glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &a) || glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &b))
        return 1;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 3; c++)
                a.data[((size_t)y * W + x) * 3 + c] = (uint8_t)(40 + ((x / 32 + y / 32) & 1) * 80 + (x * 3 + y + 50 * c) % 64);
    double *enc_ms = malloc(sizeof(double) * (size_t)runs * 2), *dec_ms = malloc(sizeof(double) * (size_t)runs * 2),
           *z_ms = malloc(sizeof(double) * (size_t)runs * 2);
    uint8_t **packets = calloc((size_t)runs * 2, sizeof *packets);
    size_t *sizes = calloc((size_t)runs * 2, sizeof *sizes);
    uint8_t *zbuf = malloc(N + 64);
    printf("delta_bench: %dx%d RGB8 (%d bytes a frame), threshold 8, CPU engine, %d frames a row\n", W, H, N, runs * 2);
    printf("%-16s %-8s %10s %12s %12s", "frames", "layout", "records", "packet B", "encode ms");
    printf(" %10s", "decode ms");
    if (zstd_level)
        printf(" %12s %10s", "zstd B", "zstd ms");
    printf("\n");
    int rc = 0;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        memcpy(b.data, a.data, N);
        size_t k = (size_t)(rows[r].fraction * N);
        if (rows[r].block)
            for (size_t i = N / 3; i < N / 3 + k; i++)
                b.data[i] += 50;
        else
            for (size_t c = 0; c < k;) { /* k distinct bytes at random */
                size_t i = (size_t)(next_random() % N);
                if (b.data[i] == a.data[i]) {
                    b.data[i] += 50;
                    c++;
                }
            }
        glcv_delta *enc = NULL;
        glcv_delta_decoder *dec = NULL;
        if (glcv_delta_create(&GLCV_DELTA_PARAMS(.width = W, .height = H, .keyframe_interval = -1,
                                                 .engine = GLCV_ENGINE_CPU),
                              &enc) ||
            glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(0), &dec)) {
            rc = 1;
            break;
        }
        const uint8_t *p;
        size_t bytes;
        glcv_delta_encode(enc, &a, NULL, 0, &p, &bytes); /* frame 0: the first keyframe */
        glcv_delta_decode(dec, p, bytes);
        glcv_delta_header h = {0};
        int frames = runs * 2;
        double z_bytes = 0;
        for (int t = 0; t < frames; t++) {
            double t0 = bench_now_ms();
            glcv_status st = glcv_delta_encode(enc, t % 2 ? &a : &b, NULL, rows[r].fraction == 0 ? GLCV_DELTA_FORCE_KEY : 0,
                                               &p, &bytes);
            enc_ms[t] = bench_now_ms() - t0;
            if (st != GLCV_OK) {
                rc = 1;
                break;
            }
            packets[t] = malloc(bytes);
            memcpy(packets[t], p, bytes);
            sizes[t] = bytes;
            if (zstd_level) {
                size_t zb = 0;
                t0 = bench_now_ms();
                glcv_delta_compress(p, bytes, zstd_level, zbuf, N + 64, &zb, NULL);
                z_ms[t] = bench_now_ms() - t0;
                z_bytes += (double)zb;
            }
        }
        glcv_delta_header_parse(packets[0], sizes[0], &h, NULL);
        for (int t = 0; t < frames && !rc; t++) {
            double t0 = bench_now_ms();
            glcv_status st = glcv_delta_decode(dec, packets[t], sizes[t]);
            dec_ms[t] = bench_now_ms() - t0;
            if (st != GLCV_OK) {
                fprintf(stderr, "delta_bench: decoding frame %d: %s\n", t + 1, glcv_status_string(st));
                rc = 1;
            }
        }
        printf("%-16s %-8s %10u %12zu %12.3f %10.3f", rows[r].name, layout_name(h.layout), h.records, sizes[0],
               bench_median(enc_ms, frames), bench_median(dec_ms, frames));
        if (zstd_level)
            printf(" %12.0f %10.3f", z_bytes / frames, bench_median(z_ms, frames));
        printf("\n");
        for (int t = 0; t < frames; t++) {
            free(packets[t]);
            packets[t] = NULL;
        }
        glcv_delta_destroy(&enc);
        glcv_delta_decoder_destroy(&dec);
    }
    free(enc_ms);
    free(dec_ms);
    free(z_ms);
    free(packets);
    free(sizes);
    free(zbuf);
    glcv_image_free(&a);
    glcv_image_free(&b);
    return rc;
}
