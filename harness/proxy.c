/*
 * proxy.c - the loopback TCP proxy with network toxics (proxy.h).
 *
 * One thread runs a poll() loop over every listener and every connection
 * pair (client socket, server socket), all non-blocking.  Bytes read from
 * one side become a chunk stamped with the time it may be written to the
 * other side (latency + jitter, never before the chunk ahead of it); a
 * token bucket per direction caps the bandwidth.  The backend's stream is
 * parsed into messages as it is read (state machine over the 1-byte type +
 * int32 length framing of the PostgreSQL v3 protocol), which the lost ack
 * needs.
 *
 * Invariants:
 *   - only the proxy thread touches connections and sockets; workers talk
 *     to it through the per-worker atomics arm[] and the fired[] records
 *     under mu, which is never held across I/O;
 *   - a chunk is written to its side in order, whole, and only once;
 *   - the upstream stream's framing is tracked from the first byte (the
 *     rewritten DSN disables SSL and GSS encryption negotiation, whose one
 *     byte answers are not framed);
 *   - when held (lost ack armed) the backend's chunks wait in held[], never
 *     reaching the client, until a ReadyForQuery releases or drops them.
 */
#include "proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "rng.h"

#include <jansson.h>

#define QUEUE_MAX (4u << 20) /* bytes queued one way before reading stops */
#define READ_MAX 65536

typedef struct chunk {
    struct chunk *next;
    double rd;  /* qc_clock_ms when it was read */
    double due; /* qc_clock_ms when it may be written */
    size_t len, off;
    char data[];
} chunk;

typedef struct way {
    chunk *head, *tail;
    size_t queued;
    double last_due;
    double tokens, refilled; /* bandwidth bucket */
    int eof;                 /* the source side closed */
    int shut;                /* shutdown(SHUT_WR) done on the destination */
} way;

typedef struct pconn {
    struct pconn *next;
    int worker;
    int cfd, sfd;
    int toxic;      /* latency / bandwidth apply */
    int half_open;  /* silenced by a half_open fault */
    double pending; /* qc_clock_ms since the client has data waiting while silent; 0 = none */
    way up, down;   /* client -> server, server -> client */
    /* backend message framing */
    unsigned char hdr[5];
    int hn;
    uint32_t left;
    char type, last_type;
    char body[32]; /* the first bytes of the current 'C' / 'Z' message */
    char tag[32];  /* the last CommandComplete's tag */
    int tn;
    /* lost ack */
    int armed; /* armed in generation armed_gen */
    int armed_gen;
    chunk *held, *held_tail;
    size_t held_len;
    int dead;
    int up_sent; /* the client sent bytes before (its startup packet at least) */
} pconn;

typedef struct fired_rec {
    int fired;
    char tag[32];
} fired_rec;

struct qc_proxy {
    qc_network cfg;
    int n;
    int *lfd;   /* listeners */
    char **dsn; /* per worker */
    unsigned char *toxic, *parted;
    struct sockaddr_storage up;
    socklen_t uplen;
    qc_lbuf *lb;
    double t0, start;
    atomic_int *stop;
    atomic_int quit;
    atomic_int *arm;
    atomic_int *gen;    /* per worker: bumped by every arm and take_fired, so a lost ack
                           armed on a connection ends with the request it was armed for */
    pthread_mutex_t mu; /* protects fired[] and st */
    fired_rec *fired;
    qc_proxy_stats st;
    pthread_t thread;
    int started;
    pconn *conns;
    qc_rng rng;
    int part_state; /* 0 before the window, 1 in it, 2 after */
    int stopped;    /* *stop seen */
    _Atomic(qc_proxy_anchor_fn) anchor; /* a replay's partition edges (proxy.h), or NULL */
    _Atomic(qc_proxy_answer_fn) answer; /* a replay's server answers (proxy.h), or NULL */
    void *answer_ctx;
    void *anchor_ctx;
    double part_from; /* ms (qc_clock_ms): when the window began; 0 before */
};

void qc_proxy_set_answer_hook(qc_proxy *p, qc_proxy_answer_fn fn, void *ctx)
{
    if (p == NULL)
        return;
    p->answer_ctx = ctx;
    atomic_store(&p->answer, fn);
}

void qc_proxy_set_anchor(qc_proxy *p, qc_proxy_anchor_fn fn, void *ctx)
{
    if (p == NULL)
        return;
    p->anchor_ctx = ctx;
    atomic_store(&p->anchor, fn);
}

/* Whether the partition's edge (0 start, 1 end) has come: by the replay's
 * anchor when there is one and it knows, else by the clock. */
static int partition_edge(qc_proxy *p, int edge, double now)
{
    qc_proxy_anchor_fn fn = atomic_load(&p->anchor);
    int r = fn != NULL ? fn(p->anchor_ctx, edge) : -1;
    if (r >= 0)
        return r;
    double from = p->start + (double)p->cfg.partition_at_ms;
    if (edge == 1 && p->part_from > 0)
        from = p->part_from;
    return now >= from + (edge == 1 ? (double)p->cfg.partition_ms : 0);
}

/* ---- [network] ---- */

static int parse_long(const char *v, long lo, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo)
        return -1;
    *out = x;
    return 0;
}

/* Parses "all" or a list of workers "w0,w3" / "0,3" into mask[0..max). */
static int parse_workers(const char *v, unsigned char *mask, long max, char *msg, size_t msz)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    if (!strcmp(buf, "all")) {
        if (mask)
            memset(mask, 1, (size_t)max);
        return 0;
    }
    char *save = NULL;
    for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        long w;
        if (parse_long(t[0] == 'w' ? t + 1 : t, 0, &w) != 0) {
            snprintf(msg, msz, "expected 'all' or workers such as 'w0,w3', got '%s'", t);
            return -1;
        }
        if (w >= max) {
            snprintf(msg, msz, "worker 'w%ld' does not exist (workers are w0..w%ld)", w, max - 1);
            return -1;
        }
        if (mask)
            mask[w] = 1;
    }
    return 0;
}

int qc_network_parse(qc_network *n, const char *name, const char *value, char *msg, size_t msz)
{
    long *lp = NULL;
    if (!strcmp(name, "proxy")) {
        if (strcmp(value, "on") && strcmp(value, "off")) {
            snprintf(msg, msz, "proxy must be on or off, got '%s'", value);
            return 0;
        }
        n->proxy = !strcmp(value, "on");
        return 1;
    }
    if (!strcmp(name, "lost_ack")) {
        if (strcmp(value, "proxy") && strcmp(value, "client")) {
            snprintf(msg, msz, "lost_ack must be proxy or client, got '%s'", value);
            return 0;
        }
        n->lost_ack_proxy = !strcmp(value, "proxy");
        return 1;
    }
    if (!strcmp(name, "partition_mode")) {
        if (strcmp(value, "silent") && strcmp(value, "refuse")) {
            snprintf(msg, msz, "partition_mode must be silent or refuse, got '%s'", value);
            return 0;
        }
        n->partition_refuse = !strcmp(value, "refuse");
        return 1;
    }
    if (!strcmp(name, "targets") || !strcmp(name, "partition")) {
        char *dst = !strcmp(name, "targets") ? n->targets : n->partition;
        if (strlen(value) >= sizeof n->targets ||
            parse_workers(value, NULL, QC_PROXY_MAX_WORKERS, msg, msz) != 0) {
            if (strlen(value) >= sizeof n->targets)
                snprintf(msg, msz, "%s: list too long", name);
            return 0;
        }
        snprintf(dst, sizeof n->targets, "%s", value);
        return 1;
    }
    if (!strcmp(name, "latency_ms"))
        lp = &n->latency_ms;
    else if (!strcmp(name, "jitter_ms"))
        lp = &n->jitter_ms;
    else if (!strcmp(name, "bandwidth"))
        lp = &n->bandwidth;
    else if (!strcmp(name, "partition_at_ms"))
        lp = &n->partition_at_ms;
    else if (!strcmp(name, "partition_ms"))
        lp = &n->partition_ms;
    if (lp == NULL) {
        snprintf(msg, msz,
                 "unknown key '%s' in [network] (expected proxy, latency_ms, jitter_ms, "
                 "bandwidth, targets, lost_ack, partition, "
                 "partition_at_ms, partition_ms, partition_mode)",
                 name);
        return 0;
    }
    if (parse_long(value, 0, lp) != 0 || *lp > 86400000L * 10) {
        snprintf(msg, msz, "%s must be a whole number >= 0%s, got '%s'", name,
                 !strcmp(name, "bandwidth") ? " (bytes/s)" : " (ms)", value);
        return 0;
    }
    return 1;
}

int qc_network_check(const qc_network *n, long workers, char *msg, size_t msz)
{
    if (!n->proxy)
        return 0;
    if (workers > QC_PROXY_MAX_WORKERS) {
        snprintf(msg, msz, "[network] proxy = on supports at most %d workers, got %ld",
                 QC_PROXY_MAX_WORKERS, workers);
        return -1;
    }
    if (n->targets[0] && parse_workers(n->targets, NULL, workers, msg, msz) != 0)
        return -1;
    if (n->partition[0] && parse_workers(n->partition, NULL, workers, msg, msz) != 0)
        return -1;
    if (n->partition[0] && n->partition_ms <= 0) {
        snprintf(msg, msz, "[network] partition needs partition_ms > 0 (the window's length)");
        return -1;
    }
    return 0;
}

/* ---- conninfo ---- */

static void append_kv(char *out, size_t n, const char *k, const char *v)
{
    size_t len = strlen(out);
    int w = snprintf(out + len, n - len, "%s%s='", len ? " " : "", k);
    if (w < 0 || (size_t)w >= n - len)
        return;
    len += (size_t)w;
    for (const char *s = v; *s && len + 3 < n; s++) {
        if (*s == '\'' || *s == '\\')
            out[len++] = '\\';
        out[len++] = *s;
    }
    if (len + 2 <= n) {
        out[len++] = '\'';
        out[len] = '\0';
    }
}

/* Resolves the server of dsn into p->up; fills base with the conninfo
 * minus host, hostaddr, port, sslmode, gssencmode. */
static int upstream(qc_proxy *p, const char *dsn, char *base, size_t bn, qc_err *err)
{
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(dsn ? dsn : "", &perr);
    const char *host = NULL, *addr = NULL, *port = NULL;
    int rc = 0;

    if (opts == NULL) {
        PQfreemem(perr);
        return qc_err_set(err, QC_EINVAL, "[network] proxy: invalid connection string");
    }
    base[0] = '\0';
    for (PQconninfoOption *o = opts; o->keyword; o++) {
        if (!o->val || !*o->val)
            continue;
        if (!strcmp(o->keyword, "host"))
            host = o->val;
        else if (!strcmp(o->keyword, "hostaddr"))
            addr = o->val;
        else if (!strcmp(o->keyword, "port"))
            port = o->val;
        else if (strcmp(o->keyword, "sslmode") && strcmp(o->keyword, "gssencmode") &&
                 strcmp(o->keyword, "tcp_user_timeout"))
            append_kv(base, bn, o->keyword, o->val);
    }
    if (!host && !addr)
        host = getenv("PGHOST");
    if (!port)
        port = getenv("PGPORT");
    if (!port)
        port = "5432";
    const char *h = addr ? addr : host ? host : "/var/run/postgresql";
    if (strchr(h, ',') || strchr(port, ',')) {
        rc = qc_err_set(err, QC_EINVAL,
                        "[network] proxy = on needs a single-host server, got several hosts");
        goto out;
    }
    memset(&p->up, 0, sizeof p->up);
    if (h[0] == '/' || h[0] == '@') {
        struct sockaddr_un *un = (struct sockaddr_un *)&p->up;
        un->sun_family = AF_UNIX;
        if (snprintf(un->sun_path, sizeof un->sun_path, "%s/.s.PGSQL.%s", h, port) >=
            (int)sizeof un->sun_path) {
            rc = qc_err_set(err, QC_EINVAL, "[network] proxy: socket path too long");
            goto out;
        }
        p->uplen = sizeof *un;
    } else {
        struct addrinfo hints = {0}, *ai = NULL;
        hints.ai_socktype = SOCK_STREAM;
        int g = getaddrinfo(h, port, &hints, &ai);
        if (g != 0 || !ai) {
            rc = qc_err_set(err, QC_ECONN, "[network] proxy: cannot resolve '%s' port %s: %s", h,
                            port, gai_strerror(g));
            goto out;
        }
        memcpy(&p->up, ai->ai_addr, ai->ai_addrlen);
        p->uplen = ai->ai_addrlen;
        freeaddrinfo(ai);
    }
out:
    PQconninfoFree(opts);
    return rc;
}

/* ---- sockets ---- */

static void nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* RST: SO_LINGER 0, then close. */
static void rst_close(int fd)
{
    struct linger lg = {1, 0};
    if (fd < 0)
        return;
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
}

static void free_chunks(chunk *c)
{
    while (c) {
        chunk *n = c->next;
        free(c);
        c = n;
    }
}

static void note(qc_proxy *p, int worker, const char *what, double from)
{
    if (!p->lb)
        return;
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string("note"));
    json_object_set_new(e, "note", json_string(what));
    json_object_set_new(e, "worker", json_integer(-2));
    json_object_set_new(e, "target", json_integer(worker));
    if (from > 0)
        json_object_set_new(e, "from_t", json_real(from - p->t0));
    qc_ledger_append(p->lb, e);
}

/* Ends c: RST to the client (it sees ECONNRESET), close to the server (it
 * sees the connection end and rolls back what is open). */
static void kill_conn(qc_proxy *p, pconn *c)
{
    if (c->dead)
        return;
    rst_close(c->cfd);
    close(c->sfd);
    c->cfd = c->sfd = -1;
    c->dead = 1;
    pthread_mutex_lock(&p->mu);
    p->st.resets++;
    pthread_mutex_unlock(&p->mu);
}

static void free_conn(pconn *c)
{
    if (c->cfd >= 0)
        close(c->cfd);
    if (c->sfd >= 0)
        close(c->sfd);
    free_chunks(c->up.head);
    free_chunks(c->down.head);
    free_chunks(c->held);
    free(c);
}

static int is_silent(const qc_proxy *p, const pconn *c)
{
    return c->half_open || (p->part_state == 1 && p->parted[c->worker] && !p->cfg.partition_refuse);
}

static void accept_one(qc_proxy *p, int w)
{
    int fd = accept(p->lfd[w], NULL, NULL);
    if (fd < 0)
        return;
    if (p->part_state == 1 && p->parted[w] && p->cfg.partition_refuse) {
        rst_close(fd); /* refused: the client sees its connection reset */
        return;
    }
    int s = socket(p->up.ss_family, SOCK_STREAM, 0);
    /* the connect blocks the proxy's thread: at most 2 s (Linux applies
     * SO_SNDTIMEO to connect); the server is normally on loopback */
    struct timeval tv = {2, 0};
    if (s >= 0)
        setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (s < 0 || connect(s, (struct sockaddr *)&p->up, p->uplen) != 0) {
        if (s >= 0)
            close(s);
        rst_close(fd);
        return;
    }
    pconn *c = calloc(1, sizeof *c);
    if (!c) {
        close(s);
        rst_close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (p->up.ss_family != AF_UNIX)
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    nonblock(fd);
    nonblock(s);
    c->worker = w;
    c->cfd = fd;
    c->sfd = s;
    c->toxic = p->toxic[w];
    double now = qc_clock_ms();
    c->up.refilled = c->down.refilled = now;
    c->next = p->conns;
    p->conns = c;
    pthread_mutex_lock(&p->mu);
    p->st.connections++;
    pthread_mutex_unlock(&p->mu);
}

static void set_fired(qc_proxy *p, int w, const char *tag)
{
    pthread_mutex_lock(&p->mu);
    p->fired[w].fired = 1;
    snprintf(p->fired[w].tag, sizeof p->fired[w].tag, "%s", tag);
    if (strcmp(tag, "reset") != 0)
        p->st.lost_acks++;
    pthread_mutex_unlock(&p->mu);
}

static void push(qc_proxy *p, pconn *c, way *wy, const char *data, size_t n, int to_held)
{
    chunk *k = malloc(sizeof *k + n);
    if (!k)
        return;
    memcpy(k->data, data, n);
    k->len = n;
    k->off = 0;
    k->next = NULL;
    double now = qc_clock_ms();
    double due = now;
    k->rd = now;
    if (c->toxic && (p->cfg.latency_ms > 0 || p->cfg.jitter_ms > 0)) {
        due += (double)p->cfg.latency_ms;
        if (p->cfg.jitter_ms > 0)
            due += (double)p->cfg.jitter_ms * qc_rng_unit(&p->rng);
    }
    if (due < wy->last_due)
        due = wy->last_due;
    wy->last_due = due;
    k->due = due;
    if (to_held) {
        if (c->held_tail)
            c->held_tail->next = k;
        else
            c->held = k;
        c->held_tail = k;
        c->held_len += n;
        return;
    }
    if (wy->tail)
        wy->tail->next = k;
    else
        wy->head = k;
    wy->tail = k;
    wy->queued += n;
}

static void release_held(pconn *c)
{
    if (!c->held)
        return;
    if (c->down.tail)
        c->down.tail->next = c->held;
    else
        c->down.head = c->held;
    c->down.tail = c->held_tail;
    c->down.queued += c->held_len;
    c->held = c->held_tail = NULL;
    c->held_len = 0;
}

/* Feeds backend bytes to the framing state machine.  Returns 1 when the
 * armed lost ack fires on them (the caller drops the connection); sets
 * *release when a ReadyForQuery lets what was held go; adds to *answers
 * the statements these bytes end (a ReadyForQuery after CommandComplete,
 * ErrorResponse or EmptyQueryResponse). */
static int parse_down(pconn *c, const unsigned char *b, size_t n, int armed, int *release,
                      int *answers)
{
    size_t i = 0;
    while (i < n) {
        if (c->hn < 5) {
            c->hdr[c->hn++] = b[i++];
            if (c->hn < 5)
                continue;
            c->type = (char)c->hdr[0];
            uint32_t len = ((uint32_t)c->hdr[1] << 24) | ((uint32_t)c->hdr[2] << 16) |
                           ((uint32_t)c->hdr[3] << 8) | (uint32_t)c->hdr[4];
            c->left = len >= 4 ? len - 4 : 0;
            c->tn = 0;
        } else {
            size_t take = n - i < c->left ? n - i : c->left;
            if (c->type == 'C' || c->type == 'Z')
                for (size_t j = 0; j < take && c->tn < (int)sizeof c->body - 1; j++)
                    c->body[c->tn++] = (char)b[i + j];
            i += take;
            c->left -= (uint32_t)take;
        }
        if (c->hn == 5 && c->left == 0) { /* one whole message */
            c->body[c->tn] = '\0';
            if (c->type == 'C')
                memcpy(c->tag, c->body, sizeof c->tag);
            if (c->type == 'Z' &&
                (c->last_type == 'C' || c->last_type == 'E' || c->last_type == 'I'))
                (*answers)++;
            if (c->type == 'Z' && armed && c->armed) {
                if (c->body[0] == 'I' && c->last_type == 'C')
                    return 1;
                *release = 1;
                if (c->last_type == 'E')
                    c->armed = 0; /* the request failed: no answer to lose */
            }
            c->last_type = c->type;
            c->hn = 0;
        }
    }
    return 0;
}

/* Reads what one side sent.  from_client selects the way. */
static void read_side(qc_proxy *p, pconn *c, int from_client)
{
    way *wy = from_client ? &c->up : &c->down;
    char buf[READ_MAX];
    for (int rounds = 0; rounds < 4 && !c->dead && wy->queued < QUEUE_MAX; rounds++) {
        ssize_t r = recv(from_client ? c->cfd : c->sfd, buf, sizeof buf, 0);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        if (r <= 0) {
            if (r < 0) { /* RST or error: pass it on as an abrupt end */
                kill_conn(p, c);
                return;
            }
            wy->eof = 1;
            return;
        }
        if (from_client) {
            /* A reset is armed for the worker's next request: a fresh
             * connection's first bytes are its startup packet, not that
             * request, so they pass and leave the arm for the request
             * (then "fired" means the request itself was dropped). */
            int k = atomic_load(&p->arm[c->worker]);
            if (k != QC_PROXY_ARM_RESET || c->up_sent)
                k = atomic_exchange(&p->arm[c->worker], QC_PROXY_ARM_NONE);
            else
                k = QC_PROXY_ARM_NONE;
            c->up_sent = 1;
            if (k == QC_PROXY_ARM_RESET) {
                set_fired(p, c->worker, "reset");
                kill_conn(p, c);
                return;
            }
            if (k == QC_PROXY_ARM_HALF_OPEN) {
                pthread_mutex_lock(&p->mu);
                p->fired[c->worker].fired = 1;
                snprintf(p->fired[c->worker].tag, sizeof p->fired[c->worker].tag, "half_open");
                pthread_mutex_unlock(&p->mu);
                c->half_open = 1;
                c->pending = qc_clock_ms();
                /* the request is read but never forwarded: the network ate it */
                return;
            }
            if (k == QC_PROXY_ARM_LOST_ACK) {
                c->armed = 1;
                c->armed_gen = atomic_load(&p->gen[c->worker]);
            }
            push(p, c, wy, buf, (size_t)r, 0);
        } else {
            int release = 0;
            int armed = c->armed && c->armed_gen == atomic_load(&p->gen[c->worker]);
            if (c->armed && !armed) {
                c->armed = 0; /* cancelled by take_fired: let anything held go */
                release_held(c);
            }
            int answers = 0;
            int fire = parse_down(c, (const unsigned char *)buf, (size_t)r, armed, &release,
                                  &answers);
            qc_proxy_answer_fn afn = atomic_load(&p->answer);
            if (answers > 0 && afn != NULL)
                afn(p->answer_ctx, c->worker);
            if (fire) {
                set_fired(p, c->worker, c->tag[0] ? c->tag : "?");
                kill_conn(p, c);
                return;
            }
            push(p, c, wy, buf, (size_t)r, armed);
            if (release)
                release_held(c);
        }
        if ((size_t)r < sizeof buf)
            return;
    }
}

/* Writes what is due on one way.  Returns ms until the next chunk is due
 * (or the bucket refills), -1 when nothing waits. */
static double write_side(qc_proxy *p, pconn *c, int to_server, double now)
{
    way *wy = to_server ? &c->up : &c->down;
    int fd = to_server ? c->sfd : c->cfd;
    while (wy->head && !c->dead) {
        chunk *k = wy->head;
        if (k->due > now)
            return k->due - now;
        size_t want = k->len - k->off;
        if (c->toxic && p->cfg.bandwidth > 0) {
            double rate = (double)p->cfg.bandwidth / 1000.0; /* bytes per ms */
            wy->tokens += (now - wy->refilled) * rate;
            wy->refilled = now;
            double cap = (double)p->cfg.bandwidth / 20.0 + 1460.0;
            if (wy->tokens > cap)
                wy->tokens = cap;
            if (wy->tokens < 1.0)
                return (1.0 - wy->tokens) / rate + 0.5;
            if ((double)want > wy->tokens)
                want = (size_t)wy->tokens;
        }
        ssize_t w = send(fd, k->data + k->off, want, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return -1; /* POLLOUT will tell */
            kill_conn(p, c);
            return -1;
        }
        if (c->toxic && p->cfg.bandwidth > 0)
            wy->tokens -= (double)w;
        k->off += (size_t)w;
        wy->queued -= (size_t)w;
        pthread_mutex_lock(&p->mu);
        if (to_server)
            p->st.bytes_up += w;
        else
            p->st.bytes_down += w;
        pthread_mutex_unlock(&p->mu);
        if (k->off < k->len)
            continue;
        wy->head = k->next;
        if (!wy->head)
            wy->tail = NULL;
        free(k);
    }
    if (!wy->head && wy->eof && !wy->shut && !c->dead) {
        shutdown(fd, SHUT_WR);
        wy->shut = 1;
    }
    return -1;
}

static void record_toxics(qc_proxy *p)
{
    if (!p->lb)
        return;
    for (int w = 0; w < p->n; w++) {
        if (!p->toxic[w])
            continue;
        if (p->cfg.latency_ms > 0 || p->cfg.jitter_ms > 0) {
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string("fault"));
            json_object_set_new(e, "fault", json_string("latency"));
            json_object_set_new(e, "worker", json_integer(-2));
            json_object_set_new(e, "target", json_integer(w));
            json_object_set_new(e, "latency_ms", json_integer(p->cfg.latency_ms));
            json_object_set_new(e, "jitter_ms", json_integer(p->cfg.jitter_ms));
            qc_ledger_append(p->lb, e);
        }
        if (p->cfg.bandwidth > 0) {
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string("fault"));
            json_object_set_new(e, "fault", json_string("bandwidth"));
            json_object_set_new(e, "worker", json_integer(-2));
            json_object_set_new(e, "target", json_integer(w));
            json_object_set_new(e, "bytes_per_s", json_integer(p->cfg.bandwidth));
            qc_ledger_append(p->lb, e);
        }
    }
}

/* Moves the partition window along; records its start. */
static void partition_step(qc_proxy *p, double now)
{
    if (!p->cfg.partition[0] || p->part_state == 2)
        return;
    if (p->part_state == 0 && !p->stopped && partition_edge(p, 0, now)) {
        double until = now + (double)p->cfg.partition_ms;
        p->part_state = 1;
        p->part_from = now;
        for (int w = 0; w < p->n; w++) {
            if (!p->parted[w])
                continue;
            if (p->lb) {
                json_t *e = json_object();
                json_object_set_new(e, "type", json_string("fault"));
                json_object_set_new(e, "fault", json_string("partition"));
                json_object_set_new(e, "worker", json_integer(-2));
                json_object_set_new(e, "target", json_integer(w));
                json_object_set_new(e, "mode",
                                    json_string(p->cfg.partition_refuse ? "refuse" : "silent"));
                json_object_set_new(e, "until_t", json_real(until - p->t0));
                qc_ledger_append(p->lb, e);
            }
        }
        if (p->cfg.partition_refuse)
            for (pconn *c = p->conns; c; c = c->next)
                if (p->parted[c->worker])
                    kill_conn(p, c);
    }
    if (p->part_state == 1 && (p->stopped || partition_edge(p, 1, now))) {
        p->part_state = 2;
        for (int w = 0; w < p->n; w++)
            if (p->parted[w])
                note(p, w, "partition healed", now);
    }
}

static void *proxy_main(void *arg)
{
    qc_proxy *p = arg;
    struct pollfd *pf = NULL;
    pconn **who = NULL;
    size_t cap = 0;

    record_toxics(p);
    while (!atomic_load(&p->quit)) {
        double now = qc_clock_ms();
        if (p->stop && !p->stopped && atomic_load(p->stop)) {
            p->stopped = 1;
            for (pconn *c = p->conns; c; c = c->next)
                if (c->half_open) {
                    note(p, c->worker, "half_open ended: the run stopped, connection reset", now);
                    kill_conn(p, c);
                }
        }
        partition_step(p, now);
        /* reap dead connections */
        for (pconn **pp = &p->conns; *pp;) {
            pconn *c = *pp;
            if (c->dead || (c->up.shut && c->down.shut)) {
                *pp = c->next;
                free_conn(c);
            } else {
                pp = &c->next;
            }
        }
        size_t nc = 0;
        for (pconn *c = p->conns; c; c = c->next)
            nc++;
        size_t need = (size_t)p->n + 2 * nc;
        if (need > cap) {
            cap = need * 2;
            struct pollfd *npf = realloc(pf, cap * sizeof *pf);
            pconn **nw = realloc(who, cap * sizeof *who);
            if (npf)
                pf = npf;
            if (nw)
                who = nw;
            if (!npf || !nw) {
                qc_clock_sleep_ms(10);
                cap = 0;
                continue;
            }
        }
        size_t k = 0;
        for (int w = 0; w < p->n; w++) {
            pf[k].fd = p->lfd[w];
            pf[k].events = POLLIN;
            who[k++] = NULL;
        }
        double wait = 100;
        for (pconn *c = p->conns; c; c = c->next) {
            int silent = is_silent(p, c);
            if (silent && c->pending == 0 && c->up.head)
                c->pending = c->up.head->rd; /* read, not delivered: unacknowledged */
            if (silent) {
                /* the network's part of the client's TCP timer */
                if (c->pending > 0 && p->cfg.tcp_user_timeout_ms > 0) {
                    double left = c->pending + (double)p->cfg.tcp_user_timeout_ms - now;
                    if (left <= 0) {
                        char what[160];
                        snprintf(what, sizeof what,
                                 "%s: connection reset after %ld ms without an answer "
                                 "(tcp_user_timeout)",
                                 c->half_open ? "half_open" : "partition",
                                 p->cfg.tcp_user_timeout_ms);
                        note(p, c->worker, what, c->pending);
                        kill_conn(p, c);
                        continue;
                    }
                    if (left < wait)
                        wait = left;
                }
            } else {
                c->pending = 0;
                double d1 = write_side(p, c, 1, now), d2 = write_side(p, c, 0, now);
                if (c->dead)
                    continue;
                if (d1 >= 0 && d1 < wait)
                    wait = d1;
                if (d2 >= 0 && d2 < wait)
                    wait = d2;
            }
            short ce = 0, se = 0;
            if (silent) {
                if (c->pending == 0)
                    ce = POLLIN; /* only to see data waiting */
            } else {
                if (!c->up.eof && c->up.queued < QUEUE_MAX)
                    ce |= POLLIN;
                if (!c->down.eof && c->down.queued < QUEUE_MAX)
                    se |= POLLIN;
                if (c->up.head && c->up.head->due <= now)
                    se |= POLLOUT;
                if (c->down.head && c->down.head->due <= now)
                    ce |= POLLOUT;
            }
            /* a socket we want nothing from is left out: poll would
             * report its hang-up over and over (a silent connection whose
             * peer closed) and spin */
            pf[k].fd = ce ? c->cfd : -1;
            pf[k].events = ce;
            who[k++] = c;
            pf[k].fd = se ? c->sfd : -1;
            pf[k].events = se;
            who[k++] = c;
        }
        if (p->cfg.partition[0] && p->part_state < 2) {
            double edge = (p->part_state == 1 ? p->part_from + (double)p->cfg.partition_ms
                                              : p->start + (double)p->cfg.partition_at_ms) -
                          now;
            if (atomic_load(&p->anchor) != NULL && edge > 5)
                edge = 5; /* a replay's anchor is asked again soon */
            if (edge < wait)
                wait = edge < 0 ? 0 : edge;
        }
        int ms = (int)(wait + 0.999);
        if (ms > 100)
            ms = 100;
        if (ms < 0)
            ms = 0;
        int r = poll(pf, k, ms);
        if (r <= 0)
            continue;
        for (int w = 0; w < p->n; w++)
            if (pf[w].revents & POLLIN)
                accept_one(p, w);
        now = qc_clock_ms();
        for (size_t i = (size_t)p->n; i < k; i += 2) {
            pconn *c = who[i];
            if (c->dead)
                continue;
            short cr = pf[i].revents, sr = pf[i + 1].revents;
            if (is_silent(p, c)) {
                if ((cr & (POLLIN | POLLHUP | POLLERR)) && c->pending == 0)
                    c->pending = now;
                continue;
            }
            if (cr & (POLLIN | POLLHUP | POLLERR))
                read_side(p, c, 1);
            if (!c->dead && (sr & (POLLIN | POLLHUP | POLLERR)))
                read_side(p, c, 0);
            if (c->up.eof && c->down.eof && !c->up.head && !c->down.head)
                c->up.shut = c->down.shut = 1; /* both ends closed: done */
        }
    }
    free(pf);
    free(who);
    return NULL;
}

/* ---- public ---- */

int qc_proxy_create(const qc_network *cfg, const char *upstream_dsn, int nworkers, uint64_t seed,
                    qc_lbuf *lb, double t0, atomic_int *stop, qc_proxy **out, qc_err *err)
{
    char base[4096], msg[256];
    int rc = 0;
    *out = NULL;
    if (nworkers < 1 || nworkers > QC_PROXY_MAX_WORKERS)
        return qc_err_set(err, QC_EINVAL, "[network] proxy: %d workers (1..%d)", nworkers,
                          QC_PROXY_MAX_WORKERS);
    if (qc_network_check(cfg, nworkers, msg, sizeof msg) != 0)
        return qc_err_set(err, QC_EINVAL, "%s", msg);
    qc_proxy *p = calloc(1, sizeof *p);
    if (!p)
        return qc_err_set(err, QC_ENOMEM, "out of memory");
    p->cfg = *cfg;
    p->n = nworkers;
    p->lb = lb;
    p->t0 = t0;
    p->stop = stop;
    pthread_mutex_init(&p->mu, NULL);
    qc_rng_init(&p->rng, seed, 0x70726f7879ULL);
    p->lfd = malloc((size_t)nworkers * sizeof *p->lfd);
    p->dsn = calloc((size_t)nworkers, sizeof *p->dsn);
    p->toxic = calloc((size_t)nworkers, 1);
    p->parted = calloc((size_t)nworkers, 1);
    p->arm = calloc((size_t)nworkers, sizeof *p->arm);
    p->fired = calloc((size_t)nworkers, sizeof *p->fired);
    p->gen = calloc((size_t)nworkers, sizeof *p->gen);
    if (!p->gen || !p->lfd || !p->dsn || !p->toxic || !p->parted || !p->arm || !p->fired) {
        rc = qc_err_set(err, QC_ENOMEM, "out of memory");
        goto fail;
    }
    for (int w = 0; w < nworkers; w++)
        p->lfd[w] = -1;
    parse_workers(cfg->targets[0] ? cfg->targets : "all", p->toxic, nworkers, msg, sizeof msg);
    if (cfg->partition[0])
        parse_workers(cfg->partition, p->parted, nworkers, msg, sizeof msg);
    if ((rc = upstream(p, upstream_dsn, base, sizeof base, err)) != 0)
        goto fail;
    for (int w = 0; w < nworkers; w++) {
        struct sockaddr_in a = {0};
        socklen_t al = sizeof a;
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0 ||
            getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
            rc = qc_err_set(err, QC_EIO, "[network] proxy: cannot listen on 127.0.0.1: %s",
                            strerror(errno));
            if (fd >= 0)
                close(fd);
            goto fail;
        }
        nonblock(fd);
        p->lfd[w] = fd;
        char d[sizeof base + 256], port[16];
        snprintf(d, sizeof base, "%s", base);
        snprintf(port, sizeof port, "%u", (unsigned)ntohs(a.sin_port));
        append_kv(d, sizeof d, "host", "127.0.0.1");
        append_kv(d, sizeof d, "port", port);
        append_kv(d, sizeof d, "sslmode", "disable");
        append_kv(d, sizeof d, "gssencmode", "disable");
        if (cfg->tcp_user_timeout_ms > 0) {
            char t[24];
            snprintf(t, sizeof t, "%ld", cfg->tcp_user_timeout_ms);
            append_kv(d, sizeof d, "tcp_user_timeout", t);
        }
        if (!(p->dsn[w] = strdup(d))) {
            rc = qc_err_set(err, QC_ENOMEM, "out of memory");
            goto fail;
        }
    }
    p->start = qc_clock_ms();
    if (pthread_create(&p->thread, NULL, proxy_main, p) != 0) {
        rc = qc_err_set(err, QC_EIO, "[network] proxy: cannot start its thread");
        goto fail;
    }
    p->started = 1;
    *out = p;
    return 0;
fail:
    qc_proxy_destroy(p);
    return rc;
}

void qc_proxy_destroy(qc_proxy *p)
{
    if (!p)
        return;
    if (p->started) {
        atomic_store(&p->quit, 1);
        pthread_join(p->thread, NULL);
    }
    while (p->conns) {
        pconn *c = p->conns;
        p->conns = c->next;
        if (!c->dead)
            kill_conn(p, c);
        free_conn(c);
    }
    for (int w = 0; p->lfd && w < p->n; w++)
        if (p->lfd[w] >= 0)
            close(p->lfd[w]);
    for (int w = 0; p->dsn && w < p->n; w++)
        free(p->dsn[w]);
    free(p->lfd);
    free(p->dsn);
    free(p->toxic);
    free(p->parted);
    free(p->arm);
    free(p->fired);
    free(p->gen);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

const char *qc_proxy_dsn(const qc_proxy *p, int worker)
{
    if (!p || worker < 0 || worker >= p->n)
        return NULL;
    return p->dsn[worker];
}

void qc_proxy_arm(qc_proxy *p, int worker, qc_proxy_arm_kind k)
{
    if (!p || worker < 0 || worker >= p->n)
        return;
    pthread_mutex_lock(&p->mu);
    p->fired[worker].fired = 0;
    p->fired[worker].tag[0] = '\0';
    pthread_mutex_unlock(&p->mu);
    atomic_fetch_add(&p->gen[worker], 1);
    atomic_store(&p->arm[worker], (int)k);
}

int qc_proxy_take_fired(qc_proxy *p, int worker, char *tag, size_t n)
{
    if (!p || worker < 0 || worker >= p->n)
        return 0;
    atomic_store(&p->arm[worker], QC_PROXY_ARM_NONE);
    atomic_fetch_add(&p->gen[worker], 1);
    pthread_mutex_lock(&p->mu);
    int f = p->fired[worker].fired;
    if (tag && n)
        snprintf(tag, n, "%s", p->fired[worker].tag);
    p->fired[worker].fired = 0;
    pthread_mutex_unlock(&p->mu);
    return f;
}

void qc_proxy_get_stats(qc_proxy *p, qc_proxy_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    *st = p->st;
    pthread_mutex_unlock(&p->mu);
}
