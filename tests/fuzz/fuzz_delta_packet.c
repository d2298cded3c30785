/* Fuzz target of the frame-delta packets (libFuzzer's entry point): the input is parsed as a header
 * and decoded as a packet by a decoder that holds a keyframe (frame 0 of a 16 x 8 RGB stream);
 * then the same bytes with their two checksums made right are decoded again, so that the checks
 * behind the checksum (sizes, records, compressed payloads) see the mutations too. Beyond not
 * crashing, it stops (abort) when the decoder breaks its contract: a rejected packet that changed
 * the picture, an accepted one whose header does not parse or does not describe the new picture,
 * a status the decoder does not document. Built by libFuzzer (tests/fuzz/CMakeLists.txt, with
 * clang) and by the replay driver fuzz_replay_main.c (always), to which it gives valid packets of
 * its own (keyframes, INDICES and BITMAP deltas, snapshots, compressed packets where the build
 * compresses) and the check that the runs reached accepted, corrupt and out-of-order packets. */
#include "fuzz_replay.h"

#include "delta_internal.h"

#include <glcv/image.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FW 16
#define FH 8
#define FN (FW * FH * 3)

/* How many decodes ended in each glcv_status (fuzz_replay_check wants more than one of them). */
#define FUZZ_DELTA_STATUSES 11
static unsigned long fuzz_delta_statuses[FUZZ_DELTA_STATUSES];

static void broken(const char *what, size_t size)
{
    fprintf(stderr, "fuzz_delta_packet: %s (input of %zu bytes)\n", what, size);
    abort();
}

/* Frame 0 of the stream every decoder starts from: a keyframe, byte i = 7 i mod 251. */
static const uint8_t *primer(size_t *bytes)
{
    static uint8_t packet[GLCV_DELTA_HEADER_BYTES + FN];
    glcv_delta_header h = {.version = GLCV_DELTA_VERSION, .frame = 0, .width = FW, .height = FH,
                           .format = GLCV_PIXEL_RGB8, .key = 1, .layout = GLCV_DELTA_RAW, .threshold = 8,
                           .records = FN, .payload_bytes = FN, .raw_bytes = FN};
    glcv_delta_header_write(&h, packet);
    for (int i = 0; i < FN; i++)
        packet[GLCV_DELTA_HEADER_BYTES + i] = (uint8_t)(7 * i % 251);
    glcv_delta_packet_seal(packet, sizeof packet);
    *bytes = sizeof packet;
    return packet;
}

static void decode_checked(const uint8_t *data, size_t size)
{
    glcv_delta_decoder *dec = NULL;
    size_t primer_bytes = 0;
    const uint8_t *first = primer(&primer_bytes);
    if (glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.max_bytes = (size_t)1 << 20), &dec) != GLCV_OK ||
        glcv_delta_decode(dec, first, primer_bytes) != GLCV_OK)
        broken("the primer keyframe does not decode", size);
    glcv_image pic;
    uint64_t frame = 0;
    uint8_t before[FN];
    if (glcv_delta_decoder_picture(dec, &pic, &frame) != GLCV_OK)
        broken("no picture after the primer", size);
    memcpy(before, pic.data, FN);

    glcv_status st = glcv_delta_decode(dec, data, size);
    if ((unsigned)st < FUZZ_DELTA_STATUSES)
        fuzz_delta_statuses[st]++;
    if (st != GLCV_OK && st != GLCV_ERROR_CORRUPT_DATA && st != GLCV_ERROR_STATE && st != GLCV_ERROR_UNSUPPORTED &&
        st != GLCV_ERROR_OUT_OF_MEMORY)
        broken("decode returned a status it does not document", size);
    if (glcv_delta_decoder_picture(dec, &pic, &frame) != GLCV_OK)
        broken("no picture after a decode", size);
    if (st != GLCV_OK) {
        if (frame != 0 || pic.width != FW || pic.height != FH || pic.format != GLCV_PIXEL_RGB8 ||
            memcmp(pic.data, before, FN) != 0)
            broken("a rejected packet changed the picture", size);
    } else {
        glcv_delta_header h;
        if (glcv_delta_header_parse(data, size, &h, NULL) != GLCV_OK)
            broken("an accepted packet's header does not parse", size);
        if (size != GLCV_DELTA_HEADER_BYTES + (size_t)h.payload_bytes || frame != h.frame || pic.width != h.width ||
            pic.height != h.height || pic.format != h.format || (!h.key && h.frame != 1))
            broken("an accepted packet does not describe the picture", size);
        /* A delta applies once: again, it is out of order and changes nothing. */
        if (!h.key) {
            size_t n = (size_t)pic.width * (size_t)pic.height * 3;
            uint8_t *after = malloc(n);
            memcpy(after, pic.data, n);
            if (glcv_delta_decode(dec, data, size) != GLCV_ERROR_STATE)
                broken("a delta decoded twice", size);
            if (glcv_delta_decoder_picture(dec, &pic, &frame) != GLCV_OK || frame != 1 ||
                memcmp(pic.data, after, n) != 0)
                broken("a repeated delta changed the picture", size);
            free(after);
        }
    }
    glcv_delta_decoder_destroy(&dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!data)
        return 0;
    glcv_delta_header h;
    if (size >= GLCV_DELTA_HEADER_BYTES && glcv_delta_header_parse(data, size, &h, NULL) == GLCV_OK &&
        (h.raw_bytes != glcv_delta_layout_bytes(h.layout, (size_t)h.width * (size_t)h.height *
                                                              (size_t)glcv_pixel_format_size(h.format),
                                                h.records)))
        broken("a parsed header whose sizes disagree", size);
    decode_checked(data, size);
    if (size >= GLCV_DELTA_HEADER_BYTES) {
        uint8_t *sealed = malloc(size);
        memcpy(sealed, data, size);
        glcv_delta_packet_seal(sealed, size);
        decode_checked(sealed, size);
        free(sealed);
    }
    return 0;
}

/* ---- the replay driver's hooks (not in the libFuzzer build, which links the packet code alone) -- */
#ifndef GLCV_FUZZ_LIBFUZZER

/* Packets of w x h frames: frame 0, then frame 1 changed in `changes` bytes (INDICES when few,
 * BITMAP when many), each also compressed; a snapshot after frame 1 when `snapshot`. */
static int make_seeds(void (*add_seed)(const uint8_t *, size_t), int w, int h, glcv_pixel_format format,
                      int changes, int snapshot)
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

int fuzz_replay_seeds(void (*add)(const uint8_t *data, size_t size))
{
    /* the target's own stream (16 x 8 RGB), another size and format, odd sizes */
    return make_seeds(add, 16, 8, GLCV_PIXEL_RGB8, 3, 1) || make_seeds(add, 16, 8, GLCV_PIXEL_RGB8, 60, 0) ||
           make_seeds(add, 5, 3, GLCV_PIXEL_GRAY8, 2, 0) || make_seeds(add, 7, 3, GLCV_PIXEL_BGRA8, 9, 1);
}

int fuzz_replay_check(void)
{
    const unsigned long *n = fuzz_delta_statuses;
    fprintf(stderr, "fuzz_delta_packet: decodes ok %lu, corrupt %lu, out of order %lu, unsupported %lu, out of memory %lu\n",
            n[GLCV_OK], n[GLCV_ERROR_CORRUPT_DATA], n[GLCV_ERROR_STATE], n[GLCV_ERROR_UNSUPPORTED],
            n[GLCV_ERROR_OUT_OF_MEMORY]);
    if (!n[GLCV_OK] || !n[GLCV_ERROR_CORRUPT_DATA] || !n[GLCV_ERROR_STATE]) {
        fprintf(stderr, "fuzz_delta_packet: the inputs did not reach accepted, corrupt and out-of-order packets\n");
        return 1;
    }
    return 0;
}
#endif
