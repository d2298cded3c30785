/* Sockets for 'glcv stream': addresses (IPv4 and IPv6), listening, connecting with a deadline,
 * whole reads and writes that survive partial transfers and EINTR and never raise SIGPIPE. Error
 * texts go into a caller's buffer; nothing is printed. */
#ifndef GLCV_TOOLS_STREAM_NET_H
#define GLCV_TOOLS_STREAM_NET_H

#include <stddef.h>
#include <stdint.h>

enum { NET_TEXT_BYTES = 256, NET_ADDRESS_BYTES = 64 };

/* What a whole read or write came to. */
typedef enum net_result {
    NET_OK = 0,
    NET_CLOSED,    /* the peer closed the connection before the first byte */
    NET_TRUNCATED, /* the peer closed the connection after some bytes, before all of them */
    NET_TIMEOUT,   /* the deadline passed */
    NET_STOPPED,   /* stop() turned true */
    NET_ERROR      /* a socket error (errno kept in *err) */
} net_result;

/* Splits "HOST:PORT" ("[v6 address]:PORT" for IPv6; a bare v6 address with more than one ':'
 * needs the brackets) into host and port (1..65535). 0, or -1 with *why. */
int net_split_host_port(const char *text, char *host, size_t host_size, int *port, char why[NET_TEXT_BYTES]);

/* A listening TCP socket on `address` (a numeric IPv4 or IPv6 address or a host name; IPv6 '::'
 * also takes IPv4 where the system allows it) and `port` (0: the system picks one). *bound_port
 * gets the port. 0, or -1 with *why. */
int net_listen(const char *address, int port, int backlog, int *fd, int *bound_port, char why[NET_TEXT_BYTES]);

/* A TCP connection to host:port, every address of the name tried in turn, each until `timeout_s`
 * seconds. The socket stays blocking, with TCP_NODELAY and keepalive (net_keepalive). 0, or -1
 * with *why. */
int net_connect(const char *host, int port, double timeout_s, int *fd, char why[NET_TEXT_BYTES]);

/* accept() of a listening socket: the new socket, non-blocking, with TCP_NODELAY and keepalive,
 * or -1 (errno). `peer` gets "ADDRESS:PORT" ("[ADDRESS]:PORT" for IPv6). */
int net_accept(int listener, char peer[NET_ADDRESS_BYTES]);

/* TCP keepalive on a connected socket: a probe after 10 s without traffic, then every 5 s; three
 * unanswered and the connection fails (a peer whose host went away, not only one that closed).
 * 0, or -1 (errno). */
int net_keepalive(int fd);

int net_set_nonblocking(int fd, int on);

/* Reads exactly `bytes` bytes, waiting at most until `deadline` (seconds on the monotonic clock;
 * 0: no deadline) and checking `stop` (may be NULL) every 100 ms. *got (may be NULL) gets the
 * bytes read, *err (may be NULL) errno on NET_ERROR. */
net_result net_read_exact(int fd, void *buffer, size_t bytes, double deadline, int (*stop)(void), size_t *got,
                          int *err);

/* Reads exactly `bytes` bytes, failing with NET_TIMEOUT when no byte comes for `idle_s` seconds
 * (0: it may wait for ever); otherwise as net_read_exact. A slow sender passes, one that stalls
 * does not. */
net_result net_read_idle(int fd, void *buffer, size_t bytes, double idle_s, int (*stop)(void), size_t *got, int *err);

/* Writes exactly `bytes` bytes, as net_read_exact (no SIGPIPE: MSG_NOSIGNAL). */
net_result net_write_exact(int fd, const void *buffer, size_t bytes, double deadline, int (*stop)(void), int *err);

/* What a result means, for messages ("the connection was closed", "timed out", ...). */
const char *net_result_string(net_result result, int err);

/* The monotonic clock in seconds. */
double net_now(void);

#endif
