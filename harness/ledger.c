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

static inline int lb_reserve(line_buf *lb, size_t n)
{
    if (lb->len + n <= lb->cap)
        return 0;
    if (lb->oom)
        return -1;
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

static inline void lb_put(line_buf *lb, const char *s, size_t n)
{
    if (lb_reserve(lb, n) == 0) {
        memcpy(lb->p + lb->len, s, n);
        lb->len += n;
    }
}

/* Decimal text of v into buf (at least 21 bytes); returns its length.
 * Two digits a division (the ledger writes many small integers). */
static size_t fmt_int(char *buf, int64_t v)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    char tmp[24];
    size_t n = sizeof tmp, k = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

    while (u >= 100) {
        unsigned d = (unsigned)(u % 100) * 2;
        u /= 100;
        tmp[--n] = pairs[d + 1];
        tmp[--n] = pairs[d];
    }
    if (u >= 10) {
        unsigned d = (unsigned)u * 2;
        tmp[--n] = pairs[d + 1];
        tmp[--n] = pairs[d];
    } else {
        tmp[--n] = (char)('0' + u);
    }
    if (v < 0)
        buf[k++] = '-';
    memcpy(buf + k, tmp + n, sizeof tmp - n);
    return k + sizeof tmp - n;
}

size_t qc_fmt_i64(char *buf, int64_t v)
{
    size_t n = fmt_int(buf, v);
    buf[n] = '\0';
    return n;
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
 * one, every string comes from a C string).  Room for the worst case is
 * made once, then bytes go straight in. */
static void put_string(line_buf *lb, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";

    if (lb_reserve(lb, 6 * n + 2) != 0)
        return;
    char *o = lb->p + lb->len;
    *o++ = '"';
    size_t i = 0;
    /* eight bytes at a time while none of them is a quote, a backslash or
     * a control character (SWAR: a byte's high bit after the subtractions
     * says it is below 0x20 or equal to one of the two) */
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
        uint64_t q = x ^ (ones * '"'), bs = x ^ (ones * '\\');
        uint64_t hit =
            (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & high;
        if (hit != 0)
            break;
        memcpy(o, s + i, 8);
        o += 8;
    }
    for (; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            *o++ = (char)c;
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default:
            *o++ = 'u';
            *o++ = '0';
            *o++ = '0';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o++ = '"';
    lb->len = (size_t)(o - lb->p);
}

/* The kinds of a member's value (qc_ev_member.kind). */
enum { QC_EVK_STR = 1, QC_EVK_INT, QC_EVK_REAL, QC_EVK_TRUE, QC_EVK_FALSE, QC_EVK_NULL, QC_EVK_JSON };

/* One member, "key":value, with a comma before it unless first.  s / n: a
 * string's text; i: an integer; d: a real; j: a nested value (notes, not
 * the hot path: jansson writes it). */
static void put_member(line_buf *lb, int first, const char *key, int kind, const char *s,
                       size_t n, int64_t i, double d, json_t *j)
{
    char num[40];

    if (!first && lb_reserve(lb, 1) == 0)
        lb->p[lb->len++] = ',';
    put_string(lb, key, strlen(key));
    if (lb_reserve(lb, 1) == 0)
        lb->p[lb->len++] = ':';
    switch (kind) {
    case QC_EVK_STR:
        put_string(lb, s, n);
        break;
    case QC_EVK_INT:
        lb_put(lb, num, fmt_int(num, i));
        break;
    case QC_EVK_REAL:
        lb_put(lb, num, fmt_real(num, d));
        break;
    case QC_EVK_TRUE:
        lb_put(lb, "true", 4);
        break;
    case QC_EVK_FALSE:
        lb_put(lb, "false", 5);
        break;
    case QC_EVK_NULL:
        lb_put(lb, "null", 4);
        break;
    default: {
        char *text = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        if (text == NULL) {
            lb->oom = 1;
            return;
        }
        lb_put(lb, text, strlen(text));
        free(text);
    }
    }
}

/* Whether key is one the append writes itself ("seq", "t"). */
static inline int is_own_key(const char *key)
{
    return (key[0] == 's' && strcmp(key, "seq") == 0) || (key[0] == 't' && key[1] == '\0');
}

/* '{' to open a line, and "seq", "t" and "}\n" to close it. */
static void put_close(line_buf *lb, int first, int64_t seq, int64_t t_us)
{
    char num[40];
    lb_put(lb, first ? "\"seq\":" : ",\"seq\":", first ? 6 : 7);
    lb_put(lb, num, fmt_int(num, seq));
    lb_put(lb, ",\"t\":", 5);
    lb_put(lb, num, fmt_real(num, (double)t_us / 1000.0));
    lb_put(lb, "}\n", 2);
}

/* The line of ev (not consumed) with "seq" and "t" (ms, 3 decimals) last,
 * as json_object_set_new put them, and a final '\n'. */
static void serialize(line_buf *lb, json_t *ev, int64_t seq, int64_t t_us)
{
    const char *key;
    json_t *v;
    int first = 1;

    lb_put(lb, "{", 1);
    json_object_foreach(ev, key, v)
    {
        if (is_own_key(key))
            continue;
        switch (json_typeof(v)) {
        case JSON_STRING:
            put_member(lb, first, key, QC_EVK_STR, json_string_value(v), json_string_length(v), 0,
                       0, NULL);
            break;
        case JSON_INTEGER:
            put_member(lb, first, key, QC_EVK_INT, NULL, 0, (int64_t)json_integer_value(v), 0,
                       NULL);
            break;
        case JSON_REAL:
            put_member(lb, first, key, QC_EVK_REAL, NULL, 0, 0, json_real_value(v), NULL);
            break;
        case JSON_TRUE:
            put_member(lb, first, key, QC_EVK_TRUE, NULL, 0, 0, 0, NULL);
            break;
        case JSON_FALSE:
            put_member(lb, first, key, QC_EVK_FALSE, NULL, 0, 0, 0, NULL);
            break;
        case JSON_NULL:
            put_member(lb, first, key, QC_EVK_NULL, NULL, 0, 0, 0, NULL);
            break;
        default:
            put_member(lb, first, key, QC_EVK_JSON, NULL, 0, 0, 0, v);
        }
        first = 0;
    }
    put_close(lb, first, seq, t_us);
}

/* Takes the next seq and t together, before formatting, so that seq order
 * matches the order in which things happened (t to the microsecond). */
static int64_t next_seq(qc_ledger *l, int64_t *t_us)
{
    int64_t seq = atomic_fetch_add(&l->seq, 1) + 1;
    double t = qc_clock_ms() - l->t0;
    *t_us = (int64_t)(t * 1000.0);
    return seq;
}

/* Copies the formatted line lb into b's shared bytes (lb's scratch goes
 * back to b). */
static void put_line(qc_lbuf *b, line_buf *lb)
{
    qc_ledger *l = b->l;
    b->line = lb->p;
    b->line_cap = lb->cap;
    if (lb->oom) {
        atomic_store(&l->io_error, ENOMEM);
        return;
    }
    size_t n = lb->len;
    pthread_mutex_lock(&b->mu);
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) {
            pthread_mutex_unlock(&b->mu);
            atomic_store(&l->io_error, ENOMEM);
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, lb->p, n);
    b->len += n;
    pthread_mutex_unlock(&b->mu);
}

int64_t qc_ledger_append(qc_lbuf *b, json_t *ev)
{
    int64_t t_us, seq = next_seq(b->l, &t_us);
    line_buf lb = {b->line, 0, b->line_cap, 0};
    serialize(&lb, ev, seq, t_us);
    json_decref(ev);
    put_line(b, &lb);
    return seq;
}

/* ---- the event builder (qc_ev) ----------------------------------------- */

void qc_ev_init(qc_ev *e)
{
    e->n = 0;
    e->oom = 0;
    e->heap = NULL;
    e->used = 0;
    e->cap = sizeof e->arena;
}

static inline const char *ev_text(const qc_ev *e, uint32_t off)
{
    return (e->heap != NULL ? e->heap : e->arena) + off;
}

/* The member of key (set again: its value is replaced in place), or a new
 * one at the end; NULL when full (the event is then dropped at append). */
static qc_ev_member *ev_slot(qc_ev *e, const char *key)
{
    for (int k = 0; k < e->n; k++)
        if (e->m[k].key == key || (e->m[k].key[0] == key[0] && strcmp(e->m[k].key, key) == 0)) {
            qc_ev_member *m = &e->m[k];
            if (m->kind == QC_EVK_JSON)
                json_decref(m->j);
            m->j = NULL;
            return m;
        }
    if (e->n >= QC_EV_MEMBERS) {
        e->oom = 1;
        return NULL;
    }
    qc_ev_member *m = &e->m[e->n++];
    m->key = key;
    m->j = NULL;
    return m;
}

/* Whether s[0..n) is UTF-8 as jansson's json_stringn takes it (utf.c:
 * no overlong form, no surrogate, nothing above U+10FFFF; NUL is a
 * character).  ASCII, the ledger's usual text, is one pass of compares. */
static int utf8_ok(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint64_t x;
        if (i + 8 <= n && (memcpy(&x, s + i, 8), (x & 0x8080808080808080ULL) == 0)) {
            i += 8;
            continue;
        }
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t v;
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            v = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            v = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            v = c & 0x07;
        } else {
            return 0;
        }
        if (i + len > n)
            return 0;
        for (size_t k = 1; k < len; k++) {
            unsigned d = s[i + k];
            if (d < 0x80 || d > 0xBF)
                return 0;
            v = (v << 6) | (d & 0x3F);
        }
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) || (len == 3 && v < 0x800) ||
            (len == 4 && v < 0x10000))
            return 0;
        i += len;
    }
    return 1;
}

void qc_ev_strn(qc_ev *e, const char *key, const char *s, size_t n)
{
    /* as json_object_set_new(o, key, json_stringn(s, n)): no string (NULL,
     * or not UTF-8) sets nothing and leaves an earlier value of key */
    if (s == NULL || n > UINT32_MAX || !utf8_ok((const unsigned char *)s, n))
        return;
    if (e->used + n + 1 > e->cap) {
        /* past the arena: one heap block holds every string from now on */
        size_t cap = e->cap * 2;
        while (cap < e->used + n + 1)
            cap *= 2;
        char *h = e->heap != NULL ? realloc(e->heap, cap) : malloc(cap);
        if (h == NULL) {
            e->oom = 1;
            return;
        }
        if (e->heap == NULL)
            memcpy(h, e->arena, e->used);
        e->heap = h;
        e->cap = cap;
    }
    qc_ev_member *m = ev_slot(e, key);
    if (m == NULL)
        return;
    char *dst = (e->heap != NULL ? e->heap : e->arena) + e->used;
    memcpy(dst, s, n);
    dst[n] = '\0';
    m->kind = QC_EVK_STR;
    m->off = (uint32_t)e->used;
    m->n = (uint32_t)n;
    e->used += n + 1;
}

void qc_ev_str(qc_ev *e, const char *key, const char *s)
{
    qc_ev_strn(e, key, s, s != NULL ? strlen(s) : 0);
}

void qc_ev_int(qc_ev *e, const char *key, int64_t v)
{
    qc_ev_member *m = ev_slot(e, key);
    if (m != NULL) {
        m->kind = QC_EVK_INT;
        m->i = v;
    }
}

void qc_ev_real(qc_ev *e, const char *key, double v)
{
    qc_ev_member *m = ev_slot(e, key);
    if (m != NULL) {
        m->kind = QC_EVK_REAL;
        m->d = v;
    }
}

void qc_ev_bool(qc_ev *e, const char *key, int v)
{
    qc_ev_member *m = ev_slot(e, key);
    if (m != NULL)
        m->kind = v ? QC_EVK_TRUE : QC_EVK_FALSE;
}

void qc_ev_null(qc_ev *e, const char *key)
{
    qc_ev_member *m = ev_slot(e, key);
    if (m != NULL)
        m->kind = QC_EVK_NULL;
}

void qc_ev_json(qc_ev *e, const char *key, json_t *v)
{
    if (v == NULL) {
        e->oom = 1; /* as json_object_set_new given a failed allocation */
        return;
    }
    qc_ev_member *m = ev_slot(e, key);
    if (m == NULL) {
        json_decref(v);
        return;
    }
    m->kind = QC_EVK_JSON;
    m->j = v;
}

const char *qc_ev_get_str(const qc_ev *e, const char *key)
{
    for (int k = 0; k < e->n; k++)
        if (strcmp(e->m[k].key, key) == 0)
            return e->m[k].kind == QC_EVK_STR ? ev_text(e, e->m[k].off) : NULL;
    return NULL;
}

void qc_ev_reset(qc_ev *e)
{
    for (int k = 0; k < e->n; k++)
        if (e->m[k].kind == QC_EVK_JSON)
            json_decref(e->m[k].j);
    free(e->heap);
    qc_ev_init(e);
}

int64_t qc_ev_append(qc_lbuf *b, qc_ev *e)
{
    int64_t t_us, seq = next_seq(b->l, &t_us);
    line_buf lb = {b->line, 0, b->line_cap, e->oom};
    int first = 1;

    lb_put(&lb, "{", 1);
    for (int k = 0; k < e->n; k++) {
        const qc_ev_member *m = &e->m[k];
        if (is_own_key(m->key))
            continue;
        put_member(&lb, first, m->key, m->kind, m->kind == QC_EVK_STR ? ev_text(e, m->off) : NULL,
                   m->n, m->i, m->d, m->j);
        first = 0;
    }
    put_close(&lb, first, seq, t_us);
    put_line(b, &lb); /* an event e could not hold (lb.oom from e->oom) is dropped */
    qc_ev_reset(e);
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
