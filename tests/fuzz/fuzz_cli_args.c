/* Fuzz target: the command line's option parser (tools/cli/cli.c: cli_parse) on any arguments -
 * the input split at its NUL bytes into up to 64 arguments - against a table with an option of
 * every kind (flag, int, bare int, unsigned, real with open and closed ends, string, choice, rect,
 * size, a repeatable rect). Checks its contract: the result is OK, a usage error or help; after OK
 * every value given lies in its option's range (finite reals, and none that single precision makes
 * 0), every repeatable count within its array, and the positional arguments are argv's own strings
 * that do not start with '-' (unless after "--" or "-" itself). Its messages go to /dev/null.
 * libFuzzer drives it; ctest replays its seeds and variations with fuzz_replay_main.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fmemopen */
#endif
#include "cli.h"
#include "fuzz_replay.h"

#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_ARGS = 64, ROIS = 4 };

static long g_ok, g_usage, g_help;

static void require(int condition)
{
    if (!condition)
        abort();
}

static const char *const metrics[] = {"sad", "ssd", "linf", "zncc", NULL};

typedef struct values {
    int flag, clear, i, bare;
    uint64_t u;
    double ts, rate, adapt;
    const char *name;
    int metric;
    glcv_engine_mode engine;
    glcv_rect rect;
    cli_size size;
    glcv_rect rois[ROIS];
    int n_rois;
} values;

/* The table (args->options points into it: it lives as long as the values). */
static void make_table(values *v, cli_option *options)
{
    memset(v, 0, sizeof *v);
    v->clear = 1;
    const cli_option table[] = {
        {"--flag", "-f", &v->flag, .kind = CLI_FLAG},
        {"--no-thing", NULL, &v->clear, .kind = CLI_FLAG, .clear = 1},
        {"--int", "-i", &v->i, .kind = CLI_INT, .min = -5, .max = 1000},
        {"--synthetic", NULL, &v->bare, .kind = CLI_INT, .min = 1, .max = 1000000, .bare = 60},
        {"--seed", NULL, &v->u, .kind = CLI_UINT, .umax = 0xFFFFFFFFFFull},
        {"--Ts", NULL, &v->ts, .kind = CLI_REAL, .max = 1e9},
        {"--rate", NULL, &v->rate, .kind = CLI_REAL, .min = 0, .open_min = 1, .max = 1000},
        {"--adapt", NULL, &v->adapt, .kind = CLI_REAL, .max = 1.0, .open_max = 1},
        {"--name", "-o", &v->name, .kind = CLI_STRING, .what = "file name"},
        {"--metric", NULL, &v->metric, .kind = CLI_CHOICE, .choices = metrics, .any_case = 1, .what = "a metric"},
        {"--engine", NULL, &v->engine, .kind = CLI_ENGINE, .choices = cli_cuda_engines},
        {"--rect", NULL, &v->rect, .kind = CLI_RECT, .min = -10, .max = 5000},
        {"--size", NULL, &v->size, .kind = CLI_SIZE},
        {"--roi", NULL, v->rois, .kind = CLI_RECT, .count = &v->n_rois, .max_count = ROIS},
        {NULL},
    };
    memcpy(options, table, sizeof table);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    /* the arguments: the bytes split at NUL, each its own string */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 1], *own[MAX_ARGS];
    int argc = 0;
    for (size_t at = 0; at <= size && argc < MAX_ARGS; at += strlen(text + at) + 1)
        own[argc] = argv[argc] = text + at, argc++;
    argv[argc] = NULL;

    int saved_out = dup(1), saved_err = dup(2), null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        fflush(stdout);
        fflush(stderr);
        dup2(null, 1);
        dup2(null, 2);
    }
    cli_start("glcv", NULL);
    values v;
    cli_option options[16];
    make_table(&v, options);
    cli_args args;
    int rc = cli_parse(options, argc, argv, &args);
    fflush(stdout);
    fflush(stderr);
    if (null >= 0) {
        dup2(saved_out, 1);
        dup2(saved_err, 2);
        close(null);
    }
    close(saved_out);
    close(saved_err);

    require(rc == CLI_OK || rc == CLI_USAGE || rc == CLI_HELP);
    if (rc == CLI_OK) {
        g_ok++;
        require(v.flag == 0 || v.flag == 1);
        require(v.clear == 0 || v.clear == 1);
        require(v.i >= -5 && v.i <= 1000);
        require(v.bare == 0 || (v.bare >= 1 && v.bare <= 1000000));
        require(v.u <= 0xFFFFFFFFFFull);
        require(isfinite(v.ts) && v.ts >= 0 && v.ts <= 1e9 && (v.ts == 0 || fabs(v.ts) >= FLT_MIN));
        require(isfinite(v.rate) && (v.rate == 0 || (v.rate > 0 && v.rate <= 1000)));
        require(isfinite(v.adapt) && v.adapt >= 0 && v.adapt < 1.0);
        require(!v.name || v.name[0] != '\0');
        require(v.metric >= 0 && v.metric < 4);
        require(v.engine == 0 || v.engine == GLCV_ENGINE_AUTO || v.engine == GLCV_ENGINE_CUDA ||
                v.engine == GLCV_ENGINE_CPU);
        if (cli_given(&args, &v.rect))
            require(v.rect.x >= -10 && v.rect.x <= 5000 && v.rect.y >= -10 && v.rect.y <= 5000 &&
                    v.rect.width >= 1 && v.rect.height >= 1);
        if (cli_given(&args, &v.size))
            require(v.size.width >= 1 && v.size.width <= CLI_MAX_SIDE && v.size.height >= 1 &&
                    v.size.height <= CLI_MAX_SIDE);
        require(v.n_rois >= 0 && v.n_rois <= ROIS);
        for (int k = 0; k < v.n_rois; k++)
            require(v.rois[k].width >= 1 && v.rois[k].height >= 1);
        require(args.count >= 0 && args.count <= argc);
        int after_dashes = 0;
        for (int k = 0; k < args.count; k++) {
            int mine = 0;
            for (int j = 0; j < argc; j++)
                mine |= args.items[k] == own[j];
            require(mine);
            after_dashes |= strcmp(args.items[k], "--") == 0;
        }
        (void)after_dashes;
    } else {
        rc == CLI_USAGE ? g_usage++ : g_help++;
    }
    free(text);
    return 0;
}

int fuzz_replay_seeds(void (*add)(const uint8_t *data, size_t size))
{
    static const char *const seeds[] = {
        "--flag\0-i\0" "42\0input.png\0--Ts=310\0--rate\0" "25\0-o\0out",
        "--synthetic\0--seed\0" "0x5EED\0--metric\0ZNCC\0--engine\0cuda",
        "--synthetic\0" "12\0--rect\0" "1,2,3,4\0--size\0" "640x480\0--adapt\0" "0.5",
        "--roi\0" "1,1,5,5\0--roi=2,2,6,6\0--\0--flag\0-\0x",
        "--no-thing\0--Ts\0" "1e-50\0--int\0" "1001",
        "--help",
        "-f\0--name=\0--metric\0foo\0--size\0" "0x0\0--rect\0" "1,2,3",
    };
    static const size_t sizes[] = {
        sizeof "--flag\0-i\0" "42\0input.png\0--Ts=310\0--rate\0" "25\0-o\0out" - 1,
        sizeof "--synthetic\0--seed\0" "0x5EED\0--metric\0ZNCC\0--engine\0cuda" - 1,
        sizeof "--synthetic\0" "12\0--rect\0" "1,2,3,4\0--size\0" "640x480\0--adapt\0" "0.5" - 1,
        sizeof "--roi\0" "1,1,5,5\0--roi=2,2,6,6\0--\0--flag\0-\0x" - 1,
        sizeof "--no-thing\0--Ts\0" "1e-50\0--int\0" "1001" - 1,
        sizeof "--help" - 1,
        sizeof "-f\0--name=\0--metric\0foo\0--size\0" "0x0\0--rect\0" "1,2,3" - 1,
    };
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
        add((const uint8_t *)seeds[i], sizes[i]);
    return 0;
}

int fuzz_replay_check(void)
{
    fprintf(stderr, "fuzz_cli_args: %ld parsed, %ld usage errors, %ld help\n", g_ok, g_usage, g_help);
    if (g_ok == 0 || g_usage == 0 || g_help == 0) {
        fprintf(stderr, "fuzz_cli_args: expected parsed, refused and help inputs\n");
        return 1;
    }
    return 0;
}
