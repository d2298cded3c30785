/* The pieces of 'glcv stream' that need no socket: HMAC-SHA256 (libcrypto's, through
 * stream_crypto.h) against RFC 4231, the constant-time comparison, random nonces, the handshake
 * (its bytes for fixed nonces and token, as the protocol has always written them; every way a
 * viewer and a server with and without tokens meet; every single-bit change of a JOIN and a
 * WELCOME refused), the requests and END, the token's trimming, and HOST:PORT parsing. */
#include "testutil.h"

#include "stream_crypto.h"
#include "stream_net.h"
#include "stream_proto.h"

#include <string.h>

/* "ab12..." into bytes; returns the count. */
static size_t unhex(const char *hex, uint8_t *out, size_t capacity)
{
    size_t n = 0;
    for (; hex[0] && hex[1] && n < capacity; hex += 2) {
        unsigned v = 0;
        sscanf(hex, "%2x", &v);
        out[n++] = (uint8_t)v;
    }
    return n;
}

/* Compares bytes with a hex text; says at which byte they first differ. */
static void check_hex(const char *what, const uint8_t *got, const char *want_hex, size_t bytes)
{
    uint8_t want[64];
    size_t n = unhex(want_hex, want, sizeof want);
    CHECK(n >= bytes, "%s: the expected value has %zu bytes, not %zu", what, n, bytes);
    for (size_t i = 0; i < bytes && i < n; i++) {
        if (got[i] != want[i]) {
            CHECK(0, "%s: byte %zu is %02x, expected %02x", what, i, got[i], want[i]);
            return;
        }
    }
}

static void test_hmac(void)
{
    /* RFC 4231, test cases 1 to 7 (case 5: the first 128 bits). */
    static const struct {
        const char *key_hex, *data, *data_hex, *mac_hex;
        size_t mac_bytes;
    } cases[] = {
        {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "Hi There", NULL,
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", 32},
        {"4a656665", "what do ya want for nothing?", NULL,
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843", 32},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL,
         "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe", 32},
        {"0102030405060708090a0b0c0d0e0f10111213141516171819", NULL,
         "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b", 32},
        {"0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c", "Test With Truncation", NULL,
         "a3b6167473100ee06e0c796c2955552b", 16},
        {NULL, "Test Using Larger Than Block-Size Key - Hash Key First", NULL,
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54", 32},
        {NULL,
         "This is a test using a larger than block-size key and a larger than block-size data. The key needs "
         "to be hashed before being used by the HMAC algorithm.",
         NULL, "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2", 32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t key[160], data[200], mac[STREAM_SHA256_BYTES];
        size_t key_bytes = 131, data_bytes = 0;
        if (cases[i].key_hex)
            key_bytes = unhex(cases[i].key_hex, key, sizeof key);
        else
            memset(key, 0xaa, key_bytes); /* cases 6 and 7: 131 bytes of 0xaa */
        if (cases[i].data) {
            data_bytes = strlen(cases[i].data);
            memcpy(data, cases[i].data, data_bytes);
        } else {
            data_bytes = unhex(cases[i].data_hex, data, sizeof data);
        }
        const void *parts[1] = {data};
        CHECK(stream_hmac_sha256(key, key_bytes, parts, &data_bytes, 1, mac) == 0, "RFC 4231 case %zu: failed",
              i + 1);
        char what[64];
        snprintf(what, sizeof what, "HMAC-SHA256, RFC 4231 case %zu", i + 1);
        check_hex(what, mac, cases[i].mac_hex, cases[i].mac_bytes);
        /* The same data in two parts gives the same MAC. */
        if (data_bytes > 3) {
            uint8_t mac2[STREAM_SHA256_BYTES];
            const void *two[2] = {data, data + 3};
            size_t sizes[2] = {3, data_bytes - 3};
            CHECK(stream_hmac_sha256(key, key_bytes, two, sizes, 2, mac2) == 0, "%s in two parts: failed", what);
            CHECK(memcmp(mac, mac2, sizeof mac) == 0, "%s: split into two parts, the MAC changes", what);
        }
    }
}

static void test_compare(void)
{
    uint8_t a[32], b[32];
    memset(a, 7, sizeof a);
    memcpy(b, a, sizeof a);
    CHECK(stream_equal_secret(a, b, 32) == 1, "equal buffers compare unequal");
    for (int i = 0; i < 32; i++)
        for (int bit = 0; bit < 8; bit++) {
            b[i] ^= (uint8_t)(1 << bit);
            CHECK(stream_equal_secret(a, b, 32) == 0, "byte %d bit %d flipped: still equal", i, bit);
            b[i] ^= (uint8_t)(1 << bit);
        }
    CHECK(stream_equal_secret(a, b, 0) == 1, "empty buffers compare unequal");
    /* An empty key is no token (tokens have 16 bytes or more): refused, and the MAC is not left
     * holding anything a caller could send. */
    uint8_t mac[STREAM_SHA256_BYTES];
    memset(mac, 0x55, sizeof mac);
    const void *parts[1] = {a};
    size_t sizes[1] = {sizeof a};
    CHECK(stream_hmac_sha256(a, 0, parts, sizes, 1, mac) == -1, "an HMAC under an empty key is computed");
    for (size_t i = 0; i < sizeof mac; i++)
        CHECK(mac[i] == 0, "a failed HMAC leaves byte %zu as %02x", i, mac[i]);
}

static void test_random(void)
{
    /* Two nonces of 32 bytes are never equal, and neither is all one byte (a generator that
     * failed silently). */
    uint8_t n1[STREAM_NONCE_BYTES], n2[STREAM_NONCE_BYTES];
    CHECK(stream_random(n1, sizeof n1) == 0 && stream_random(n2, sizeof n2) == 0, "no random bytes");
    CHECK(memcmp(n1, n2, sizeof n1) != 0, "two nonces are equal");
    int same = 1;
    for (size_t i = 1; i < sizeof n1; i++)
        same &= n1[i] == n1[0];
    CHECK(!same, "a nonce is 32 times the byte %02x", n1[0]);
    CHECK(stream_random(n1, 0) == 0, "no bytes asked for: failed");
}

/* ---- the handshake ------------------------------------------------------------------------ */

static const uint8_t token_a[] = "a shared secret of the server";
static const uint8_t token_b[] = "another secret, not the server";

typedef struct meeting {
    int join_rc, answer, check_rc;
    uint8_t join[STREAM_JOIN_BYTES], welcome[STREAM_WELCOME_BYTES];
    uint8_t nonce_s[STREAM_NONCE_BYTES], nonce_v[STREAM_NONCE_BYTES], seen_s[STREAM_NONCE_BYTES];
    char why_join[STREAM_WHY_BYTES], why_answer[STREAM_WHY_BYTES], why_check[STREAM_WHY_BYTES];
} meeting;

/* A server with `server_token` (NULL: none) and a viewer with `viewer_token` meet. */
static meeting meet(const uint8_t *server_token, const uint8_t *viewer_token, int full)
{
    meeting m;
    memset(&m, 0, sizeof m);
    for (int i = 0; i < STREAM_NONCE_BYTES; i++) {
        m.nonce_s[i] = (uint8_t)(3 * i + 1);
        m.nonce_v[i] = (uint8_t)(5 * i + 2);
    }
    size_t st_bytes = server_token ? strlen((const char *)server_token) : 0;
    size_t vt_bytes = viewer_token ? strlen((const char *)viewer_token) : 0;
    uint8_t hello[STREAM_HELLO_BYTES];
    stream_hello_write(hello, server_token != NULL, m.nonce_s);
    m.join_rc = stream_viewer_join(hello, sizeof hello, viewer_token, vt_bytes, m.nonce_v, m.join, m.seen_s,
                                   m.why_join);
    m.answer = -2;
    m.check_rc = -2;
    if (m.join_rc < 0)
        return m;
    m.answer = stream_server_answer(m.join, sizeof m.join, server_token, st_bytes, m.nonce_s, full, m.welcome,
                                    m.why_answer);
    m.check_rc = stream_viewer_check_welcome(m.welcome, sizeof m.welcome, viewer_token, vt_bytes, m.seen_s,
                                             m.nonce_v, m.why_check);
    return m;
}

/* The handshake's bytes for fixed nonces and a fixed token: the protocol's MACs as the viewers and
 * servers of every glcv version compute them (checked against Python's hmac module), so that a
 * change of the crypto library cannot change the wire. */
static void test_golden(void)
{
    meeting m = meet(token_a, token_a, 0);
    CHECK(m.answer == STREAM_ACCEPTED && m.check_rc == 0, "the golden handshake is refused (%s / %s)", m.why_answer,
          m.why_check);
    check_hex("JOIN, bytes 0-15", m.join, "474c43564a4f494e0100010000000000", 16);
    check_hex("JOIN's nonce", m.join + 16, "02070c11161b20252a2f34393e43484d52575c61666b70757a7f84898e93989d", 32);
    check_hex("JOIN's MAC", m.join + 48, "d078300d3cabfc9755337557f5160b51f415f1da0c8fbca583fbb679627dfe75", 32);
    check_hex("WELCOME, bytes 0-15", m.welcome, "474c4356574c434d0100000000000000", 16);
    check_hex("WELCOME's MAC", m.welcome + 16, "70c9dbafb735873b5f9e0284fb33dbe1c4f869a4d884d1c62f6fe3d2793a8cbf",
              32);
    uint8_t mac[STREAM_MAC_BYTES];
    CHECK(stream_mac(token_a, strlen((const char *)token_a), STREAM_ROLE_SERVER, m.nonce_s, m.nonce_v, mac) == 0,
          "stream_mac failed");
    CHECK(memcmp(mac, m.welcome + 16, sizeof mac) == 0, "stream_mac is not WELCOME's MAC");
}

static void test_handshake(void)
{
    meeting m = meet(NULL, NULL, 0);
    CHECK(m.join_rc == 0 && m.answer == STREAM_ACCEPTED && m.check_rc == 0,
          "no tokens: join %d answer %d check %d (%s / %s / %s)", m.join_rc, m.answer, m.check_rc, m.why_join,
          m.why_answer, m.why_check);
    m = meet(token_a, token_a, 0);
    CHECK(m.join_rc == 0 && m.answer == STREAM_ACCEPTED && m.check_rc == 0,
          "same token: join %d answer %d check %d (%s / %s / %s)", m.join_rc, m.answer, m.check_rc, m.why_join,
          m.why_answer, m.why_check);
    CHECK(memcmp(m.seen_s, m.nonce_s, STREAM_NONCE_BYTES) == 0, "the viewer does not see the server's nonce");
    m = meet(token_a, token_b, 0);
    CHECK(m.answer == STREAM_TOKEN_WRONG && m.check_rc == -1, "wrong token: answer %d check %d", m.answer,
          m.check_rc);
    CHECK(strstr(m.why_check, "wrong token") != NULL, "wrong token: the viewer says '%s'", m.why_check);
    m = meet(token_a, NULL, 0);
    CHECK(m.join_rc == 1 && m.answer == STREAM_TOKEN_REQUIRED && m.check_rc == -1,
          "no viewer token: join %d answer %d check %d", m.join_rc, m.answer, m.check_rc);
    CHECK(strstr(m.why_join, "--token") != NULL, "no viewer token: the viewer says '%s'", m.why_join);
    m = meet(NULL, token_a, 0);
    CHECK(m.join_rc == -1 && strstr(m.why_join, "cannot prove") != NULL,
          "a token on the viewer only: join %d ('%s')", m.join_rc, m.why_join);
    m = meet(token_a, token_a, 1);
    CHECK(m.answer == STREAM_SERVER_FULL && m.check_rc == -1, "full: answer %d check %d", m.answer, m.check_rc);
    m = meet(token_a, token_b, 1);
    CHECK(m.answer == STREAM_TOKEN_WRONG, "full and a wrong token: answer %d, expected wrong token", m.answer);

    /* Every single-bit change of an accepted JOIN is refused (the MAC covers the nonce; the rest
     * is checked field by field); of WELCOME too, by the viewer. */
    m = meet(token_a, token_a, 0);
    size_t tb = strlen((const char *)token_a);
    for (size_t i = 0; i < STREAM_JOIN_BYTES; i++)
        for (int bit = 0; bit < 8; bit++) {
            uint8_t join[STREAM_JOIN_BYTES], welcome[STREAM_WELCOME_BYTES];
            char why[STREAM_WHY_BYTES];
            memcpy(join, m.join, sizeof join);
            join[i] ^= (uint8_t)(1 << bit);
            int answer = stream_server_answer(join, sizeof join, token_a, tb, m.nonce_s, 0, welcome, why);
            CHECK(answer != STREAM_ACCEPTED, "JOIN byte %zu bit %d flipped: accepted", i, bit);
        }
    for (size_t i = 0; i < STREAM_WELCOME_BYTES; i++)
        for (int bit = 0; bit < 8; bit++) {
            uint8_t welcome[STREAM_WELCOME_BYTES];
            char why[STREAM_WHY_BYTES];
            memcpy(welcome, m.welcome, sizeof welcome);
            welcome[i] ^= (uint8_t)(1 << bit);
            int rc = stream_viewer_check_welcome(welcome, sizeof welcome, token_a, tb, m.nonce_s, m.nonce_v, why);
            CHECK(rc == -1, "WELCOME byte %zu bit %d flipped: the viewer accepts it", i, bit);
        }
    /* The viewer's MAC is no server MAC (labels differ): a WELCOME that echoes it is refused. */
    uint8_t welcome[STREAM_WELCOME_BYTES];
    char why[STREAM_WHY_BYTES];
    memcpy(welcome, m.welcome, sizeof welcome);
    memcpy(welcome + 16, m.join + 48, STREAM_MAC_BYTES);
    CHECK(stream_viewer_check_welcome(welcome, sizeof welcome, token_a, tb, m.nonce_s, m.nonce_v, why) == -1,
          "a WELCOME carrying the viewer's own MAC is accepted");
    /* Short and foreign messages. */
    CHECK(stream_server_answer(m.join, STREAM_JOIN_BYTES - 1, token_a, tb, m.nonce_s, 0, welcome, why) == -1,
          "a JOIN one byte short is answered");
    CHECK(stream_server_answer((const uint8_t *)"GET / HTTP/1.1\r\nHost: x\r\n\r\n.........................."
                                                "...........................",
                               80, NULL, 0, m.nonce_s, 0, welcome, why) == -1,
          "an HTTP request is answered as a JOIN");
    CHECK(stream_join_prefix_ok((const uint8_t *)"GLCVJ", 5) == 1, "the JOIN magic's first bytes are refused");
    CHECK(stream_join_prefix_ok((const uint8_t *)"GLCVX", 5) == 0, "a wrong fifth byte passes as a JOIN's start");
    /* Another version: the server says so in WELCOME, the viewer names the version. */
    uint8_t join[STREAM_JOIN_BYTES];
    memcpy(join, m.join, sizeof join);
    join[8] = 2;
    CHECK(stream_server_answer(join, sizeof join, token_a, tb, m.nonce_s, 0, welcome, why) ==
              STREAM_VERSION_UNSUPPORTED,
          "a JOIN of version 2: not answered 'unsupported version' (%s)", why);
    uint8_t hello[STREAM_HELLO_BYTES], seen[STREAM_NONCE_BYTES];
    stream_hello_write(hello, 0, m.nonce_s);
    hello[8] = 9;
    CHECK(stream_viewer_join(hello, sizeof hello, NULL, 0, m.nonce_v, join, seen, why) == -1 &&
              strstr(why, "version 9") != NULL,
          "a HELLO of version 9: '%s'", why);
}

static void test_messages(void)
{
    char why[STREAM_WHY_BYTES];
    uint8_t r[STREAM_REQUEST_BYTES];
    int type = 0;
    stream_request_write(r, STREAM_REQUEST_KEYFRAME);
    CHECK(stream_request_parse(r, sizeof r, &type, why) == 0 && type == STREAM_REQUEST_KEYFRAME,
          "KEYFRAME round trip: type %d (%s)", type, why);
    stream_request_write(r, STREAM_REQUEST_BYE);
    CHECK(stream_request_parse(r, sizeof r, &type, why) == 0 && type == STREAM_REQUEST_BYE, "BYE round trip");
    r[8] = 3;
    CHECK(stream_request_parse(r, sizeof r, &type, why) == -1, "a request of type 3 is taken");
    stream_request_write(r, STREAM_REQUEST_BYE);
    r[15] = 1;
    CHECK(stream_request_parse(r, sizeof r, &type, why) == -1, "a request with reserved bytes set is taken");
    CHECK(stream_request_parse(r, sizeof r - 1, &type, why) == -1, "a short request is taken");

    uint8_t e[STREAM_END_BYTES];
    int reason = -1;
    uint64_t frames = 0;
    stream_end_write(e, STREAM_END_INTERRUPTED, 0x123456789aULL);
    CHECK(stream_is_end(e, sizeof e) == 1, "END is not recognised");
    CHECK(stream_end_parse(e, sizeof e, &reason, &frames, why) == 0 && reason == STREAM_END_INTERRUPTED &&
              frames == 0x123456789aULL,
          "END round trip: reason %d frames %llu (%s)", reason, (unsigned long long)frames, why);
    e[40] = 1;
    CHECK(stream_end_parse(e, sizeof e, &reason, &frames, why) == -1, "END with reserved bytes set is taken");
    CHECK(stream_is_end((const uint8_t *)STREAM_PACKET_MAGIC, 8) == 0, "a packet's magic is taken for END");
}

static void test_token_and_addresses(void)
{
    CHECK(stream_token_trim((const uint8_t *)"secret \t\r\n\n", 11) == 6, "trailing whitespace not trimmed");
    CHECK(stream_token_trim((const uint8_t *)" a b", 4) == 4, "inner or leading whitespace trimmed");
    CHECK(stream_token_trim((const uint8_t *)"\n\n", 2) == 0, "whitespace only: not empty");

    static const struct {
        const char *text, *host;
        int port;
    } good[] = {{"127.0.0.1:9000", "127.0.0.1", 9000},
                {"localhost:1", "localhost", 1},
                {"[::1]:65535", "::1", 65535},
                {"[fe80::1%lo]:80", "fe80::1%lo", 80}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char host[64] = "", why[NET_TEXT_BYTES] = "";
        int port = 0;
        int rc = net_split_host_port(good[i].text, host, sizeof host, &port, why);
        CHECK(rc == 0 && strcmp(host, good[i].host) == 0 && port == good[i].port, "'%s': host '%s' port %d (%s)",
              good[i].text, host, port, why);
    }
    static const char *const bad[] = {"127.0.0.1", "127.0.0.1:", ":80", "host:0", "host:65536", "host:12x",
                                      "::1:80", "[::1]80", "[::1", "host: 80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char host[64], why[NET_TEXT_BYTES] = "";
        int port = 0;
        CHECK(net_split_host_port(bad[i], host, sizeof host, &port, why) == -1, "'%s' is taken as HOST:PORT",
              bad[i]);
        CHECK(why[0] != '\0', "'%s': no explanation", bad[i]);
    }
}

int main(void)
{
    test_hmac();
    test_compare();
    test_random();
    test_golden();
    test_handshake();
    test_messages();
    test_token_and_addresses();
    return test_finish("test_stream_proto");
}
