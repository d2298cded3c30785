/* What the parts of 'glcv serve' share (broker.c, cluster.c, http.c, events.c, objects.c, live.c):
 * messages through the logger, one-line errors, broker URLs, libnats' error texts and the count of
 * a mask's foreground pixels. (The monotonic clock is net_now, of
 * tools/stream/stream_net.h.) */
#ifndef GLCV_SERVICE_SERVICE_H
#define GLCV_SERVICE_SERVICE_H

#include <glcv/core.h>

#include <nats/nats.h>

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define SVC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SVC_PRINTF(a, b)
#endif

enum { SVC_HOST_BYTES = 256, SVC_NATS_SERVERS_MAX = 16 };

/* The message through the logger when its level passes (a max_level of 0 counts as INFO). */
void svc_log(const glcv_logger *logger, glcv_log_level level, const char *fmt, ...) SVC_PRINTF(3, 4);

/* Writes the one-line error (when error is not NULL) and returns -1. */
int svc_fail(char *error, size_t size, const char *fmt, ...) SVC_PRINTF(3, 4);

/* "SCHEME://HOST[:PORT]" or "SCHEME://[IPV6][:PORT]" (SCHEME "mqtt", "nats") into host (without
 * brackets) and port (default_port when absent). Returns 0, or -1 with "SCHEME url 'URL': ...". */
int svc_parse_url(const char *url, const char *scheme, int default_port, char host[SVC_HOST_BYTES], int *port,
                  char *error, size_t size);

/* NATS servers: "nats://HOST[:PORT]", or several joined by commas (a NATS cluster's), each as
 * svc_parse_url takes it. url[k]: "nats://HOST:PORT" ("nats://[IPV6]:PORT"); text: "HOST:PORT,..."
 * for the log. */
typedef struct svc_nats_servers {
    int count;
    char url[SVC_NATS_SERVERS_MAX][SVC_HOST_BYTES + 16];
    char text[SVC_NATS_SERVERS_MAX * (SVC_HOST_BYTES + 8)];
} svc_nats_servers;

/* Parses `urls` (at most SVC_NATS_SERVERS_MAX). Returns 0, or -1 with the entry at fault named. */
int svc_nats_servers_parse(const char *urls, svc_nats_servers *out, char *error, size_t size);

/* The servers into libnats' options (a connection tries them, and reconnects to another one). */
natsStatus svc_nats_servers_set(const svc_nats_servers *servers, natsOptions *options);

/* The nonzero bytes of p[0..n-1] (masks' foreground pixels), eight bytes at a time. */
long svc_count_nonzero(const uint8_t *p, int n);

/* libnats' text of this thread's last error, without the "(file.c:123): " it starts with; the
 * status' text when the last error is an older one of another status (libnats never clears it). */
const char *svc_nats_error(natsStatus s);

#endif
