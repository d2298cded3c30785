/* What the parts of 'glcv serve' share: see service.h. */
#define _POSIX_C_SOURCE 200809L

#include "service.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void svc_log(const glcv_logger *logger, glcv_log_level level, const char *fmt, ...)
{
    glcv_log_level max = logger->max_level ? logger->max_level : GLCV_LOG_INFO;
    if (!logger->fn || level > max)
        return;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    logger->fn(logger->user, level, text);
}

int svc_fail(char *error, size_t size, const char *fmt, ...)
{
    if (error && size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(error, size, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int host_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_';
}

static int ipv6_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
}

int svc_parse_url(const char *url, const char *scheme, int default_port, char host[SVC_HOST_BYTES], int *port,
                  char *error, size_t size)
{
    size_t k = strlen(scheme);
    if (strncmp(url, scheme, k) != 0 || strncmp(url + k, "://", 3) != 0)
        return svc_fail(error, size, "%s url '%s': expected %s://HOST[:PORT]", scheme, url, scheme);
    const char *start = url + k + 3, *end = NULL, *rest = NULL;
    if (*start == '[') {
        start++;
        end = strchr(start, ']');
        for (const char *c = start; end && c < end; c++)
            if (!ipv6_char(*c))
                end = NULL;
        if (!end)
            return svc_fail(error, size, "%s url '%s': expected %s://[IPV6-ADDRESS][:PORT]", scheme, url, scheme);
        rest = end + 1;
    } else {
        end = start + strcspn(start, ":");
        rest = end;
        for (const char *c = start; c < end; c++)
            if (!host_char(*c))
                return svc_fail(error, size, "%s url '%s': expected %s://HOST[:PORT]", scheme, url, scheme);
    }
    size_t n = (size_t)(end - start);
    if (n == 0)
        return svc_fail(error, size, "%s url '%s': expected %s://HOST[:PORT] (no host)", scheme, url, scheme);
    if (n >= SVC_HOST_BYTES)
        return svc_fail(error, size, "%s url '%s': the host name is too long", scheme, url);
    memcpy(host, start, n);
    host[n] = '\0';
    *port = default_port;
    if (*rest == '\0')
        return 0;
    char *stop = NULL;
    errno = 0;
    long p = rest[0] == ':' && rest[1] >= '0' && rest[1] <= '9' ? strtol(rest + 1, &stop, 10) : -1;
    if (p < 1 || p > 65535 || errno == ERANGE || *stop != '\0')
        return svc_fail(error, size, "%s url '%s': expected %s://HOST[:PORT], a port from 1 to 65535", scheme, url,
                        scheme);
    *port = (int)p;
    return 0;
}

int svc_nats_servers_parse(const char *urls, svc_nats_servers *out, char *error, size_t size)
{
    memset(out, 0, sizeof *out);
    const char *p = urls;
    for (;;) {
        size_t n = strcspn(p, ",");
        char one[2 * SVC_HOST_BYTES];
        while (n > 0 && *p == ' ')
            p++, n--;
        while (n > 0 && p[n - 1] == ' ')
            n--;
        if (n == 0 || n >= sizeof one)
            return svc_fail(error, size, "nats url '%s': %s", urls,
                            n ? "an entry is too long" : "an empty entry (expected nats://HOST[:PORT][,nats://...])");
        if (out->count == SVC_NATS_SERVERS_MAX)
            return svc_fail(error, size, "nats url '%s': more than %d servers", urls, SVC_NATS_SERVERS_MAX);
        memcpy(one, p, n);
        one[n] = '\0';
        char host[SVC_HOST_BYTES];
        int port = 0;
        if (svc_parse_url(one, "nats", 4222, host, &port, error, size) != 0)
            return -1;
        int v6 = strchr(host, ':') != NULL;
        char *url = out->url[out->count++];
        snprintf(url, sizeof out->url[0], "nats://%s%s%s:%d", v6 ? "[" : "", host, v6 ? "]" : "", port);
        size_t used = strlen(out->text);
        snprintf(out->text + used, sizeof out->text - used, "%s%s", used ? "," : "", url + 7);
        p += strcspn(p, ",");
        if (*p == '\0')
            return 0;
        p++;
    }
}

natsStatus svc_nats_servers_set(const svc_nats_servers *servers, natsOptions *options)
{
    const char *list[SVC_NATS_SERVERS_MAX];
    for (int i = 0; i < servers->count; i++)
        list[i] = servers->url[i];
    return natsOptions_SetServers(options, list, servers->count);
}

const char *svc_nats_error(natsStatus s)
{
    natsStatus last = NATS_OK;
    const char *text = nats_GetLastError(&last);
    if (!text || !text[0] || last != s)
        return natsStatus_GetText(s);
    const char *after = text[0] == '(' ? strstr(text, "): ") : NULL;
    return after ? after + 3 : text;
}

/* The nonzero bytes of p[0..n-1], eight at a time: a byte's high bit is set in
 * ((b & 0x7f) + 0x7f) | b exactly when b is not 0 (no carry crosses bytes); the high bits are
 * summed in byte lanes, folded before a lane can overflow. */
long svc_count_nonzero(const uint8_t *p, int n)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL, ones = 0x0101010101010101ULL;
    long count = 0;
    int x = 0;
    while (x + 8 <= n) {
        uint64_t lanes = 0;
        for (int k = 0; k < 255 && x + 8 <= n; k++, x += 8) {
            uint64_t w;
            memcpy(&w, p + x, sizeof w);
            lanes += ((((w & low7) + low7) | w) >> 7) & ones;
        }
        uint64_t pairs = (lanes & 0x00ff00ff00ff00ffULL) + ((lanes >> 8) & 0x00ff00ff00ff00ffULL);
        count += (long)((pairs * 0x0001000100010001ULL) >> 48);
    }
    for (; x < n; x++)
        count += p[x] != 0;
    return count;
}
