/* Sockets for 'glcv stream'; see stream_net.h. */
#define _GNU_SOURCE

#include "stream_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
    POLL_SLICE_MS = 100,
    KEEPALIVE_IDLE_S = 10,    /* TCP keepalive: the first probe after this long without traffic, */
    KEEPALIVE_INTERVAL_S = 5, /* then one every this long, */
    KEEPALIVE_PROBES = 3      /* and the connection is dead when this many go unanswered (25 s) */
};

static int says(char why[NET_TEXT_BYTES], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, NET_TEXT_BYTES, fmt, ap);
    va_end(ap);
    return -1;
}

double net_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int net_split_host_port(const char *text, char *host, size_t host_size, int *port, char why[NET_TEXT_BYTES])
{
    const char *colon = NULL, *end_host = NULL, *start_host = text;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':')
            return says(why, "'%s' is not [ADDRESS]:PORT", text);
        start_host = text + 1;
        end_host = close;
        colon = close + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon)
            return says(why, "'%s' has no port: give HOST:PORT", text);
        if (memchr(text, ':', (size_t)(colon - text)))
            return says(why, "'%s': write an IPv6 address in brackets, as [ADDRESS]:PORT", text);
        end_host = colon;
    }
    size_t n = (size_t)(end_host - start_host);
    if (n == 0)
        return says(why, "'%s' has no host", text);
    if (n >= host_size)
        return says(why, "'%s': the host name is too long", text);
    memcpy(host, start_host, n);
    host[n] = '\0';
    char *end = NULL;
    errno = 0;
    long p = colon[1] >= '0' && colon[1] <= '9' ? strtol(colon + 1, &end, 10) : -1;
    if (p < 1 || p > 65535 || errno == ERANGE || *end != '\0')
        return says(why, "'%s': the port must be a number from 1 to 65535", text);
    *port = (int)p;
    return 0;
}

static void describe(const struct sockaddr *sa, char out[NET_ADDRESS_BYTES])
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
        port = ntohs(in->sin_port);
        snprintf(out, NET_ADDRESS_BYTES, "%s:%d", host, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        port = ntohs(in6->sin6_port);
        snprintf(out, NET_ADDRESS_BYTES, "[%s]:%d", host, port);
    } else {
        snprintf(out, NET_ADDRESS_BYTES, "?");
    }
}

static struct addrinfo *resolve(const char *host, int port, int passive, char why[NET_TEXT_BYTES])
{
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : AI_ADDRCONFIG);
    struct addrinfo *list = NULL;
    int rc = getaddrinfo(host, service, &hints, &list);
    if (rc != 0) {
        says(why, "%s: %s", host, gai_strerror(rc));
        return NULL;
    }
    return list;
}

int net_listen(const char *address, int port, int backlog, int *fd, int *bound_port, char why[NET_TEXT_BYTES])
{
    *fd = -1;
    struct addrinfo *list = resolve(address, port, 1, why);
    if (!list)
        return -1;
    int err = 0;
    for (struct addrinfo *a = list; a && *fd < 0; a = a->ai_next) {
        int s = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (s < 0) {
            err = errno;
            continue;
        }
        int one = 1;
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(s, a->ai_addr, a->ai_addrlen) == 0 && listen(s, backlog) == 0) {
            *fd = s;
        } else {
            err = errno;
            close(s);
        }
    }
    freeaddrinfo(list);
    if (*fd < 0)
        return says(why, "cannot listen on %s port %d: %s", address, port, strerror(err));
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(*fd, (struct sockaddr *)&ss, &len) != 0) {
        err = errno;
        close(*fd);
        *fd = -1;
        return says(why, "getsockname: %s", strerror(err));
    }
    *bound_port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                           : ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return 0;
}

int net_set_nonblocking(int fd, int on)
{
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0)
        return -1;
    flags = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
    return fcntl(fd, F_SETFL, flags);
}

/* Waits for `events` on fd for at most one slice of POLL_SLICE_MS, and not past the deadline
 * (0: none): 1 ready, 0 not yet, -1 error (errno). Past the deadline it still looks once without
 * waiting: a process that was stopped (SIGSTOP) past its deadline finds what came meanwhile. */
static int wait_slice(int fd, short events, double deadline)
{
    int ms = POLL_SLICE_MS;
    if (deadline > 0) {
        double left = deadline - net_now();
        ms = left <= 0 ? 0 : left * 1000 < ms ? (int)(left * 1000) + 1 : ms;
    }
    struct pollfd p = {fd, events, 0};
    int rc = poll(&p, 1, ms);
    if (rc < 0)
        return errno == EINTR ? 0 : -1;
    return rc > 0;
}

int net_connect(const char *host, int port, double timeout_s, int *fd, char why[NET_TEXT_BYTES])
{
    *fd = -1;
    struct addrinfo *list = resolve(host, port, 0, why);
    if (!list)
        return -1;
    int err = 0, timed_out = 0;
    for (struct addrinfo *a = list; a && *fd < 0; a = a->ai_next) {
        int s = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (s < 0) {
            err = errno;
            continue;
        }
        int rc = connect(s, a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            double deadline = net_now() + timeout_s;
            int ready = 0;
            while ((ready = wait_slice(s, POLLOUT, deadline)) == 0 && net_now() < deadline)
                ;
            socklen_t len = sizeof err;
            if (ready == 1 && getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
                rc = 0;
            else if (ready == 0)
                timed_out = 1;
            else if (ready < 0)
                err = errno;
        } else if (rc != 0) {
            err = errno;
        }
        if (rc == 0 && net_set_nonblocking(s, 0) == 0) {
            int one = 1;
            setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            net_keepalive(s);
            *fd = s;
        } else {
            close(s);
        }
    }
    freeaddrinfo(list);
    if (*fd >= 0)
        return 0;
    if (timed_out && err == 0)
        return says(why, "cannot connect to %s port %d: timed out after %.0f s", host, port, timeout_s);
    return says(why, "cannot connect to %s port %d: %s", host, port, strerror(err));
}

int net_accept(int listener, char peer[NET_ADDRESS_BYTES])
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int fd = accept4(listener, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    net_keepalive(fd);
    describe((const struct sockaddr *)&ss, peer);
    return fd;
}

int net_keepalive(int fd)
{
    int on = 1, idle = KEEPALIVE_IDLE_S, interval = KEEPALIVE_INTERVAL_S, probes = KEEPALIVE_PROBES;
    int rc = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    rc |= setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    rc |= setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    rc |= setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
    return rc == 0 ? 0 : -1;
}

/* net_read_exact and net_read_idle: the deadline, and `idle_s` (0: none) without a byte. */
static net_result read_exact(int fd, void *buffer, size_t bytes, double deadline, double idle_s, int (*stop)(void),
                             size_t *got, int *err)
{
    uint8_t *p = buffer;
    size_t done = 0;
    net_result result = NET_OK;
    double idle_deadline = idle_s > 0 ? net_now() + idle_s : 0;
    while (done < bytes) {
        if (stop && stop()) {
            result = NET_STOPPED;
            break;
        }
        double until = deadline > 0 && (idle_deadline == 0 || deadline < idle_deadline) ? deadline : idle_deadline;
        int ready = wait_slice(fd, POLLIN, until);
        if (ready == 0) {
            if (until > 0 && net_now() >= until) {
                result = NET_TIMEOUT;
                break;
            }
            continue;
        }
        ssize_t n = ready < 0 ? -1 : recv(fd, p + done, bytes - done, MSG_DONTWAIT);
        if (n > 0) {
            done += (size_t)n;
            if (idle_s > 0)
                idle_deadline = net_now() + idle_s;
        } else if (n == 0) {
            result = done == 0 ? NET_CLOSED : NET_TRUNCATED;
            break;
        } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
            if (err)
                *err = errno;
            result = errno == ECONNRESET && done > 0 ? NET_TRUNCATED : errno == ECONNRESET ? NET_CLOSED : NET_ERROR;
            break;
        }
    }
    if (got)
        *got = done;
    return result;
}

net_result net_read_exact(int fd, void *buffer, size_t bytes, double deadline, int (*stop)(void), size_t *got,
                          int *err)
{
    return read_exact(fd, buffer, bytes, deadline, 0, stop, got, err);
}

net_result net_read_idle(int fd, void *buffer, size_t bytes, double idle_s, int (*stop)(void), size_t *got, int *err)
{
    return read_exact(fd, buffer, bytes, 0, idle_s, stop, got, err);
}

net_result net_write_exact(int fd, const void *buffer, size_t bytes, double deadline, int (*stop)(void), int *err)
{
    const uint8_t *p = buffer;
    size_t done = 0;
    while (done < bytes) {
        if (stop && stop())
            return NET_STOPPED;
        ssize_t n = send(fd, p + done, bytes - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
            if (err)
                *err = errno;
            return errno == EPIPE || errno == ECONNRESET ? NET_CLOSED : NET_ERROR;
        }
        int ready = wait_slice(fd, POLLOUT, deadline);
        if (ready < 0) {
            if (err)
                *err = errno;
            return NET_ERROR;
        }
        if (ready == 0 && deadline > 0 && net_now() >= deadline)
            return NET_TIMEOUT;
    }
    return NET_OK;
}

const char *net_result_string(net_result result, int err)
{
    switch (result) {
    case NET_OK: return "ok";
    case NET_CLOSED: return "the connection was closed";
    case NET_TRUNCATED: return "the connection was closed in the middle of a message";
    case NET_TIMEOUT: return "timed out";
    case NET_STOPPED: return "interrupted";
    case NET_ERROR: return strerror(err);
    }
    return "?";
}
