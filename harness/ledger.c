/*
 * ledger.c - per-thread buffers, one writer thread, JSON Lines on disk.
 *
 * Invariants: a line is appended to a buffer whole (formatted first), so the
 * file only ever holds whole lines except when the process dies mid-write;
 * the reader skips a torn last line.  bufs_mu protects the list of buffers;
 * each buffer's mu protects its bytes.  No lock is held across file I/O
 * except the writer's own (nobody else writes the file).
 *
 * An event line is formatted by this file's own serializer (serialize
 * below), not json_dumps: the workers' events are flat objects, and
 * json_dumps with 17 significant digits was a fifth of a worker's time
 * (issue 16).  The line is built in the buffer's scratch space (owned by the
 * appending thread, reused, so the hot path does not allocate) and copied
 * into the shared bytes under mu.  The output is JSON as jansson writes it
 * (same member order, same string escapes), except reals: a real that is a
 * whole number of thousandths (the run's times "t", the server's epoch ms,
 * planned pauses) is written with exactly 3 decimals, any other real in the
 * shortest form that reads back as the same double.  Either way the double
 * read back is the one appended (tests/check_ledger.c).
 */
#include "ledger.h"
#include "clock.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct qc_lbuf {
    qc_ledger *l;
    pthread_mutex_t mu; /* protects data, len, cap */
    char *data;
    size_t len, cap;
    char *line;         /* the owning thread's scratch line (no lock) */
    size_t line_cap;
    qc_lbuf *next;
};

struct qc_ledger {
    FILE *f;
    char *path;
    double t0;
    atomic_llong seq;
    atomic_int stop;
    atomic_int io_error;
    pthread_t writer;
    pthread_mutex_t bufs_mu; /* protects bufs list */
    qc_lbuf *bufs;
    char *spare;             /* writer-only scratch buffer */
    size_t spare_cap;
};

static int write_all(qc_ledger *l, const char *p, size_t n)
{
    if (n && fwrite(p, 1, n, l->f) != n) {
        atomic_store(&l->io_error, errno ? errno : EIO);
        return -1;
    }
    return 0;
}

/* Swaps each buffer's bytes out and writes them. */
static void drain(qc_ledger *l)
{
    pthread_mutex_lock(&l->bufs_mu);
    qc_lbuf *head = l->bufs;
    pthread_mutex_unlock(&l->bufs_mu);
    /* Buffers are only ever prepended and never freed before close, so the
     * list from head on is stable without holding bufs_mu. */
    for (qc_lbuf *b = head; b; b = b->next) {
        pthread_mutex_lock(&b->mu);
        char *data = b->data;
        size_t len = b->len;
        size_t cap = b->cap;
        b->data = l->spare;
        b->cap = l->spare_cap;
        b->len = 0;
        pthread_mutex_unlock(&b->mu);
        write_all(l, data, len);
        l->spare = data;
        l->spare_cap = cap;
    }
    if (fflush(l->f) != 0)
        atomic_store(&l->io_error, errno ? errno : EIO);
}

static void *writer_main(void *arg)
{
    qc_ledger *l = arg;
    while (!atomic_load(&l->stop)) {
        qc_clock_sleep_ms(20);
        drain(l);
    }
    return NULL;
}

int qc_ledger_open(const char *path, json_t *header, double t0, qc_ledger **out, qc_err *err)
{
    qc_ledger *l = calloc(1, sizeof *l);
    if (!l)
        return qc_err_set(err, QC_ENOMEM, "out of memory");
    l->f = fopen(path, "w");
    if (!l->f) {
        int e = errno;
        free(l);
        return qc_err_set(err, QC_EIO, "cannot create ledger '%s': %s", path, strerror(e));
    }
    l->path = strdup(path);
    l->t0 = t0;
    pthread_mutex_init(&l->bufs_mu, NULL);
    json_t *h = json_deep_copy(header);
    json_object_set_new(h, "type", json_string("header"));
    char *line = json_dumps(h, JSON_COMPACT);
    json_decref(h);
    if (!line || fprintf(l->f, "%s\n", line) < 0 || fflush(l->f) != 0) {
        free(line);
        fclose(l->f);
        free(l->path);
        free(l);
        return qc_err_set(err, QC_EIO, "cannot write ledger '%s'", path);
    }
    free(line);
    if (pthread_create(&l->writer, NULL, writer_main, l) != 0) {
        fclose(l->f);
        free(l->path);
        free(l);
        return qc_err_set(err, QC_EIO, "cannot start the ledger writer thread");
    }
    *out = l;
    return 0;
}

qc_lbuf *qc_ledger_buf(qc_ledger *l)
{
    qc_lbuf *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->l = l;
    pthread_mutex_init(&b->mu, NULL);
    pthread_mutex_lock(&l->bufs_mu);
    b->next = l->bufs;
    l->bufs = b;
    pthread_mutex_unlock(&l->bufs_mu);
    return b;
}

/* ---- the event serializer -------------------------------------------- */

/* A line being built: p[0..len) of cap bytes; oom set once a grow failed
 * (everything after is dropped and the append reports ENOMEM). */
typedef struct line_buf {
    char *p;
    size_t len, cap;
    int oom;
} line_buf;

static int lb_reserve(line_buf *lb, size_t n)
{
    if (lb->oom)
        return -1;
    if (lb->len + n <= lb->cap)
        return 0;
    size_t cap = lb->cap ? lb->cap : 512;
    while (cap < lb->len + n)
        cap *= 2;
    char *p = realloc(lb->p, cap);
    if (p == NULL) {
        lb->oom = 1;
        return -1;
    }
    lb->p = p;
    lb->cap = cap;
    return 0;
}

static void lb_put(line_buf *lb, const char *s, size_t n)
{
    if (lb_reserve(lb, n) == 0) {
        memcpy(lb->p + lb->len, s, n);
        lb->len += n;
    }
}

static void lb_putc(line_buf *lb, char c)
{
    if (lb_reserve(lb, 1) == 0)
        lb->p[lb->len++] = c;
}

/* Decimal text of v into buf (at least 21 bytes); returns its length. */
static size_t fmt_int(char *buf, int64_t v)
{
    char tmp[24];
    size_t n = 0, k = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        buf[k++] = '-';
    while (n > 0)
        buf[k++] = tmp[--n];
    return k;
}

/* A real as JSON text into buf (at least 32 bytes); returns its length.
 * A whole number of thousandths below 2^53 / 1000 in magnitude (every
 * time the ledger holds) is written with 3 decimals: r / 1000.0, r exact,
 * is the double nearest to that decimal, so it reads back as v.  Anything
 * else: the shortest %.15g .. %.17g that reads back as v (always found at
 * 17).  Not finite: null (jansson never holds one, but the line must stay
 * JSON). */
static size_t fmt_real(char *buf, double v)
{
    if (!isfinite(v)) {
        memcpy(buf, "null", 4);
        return 4;
    }
    if (fabs(v) < 9.0e12) {
        double m = v * 1000.0;
        int64_t r = (int64_t)(m < 0 ? m - 0.5 : m + 0.5);
        if ((double)r / 1000.0 == v) {
            uint64_t u = r < 0 ? (uint64_t)0 - (uint64_t)r : (uint64_t)r;
            size_t k = 0;
            if (r < 0)
                buf[k++] = '-';
            k += fmt_int(buf + k, (int64_t)(u / 1000));
            unsigned f = (unsigned)(u % 1000);
            buf[k++] = '.';
            buf[k++] = (char)('0' + f / 100);
            buf[k++] = (char)('0' + f / 10 % 10);
            buf[k++] = (char)('0' + f % 10);
            return k;
        }
    }
    int n = 0;
    for (int prec = 15; prec <= 17; prec++) {
        n = snprintf(buf, 32, "%.*g", prec, v);
        if (prec == 17 || strtod(buf, NULL) == v)
            break;
    }
    /* Keep it a real for the reader: "1e+20" and "0.5" are, "12" is not. */
    if (strpbrk(buf, ".eE") == NULL) {
        buf[n++] = '.';
        buf[n++] = '0';
        buf[n] = '\0';
    }
    return (size_t)n;
}

/* A JSON string literal of s[0..n) (UTF-8 as jansson holds it), escaped as
 * jansson escapes it: quote, backslash, and the control characters below
 * U+0020 (\b \f \n \r \t, else \u00XX in upper case; an embedded NUL is
 * \u0000, which the reader refuses, as it refused jansson's: no writer makes
 * one, every string comes from a C string). */
static void put_string(line_buf *lb, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t run = 0;

    lb_putc(lb, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        lb_put(lb, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"': lb_put(lb, "\\\"", 2); break;
        case '\\': lb_put(lb, "\\\\", 2); break;
        case '\b': lb_put(lb, "\\b", 2); break;
        case '\f': lb_put(lb, "\\f", 2); break;
        case '\n': lb_put(lb, "\\n", 2); break;
        case '\r': lb_put(lb, "\\r", 2); break;
        case '\t': lb_put(lb, "\\t", 2); break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            lb_put(lb, u, 6);
        }
        }
    }
    lb_put(lb, s + run, n - run);
    lb_putc(lb, '"');
}

static void put_value(line_buf *lb, json_t *v)
{
    char num[40];

    switch (json_typeof(v)) {
    case JSON_STRING:
        put_string(lb, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        lb_put(lb, num, fmt_int(num, (int64_t)json_integer_value(v)));
        break;
    case JSON_REAL:
        lb_put(lb, num, fmt_real(num, json_real_value(v)));
        break;
    case JSON_TRUE:
        lb_put(lb, "true", 4);
        break;
    case JSON_FALSE:
        lb_put(lb, "false", 5);
        break;
    case JSON_NULL:
        lb_put(lb, "null", 4);
        break;
    default: {
        /* A nested object or array (notes, not the hot path): jansson. */
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        if (text == NULL) {
            lb->oom = 1;
            return;
        }
        lb_put(lb, text, strlen(text));
        free(text);
    }
    }
}

/* The line of ev (not consumed) with "seq" and "t" (ms, 3 decimals) last,
 * as json_object_set_new put them, and a final '\n'. */
static void serialize(line_buf *lb, json_t *ev, int64_t seq, int64_t t_us)
{
    const char *key;
    json_t *v;
    char num[40];
    int first = 1;

    lb_putc(lb, '{');
    json_object_foreach(ev, key, v)
    {
        if ((key[0] == 's' && strcmp(key, "seq") == 0) || (key[0] == 't' && key[1] == '\0'))
            continue;
        if (!first)
            lb_putc(lb, ',');
        first = 0;
        put_string(lb, key, strlen(key));
        lb_putc(lb, ':');
        put_value(lb, v);
    }
    lb_put(lb, first ? "\"seq\":" : ",\"seq\":", first ? 6 : 7);
    lb_put(lb, num, fmt_int(num, seq));
    lb_put(lb, ",\"t\":", 5);
    lb_put(lb, num, fmt_real(num, (double)t_us / 1000.0));
    lb_put(lb, "}\n", 2);
}

int64_t qc_ledger_append(qc_lbuf *b, json_t *ev)
{
    qc_ledger *l = b->l;
    /* seq and t are taken together, before formatting, so that seq order
     * matches the order in which things happened.  t is kept to the
     * microsecond, as before. */
    int64_t seq = atomic_fetch_add(&l->seq, 1) + 1;
    double t = qc_clock_ms() - l->t0;
    line_buf lb = {b->line, 0, b->line_cap, 0};
    serialize(&lb, ev, seq, (int64_t)(t * 1000.0));
    json_decref(ev);
    b->line = lb.p;
    b->line_cap = lb.cap;
    if (lb.oom) {
        atomic_store(&l->io_error, ENOMEM);
        return seq;
    }
    size_t n = lb.len;
    pthread_mutex_lock(&b->mu);
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) {
            pthread_mutex_unlock(&b->mu);
            atomic_store(&l->io_error, ENOMEM);
            return seq;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, lb.p, n);
    b->len += n;
    pthread_mutex_unlock(&b->mu);
    return seq;
}

int64_t qc_ledger_count(qc_ledger *l)
{
    return atomic_load(&l->seq);
}

int qc_ledger_close(qc_ledger *l, qc_err *err)
{
    if (!l)
        return 0;
    atomic_store(&l->stop, 1);
    pthread_join(l->writer, NULL);
    drain(l);
    int rc = 0;
    if (fsync(fileno(l->f)) != 0 && errno != EINVAL)
        atomic_store(&l->io_error, errno);
    if (fclose(l->f) != 0)
        atomic_store(&l->io_error, errno ? errno : EIO);
    int e = atomic_load(&l->io_error);
    if (e)
        rc = qc_err_set(err, QC_EIO, "writing ledger '%s' failed: %s", l->path, strerror(e));
    qc_lbuf *b = l->bufs;
    while (b) {
        qc_lbuf *next = b->next;
        pthread_mutex_destroy(&b->mu);
        free(b->data);
        free(b->line);
        free(b);
        b = next;
    }
    free(l->spare);
    pthread_mutex_destroy(&l->bufs_mu);
    free(l->path);
    free(l);
    return rc;
}
