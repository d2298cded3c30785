/* The configuration file of 'glcv serve'; see config.h.
 *
 * The file is read whole (at most 1 MiB) and goes through libyaml twice: first as events, to
 * report libyaml's own errors and to refuse what the loaded tree would hide (an alias is loaded as
 * a second reference to its anchor's node, a second document is never looked at), then as a tree,
 * which the schema walks. Each mapping is checked whole first (scalar keys, each once, each known),
 * then its keys are looked up one by one: a section's fields are read in a fixed order, so a
 * camera's motion is known before its zones, which inherit it. Every check returns -1 at once with
 * the one error line written; svc_config_load then frees whatever was built.
 *
 * Why one file of this size: the schema's sections and the checks they share (typed values with
 * their ranges, names, the line of each error) are one parser with one caller; split, the
 * loader's state and helpers would become a private header for files that only use each other. */
#define _POSIX_C_SOURCE 200809L

#include "config.h"

#include "service.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

enum {
    FILE_LIMIT = 1 << 20,    /* bytes; a configuration is a few KiB, a bigger file is a mistake */
    NAME_LIMIT = 64,         /* characters of a camera id or a zone name */
    WHERE_BYTES = 64,        /* "cameras[12].zones[3]" */
    PATH_BYTES = 192,        /* WHERE_BYTES + "." + a key shown as at most SHOWN_BYTES */
    SHOWN_BYTES = 80,        /* a value quoted in an error, cut to keep the error one short line */
    FILE_SHOWN_BYTES = 1024, /* a file name in an error: cut only when absurd */
    LIST_BYTES = 160,        /* "eth, vsam, diff2 or diff3" and the keys of a section */
    NEST_LIMIT = 32          /* levels of collections; the schema has 7 (a polygon's point) */
};

static const char *const TOP_KEYS[] = {"http", "mqtt",    "nats",  "queue",    "spool",   "fraction_every",
                                       "gpus", "decoder", "masks", "defaults", "cameras", "cluster", NULL};
static const char *const HTTP_KEYS[] = {"listen", "token", "token_file", NULL};
static const char *const MQTT_KEYS[] = {"url", "prefix", "client_id", NULL};
static const char *const NATS_KEYS[] = {"url", "prefix", "stream", "replicas", NULL};
static const char *const CLUSTER_KEYS[] = {"bucket", "instance", "capacity", "lease", NULL};
static const char *const DEFAULTS_KEYS[] = {"method", "options", "learn", "motion", "objects", NULL};
static const char *const CAMERA_KEYS[] = {"id",      "source", "transport", "realtime", "method", "options",
                                          "learn",   "motion", "objects",   "zones",    NULL};
static const char *const OBJECTS_KEYS[] = {"cell", "min_area", "confirm", "lost", NULL};
static const char *const ZONE_KEYS[] = {"name", "polygon", "motion", NULL};
static const char *const MOTION_KEYS[] = {"start", "end", "start_frames", "end_frames", NULL};

static const char *const DECODERS[] = {"auto", "cpu", "nvdec", NULL};
static const char *const METHODS[] = {"eth", "vsam", "diff2", "diff3", NULL};
static const char *const TRANSPORTS[] = {"tcp", "udp", NULL};
static const char *const BOOLEANS[] = {"true", "false", NULL};

static const svc_motion DEFAULT_MOTION = {0.005, 0.002, 3, 15};
static const svc_objects_rule DEFAULT_OBJECTS = {0, 8, 0.001, 3, 10};

typedef struct loader {
    const char *path;
    char *error;
    size_t size;
    yaml_document_t *doc;
} loader;

/* ---- errors ------------------------------------------------------------------------------------- */

/* snprintf for the names of places ("cameras[2].zones[0].polygon[3]"): a name cut short in an
 * error is better than a second buffer size to get right in every caller. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void place(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, size, fmt, ap);
    va_end(ap);
}

/* Writes "PATH:LINE: " and the message (no LINE when 0: the file as a whole); returns -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(const loader *L, int line, const char *fmt, ...)
{
    if (!L->error || L->size == 0)
        return -1;
    int n = line > 0 ? snprintf(L->error, L->size, "%s:%d: ", L->path, line)
                     : snprintf(L->error, L->size, "%s: ", L->path);
    if (n >= 0 && (size_t)n < L->size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(L->error + n, L->size - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int line_of(const yaml_node_t *n)
{
    return (int)n->start_mark.line + 1;
}

/* A text for an error: control characters (a block scalar's newlines) as '?', so that the error
 * stays one line, and cut at a character boundary to fit `size` with "...". */
static const char *shown_in(const char *s, char *out, size_t size)
{
    size_t n = strlen(s), keep = n < size - 4 ? n : size - 4;
    while (keep < n && keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
        keep--;
    for (size_t i = 0; i < keep; i++)
        out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7F ? '?' : s[i];
    strcpy(out + keep, keep < n ? "..." : "");
    return out;
}

/* A value, short; file names get FILE_SHOWN_BYTES. */
static const char *shown(const char *s, char out[SHOWN_BYTES])
{
    return shown_in(s, out, SHOWN_BYTES);
}

/* "a, b or c" */
static const char *word_list(const char *const *words, char out[LIST_BYTES])
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; words[i]; i++) {
        const char *sep = i == 0 ? "" : words[i + 1] ? ", " : " or ";
        int n = snprintf(out + used, LIST_BYTES - used, "%s%s", sep, words[i]);
        if (n < 0 || (size_t)n >= LIST_BYTES - used)
            break;
        used += (size_t)n;
    }
    return out;
}

/* ---- nodes -------------------------------------------------------------------------------------- */

static yaml_node_t *node_at(const loader *L, int index)
{
    return yaml_document_get_node(L->doc, index);
}

static const char *text_of(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* YAML's null: an empty plain scalar, ~ or null. */
static int is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *s = text_of(n);
    return s[0] == '\0' || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static int count_of(const yaml_node_t *seq)
{
    return (int)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

static yaml_node_t *item_of(const loader *L, const yaml_node_t *seq, int i)
{
    return node_at(L, seq->data.sequence.items.start[i]);
}

/* "cameras[0]" + "id" -> "cameras[0].id"; at the top level (where "") the key alone. */
static const char *join(char out[PATH_BYTES], const char *where, const char *key)
{
    place(out, PATH_BYTES, "%s%s%s", where, where[0] ? "." : "", key);
    return out;
}

/* "cameras[0].method: a string is expected, not a mapping" */
static int wrong_type(const loader *L, const yaml_node_t *n, const char *path, const char *expected)
{
    char s[SHOWN_BYTES];
    if (n->type == YAML_MAPPING_NODE)
        return fail(L, line_of(n), "%s: %s is expected, not a mapping", path, expected);
    if (n->type == YAML_SEQUENCE_NODE)
        return fail(L, line_of(n), "%s: %s is expected, not a sequence", path, expected);
    if (is_null(n))
        return fail(L, line_of(n), "%s: %s is expected, not an empty value", path, expected);
    return fail(L, line_of(n), "%s: %s is expected, not '%s'", path, expected, shown(text_of(n), s));
}

static int is_key(const yaml_node_t *key, const char *name)
{
    return key->type == YAML_SCALAR_NODE && key->data.scalar.length == strlen(name) && !strcmp(text_of(key), name);
}

static int same_key(const yaml_node_t *a, const yaml_node_t *b)
{
    return a->data.scalar.length == b->data.scalar.length &&
           !memcmp(a->data.scalar.value, b->data.scalar.value, a->data.scalar.length);
}

static int known_key(const yaml_node_t *key, const char *const *known)
{
    for (int i = 0; known[i]; i++)
        if (is_key(key, known[i]))
            return 1;
    return 0;
}

/* A mapping whose keys are scalars, each given once and each one of `known`. */
static int check_mapping(const loader *L, const yaml_node_t *map, const char *where, const char *const *known)
{
    const char *name = where[0] ? where : "the file";
    if (map->type != YAML_MAPPING_NODE)
        return wrong_type(L, map, name, "a mapping");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        const yaml_node_t *key = node_at(L, p->key);
        char s[SHOWN_BYTES], path[PATH_BYTES], list[LIST_BYTES];
        if (key->type != YAML_SCALAR_NODE)
            return fail(L, line_of(key), "%s: a key is a name, not a %s", name,
                        key->type == YAML_MAPPING_NODE ? "mapping" : "sequence");
        join(path, where, shown(text_of(key), s));
        if (!known_key(key, known))
            return fail(L, line_of(key), "%s: unknown key: expected %s", path, word_list(known, list));
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
            if (same_key(node_at(L, q->key), key))
                return fail(L, line_of(key), "%s: repeated key (the first is on line %d)", path,
                            line_of(node_at(L, q->key)));
    }
    return 0;
}

/* The value of `name` in a checked mapping, NULL when absent; *key_line: the key's line. */
static yaml_node_t *find(const loader *L, const yaml_node_t *map, const char *name, int *key_line)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        const yaml_node_t *key = node_at(L, p->key);
        if (is_key(key, name)) {
            if (key_line)
                *key_line = line_of(key);
            return node_at(L, p->value);
        }
    }
    return NULL;
}

/* The line of a mapping's first key (the mapping's own line when it is empty). */
static int first_line(const loader *L, const yaml_node_t *map)
{
    if (map->data.mapping.pairs.start == map->data.mapping.pairs.top)
        return line_of(map);
    return line_of(node_at(L, map->data.mapping.pairs.start->key));
}

static int sequence(const loader *L, const yaml_node_t *n, const char *path, const char *expected)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, n, path, expected);
    return 0;
}

/* ---- values ------------------------------------------------------------------------------------- */

/* A scalar's text: not empty, no NUL character (which C strings would cut silently). */
static int scalar_text(const loader *L, const yaml_node_t *n, const char *path, const char *expected,
                       const char **out)
{
    if (n->type != YAML_SCALAR_NODE || is_null(n))
        return wrong_type(L, n, path, expected);
    if (n->data.scalar.length == 0)
        return fail(L, line_of(n), "%s: an empty text", path);
    if (strlen(text_of(n)) != n->data.scalar.length)
        return fail(L, line_of(n), "%s: a NUL character in the text", path);
    *out = text_of(n);
    return 0;
}

static int set_text(const loader *L, int line, char **out, const char *s)
{
    char *copy = strdup(s);
    if (!copy)
        return fail(L, line, "out of memory");
    free(*out);
    *out = copy;
    return 0;
}

/* A decimal integer: an optional sign, digits, nothing else (no 0x, no 1_000, no 12abc). */
static int int_value(const loader *L, const yaml_node_t *n, const char *path, long lo, long hi, int *out)
{
    const char *s = NULL;
    char t[SHOWN_BYTES];
    if (scalar_text(L, n, path, "an integer", &s))
        return -1;
    const char *digits = s + (s[0] == '-' || s[0] == '+');
    char *end = NULL;
    errno = 0;
    long long v = digits[0] >= '0' && digits[0] <= '9' ? strtoll(s, &end, 10) : 0;
    if (!end || *end != '\0')
        return fail(L, line_of(n), "%s: '%s' is not an integer", path, shown(s, t));
    if (errno == ERANGE || v < lo || v > hi)
        return fail(L, line_of(n), "%s: '%s' is out of range: it must be from %ld to %ld", path, shown(s, t), lo, hi);
    *out = (int)v;
    return 0;
}

/* A finite decimal number; YAML's .nan and .inf and C's nan and inf are named as such. */
static int real_value(const loader *L, const yaml_node_t *n, const char *path, double lo, double hi, int lo_open,
                      double *out)
{
    const char *s = NULL;
    char t[SHOWN_BYTES];
    if (scalar_text(L, n, path, "a number", &s))
        return -1;
    const char *word = s + (s[0] == '-' || s[0] == '+');
    word += word[0] == '.';
    if (!strncasecmp(word, "nan", 3) || !strncasecmp(word, "inf", 3))
        return fail(L, line_of(n), "%s: '%s' is not a finite number", path, shown(s, t));
    char *end = NULL;
    errno = 0;
    double v = strspn(s, "0123456789+-.eE") == strlen(s) ? strtod(s, &end) : 0.0;
    if (!end || end == s || *end != '\0')
        return fail(L, line_of(n), "%s: '%s' is not a number", path, shown(s, t));
    if (!isfinite(v))
        return fail(L, line_of(n), "%s: '%s' is not a finite number", path, shown(s, t));
    if (isinf(hi) && v < lo)
        return fail(L, line_of(n), "%s: '%s' is out of range: it must be at least %g", path, shown(s, t), lo);
    if (v < lo || (lo_open && v == lo) || v > hi)
        return fail(L, line_of(n), "%s: '%s' is out of range: it must be %s %g and at most %g", path, shown(s, t),
                    lo_open ? "above" : "at least", lo, hi);
    *out = v;
    return 0;
}

static int choice_value(const loader *L, const yaml_node_t *n, const char *path, const char *const *choices,
                        char **out)
{
    const char *s = NULL;
    char t[SHOWN_BYTES], list[LIST_BYTES];
    if (scalar_text(L, n, path, "a word", &s))
        return -1;
    for (int i = 0; choices[i]; i++)
        if (!strcmp(s, choices[i]))
            return set_text(L, line_of(n), out, s);
    return fail(L, line_of(n), "%s: '%s' is not %s", path, shown(s, t), word_list(choices, list));
}

/* A camera id or a zone name: [A-Za-z0-9_-]{1,64}, so that it can go into topics and paths. */
static int name_value(const loader *L, const yaml_node_t *n, const char *path, char **out)
{
    const char *s = NULL;
    char t[SHOWN_BYTES];
    if (scalar_text(L, n, path, "a name", &s))
        return -1;
    size_t len = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-");
    if (len != strlen(s) || len > NAME_LIMIT)
        return fail(L, line_of(n), "%s: '%s' is not a name of 1 to %d letters, digits, '_' or '-'", path,
                    shown(s, t), NAME_LIMIT);
    return set_text(L, line_of(n), out, s);
}

/* The keyed forms: absent keys leave *out as it is (the default or the inherited value). */
static int get_text(const loader *L, const yaml_node_t *map, const char *where, const char *key, char **out)
{
    const yaml_node_t *v = find(L, map, key, NULL);
    char path[PATH_BYTES];
    const char *s = NULL;
    if (!v)
        return 0;
    if (scalar_text(L, v, join(path, where, key), "a text", &s))
        return -1;
    return set_text(L, line_of(v), out, s);
}

static int get_int(const loader *L, const yaml_node_t *map, const char *where, const char *key, long lo, long hi,
                   int *out)
{
    const yaml_node_t *v = find(L, map, key, NULL);
    char path[PATH_BYTES];
    return v ? int_value(L, v, join(path, where, key), lo, hi, out) : 0;
}

static int get_real(const loader *L, const yaml_node_t *map, const char *where, const char *key, double lo,
                    double hi, int lo_open, double *out)
{
    const yaml_node_t *v = find(L, map, key, NULL);
    char path[PATH_BYTES];
    return v ? real_value(L, v, join(path, where, key), lo, hi, lo_open, out) : 0;
}

static int get_choice(const loader *L, const yaml_node_t *map, const char *where, const char *key,
                      const char *const *choices, char **out)
{
    const yaml_node_t *v = find(L, map, key, NULL);
    char path[PATH_BYTES];
    return v ? choice_value(L, v, join(path, where, key), choices, out) : 0;
}

/* true or false. */
static int get_bool(const loader *L, const yaml_node_t *map, const char *where, const char *key, int *out)
{
    char *text = NULL;
    if (get_choice(L, map, where, key, BOOLEANS, &text))
        return -1;
    if (text)
        *out = !strcmp(text, "true");
    free(text);
    return 0;
}

/* A URL of the given scheme ("mqtt://"); the broker module reads its host and port. */
static int get_url(const loader *L, const yaml_node_t *map, const char *where, const char *scheme, char **out)
{
    char path[PATH_BYTES], t[SHOWN_BYTES];
    if (get_text(L, map, where, "url", out))
        return -1;
    size_t n = strlen(scheme);
    if (strncmp(*out, scheme, n) != 0 || (*out)[n] == '\0')
        return fail(L, line_of(find(L, map, "url", NULL)), "%s: '%s' is not a %sHOST[:PORT] URL",
                    join(path, where, "url"), shown(*out, t), scheme);
    return 0;
}

/* ---- http, mqtt, nats ----------------------------------------------------------------------------- */

/* HOST:PORT or [IPV6]:PORT, the port 0..65535 (0: any free port); the host is resolved at bind. */
static const char *listen_problem(const char *s)
{
    const char *colon;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close == s + 1 || close[1] != ':')
            return "it is not [ADDRESS]:PORT";
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            return "it has no port: give HOST:PORT";
        if (colon == s)
            return "it has no host: give HOST:PORT";
        if (memchr(s, ':', (size_t)(colon - s)))
            return "an IPv6 address is written in brackets, as [::1]:8080";
    }
    const char *port = colon + 1;
    size_t digits = strspn(port, "0123456789");
    if (digits == 0 || port[digits] != '\0' || digits > 5 || atol(port) > 65535)
        return "the port must be a number from 0 to 65535";
    return NULL;
}

/* token_file: the token is the file's first line, without its line end. */
static int read_token(const loader *L, int line, const char *path, const char *file, char **token)
{
    char t[FILE_SHOWN_BYTES];
    shown_in(file, t, sizeof t);
    FILE *f = fopen(file, "r");
    if (!f)
        return fail(L, line, "%s: cannot read '%s': %s", path, t, strerror(errno));
    char *text = NULL;
    size_t cap = 0;
    errno = 0;
    ssize_t n = getline(&text, &cap, f);
    int err = errno, broken = ferror(f);
    fclose(f);
    if (n < 0 && broken) {
        free(text);
        return fail(L, line, "%s: cannot read '%s': %s", path, t, strerror(err));
    }
    size_t len = n > 0 ? strcspn(text, "\r\n") : 0;
    if (len == 0) {
        free(text);
        return fail(L, line, "%s: '%s' is empty: its first line is the token", path, t);
    }
    text[len] = '\0';
    free(*token);
    *token = text;
    return 0;
}

static int load_token(const loader *L, const yaml_node_t *http, svc_config *c)
{
    int token_line = 0, file_line = 0;
    const yaml_node_t *token = find(L, http, "token", &token_line);
    const yaml_node_t *file = find(L, http, "token_file", &file_line);
    if (token && file)
        return fail(L, token_line > file_line ? token_line : file_line,
                    "http: token and token_file are both given: keep one");
    if (get_text(L, http, "http", "token", &c->token))
        return -1;
    if (!file)
        return 0;
    char *name = NULL;
    int rc = get_text(L, http, "http", "token_file", &name);
    if (rc == 0)
        rc = read_token(L, line_of(file), "http.token_file", name, &c->token);
    free(name);
    return rc;
}

static int load_http(const loader *L, const yaml_node_t *root, svc_config *c)
{
    const yaml_node_t *http = find(L, root, "http", NULL);
    if (!http)
        return 0;
    if (check_mapping(L, http, "http", HTTP_KEYS) || get_text(L, http, "http", "listen", &c->http_listen))
        return -1;
    const char *problem = listen_problem(c->http_listen);
    char t[SHOWN_BYTES];
    if (problem)
        return fail(L, line_of(find(L, http, "listen", NULL)), "http.listen: '%s': %s", shown(c->http_listen, t),
                    problem);
    return load_token(L, http, c);
}

static int load_mqtt(const loader *L, const yaml_node_t *root, svc_config *c)
{
    const yaml_node_t *mqtt = find(L, root, "mqtt", NULL);
    if (!mqtt)
        return 0;
    if (check_mapping(L, mqtt, "mqtt", MQTT_KEYS) || set_text(L, line_of(mqtt), &c->mqtt_url, "mqtt://127.0.0.1:1883"))
        return -1;
    return get_url(L, mqtt, "mqtt", "mqtt://", &c->mqtt_url) || get_text(L, mqtt, "mqtt", "prefix", &c->mqtt_prefix) ||
                   get_text(L, mqtt, "mqtt", "client_id", &c->mqtt_client_id)
               ? -1
               : 0;
}

static int load_nats(const loader *L, const yaml_node_t *root, svc_config *c)
{
    const yaml_node_t *nats = find(L, root, "nats", NULL);
    if (!nats)
        return 0;
    if (check_mapping(L, nats, "nats", NATS_KEYS) || set_text(L, line_of(nats), &c->nats_url, "nats://127.0.0.1:4222"))
        return -1;
    if (get_url(L, nats, "nats", "nats://", &c->nats_url))
        return -1;
    svc_nats_servers servers;
    char why[512];
    if (svc_nats_servers_parse(c->nats_url, &servers, why, sizeof why) != 0)
        return fail(L, line_of(find(L, nats, "url", NULL)), "nats.url: %s", why);
    return get_text(L, nats, "nats", "prefix", &c->nats_prefix) || get_text(L, nats, "nats", "stream", &c->nats_stream) ||
                   get_int(L, nats, "nats", "replicas", 1, 5, &c->nats_replicas)
               ? -1
               : 0;
}

/* cluster: the leases live in NATS, so it needs the nats section. */
static int load_cluster(const loader *L, const yaml_node_t *root, svc_config *c)
{
    int line = 0;
    const yaml_node_t *cluster = find(L, root, "cluster", &line);
    if (!cluster)
        return 0;
    if (check_mapping(L, cluster, "cluster", CLUSTER_KEYS))
        return -1;
    if (!c->nats_url)
        return fail(L, line, "cluster: needs a nats section: the leases are kept in NATS JetStream");
    c->cluster = 1;
    c->cluster_lease = 10.0;
    const yaml_node_t *instance = find(L, cluster, "instance", NULL);
    if (instance && name_value(L, instance, "cluster.instance", &c->cluster_instance))
        return -1;
    return set_text(L, line, &c->cluster_bucket, "GLCV_LEASES") ||
                   get_text(L, cluster, "cluster", "bucket", &c->cluster_bucket) ||
                   get_int(L, cluster, "cluster", "capacity", 0, 1000000, &c->cluster_capacity) ||
                   get_real(L, cluster, "cluster", "lease", 1.0, 3600.0, 0, &c->cluster_lease)
               ? -1
               : 0;
}

/* ---- cameras ------------------------------------------------------------------------------------ */

static void free_options(char **options, int n)
{
    for (int i = 0; i < n; i++)
        free(options[i]);
    free(options);
}

static void free_camera(svc_camera *c)
{
    free(c->id);
    free(c->source);
    free(c->transport);
    free(c->method);
    free_options(c->options, c->n_options);
    for (int i = 0; i < c->n_zones; i++) {
        free(c->zones[i].name);
        free(c->zones[i].points);
    }
    free(c->zones);
    memset(c, 0, sizeof *c);
}

/* motion: keys left out keep the inherited values; the rule is checked on the result. */
static int get_motion(const loader *L, const yaml_node_t *map, const char *where, svc_motion *m)
{
    int key_line = 0;
    const yaml_node_t *v = find(L, map, "motion", &key_line);
    char path[PATH_BYTES];
    if (!v)
        return 0;
    join(path, where, "motion");
    if (check_mapping(L, v, path, MOTION_KEYS) || get_real(L, v, path, "start", 0.0, 1.0, 1, &m->start) ||
        get_real(L, v, path, "end", 0.0, 1.0, 1, &m->end) ||
        get_int(L, v, path, "start_frames", 1, 10000, &m->start_frames) ||
        get_int(L, v, path, "end_frames", 1, 10000, &m->end_frames))
        return -1;
    if (m->end > m->start)
        return fail(L, key_line, "%s: end %g is above start %g: end <= start, so that a motion can stop", path,
                    m->end, m->start);
    return 0;
}

static int copy_options(const loader *L, int line, svc_camera *to, char *const *options, int n)
{
    char **copy = n > 0 ? calloc((size_t)n, sizeof *copy) : NULL;
    if (n > 0 && !copy)
        return fail(L, line, "out of memory");
    free_options(to->options, to->n_options);
    to->options = copy;
    to->n_options = n;
    for (int i = 0; i < n; i++)
        if (set_text(L, line, &copy[i], options[i]))
            return -1;
    return 0;
}

/* options: a sequence of scalars, kept as written ("5" for 5), each one word of 'glcv segment'. */
static int get_options(const loader *L, const yaml_node_t *map, const char *where, svc_camera *c)
{
    int key_line = 0;
    const yaml_node_t *v = find(L, map, "options", &key_line);
    char path[PATH_BYTES], at[PATH_BYTES + 16];
    if (!v)
        return 0;
    if (sequence(L, v, join(path, where, "options"), "a sequence ([] for none)"))
        return -1;
    int n = count_of(v);
    char **copy = n > 0 ? calloc((size_t)n, sizeof *copy) : NULL;
    if (n > 0 && !copy)
        return fail(L, key_line, "out of memory");
    free_options(c->options, c->n_options); /* the inherited ones */
    c->options = copy;
    c->n_options = n;
    c->options_line = key_line;
    for (int i = 0; i < n; i++) {
        const yaml_node_t *item = item_of(L, v, i);
        const char *s = NULL;
        place(at, sizeof at, "%s[%d]", path, i);
        if (scalar_text(L, item, at, "an option", &s) || set_text(L, line_of(item), &copy[i], s))
            return -1;
    }
    return 0;
}

/* objects: true or false, or a mapping (turns them on; keys left out keep the inherited values). */
static int get_objects(const loader *L, const yaml_node_t *map, const char *where, svc_objects_rule *o)
{
    const yaml_node_t *v = find(L, map, "objects", NULL);
    char path[PATH_BYTES];
    if (!v)
        return 0;
    join(path, where, "objects");
    if (v->type == YAML_SCALAR_NODE)
        return get_bool(L, map, where, "objects", &o->enabled);
    o->enabled = 1;
    return check_mapping(L, v, path, OBJECTS_KEYS) || get_int(L, v, path, "cell", 2, 64, &o->cell) ||
                   get_real(L, v, path, "min_area", 0.0, 1.0, 1, &o->min_area) ||
                   get_int(L, v, path, "confirm", 1, 1000, &o->confirm) || get_int(L, v, path, "lost", 0, 10000, &o->lost)
               ? -1
               : 0;
}

/* What defaults: and a camera share: method, options, learn, motion, objects. */
static int get_run(const loader *L, const yaml_node_t *map, const char *where, svc_camera *c)
{
    return get_choice(L, map, where, "method", METHODS, &c->method) || get_options(L, map, where, c) ||
                   get_int(L, map, where, "learn", 0, 10000, &c->learn) || get_motion(L, map, where, &c->motion) ||
                   get_objects(L, map, where, &c->objects)
               ? -1
               : 0;
}

static int load_defaults(const loader *L, const yaml_node_t *root, svc_camera *base)
{
    base->learn = 25;
    base->motion = DEFAULT_MOTION;
    base->objects = DEFAULT_OBJECTS;
    if (set_text(L, 1, &base->method, "eth"))
        return -1;
    const yaml_node_t *v = find(L, root, "defaults", NULL);
    if (!v)
        return 0;
    return check_mapping(L, v, "defaults", DEFAULTS_KEYS) || get_run(L, v, "defaults", base) ? -1 : 0;
}

/* polygon: at least 3 points [x, y] of finite numbers >= 0 (pixels). */
static int get_polygon(const loader *L, const yaml_node_t *map, const char *where, svc_zone *z)
{
    int key_line = 0;
    const yaml_node_t *v = find(L, map, "polygon", &key_line);
    char path[PATH_BYTES], at[PATH_BYTES + 32];
    if (!v)
        return 0;
    if (sequence(L, v, join(path, where, "polygon"), "a sequence of points [x, y]"))
        return -1;
    int n = count_of(v);
    if (n < 3)
        return fail(L, key_line, "%s: %d point%s: a polygon needs at least 3", path, n, n == 1 ? "" : "s");
    z->points = calloc((size_t)n, sizeof *z->points);
    if (!z->points)
        return fail(L, line_of(v), "out of memory");
    z->n_points = n;
    for (int i = 0; i < n; i++) {
        const yaml_node_t *p = item_of(L, v, i);
        place(at, sizeof at, "%s[%d]", path, i);
        if (p->type == YAML_SEQUENCE_NODE && count_of(p) != 2)
            return fail(L, line_of(p), "%s: %d numbers: a point is [x, y]", at, count_of(p));
        if (sequence(L, p, at, "a point [x, y]"))
            return -1;
        place(at, sizeof at, "%s[%d][0]", path, i);
        if (real_value(L, item_of(L, p, 0), at, 0.0, INFINITY, 0, &z->points[i].x))
            return -1;
        place(at, sizeof at, "%s[%d][1]", path, i);
        if (real_value(L, item_of(L, p, 1), at, 0.0, INFINITY, 0, &z->points[i].y))
            return -1;
    }
    return 0;
}

typedef struct named {
    const char *name;
    int index;
} named;

static int by_name_then_index(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d ? d : (x->index > y->index) - (x->index < y->index);
}

/* Names (camera ids, a camera's zone names) must differ. The error names the first item, in file
 * order, whose name an earlier one has, and that earlier one; the names are sorted to find it, as
 * comparing each with all the earlier ones would take seconds for a 1 MiB file of cameras.
 * `key`: "id" or "name", `where`: "cameras" or "cameras[0].zones". */
static int check_unique(const loader *L, const yaml_node_t *seq, const char *where, const char *key, named *names,
                        int n)
{
    int earlier = -1, later = -1;
    qsort(names, (size_t)n, sizeof *names, by_name_then_index);
    for (int i = 1; i < n; i++) {
        int first_of_run = i == 1 || strcmp(names[i - 2].name, names[i - 1].name) != 0;
        if (first_of_run && !strcmp(names[i - 1].name, names[i].name) && (later < 0 || names[i].index < later)) {
            earlier = names[i - 1].index;
            later = names[i].index;
        }
    }
    if (later < 0)
        return 0;
    const yaml_node_t *at = find(L, item_of(L, seq, later), key, NULL);
    const yaml_node_t *first = find(L, item_of(L, seq, earlier), key, NULL);
    char t[SHOWN_BYTES];
    return fail(L, line_of(at), "%s[%d].%s: '%s' is used by %s[%d] (line %d)", where, later, key,
                shown(text_of(at), t), where, earlier, line_of(first));
}

static int unique_zones(const loader *L, const yaml_node_t *seq, const char *where, const svc_camera *c)
{
    named *names = malloc((size_t)(c->n_zones > 0 ? c->n_zones : 1) * sizeof *names);
    if (!names)
        return fail(L, line_of(seq), "out of memory");
    for (int i = 0; i < c->n_zones; i++)
        names[i] = (named){c->zones[i].name, i};
    int rc = check_unique(L, seq, where, "name", names, c->n_zones);
    free(names);
    return rc;
}

static int unique_cameras(const loader *L, const yaml_node_t *seq, const svc_config *c)
{
    named *names = malloc((size_t)(c->n_cameras > 0 ? c->n_cameras : 1) * sizeof *names);
    if (!names)
        return fail(L, line_of(seq), "out of memory");
    for (int i = 0; i < c->n_cameras; i++)
        names[i] = (named){c->cameras[i].id, i};
    int rc = check_unique(L, seq, "cameras", "id", names, c->n_cameras);
    free(names);
    return rc;
}

static int load_zone(const loader *L, const yaml_node_t *seq, int i, const char *camera, svc_camera *c)
{
    char where[WHERE_BYTES], path[PATH_BYTES];
    place(where, sizeof where, "%s.zones[%d]", camera, i);
    const yaml_node_t *map = item_of(L, seq, i);
    svc_zone *z = &c->zones[i];
    if (check_mapping(L, map, where, ZONE_KEYS))
        return -1;
    z->line = first_line(L, map);
    z->motion = c->motion;
    const yaml_node_t *name = find(L, map, "name", NULL);
    if (name && name_value(L, name, join(path, where, "name"), &z->name))
        return -1;
    if (get_polygon(L, map, where, z) || get_motion(L, map, where, &z->motion))
        return -1;
    if (!z->name || !z->points)
        return fail(L, z->line, "%s: no %s: a zone needs a name and a polygon", where, z->name ? "polygon" : "name");
    return 0;
}

static int get_zones(const loader *L, const yaml_node_t *map, const char *where, svc_camera *c)
{
    const yaml_node_t *v = find(L, map, "zones", NULL);
    char path[PATH_BYTES];
    if (!v)
        return 0;
    if (sequence(L, v, join(path, where, "zones"), "a sequence of zones"))
        return -1;
    int n = count_of(v);
    if (n == 0)
        return 0;
    c->zones = calloc((size_t)n, sizeof *c->zones);
    if (!c->zones)
        return fail(L, line_of(v), "out of memory");
    c->n_zones = n;
    for (int i = 0; i < n; i++)
        if (load_zone(L, v, i, where, c))
            return -1;
    return unique_zones(L, v, path, c);
}

/* The camera starts as a copy of defaults: and takes what it gives over it. */
static int load_camera(const loader *L, const yaml_node_t *seq, int i, const svc_camera *base, svc_config *cfg)
{
    char where[WHERE_BYTES], path[PATH_BYTES];
    place(where, sizeof where, "cameras[%d]", i);
    const yaml_node_t *map = item_of(L, seq, i);
    svc_camera *c = &cfg->cameras[i];
    if (check_mapping(L, map, where, CAMERA_KEYS))
        return -1;
    c->line = first_line(L, map);
    c->learn = base->learn;
    c->motion = base->motion;
    c->objects = base->objects;
    if (set_text(L, c->line, &c->method, base->method) ||
        copy_options(L, c->line, c, base->options, base->n_options))
        return -1;
    const yaml_node_t *id = find(L, map, "id", NULL);
    if (id && name_value(L, id, join(path, where, "id"), &c->id))
        return -1;
    if (get_text(L, map, where, "source", &c->source) ||
        get_choice(L, map, where, "transport", TRANSPORTS, &c->transport) ||
        get_bool(L, map, where, "realtime", &c->realtime) || get_run(L, map, where, c))
        return -1;
    if (!c->id || !c->source)
        return fail(L, c->line, "%s: no %s: a camera needs an id and a source", where, c->id ? "source" : "id");
    return get_zones(L, map, where, c);
}

static int load_cameras(const loader *L, const yaml_node_t *root, svc_config *c)
{
    svc_camera base;
    memset(&base, 0, sizeof base);
    int rc = load_defaults(L, root, &base);
    const yaml_node_t *v = rc ? NULL : find(L, root, "cameras", NULL);
    if (rc == 0 && !v)
        rc = fail(L, first_line(L, root), "cameras: missing: at least one camera is needed");
    if (rc == 0)
        rc = sequence(L, v, "cameras", "a sequence of cameras");
    if (rc == 0 && count_of(v) == 0)
        rc = fail(L, line_of(v), "cameras: empty: at least one camera is needed");
    if (rc == 0) {
        c->cameras = calloc((size_t)count_of(v), sizeof *c->cameras);
        rc = c->cameras ? 0 : fail(L, line_of(v), "out of memory");
    }
    if (rc == 0)
        c->n_cameras = count_of(v);
    for (int i = 0; rc == 0 && i < c->n_cameras; i++)
        rc = load_camera(L, v, i, &base, c);
    if (rc == 0)
        rc = unique_cameras(L, v, c);
    free_camera(&base);
    return rc;
}

/* ---- the file ----------------------------------------------------------------------------------- */

static int set_defaults(const loader *L, svc_config *c)
{
    c->queue = 10000;
    c->nats_replicas = 1;
    c->fraction_every = 1.0;
    c->gpus = 1;
    return set_text(L, 0, &c->path, L->path) || set_text(L, 0, &c->http_listen, "127.0.0.1:8080") ||
                   set_text(L, 0, &c->mqtt_prefix, "glcv") || set_text(L, 0, &c->nats_prefix, "glcv") ||
                   set_text(L, 0, &c->nats_stream, "GLCV_EVENTS") || set_text(L, 0, &c->decoder, "auto")
               ? -1
               : 0;
}

static int load_root(const loader *L, svc_config *c)
{
    const yaml_node_t *root = yaml_document_get_root_node(L->doc);
    if (!root)
        return fail(L, 1, "cameras: missing: at least one camera is needed");
    if (check_mapping(L, root, "", TOP_KEYS) || load_http(L, root, c) || load_mqtt(L, root, c) ||
        load_nats(L, root, c) || load_cluster(L, root, c) || get_int(L, root, "", "queue", 1, 10000000, &c->queue) ||
        get_text(L, root, "", "spool", &c->spool) ||
        get_real(L, root, "", "fraction_every", 0.0, 3600.0, 0, &c->fraction_every) ||
        get_int(L, root, "", "gpus", 0, 64, &c->gpus) || get_choice(L, root, "", "decoder", DECODERS, &c->decoder) ||
        get_text(L, root, "", "masks", &c->masks))
        return -1;
    return load_cameras(L, root, c);
}

/* The line of a byte offset: libyaml gives a reader error (bad UTF-8) an offset, not a mark. */
static int line_at(const char *text, size_t length, size_t offset)
{
    int line = 1;
    for (size_t i = 0; i < offset && i < length; i++)
        line += text[i] == '\n';
    return line;
}

static int yaml_failure(const loader *L, const yaml_parser_t *p, const char *text, size_t length)
{
    if (p->error == YAML_MEMORY_ERROR)
        return fail(L, 0, "out of memory");
    int line = p->error == YAML_READER_ERROR ? line_at(text, length, p->problem_offset)
                                             : (int)p->problem_mark.line + 1;
    /* At the end of a file that ends with its newline (an unclosed bracket or quote) the mark is
     * on the line after the last, which no editor shows: the last line is named instead. */
    int last = line_at(text, length, length > 0 && text[length - 1] == '\n' ? length - 1 : length);
    line = line < last ? line : last;
    const char *problem = p->problem ? p->problem : "unknown error";
    if (p->context)
        return fail(L, line, "YAML: %s %s", problem, p->context);
    return fail(L, line, "YAML: %s", problem);
}

/* The event pass: libyaml's errors, aliases (refused: a billion laughs would otherwise be a few
 * lines; and their values are short to write out), more than one document, and nesting deeper
 * than NEST_LIMIT: libyaml's scanner takes time in the square of the depth (a 1 MiB file of '['
 * would take hours), so the pass stops as soon as a collection opens too deep. */
static int scan(const loader *L, const char *text, size_t length)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return fail(L, 0, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, length);
    int documents = 0, depth = 0, rc = 0, done = 0;
    while (rc == 0 && !done) {
        yaml_event_t e;
        if (!yaml_parser_parse(&p, &e)) {
            rc = yaml_failure(L, &p, text, length);
            break;
        }
        int line = (int)e.start_mark.line + 1;
        if (e.type == YAML_ALIAS_EVENT)
            rc = fail(L, line, "*%s: aliases are not accepted: write the value out", (const char *)e.data.alias.anchor);
        else if (e.type == YAML_DOCUMENT_START_EVENT && ++documents > 1)
            rc = fail(L, line, "a second YAML document: the file holds one");
        else if ((e.type == YAML_SEQUENCE_START_EVENT || e.type == YAML_MAPPING_START_EVENT) && ++depth > NEST_LIMIT)
            rc = fail(L, line, "nested deeper than %d levels: the configuration has at most 7", NEST_LIMIT);
        else if (e.type == YAML_SEQUENCE_END_EVENT || e.type == YAML_MAPPING_END_EVENT)
            depth--;
        done = e.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&e);
    }
    yaml_parser_delete(&p);
    return rc;
}

/* The tree of the (only) document; on success the caller deletes *doc. */
static int load_tree(const loader *L, const char *text, size_t length, yaml_document_t *doc)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return fail(L, 0, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, length);
    int rc = yaml_parser_load(&p, doc) ? 0 : yaml_failure(L, &p, text, length);
    yaml_parser_delete(&p);
    return rc;
}

static int read_file(const loader *L, char **text, size_t *length)
{
    FILE *f = fopen(L->path, "rb");
    if (!f)
        return fail(L, 0, "cannot read: %s", strerror(errno));
    char *buf = malloc(FILE_LIMIT + 1);
    size_t n = buf ? fread(buf, 1, FILE_LIMIT + 1, f) : 0;
    int err = errno, broken = ferror(f);
    fclose(f);
    if (!buf)
        return fail(L, 0, "out of memory");
    if (broken) {
        free(buf);
        return fail(L, 0, "cannot read: %s", strerror(err));
    }
    if (n > FILE_LIMIT) {
        free(buf);
        return fail(L, 0, "larger than 1 MiB: a configuration is a few KiB");
    }
    *text = buf;
    *length = n;
    return 0;
}

int svc_config_load(const char *path, svc_config *out, char *error, size_t size)
{
    loader L = {path, error, size, NULL};
    char *text = NULL;
    size_t length = 0;
    yaml_document_t doc;
    memset(out, 0, sizeof *out);
    if (error && size > 0)
        error[0] = '\0';
    int rc = read_file(&L, &text, &length);
    if (rc == 0)
        rc = scan(&L, text, length);
    if (rc == 0)
        rc = load_tree(&L, text, length, &doc);
    if (rc == 0) {
        L.doc = &doc;
        rc = set_defaults(&L, out);
        if (rc == 0)
            rc = load_root(&L, out);
        yaml_document_delete(&doc);
    }
    free(text);
    if (rc != 0)
        svc_config_free(out);
    return rc;
}

void svc_config_free(svc_config *c)
{
    if (!c)
        return;
    free(c->path);
    free(c->http_listen);
    free(c->token);
    free(c->mqtt_url);
    free(c->mqtt_prefix);
    free(c->mqtt_client_id);
    free(c->nats_url);
    free(c->nats_prefix);
    free(c->nats_stream);
    free(c->cluster_bucket);
    free(c->cluster_instance);
    free(c->spool);
    free(c->decoder);
    free(c->masks);
    for (int i = 0; i < c->n_cameras; i++)
        free_camera(&c->cameras[i]);
    free(c->cameras);
    memset(c, 0, sizeof *c);
}

static int same_text(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

int svc_camera_same_run(const svc_camera *a, const svc_camera *b)
{
    if (!a || !b)
        return a == b;
    if (!same_text(a->id, b->id) || !same_text(a->source, b->source) || !same_text(a->transport, b->transport) ||
        a->realtime != b->realtime ||
        !same_text(a->method, b->method) || a->learn != b->learn || a->n_options != b->n_options)
        return 0;
    for (int i = 0; i < a->n_options; i++)
        if (!same_text(a->options[i], b->options[i]))
            return 0;
    return 1;
}
