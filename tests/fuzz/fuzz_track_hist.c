/* Fuzz target: the tracker's histogram file reader (glcv_track_hist_load's parsing) on any bytes,
 * read from memory. Checks its contract: success means at least one histogram, each of 1..180 hue
 * by 1..256 saturation bins (at most GLCV_TRACK_MAX_BINS), every value finite in 0..255, and the
 * count never above the room given is written; failure is CORRUPT_DATA or IO. libFuzzer drives it;
 * ctest replays its seeds and variations with fuzz_replay_main.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fmemopen */
#endif
#include "fuzz_replay.h"
#include "track_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ROOM = 3 };

static long g_ok, g_failed;

static void require(int condition)
{
    if (!condition)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size > (1u << 20))
        return 0;
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    static glcv_track_hist hists[ROOM + 1];
    memset(&hists[ROOM], 0x5A, sizeof hists[ROOM]);
    int count = -1;
    glcv_status st = glcv_track_hist_read(f, "fuzz input", hists, ROOM, &count, NULL);
    fclose(f);
    /* nothing written past the room given */
    const uint8_t *guard = (const uint8_t *)&hists[ROOM];
    for (size_t i = 0; i < sizeof hists[ROOM]; i++)
        require(guard[i] == 0x5A);
    if (st == GLCV_OK) {
        g_ok++;
        require(count >= 1);
        for (int i = 0; i < count && i < ROOM; i++) {
            const glcv_track_hist *h = &hists[i];
            require(h->hue_bins >= 1 && h->hue_bins <= 180 && h->sat_bins >= 1 && h->sat_bins <= 256);
            require(h->hue_bins * h->sat_bins <= GLCV_TRACK_MAX_BINS);
            for (int b = 0; b < h->hue_bins * h->sat_bins; b++)
                require(isfinite(h->value[b]) && h->value[b] >= 0.0f && h->value[b] <= 255.0f);
            require(glcv_track_hist_check(NULL, h) == GLCV_OK);
        }
    } else {
        g_failed++;
        require(st == GLCV_ERROR_CORRUPT_DATA || st == GLCV_ERROR_IO);
    }
    return 0;
}

int fuzz_replay_seeds(void (*add)(const uint8_t *data, size_t size))
{
    /* files the writer makes: one hue histogram, a hue x saturation one, and two together */
    static glcv_track_hist h[2];
    h[0].hue_bins = 16;
    h[0].sat_bins = 1;
    h[1].hue_bins = 6;
    h[1].sat_bins = 4;
    for (int b = 0; b < 24; b++) {
        h[0].value[b % 16] = (float)(b * 13 % 256);
        h[1].value[b] = b == 7 ? 255.0f : (float)b * 0.37f;
    }
    char path[] = "/tmp/glcv-fuzz-hist-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);
    static const int first[] = {0, 1, 0};
    static const int counts[] = {1, 1, 2};
    int rc = 0;
    for (int k = 0; k < 3 && rc == 0; k++) {
        if (glcv_track_hist_save(path, &h[first[k]], counts[k], NULL) != GLCV_OK) {
            rc = 1;
            break;
        }
        static uint8_t buffer[1 << 16];
        FILE *f = fopen(path, "rb");
        size_t n = f ? fread(buffer, 1, sizeof buffer, f) : 0;
        if (f)
            fclose(f);
        if (n == 0)
            rc = 1;
        else
            add(buffer, n);
    }
    remove(path);
    static const char comments[] = "glcv-track-hist 1 # c\nhist 2 1 # two\n 1.5\n\t255 # end\n";
    add((const uint8_t *)comments, sizeof comments - 1);
    return rc;
}

int fuzz_replay_check(void)
{
    fprintf(stderr, "fuzz_track_hist: %ld files read, %ld refused\n", g_ok, g_failed);
    if (g_ok == 0 || g_failed == 0) {
        fprintf(stderr, "fuzz_track_hist: expected both read and refused inputs\n");
        return 1;
    }
    return 0;
}
