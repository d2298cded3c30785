/* Replays fuzz targets without libFuzzer, for ctest: every file given (a folder: the files in it,
 * in name order), and every input the target makes itself (fuzz_replay_seeds), is passed to
 * LLVMFuzzerTestOneInput as it is, then as `mutations` deterministic variations of it (bits
 * flipped, bytes set to 0x00, 0xff or a random value, a 32-bit word of the first 64 bytes set to
 * an edge value, the input cut short or grown, a run of bytes duplicated), so the neighbourhood of
 * the corpus runs on every test too. A target that finds a violation aborts: the test fails with
 * the input's name printed before it ran; at the end the target's own check (fuzz_replay_check)
 * decides the exit status too. --seeds DIR writes the target's own inputs there (a starting corpus
 * for libFuzzer).
 *
 * usage: fuzz_TARGET [--mutations N] [--seeds DIR] [FILE|FOLDER...]   (default 20000 mutations per input) */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_replay.h"

enum { MAX_INPUT = 1 << 24 };

static uint64_t next_random(uint64_t *state)
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1DULL;
}

static uint8_t *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *data = malloc(MAX_INPUT);
    size_t n = data ? fread(data, 1, MAX_INPUT, f) : 0;
    fclose(f);
    *size = n;
    return data;
}

/* Values at the edges of sizes, counts and signs, for 32-bit fields. */
static uint32_t edge_value(uint64_t r)
{
    static const uint32_t values[] = {0, 1, 2, 3, 7, 8, 63, 64, 127, 128, 255, 256, 383, 384, 385, 1920, 65535,
                                      16384, 16385, 0x7FFFFFFF, 0x80000000u, 0xFFFFFFFFu};
    return values[r % (sizeof values / sizeof values[0])];
}

/* One variation of `in` into `out` (capacity 2 * size + 80); returns its size. */
static size_t mutate(const uint8_t *in, size_t size, uint8_t *out, uint64_t *rng)
{
    const size_t capacity = 2 * size + 80;
    memcpy(out, in, size);
    size_t n = size;
    int edits = 1 + (int)(next_random(rng) % 4);
    for (int e = 0; e < edits; e++) {
        uint64_t r = next_random(rng);
        size_t at = n ? (size_t)(r >> 8) % n : 0;
        switch (r % 8) {
        case 0: if (n) out[at] ^= (uint8_t)(1u << (r >> 40) % 8); break;
        case 1: if (n) out[at] = 0x00; break;
        case 2: if (n) out[at] = 0xff; break;
        case 3: if (n) out[at] = (uint8_t)(r >> 48); break;
        case 4: n = at; break; /* cut short */
        case 6: {              /* a header word (little-endian) to an edge value */
            size_t w = (size_t)(r >> 16) % 16 * 4;
            uint32_t v = edge_value(r >> 32);
            for (size_t i = 0; i < 4 && w + i < n; i++)
                out[w + i] = (uint8_t)(v >> (8 * i));
            break;
        }
        case 7: {              /* grow by random bytes */
            size_t extra = (size_t)(r >> 24) % 64;
            if (n + extra > capacity)
                extra = capacity - n;
            for (size_t i = 0; i < extra; i++)
                out[n + i] = (uint8_t)next_random(rng);
            n += extra;
            break;
        }
        case 5: {              /* duplicate a run */
            size_t len = n - at < 16 ? n - at : 16;
            if (n + len <= capacity) {
                memmove(out + at + len, out + at, n - at);
                n += len;
            }
            break;
        }
        }
    }
    return n;
}

/* An input as it is, then its variations. */
static void run_data(const char *name, const uint8_t *data, size_t size, long mutations)
{
    fprintf(stderr, "fuzz: %s (%zu bytes, %ld variations)\n", name, size, mutations);
    LLVMFuzzerTestOneInput(data, size);
    uint8_t *buffer = malloc(2 * size + 80);
    uint64_t rng = 0x9E3779B97F4A7C15ULL ^ size;
    for (long m = 0; buffer && m < mutations; m++) {
        size_t n = mutate(data, size, buffer, &rng);
        LLVMFuzzerTestOneInput(buffer, n);
    }
    free(buffer);
}

static int run_input(const char *path, long mutations)
{
    size_t size = 0;
    uint8_t *data = read_file(path, &size);
    if (!data) {
        fprintf(stderr, "fuzz: cannot read %s\n", path);
        return 1;
    }
    run_data(path, data, size, mutations);
    free(data);
    return 0;
}

/* The target's own inputs: replayed, and written to the --seeds folder. */
static long own_mutations;
static const char *own_folder;
static int own_count, own_failed;

static void own_input(const uint8_t *data, size_t size)
{
    char name[4096];
    snprintf(name, sizeof name, "%s/seed_%02d", own_folder ? own_folder : "(made by the target)", own_count++);
    if (own_folder) {
        FILE *f = fopen(name, "wb");
        if (!f || fwrite(data, 1, size, f) != size)
            own_failed = 1;
        if (f)
            fclose(f);
    }
    run_data(name, data, size, own_mutations);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_folder(const char *dir, long mutations, int *inputs)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fuzz: cannot open %s\n", dir);
        return 1;
    }
    char **names = NULL;
    size_t count = 0, capacity = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (count == capacity) {
            capacity = capacity ? 2 * capacity : 64;
            char **grown = realloc(names, capacity * sizeof *names);
            if (!grown)
                break;
            names = grown;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[count] = malloc(len);
        if (names[count])
            snprintf(names[count++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, count, sizeof *names, compare_names);
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        rc |= run_input(names[i], mutations);
        free(names[i]);
        ++*inputs;
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    long mutations = 20000;
    int rc = 0, inputs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mutations") == 0 && i + 1 < argc) {
            mutations = strtol(argv[++i], NULL, 10);
            continue;
        }
        if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) {
            own_folder = argv[++i];
            continue;
        }
        struct stat sb;
        if (stat(argv[i], &sb) != 0) {
            fprintf(stderr, "fuzz: %s does not exist\n", argv[i]);
            rc = 1;
        } else if (S_ISDIR(sb.st_mode)) {
            rc |= run_folder(argv[i], mutations, &inputs);
        } else {
            rc |= run_input(argv[i], mutations);
            inputs++;
        }
    }
    own_mutations = mutations;
    if (fuzz_replay_seeds(own_input) != 0) {
        fprintf(stderr, "fuzz: the target could not make its own inputs\n");
        rc = 1;
    }
    inputs += own_count;
    rc |= own_failed;
    if (inputs == 0) {
        fprintf(stderr, "fuzz: no inputs\n");
        return 1;
    }
    fprintf(stderr, "fuzz: %d inputs replayed\n", inputs);
    return fuzz_replay_check() != 0 || rc;
}
