/* The tracker's model histograms as plain data: validation, the Bhattacharyya distance, and the
 * histogram file format (see glcv/track.h). Building one from a frame is the object's (track.c). */
#include "track_internal.h"

#include "core_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

glcv_status glcv_track_hist_check(const glcv_logger *lg, const glcv_track_hist *h)
{
    if (!h)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "track: NULL histogram");
    if (h->hue_bins < 1 || h->hue_bins > 180 || h->sat_bins < 1 || h->sat_bins > 256 ||
        h->hue_bins * h->sat_bins > GLCV_TRACK_MAX_BINS)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "track: histogram bins %d x %d out of range",
                         h->hue_bins, h->sat_bins);
    for (int b = 0; b < h->hue_bins * h->sat_bins; b++)
        if (!glcv_finite(h->value[b]) || h->value[b] < 0 || h->value[b] > 255)
            return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "track: histogram bin %d is %g (must be 0..255)", b,
                             (double)h->value[b]);
    return GLCV_OK;
}

glcv_status glcv_track_hist_distance(const glcv_track_hist *a, const glcv_track_hist *b, double *out)
{
    if (!a || !b || !out || glcv_track_hist_check(NULL, a) != GLCV_OK || glcv_track_hist_check(NULL, b) != GLCV_OK ||
        a->hue_bins != b->hue_bins || a->sat_bins != b->sat_bins)
        return GLCV_ERROR_INVALID_ARGUMENT;
    double s1 = 0, s2 = 0, s = 0;
    for (int i = 0; i < a->hue_bins * a->sat_bins; i++) {
        s1 += a->value[i];
        s2 += b->value[i];
        s += sqrt((double)a->value[i] * (double)b->value[i]);
    }
    *out = glcv_tm_distance(s, s1, s2);
    return GLCV_OK;
}

glcv_status glcv_track_hist_save(const char *path, const glcv_track_hist *hists, int count, const glcv_logger *lg)
{
    if (!path || !*path || !hists || count < 1)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "track: hist_save needs a path and histograms");
    for (int i = 0; i < count; i++) {
        glcv_status st = glcv_track_hist_check(lg, &hists[i]);
        if (st != GLCV_OK)
            return st;
    }
    size_t n = strlen(path);
    char *tmp = malloc(n + 32);
    if (!tmp)
        return GLCV_ERROR_OUT_OF_MEMORY;
    snprintf(tmp, n + 32, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        glcv_status st = glcv_fail(lg, GLCV_ERROR_IO, "%s: cannot write: %s", tmp, strerror(errno));
        free(tmp);
        return st;
    }
    fprintf(f, "glcv-track-hist 1\n# %d histogram%s; per histogram: hist HUE_BINS SAT_BINS, then the bins "
               "(0..255, hue-major)\n",
            count, count == 1 ? "" : "s");
    for (int i = 0; i < count; i++) {
        const glcv_track_hist *h = &hists[i];
        fprintf(f, "hist %d %d\n", h->hue_bins, h->sat_bins);
        int nb = h->hue_bins * h->sat_bins;
        for (int b = 0; b < nb; b++)
            fprintf(f, "%.9g%c", (double)h->value[b], (b + 1) % 10 == 0 || b + 1 == nb ? '\n' : ' ');
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    glcv_status st = GLCV_OK;
    if (bad || rename(tmp, path) != 0) {
        st = glcv_fail(lg, GLCV_ERROR_IO, "%s: cannot write: %s", path, strerror(errno));
        remove(tmp);
    }
    free(tmp);
    return st;
}

/* The next token of a histogram file, skipping white space and comments; 0 at the end. */
static int next_token(FILE *f, char *buf, size_t size)
{
    int ch;
    for (;;) {
        ch = fgetc(f);
        if (ch == '#') {
            while (ch != EOF && ch != '\n')
                ch = fgetc(f);
        }
        if (ch == EOF)
            return 0;
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
            break;
    }
    size_t n = 0;
    while (ch != EOF && ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r' && ch != '#') {
        if (n + 1 < size)
            buf[n++] = (char)ch;
        ch = fgetc(f);
    }
    if (ch == '#')
        ungetc(ch, f);
    buf[n] = '\0';
    return 1;
}

static int parse_long(const char *s, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno)
        return 0;
    *out = v;
    return 1;
}

glcv_status glcv_track_hist_load(const char *path, glcv_track_hist *hists, int capacity, int *count,
                                 const glcv_logger *lg)
{
    if (!path || !hists || capacity < 1 || !count)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "track: hist_load needs a path and room");
    *count = 0;
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return glcv_fail(lg, GLCV_ERROR_IO, "%s: is a folder, not a histogram file", path);
    FILE *f = fopen(path, "r");
    if (!f)
        return glcv_fail(lg, GLCV_ERROR_IO, "%s: cannot open: %s", path, strerror(errno));
    glcv_status st = glcv_track_hist_read(f, path, hists, capacity, count, lg);
    fclose(f);
    return st;
}

glcv_status glcv_track_hist_read(FILE *f, const char *path, glcv_track_hist *hists, int capacity, int *count,
                                 const glcv_logger *lg)
{
    *count = 0;
    char tok[64];
    long version = 0;
    glcv_status st = GLCV_OK;
    if (!next_token(f, tok, sizeof tok) || strcmp(tok, "glcv-track-hist") != 0 || !next_token(f, tok, sizeof tok) ||
        !parse_long(tok, &version) || version != 1) {
        st = glcv_fail(lg, GLCV_ERROR_CORRUPT_DATA, "%s: not a glcv-track-hist 1 file", path);
        goto done;
    }
    while (next_token(f, tok, sizeof tok)) {
        long hb = 0, sb = 0;
        if (strcmp(tok, "hist") != 0 || !next_token(f, tok, sizeof tok) || !parse_long(tok, &hb) ||
            !next_token(f, tok, sizeof tok) || !parse_long(tok, &sb) || hb < 1 || hb > 180 || sb < 1 || sb > 256 ||
            hb * sb > GLCV_TRACK_MAX_BINS) {
            st = glcv_fail(lg, GLCV_ERROR_CORRUPT_DATA, "%s: histogram %d: expected 'hist HUE_BINS SAT_BINS' "
                                                        "(1..180, 1..256, at most %d bins)",
                           path, *count + 1, GLCV_TRACK_MAX_BINS);
            goto done;
        }
        glcv_track_hist h;
        memset(&h, 0, sizeof h);
        h.hue_bins = (int)hb;
        h.sat_bins = (int)sb;
        for (long b = 0; b < hb * sb; b++) {
            char *end = NULL;
            double v = 0;
            int ok = next_token(f, tok, sizeof tok);
            if (ok) {
                v = strtod(tok, &end);
                ok = end != tok && !*end && glcv_finite(v) && v >= 0 && v <= 255;
            }
            if (!ok) {
                st = glcv_fail(lg, GLCV_ERROR_CORRUPT_DATA, "%s: histogram %d, bin %ld: %s", path, *count + 1, b,
                               tok[0] ? "not a value in 0..255" : "missing");
                goto done;
            }
            h.value[b] = (float)v;
        }
        if (*count < capacity)
            hists[*count] = h;
        (*count)++;
        if (*count >= capacity)
            break;
    }
    if (*count == 0)
        st = glcv_fail(lg, GLCV_ERROR_CORRUPT_DATA, "%s: no histogram", path);
done:
    /* a read that failed is the cause, whatever the parsing made of what it got */
    if (ferror(f))
        st = glcv_fail(lg, GLCV_ERROR_IO, "%s: read error: %s", path, strerror(errno));
    return st;
}

