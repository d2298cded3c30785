/* Replay driver of the fuzz target fuzz_delta_packet.c, built without libFuzzer:
 *
 *   fuzz_delta_replay [--mutations N] [--seeds DIR] [FILE|DIR]...
 *
 * runs the target over each file named (a folder: over its files, in name order: the corpus and
 * the crash inputs kept as regression inputs), and over N deterministic pseudo-random mutations
 * (default 20000; without files only these) of valid packets it makes with the encoder: keyframes,
 * INDICES and BITMAP deltas, a snapshot, compressed packets where the build compresses. Mutations
 * flip bits, set bytes, cut, grow, repeat a piece, and set header fields to edge values; the target
 * decodes each as it is and with its checksums made right. --seeds DIR writes the valid packets
 * there (a starting corpus for libFuzzer). Exit 0 when every input ran and the mutations reached
 * accepted, corrupt and out-of-order packets alike; the target aborts on a broken contract. */
#define _POSIX_C_SOURCE 200809L /* strdup, opendir */

#include "fuzz_delta_packet.h"

#include <glcv/glcv.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEEDS 16
#define MAX_INPUT (1 << 16)

typedef struct seed {
    uint8_t *data;
    size_t bytes;
} seed;

static seed seeds[MAX_SEEDS];
static int n_seeds;

static void add_seed(const uint8_t *p, size_t bytes)
{
    if (n_seeds == MAX_SEEDS)
        return;
    seeds[n_seeds].data = malloc(bytes);
    memcpy(seeds[n_seeds].data, p, bytes);
    seeds[n_seeds].bytes = bytes;
    n_seeds++;
}

/* Packets of w x h frames: frame 0, then frame 1 changed in `changes` bytes (INDICES when few,
 * BITMAP when many), each also compressed; a snapshot after frame 1 when `snapshot`. */
static int make_seeds(int w, int h, glcv_pixel_format format, int changes, int snapshot)
{
    glcv_delta *enc = NULL;
    if (glcv_delta_create(&GLCV_DELTA_PARAMS(.width = w, .height = h, .format = format, .engine = GLCV_ENGINE_CPU),
                          &enc) != GLCV_OK)
        return 1;
    glcv_image f;
    if (glcv_image_alloc(w, h, format, &f) != GLCV_OK) {
        glcv_delta_destroy(&enc);
        return 1;
    }
    size_t n = (size_t)w * h * (size_t)glcv_pixel_format_size(format);
    for (size_t i = 0; i < n; i++)
        f.data[i] = (uint8_t)(7 * i % 251);
    int rc = 0;
    for (int t = 0; t < 2 && !rc; t++) {
        if (t == 1)
            for (int c = 0; c < changes; c++)
                f.data[(size_t)c * 37 % n] += 100;
        const uint8_t *p;
        size_t b;
        rc = glcv_delta_encode(enc, &f, NULL, 0, &p, &b) != GLCV_OK;
        if (rc)
            break;
        add_seed(p, b);
        if (glcv_delta_can_compress()) {
            uint8_t *z = malloc(b);
            size_t zb = 0;
            if (glcv_delta_compress(p, b, 1, z, b, &zb, NULL) == GLCV_OK && zb < b)
                add_seed(z, zb);
            free(z);
        }
    }
    const uint8_t *p;
    size_t b;
    if (!rc && snapshot && glcv_delta_snapshot(enc, &p, &b) == GLCV_OK)
        add_seed(p, b);
    glcv_image_free(&f);
    glcv_delta_destroy(&enc);
    return rc;
}

static uint64_t rng_state = 0x243F6A8885A308D3ull;

static uint64_t next_random(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static uint32_t edge_value(void)
{
    static const uint32_t values[] = {0, 1, 2, 3, 7, 8, 63, 64, 127, 128, 255, 256, 383, 384, 385, 1920, 65535,
                                      16384, 16385, 0x7FFFFFFF, 0x80000000u, 0xFFFFFFFFu};
    return values[next_random() % (sizeof values / sizeof values[0])];
}

/* One mutation of a seed into buf; returns its length. */
static size_t mutate(uint8_t *buf)
{
    const seed *s = &seeds[next_random() % (uint64_t)n_seeds];
    size_t len = s->bytes;
    memcpy(buf, s->data, len);
    int ops = 1 + (int)(next_random() % 4);
    for (int o = 0; o < ops; o++) {
        size_t at = len ? (size_t)(next_random() % len) : 0;
        switch (next_random() % 7) {
        case 0: /* a bit */
            if (len)
                buf[at] ^= (uint8_t)(1u << (next_random() % 8));
            break;
        case 1: /* a byte */
            if (len)
                buf[at] = (uint8_t)next_random();
            break;
        case 2: /* cut */
            len = (size_t)(next_random() % (len + 1));
            break;
        case 3: /* grow */ {
            size_t extra = (size_t)(next_random() % 64);
            if (len + extra <= MAX_INPUT) {
                for (size_t i = 0; i < extra; i++)
                    buf[len + i] = (uint8_t)next_random();
                len += extra;
            }
            break;
        }
        case 4: /* repeat a piece */ {
            size_t piece = len ? (size_t)(next_random() % 16) % (len - at + 1) : 0;
            if (len + piece <= MAX_INPUT) {
                memmove(buf + at + piece, buf + at, len - at);
                len += piece;
            }
            break;
        }
        default: /* a header field: a 32-bit, 16-bit or 8-bit one at its offset */ {
            static const int fields32[] = {12, 16, 20, 24, 28, 36, 40, 44};
            static const int fields8[] = {32, 33, 34, 35};
            uint32_t v = edge_value();
            if (next_random() % 2) {
                int off = fields32[next_random() % 8];
                if ((size_t)off + 4 <= len)
                    for (int i = 0; i < 4; i++)
                        buf[off + i] = (uint8_t)(v >> (8 * i));
            } else {
                int off = fields8[next_random() % 4];
                if ((size_t)off < len)
                    buf[off] = (uint8_t)v;
            }
            break;
        }
        }
    }
    return len;
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz_delta_replay: cannot open %s\n", path);
        return 1;
    }
    uint8_t *buf = malloc(MAX_INPUT + 1);
    size_t len = fread(buf, 1, MAX_INPUT + 1, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file, or every file of a folder in name order; *count += how many ran. */
static int run_path(const char *path, int *count)
{
    DIR *dir = opendir(path);
    if (!dir) {
        (*count)++;
        return run_file(path);
    }
    char **names = NULL;
    int n = 0, rc = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, sizeof *names * (size_t)(n + 1));
        names[n++] = strdup(e->d_name);
    }
    closedir(dir);
    if (n > 1)
        qsort(names, (size_t)n, sizeof *names, cmp_names);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(path) + strlen(names[i]) + 2;
        char *full = malloc(len);
        snprintf(full, len, "%s/%s", path, names[i]);
        rc |= run_file(full);
        (*count)++;
        free(full);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    long mutations = -1;
    const char *seed_dir = NULL;
    int files = 0, rc = 0, first_path = argc;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mutations") == 0 && i + 1 < argc) {
            mutations = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
            seed_dir = argv[++i];
        } else {
            first_path = i;
            break;
        }
    }
    for (int i = first_path; i < argc; i++)
        rc |= run_path(argv[i], &files);
    if (files)
        printf("fuzz_delta_replay: %d files replayed\n", files);
    if (mutations < 0)
        mutations = first_path < argc ? 0 : 20000;
    if (mutations == 0 && !seed_dir)
        return rc;

    /* Valid packets: the target's own stream (16 x 8 RGB), another size and format, odd sizes. */
    if (make_seeds(16, 8, GLCV_PIXEL_RGB8, 3, 1) || make_seeds(16, 8, GLCV_PIXEL_RGB8, 60, 0) ||
        make_seeds(5, 3, GLCV_PIXEL_GRAY8, 2, 0) || make_seeds(7, 3, GLCV_PIXEL_BGRA8, 9, 1)) {
        fprintf(stderr, "fuzz_delta_replay: the encoder failed to make the seed packets\n");
        return 1;
    }
    if (seed_dir)
        for (int i = 0; i < n_seeds; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/seed_%02d", seed_dir, i);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(seeds[i].data, 1, seeds[i].bytes, f) != seeds[i].bytes)
                rc = 1;
            if (f)
                fclose(f);
        }
    memset(fuzz_delta_statuses, 0, sizeof fuzz_delta_statuses);
    for (int i = 0; i < n_seeds; i++)
        LLVMFuzzerTestOneInput(seeds[i].data, seeds[i].bytes);
    uint8_t *buf = malloc(MAX_INPUT + 64);
    for (long m = 0; m < mutations; m++) {
        size_t len = mutate(buf);
        LLVMFuzzerTestOneInput(buf, len);
    }
    free(buf);
    unsigned long *s = fuzz_delta_statuses;
    printf("fuzz_delta_replay: %d seed packets, %ld mutations: decodes ok %lu, corrupt %lu, out of order %lu, "
           "unsupported %lu, out of memory %lu\n",
           n_seeds, mutations, s[GLCV_OK], s[GLCV_ERROR_CORRUPT_DATA], s[GLCV_ERROR_STATE], s[GLCV_ERROR_UNSUPPORTED],
           s[GLCV_ERROR_OUT_OF_MEMORY]);
    if (mutations > 0 && (!s[GLCV_OK] || !s[GLCV_ERROR_CORRUPT_DATA] || !s[GLCV_ERROR_STATE])) {
        fprintf(stderr, "fuzz_delta_replay: the mutations did not reach accepted, corrupt and out-of-order packets\n");
        rc = 1;
    }
    for (int i = 0; i < n_seeds; i++)
        free(seeds[i].data);
    return rc;
}
