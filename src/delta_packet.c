/* Frame-delta packets: the header (its bytes are in docs/STREAM.md), the checksum (CRC-32C, with
 * the SSE4.2 instruction where the processor has it), compression (Zstandard, where the build has
 * it), and the decoder, which checks everything a packet says before it touches its picture. */
#include "delta_internal.h"

#include "core_internal.h"

#include <stdlib.h>
#include <string.h>

#if GLCV_HAVE_ZSTD
#include <zstd.h>
#include <zstd_errors.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define CRC_X86 1
#else
#define CRC_X86 0
#endif

/* ---- little-endian fields ------------------------------------------------------------------- */

static void put_u16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static unsigned get_u16(const uint8_t *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* ---- CRC-32C ---------------------------------------------------------------------------------
 * Portable: slicing by 8 (eight tables of 256 entries, eight bytes a step). SSE4.2: the crc32
 * instruction on three independent streams at once (its latency is three times its throughput),
 * joined by shifting a stream's CRC over the bytes of the streams after it: the CRC of n zero
 * bytes is linear in the state it starts from, so the shift is a 32x32 bit matrix, applied a byte
 * of the state at a time through four tables.
 * Written here because none of the libraries the library links has the Castagnoli polynomial
 * (libdeflate, like zlib: the CRC-32 of ISO 3309 and Adler-32; zstd: XXH64; FFmpeg's libavutil, optional
 * and so not for the core: no Castagnoli table among its AV_CRC_* ones), and the checksum is part of
 * the wire format (docs/STREAM.md); test_delta pins it to RFC 3720's vectors. */

#define CRC32C_POLY 0x82F63B78u /* Castagnoli, reflected */
#define CRC_LONG 8192           /* bytes per stream in the long and the short rounds */
#define CRC_SHORT 256

static uint32_t crc_table[8][256];
static uint32_t crc_shift_long[4][256], crc_shift_short[4][256];
static int crc_hw;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* The state after `bytes` zero bytes from state `c`, a byte at a time. */
static uint32_t crc_zeros(uint32_t c, size_t bytes)
{
    while (bytes--)
        c = crc_table[0][c & 0xFF] ^ (c >> 8);
    return c;
}

static void crc_shift_tables(uint32_t shift[4][256], size_t bytes)
{
    uint32_t column[32]; /* the shift of each single bit of the state */
    for (int b = 0; b < 32; b++)
        column[b] = crc_zeros(1u << b, bytes);
    for (int t = 0; t < 4; t++)
        for (unsigned v = 0; v < 256; v++) {
            uint32_t s = 0;
            for (int b = 0; b < 8; b++)
                if (v >> b & 1)
                    s ^= column[8 * t + b];
            shift[t][v] = s;
        }
}

static void crc_init(void)
{
    for (uint32_t v = 0; v < 256; v++) {
        uint32_t c = v;
        for (int b = 0; b < 8; b++)
            c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        crc_table[0][v] = c;
    }
    for (int t = 1; t < 8; t++)
        for (unsigned v = 0; v < 256; v++)
            crc_table[t][v] = crc_table[0][crc_table[t - 1][v] & 0xFF] ^ (crc_table[t - 1][v] >> 8);
    crc_shift_tables(crc_shift_long, CRC_LONG);
    crc_shift_tables(crc_shift_short, CRC_SHORT);
#if CRC_X86
    __builtin_cpu_init();
    crc_hw = __builtin_cpu_supports("sse4.2") != 0;
#endif
}

uint32_t glcv_delta_crc32c_portable(uint32_t crc, const void *data, size_t bytes)
{
    pthread_once(&crc_once, crc_init);
    const uint8_t *p = data;
    uint32_t c = ~crc;
    for (; bytes && ((uintptr_t)p & 7); bytes--)
        c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    for (; bytes >= 8; bytes -= 8, p += 8) {
        uint32_t lo = c ^ get_u32(p), hi = get_u32(p + 4);
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^ crc_table[5][(lo >> 16) & 0xFF] ^
            crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xFF] ^ crc_table[2][(hi >> 8) & 0xFF] ^
            crc_table[1][(hi >> 16) & 0xFF] ^ crc_table[0][hi >> 24];
    }
    while (bytes--)
        c = crc_table[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return ~c;
}

int glcv_delta_crc32c_hw_available(void)
{
    pthread_once(&crc_once, crc_init);
    return crc_hw;
}

#if CRC_X86
static uint32_t crc_shift(const uint32_t shift[4][256], uint32_t c)
{
    return shift[0][c & 0xFF] ^ shift[1][(c >> 8) & 0xFF] ^ shift[2][(c >> 16) & 0xFF] ^ shift[3][c >> 24];
}

static uint64_t load_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* `round` bytes in each of three streams at p, p + round, p + 2 round, from state c. */
__attribute__((target("sse4.2"))) static uint32_t crc_hw_round(uint32_t c, const uint8_t *p, size_t round,
                                                              const uint32_t shift[4][256])
{
    uint64_t c0 = c, c1 = 0, c2 = 0;
    for (size_t i = 0; i < round; i += 8) {
        c0 = _mm_crc32_u64(c0, load_u64(p + i));
        c1 = _mm_crc32_u64(c1, load_u64(p + round + i));
        c2 = _mm_crc32_u64(c2, load_u64(p + 2 * round + i));
    }
    c = crc_shift(shift, (uint32_t)c0) ^ (uint32_t)c1;
    return crc_shift(shift, c) ^ (uint32_t)c2;
}

__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const uint8_t *p, size_t bytes)
{
    uint32_t c = ~crc;
    for (; bytes && ((uintptr_t)p & 7); bytes--)
        c = _mm_crc32_u8(c, *p++);
    for (; bytes >= 3 * CRC_LONG; bytes -= 3 * CRC_LONG, p += 3 * CRC_LONG)
        c = crc_hw_round(c, p, CRC_LONG, crc_shift_long);
    for (; bytes >= 3 * CRC_SHORT; bytes -= 3 * CRC_SHORT, p += 3 * CRC_SHORT)
        c = crc_hw_round(c, p, CRC_SHORT, crc_shift_short);
    uint64_t c64 = c;
    for (; bytes >= 8; bytes -= 8, p += 8)
        c64 = _mm_crc32_u64(c64, load_u64(p));
    c = (uint32_t)c64;
    while (bytes--)
        c = _mm_crc32_u8(c, *p++);
    return ~c;
}
#endif

uint32_t glcv_delta_crc32c_hw(uint32_t crc, const void *data, size_t bytes)
{
#if CRC_X86
    if (glcv_delta_crc32c_hw_available())
        return crc_sse42(crc, data, bytes);
#endif
    return glcv_delta_crc32c_portable(crc, data, bytes);
}

uint32_t glcv_delta_crc32c(uint32_t crc, const void *data, size_t bytes)
{
    if (!data)
        return crc;
    return glcv_delta_crc32c_hw(crc, data, bytes);
}

/* ---- the header ----------------------------------------------------------------------------- */

/* Byte offsets of the header's fields (docs/STREAM.md). */
enum {
    OFF_MAGIC = 0,
    OFF_VERSION = 8,
    OFF_HEADER_BYTES = 10,
    OFF_FLAGS = 12,
    OFF_FRAME = 16,
    OFF_WIDTH = 24,
    OFF_HEIGHT = 28,
    OFF_FORMAT = 32,
    OFF_LAYOUT = 33,
    OFF_COMPRESSION = 34,
    OFF_THRESHOLD = 35,
    OFF_RECORDS = 36,
    OFF_PAYLOAD = 40,
    OFF_RAW = 44,
    OFF_CHECKSUM = 48,
    OFF_HEADER_CRC = 52, /* CRC-32C of bytes 0..47 */
    OFF_RESERVED = 56    /* 8 bytes of 0 */
};

size_t glcv_delta_layout_bytes(glcv_delta_layout layout, size_t n, size_t k)
{
    switch (layout) {
    case GLCV_DELTA_RAW: return n;
    case GLCV_DELTA_INDICES: return k > SIZE_MAX / 5 ? SIZE_MAX : 5 * k;
    case GLCV_DELTA_BITMAP: return k > SIZE_MAX - (n / 8 + 1) ? SIZE_MAX : n / 8 + (n % 8 != 0) + k;
    default: return 0;
    }
}

void glcv_delta_header_write(const glcv_delta_header *h, uint8_t *out)
{
    memset(out, 0, GLCV_DELTA_HEADER_BYTES);
    memcpy(out + OFF_MAGIC, GLCV_DELTA_MAGIC, 8);
    put_u16(out + OFF_VERSION, (unsigned)h->version);
    put_u16(out + OFF_HEADER_BYTES, GLCV_DELTA_HEADER_BYTES);
    put_u32(out + OFF_FLAGS, (h->key ? GLCV_DELTA_FLAG_KEY : 0u) | (h->snapshot ? GLCV_DELTA_FLAG_SNAPSHOT : 0u));
    put_u64(out + OFF_FRAME, h->frame);
    put_u32(out + OFF_WIDTH, (uint32_t)h->width);
    put_u32(out + OFF_HEIGHT, (uint32_t)h->height);
    out[OFF_FORMAT] = (uint8_t)h->format;
    out[OFF_LAYOUT] = (uint8_t)h->layout;
    out[OFF_COMPRESSION] = (uint8_t)h->compression;
    out[OFF_THRESHOLD] = (uint8_t)h->threshold;
    put_u32(out + OFF_RECORDS, h->records);
    put_u32(out + OFF_PAYLOAD, h->payload_bytes);
    put_u32(out + OFF_RAW, h->raw_bytes);
    put_u32(out + OFF_CHECKSUM, h->checksum);
    put_u32(out + OFF_HEADER_CRC, glcv_delta_crc32c(0, out, OFF_CHECKSUM));
}

/* The checksum of a packet: its header with the checksum field as 0, then its payload. */
static uint32_t packet_checksum(const uint8_t *packet, size_t bytes)
{
    uint8_t head[GLCV_DELTA_HEADER_BYTES];
    memcpy(head, packet, sizeof head);
    put_u32(head + OFF_CHECKSUM, 0);
    uint32_t c = glcv_delta_crc32c(0, head, sizeof head);
    return glcv_delta_crc32c(c, packet + sizeof head, bytes - sizeof head);
}

void glcv_delta_packet_seal(uint8_t *packet, size_t bytes)
{
    put_u32(packet + OFF_HEADER_CRC, glcv_delta_crc32c(0, packet, OFF_CHECKSUM));
    put_u32(packet + OFF_CHECKSUM, packet_checksum(packet, bytes));
}

#define BAD(...) glcv_fail(logger, GLCV_ERROR_CORRUPT_DATA, "delta packet: " __VA_ARGS__)

glcv_status glcv_delta_header_parse(const uint8_t *data, size_t bytes, glcv_delta_header *out,
                                    const glcv_logger *logger)
{
    if (!data || !out)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "delta packet: NULL data or header");
    memset(out, 0, sizeof *out);
    if (bytes < GLCV_DELTA_HEADER_BYTES)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "delta packet: a header is %d bytes, got %zu",
                         GLCV_DELTA_HEADER_BYTES, bytes);
    if (memcmp(data + OFF_MAGIC, GLCV_DELTA_MAGIC, 8) != 0)
        return BAD("bad magic (not a glcv delta packet)");
    unsigned version = get_u16(data + OFF_VERSION), header_bytes = get_u16(data + OFF_HEADER_BYTES);
    if (version != GLCV_DELTA_VERSION)
        return BAD("version %u (this library reads version %d)", version, GLCV_DELTA_VERSION);
    if (header_bytes != GLCV_DELTA_HEADER_BYTES)
        return BAD("header size %u (version %d headers are %d bytes)", header_bytes, GLCV_DELTA_VERSION,
                   GLCV_DELTA_HEADER_BYTES);
    uint32_t header_crc = get_u32(data + OFF_HEADER_CRC), want_crc = glcv_delta_crc32c(0, data, OFF_CHECKSUM);
    if (header_crc != want_crc)
        return BAD("header CRC 0x%08x, its bytes give 0x%08x", header_crc, want_crc);
    for (int i = OFF_RESERVED; i < GLCV_DELTA_HEADER_BYTES; i++)
        if (data[i] != 0)
            return BAD("reserved byte %d is %u, not 0", i, data[i]);
    uint32_t flags = get_u32(data + OFF_FLAGS);
    if (flags & ~(uint32_t)(GLCV_DELTA_FLAG_KEY | GLCV_DELTA_FLAG_SNAPSHOT))
        return BAD("unknown flags 0x%08x", flags);
    uint32_t width = get_u32(data + OFF_WIDTH), height = get_u32(data + OFF_HEIGHT);
    if (width < 1 || width > GLCV_DELTA_MAX_SIZE || height < 1 || height > GLCV_DELTA_MAX_SIZE)
        return BAD("size %ux%u outside 1..%d", width, height, GLCV_DELTA_MAX_SIZE);
    int format = data[OFF_FORMAT], bpp = glcv_pixel_format_size((glcv_pixel_format)format);
    if (bpp == 0)
        return BAD("unknown pixel format %d", format);
    uint64_t n = (uint64_t)width * height * (uint64_t)bpp;
    if (n > INT32_MAX)
        return BAD("a frame of %ux%u x %d bytes is above 2^31 - 1 bytes", width, height, bpp);
    int layout = data[OFF_LAYOUT], compression = data[OFF_COMPRESSION];
    if (layout < GLCV_DELTA_RAW || layout > GLCV_DELTA_BITMAP)
        return BAD("unknown layout %d", layout);
    if (compression != GLCV_DELTA_UNCOMPRESSED && compression != GLCV_DELTA_ZSTD)
        return BAD("unknown compression %d", compression);
    int key = (flags & GLCV_DELTA_FLAG_KEY) != 0, snapshot = (flags & GLCV_DELTA_FLAG_SNAPSHOT) != 0;
    if (snapshot && !key)
        return BAD("a snapshot that is not a keyframe");
    if (key != (layout == GLCV_DELTA_RAW))
        return BAD("%s", key ? "a keyframe whose layout is not RAW" : "a RAW packet that is not a keyframe");
    uint32_t records = get_u32(data + OFF_RECORDS), payload = get_u32(data + OFF_PAYLOAD),
             raw = get_u32(data + OFF_RAW);
    if (records > n)
        return BAD("%u records in a frame of %llu bytes", records, (unsigned long long)n);
    if (key && records != n)
        return BAD("a keyframe of %u records, not the frame's %llu bytes", records, (unsigned long long)n);
    size_t want_raw = glcv_delta_layout_bytes((glcv_delta_layout)layout, (size_t)n, records);
    if (raw != want_raw)
        return BAD("raw_bytes %u, %u records in layout %d take %zu", raw, records, layout, want_raw);
    if (!key && raw >= n)
        return BAD("delta records of %u bytes, not fewer than the frame's %llu (that is a keyframe)", raw,
                   (unsigned long long)n);
    if (compression == GLCV_DELTA_UNCOMPRESSED && payload != raw)
        return BAD("uncompressed payload_bytes %u, not raw_bytes %u", payload, raw);
    if (compression != GLCV_DELTA_UNCOMPRESSED && (payload == 0 || payload >= raw))
        return BAD("compressed payload_bytes %u, not in 1..raw_bytes - 1 (raw_bytes %u)", payload, raw);
    *out = (glcv_delta_header){
        .version = (int)version,
        .frame = get_u64(data + OFF_FRAME),
        .width = (int)width,
        .height = (int)height,
        .format = (glcv_pixel_format)format,
        .key = key,
        .snapshot = snapshot,
        .layout = (glcv_delta_layout)layout,
        .compression = (glcv_delta_compression)compression,
        .threshold = data[OFF_THRESHOLD],
        .records = records,
        .payload_bytes = payload,
        .raw_bytes = raw,
        .checksum = get_u32(data + OFF_CHECKSUM),
    };
    return GLCV_OK;
}

/* A whole packet: a good header, exactly `bytes` long, and its checksum. */
static glcv_status check_packet(const uint8_t *packet, size_t bytes, glcv_delta_header *h, const glcv_logger *logger)
{
    if (bytes < GLCV_DELTA_HEADER_BYTES)
        return BAD("%zu bytes, shorter than a header (%d)", bytes, GLCV_DELTA_HEADER_BYTES);
    glcv_status st = glcv_delta_header_parse(packet, bytes, h, logger);
    if (st != GLCV_OK)
        return st;
    if (bytes - GLCV_DELTA_HEADER_BYTES != h->payload_bytes)
        return BAD("%zu bytes, the header says %u + %d", bytes, h->payload_bytes, GLCV_DELTA_HEADER_BYTES);
    uint32_t sum = packet_checksum(packet, bytes);
    if (sum != h->checksum)
        return BAD("checksum 0x%08x, the bytes give 0x%08x (frame %llu)", h->checksum, sum,
                   (unsigned long long)h->frame);
    return GLCV_OK;
}

/* ---- compression ------------------------------------------------------------------------------ */

int glcv_delta_can_compress(void)
{
    return GLCV_HAVE_ZSTD;
}

/* A packet is compressed only when that makes it smaller, and copied otherwise, so it never grows:
 * Zstandard is given one byte less than the payload and gives up when that is not enough. */
size_t glcv_delta_compress_bound(size_t bytes)
{
    return bytes;
}

glcv_status glcv_delta_compress(const uint8_t *packet, size_t bytes, int level, uint8_t *out, size_t capacity,
                                size_t *out_bytes, const glcv_logger *logger)
{
    if (!packet || !out || !out_bytes)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "delta compress: NULL packet, out or out_bytes");
    *out_bytes = 0;
    if (level == 0)
        level = 1;
    if (level < 1 || level > 19)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "delta compress: level %d outside 1..19", level);
    if (capacity < glcv_delta_compress_bound(bytes))
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "delta compress: capacity %zu below %zu", capacity,
                         glcv_delta_compress_bound(bytes));
    uintptr_t in0 = (uintptr_t)packet, out0 = (uintptr_t)out;
    if (in0 < out0 + capacity && out0 < in0 + bytes)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "delta compress: out overlaps the packet");
#if !GLCV_HAVE_ZSTD
    return glcv_fail(logger, GLCV_ERROR_UNSUPPORTED, "delta compress: glcv was built without Zstandard");
#else
    glcv_delta_header h;
    glcv_status st = check_packet(packet, bytes, &h, logger);
    if (st != GLCV_OK)
        return st;
    if (h.compression != GLCV_DELTA_UNCOMPRESSED)
        return glcv_fail(logger, GLCV_ERROR_CORRUPT_DATA, "delta compress: the packet is compressed already");
    size_t payload = h.payload_bytes, got = 0;
    if (payload > 1) {
        got = ZSTD_compress(out + GLCV_DELTA_HEADER_BYTES, payload - 1, packet + GLCV_DELTA_HEADER_BYTES, payload,
                            level);
        if (ZSTD_isError(got)) {
            ZSTD_ErrorCode e = ZSTD_getErrorCode(got);
            if (e == ZSTD_error_memory_allocation)
                return glcv_fail(logger, GLCV_ERROR_OUT_OF_MEMORY, "delta compress: no memory for Zstandard");
            if (e != ZSTD_error_dstSize_tooSmall)
                glcv_logf(logger, GLCV_LOG_WARN, "delta compress: Zstandard failed (%s): sent uncompressed",
                          ZSTD_getErrorName(got));
            got = 0;
        }
    }
    if (got == 0) {
        memcpy(out, packet, bytes);
        *out_bytes = bytes;
        return GLCV_OK;
    }
    h.compression = GLCV_DELTA_ZSTD;
    h.payload_bytes = (uint32_t)got;
    glcv_delta_header_write(&h, out);
    glcv_delta_packet_seal(out, GLCV_DELTA_HEADER_BYTES + got);
    *out_bytes = GLCV_DELTA_HEADER_BYTES + got;
    return GLCV_OK;
#endif
}

/* ---- the decoder ------------------------------------------------------------------------------ */

#define DEFAULT_MAX_BYTES ((size_t)64 << 20)

struct glcv_delta_decoder {
    pthread_mutex_t lock;
    glcv_delta_decoder_params p;
    uint8_t *picture; /* n bytes of the stream's format, tightly packed */
    size_t picture_capacity;
    uint8_t *scratch; /* decompressed payloads */
    size_t scratch_capacity;
    int has_picture;
    int width, height;
    glcv_pixel_format format;
    uint64_t frame;
    size_t n;
#if GLCV_HAVE_ZSTD
    ZSTD_DCtx *zstd;
#endif
};

glcv_status glcv_delta_decoder_create(const glcv_delta_decoder_params *params, glcv_delta_decoder **out)
{
    GLCV_CREATE_BEGIN(params, out);
    glcv_delta_decoder_params p = *params;
    GLCV_DEFAULT(p.max_bytes, DEFAULT_MAX_BYTES);
    if (p.max_bytes > INT32_MAX)
        return glcv_fail(&params->logger, GLCV_ERROR_INVALID_ARGUMENT,
                         "delta decoder: max_bytes %zu outside 1..2^31 - 1", p.max_bytes);
    glcv_delta_decoder *dec = calloc(1, sizeof *dec);
    if (!dec)
        return GLCV_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&dec->lock, NULL);
    dec->p = p;
    *out = dec;
    return GLCV_OK;
}

void glcv_delta_decoder_destroy(glcv_delta_decoder **decoder)
{
    glcv_delta_decoder *dec = decoder ? *decoder : NULL;
    if (!dec)
        return;
#if GLCV_HAVE_ZSTD
    ZSTD_freeDCtx(dec->zstd);
#endif
    free(dec->picture);
    free(dec->scratch);
    pthread_mutex_destroy(&dec->lock);
    free(dec);
    *decoder = NULL;
}

/* Makes *buf at least `bytes` long; its content is not kept. */
static glcv_status reserve(uint8_t **buf, size_t *capacity, size_t bytes, const glcv_logger *logger)
{
    if (*capacity >= bytes && *buf)
        return GLCV_OK;
    uint8_t *p = malloc(bytes ? bytes : 1);
    if (!p)
        return glcv_fail(logger, GLCV_ERROR_OUT_OF_MEMORY, "delta decoder: no memory for %zu bytes", bytes);
    free(*buf);
    *buf = p;
    *capacity = bytes;
    return GLCV_OK;
}

/* Decompresses one Zstandard frame of exactly `raw` bytes into dec->scratch. */
static glcv_status decompress(glcv_delta_decoder *dec, const uint8_t *src, size_t bytes, size_t raw)
{
    const glcv_logger *logger = &dec->p.logger;
#if !GLCV_HAVE_ZSTD
    (void)src;
    (void)bytes;
    (void)raw;
    return glcv_fail(logger, GLCV_ERROR_UNSUPPORTED, "delta decoder: a compressed packet, and glcv was built "
                                                     "without Zstandard");
#else
    if (bytes < 4 || get_u32(src) != ZSTD_MAGICNUMBER)
        return BAD("the compressed payload is not a Zstandard frame");
    size_t frame_bytes = ZSTD_findFrameCompressedSize(src, bytes);
    if (ZSTD_isError(frame_bytes) || frame_bytes != bytes)
        return BAD("the compressed payload is not one whole Zstandard frame of %zu bytes", bytes);
    unsigned long long content = ZSTD_getFrameContentSize(src, bytes);
    if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != raw)
        return BAD("the compressed payload holds %llu bytes, raw_bytes is %zu", content, raw);
    glcv_status st = reserve(&dec->scratch, &dec->scratch_capacity, raw, logger);
    if (st != GLCV_OK)
        return st;
    if (!dec->zstd && !(dec->zstd = ZSTD_createDCtx()))
        return glcv_fail(logger, GLCV_ERROR_OUT_OF_MEMORY, "delta decoder: no memory for Zstandard");
    size_t got = ZSTD_decompressDCtx(dec->zstd, dec->scratch, raw, src, bytes);
    if (ZSTD_isError(got) && ZSTD_getErrorCode(got) == ZSTD_error_memory_allocation)
        return glcv_fail(logger, GLCV_ERROR_OUT_OF_MEMORY, "delta decoder: no memory for Zstandard");
    if (ZSTD_isError(got))
        return BAD("the compressed payload does not decompress: %s", ZSTD_getErrorName(got));
    if (got != raw)
        return BAD("the compressed payload decompresses to %zu bytes, raw_bytes is %zu", got, raw);
    return GLCV_OK;
#endif
}

/* A bitmap's 64-bit word w (bit b: frame byte 64 w + b), of `bytes` bytes in all. */
static uint64_t bitmap_word(const uint8_t *bits, size_t bytes, size_t w)
{
    size_t at = 8 * w;
    if (at + 8 <= bytes)
        return get_u64(bits + at);
    uint64_t v = 0;
    for (size_t i = at; i < bytes; i++)
        v |= (uint64_t)bits[i] << (8 * (i - at));
    return v;
}

/* Indices strictly increasing and below n; a bitmap with `records` bits, none at n or above. */
static glcv_status check_records(const glcv_delta_header *h, const uint8_t *raw, size_t n,
                                 const glcv_logger *logger)
{
    uint32_t k = h->records;
    if (h->layout == GLCV_DELTA_INDICES) {
        uint32_t prev = 0;
        for (uint32_t r = 0; r < k; r++) {
            uint32_t i = get_u32(raw + 4 * (size_t)r);
            if (i >= n)
                return BAD("index %u of record %u is outside the frame's %zu bytes", i, r, n);
            if (r > 0 && i <= prev)
                return BAD("index %u of record %u does not follow %u", i, r, prev);
            prev = i;
        }
    } else if (h->layout == GLCV_DELTA_BITMAP) {
        size_t bytes = (n + 7) / 8, set = 0;
        for (size_t w = 0; w < (bytes + 7) / 8; w++)
            set += (size_t)__builtin_popcountll(bitmap_word(raw, bytes, w));
        if (n % 8 && raw[bytes - 1] >> (n % 8))
            return BAD("bitmap bits set past the frame's %zu bytes", n);
        if (set != k)
            return BAD("%zu bitmap bits set, the header says %u records", set, k);
    }
    return GLCV_OK;
}

#define BYTE_HIGH 0x8080808080808080ull /* the high bit of every byte of a word */

static void apply_records(uint8_t *pic, const glcv_delta_header *h, const uint8_t *raw, size_t n)
{
    uint32_t k = h->records;
    if (h->layout == GLCV_DELTA_INDICES) {
        const uint8_t *d = raw + 4 * (size_t)k;
        for (uint32_t r = 0; r < k; r++)
            pic[get_u32(raw + 4 * (size_t)r)] += d[r];
        return;
    }
    size_t bytes = (n + 7) / 8;
    const uint8_t *d = raw + bytes;
    for (size_t w = 0; w < (bytes + 7) / 8; w++) {
        uint64_t word = bitmap_word(raw, bytes, w);
        uint8_t *p = pic + 64 * w;
        if (word == UINT64_MAX) { /* 64 changed bytes in a row: 8 bytes an addition */
            for (int q = 0; q < 64; q += 8) {
                uint64_t x, y;
                memcpy(&x, p + q, 8);
                memcpy(&y, d + q, 8);
                x = ((x & ~BYTE_HIGH) + (y & ~BYTE_HIGH)) ^ ((x ^ y) & BYTE_HIGH); /* bytewise, mod 256 */
                memcpy(p + q, &x, 8);
            }
            d += 64;
            continue;
        }
        for (; word; word &= word - 1)
            p[__builtin_ctzll(word)] += *d++;
    }
}

static glcv_status decode_locked(glcv_delta_decoder *dec, const uint8_t *packet, size_t bytes)
{
    const glcv_logger *logger = &dec->p.logger;
    if (!packet)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "delta decoder: NULL packet");
    glcv_delta_header h;
    glcv_status st = check_packet(packet, bytes, &h, logger);
    if (st != GLCV_OK)
        return st;
    size_t n = (size_t)h.width * (size_t)h.height * (size_t)glcv_pixel_format_size(h.format);
    if (n > dec->p.max_bytes)
        return BAD("a picture of %zu bytes, above the decoder's max_bytes %zu", n, dec->p.max_bytes);
    if (!h.key) {
        if (!dec->has_picture)
            return glcv_fail(logger, GLCV_ERROR_STATE, "delta decoder: frame %llu is a delta and there was no "
                                                       "keyframe yet: wait for one",
                             (unsigned long long)h.frame);
        if (h.width != dec->width || h.height != dec->height || h.format != dec->format)
            return glcv_fail(logger, GLCV_ERROR_STATE,
                             "delta decoder: frame %llu is a delta of a %dx%d picture of format %d, the picture is "
                             "%dx%d of format %d: wait for a keyframe",
                             (unsigned long long)h.frame, h.width, h.height, (int)h.format, dec->width, dec->height,
                             (int)dec->format);
        if (h.frame != dec->frame + 1)
            return glcv_fail(logger, GLCV_ERROR_STATE,
                             "delta decoder: frame %llu is a delta and the picture is frame %llu: wait for a "
                             "keyframe",
                             (unsigned long long)h.frame, (unsigned long long)dec->frame);
    }
    const uint8_t *raw = packet + GLCV_DELTA_HEADER_BYTES;
    if (h.compression != GLCV_DELTA_UNCOMPRESSED) {
        if ((st = decompress(dec, raw, h.payload_bytes, h.raw_bytes)) != GLCV_OK)
            return st;
        raw = dec->scratch;
    }
    if ((st = check_records(&h, raw, n, logger)) != GLCV_OK)
        return st;
    if (h.key) {
        if (raw == dec->scratch) { /* the decompressed frame becomes the picture */
            uint8_t *t = dec->picture;
            size_t c = dec->picture_capacity;
            dec->picture = dec->scratch;
            dec->picture_capacity = dec->scratch_capacity;
            dec->scratch = t;
            dec->scratch_capacity = c;
        } else {
            if ((st = reserve(&dec->picture, &dec->picture_capacity, n, logger)) != GLCV_OK)
                return st; /* the old picture is still there */
            memcpy(dec->picture, raw, n);
        }
        dec->width = h.width;
        dec->height = h.height;
        dec->format = h.format;
        dec->n = n;
        dec->has_picture = 1;
    } else {
        apply_records(dec->picture, &h, raw, n);
    }
    dec->frame = h.frame;
    return GLCV_OK;
}

glcv_status glcv_delta_decode(glcv_delta_decoder *decoder, const uint8_t *packet, size_t bytes)
{
    GLCV_LOCKED_CALL(decoder, decode_locked(decoder, packet, bytes));
}

glcv_status glcv_delta_decoder_picture(glcv_delta_decoder *decoder, glcv_image *out, uint64_t *frame)
{
    if (!decoder || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&decoder->lock);
    glcv_status st = GLCV_OK;
    if (!decoder->has_picture) {
        st = glcv_fail(&decoder->p.logger, GLCV_ERROR_STATE, "delta decoder: no picture before the first keyframe");
    } else {
        *out = (glcv_image){decoder->picture, decoder->width, decoder->height,
                            (size_t)decoder->width * (size_t)glcv_pixel_format_size(decoder->format),
                            decoder->format};
        if (frame)
            *frame = decoder->frame;
    }
    pthread_mutex_unlock(&decoder->lock);
    return st;
}
