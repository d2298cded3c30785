/* Replays fuzz targets without libFuzzer, for ctest: every file given (a folder: the files in it,
 * in name order) is passed to LLVMFuzzerTestOneInput as it is, then as `mutations` deterministic
 * variations of it (bits flipped, bytes set to 0x00, 0xff or a random value, the input cut short,
 * a run of bytes duplicated), so the corpus's neighbourhood runs on every test too. A target that
 * finds a violation aborts: the test fails with the input's name printed before it ran.
 *
 * usage: fuzz_TARGET [--mutations N] FILE|FOLDER...   (default 20000 mutations per input) */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

/* One variation of `in` into `out` (capacity 2 * size + 16); returns its size. */
static size_t mutate(const uint8_t *in, size_t size, uint8_t *out, uint64_t *rng)
{
    memcpy(out, in, size);
    size_t n = size;
    int edits = 1 + (int)(next_random(rng) % 4);
    for (int e = 0; e < edits; e++) {
        uint64_t r = next_random(rng);
        size_t at = n ? (size_t)(r >> 8) % n : 0;
        switch (r % 6) {
        case 0: if (n) out[at] ^= (uint8_t)(1u << (r >> 40) % 8); break;
        case 1: if (n) out[at] = 0x00; break;
        case 2: if (n) out[at] = 0xff; break;
        case 3: if (n) out[at] = (uint8_t)(r >> 48); break;
        case 4: n = at; break; /* cut short */
        case 5: {              /* duplicate a run */
            size_t len = n - at < 16 ? n - at : 16;
            if (n + len <= 2 * size + 16) {
                memmove(out + at + len, out + at, n - at);
                n += len;
            }
            break;
        }
        }
    }
    return n;
}

static int run_input(const char *path, long mutations)
{
    size_t size = 0;
    uint8_t *data = read_file(path, &size);
    if (!data) {
        fprintf(stderr, "fuzz: cannot read %s\n", path);
        return 1;
    }
    fprintf(stderr, "fuzz: %s (%zu bytes, %ld variations)\n", path, size, mutations);
    LLVMFuzzerTestOneInput(data, size);
    uint8_t *buffer = malloc(2 * size + 16);
    uint64_t rng = 0x9E3779B97F4A7C15ULL ^ size;
    for (long m = 0; buffer && m < mutations; m++) {
        size_t n = mutate(data, size, buffer, &rng);
        LLVMFuzzerTestOneInput(buffer, n);
    }
    free(buffer);
    free(data);
    return 0;
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
    if (inputs == 0) {
        fprintf(stderr, "fuzz: no inputs\n");
        return 1;
    }
    fprintf(stderr, "fuzz: %d inputs replayed\n", inputs);
    return rc;
}
