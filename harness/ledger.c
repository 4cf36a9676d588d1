/*
 * ledger.c - per-thread buffers, one writer thread, JSON Lines on disk.
 *
 * Invariants: a line is appended to a buffer whole (formatted first), so the
 * file only ever holds whole lines except when the process dies mid-write;
 * the reader skips a torn last line.  bufs_mu protects the list of buffers;
 * each buffer's mu protects its bytes.  No lock is held across file I/O
 * except the writer's own (nobody else writes the file).
 */
#include "ledger.h"
#include "clock.h"

#include <errno.h>
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

int64_t qc_ledger_append(qc_lbuf *b, json_t *ev)
{
    qc_ledger *l = b->l;
    /* seq and t are taken together, before formatting, so that seq order
     * matches the order in which things happened. */
    int64_t seq = atomic_fetch_add(&l->seq, 1) + 1;
    double t = qc_clock_ms() - l->t0;
    json_object_set_new(ev, "seq", json_integer(seq));
    json_object_set_new(ev, "t", json_real((double)(int64_t)(t * 1000.0) / 1000.0));
    char *line = json_dumps(ev, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(ev);
    if (!line) {
        atomic_store(&l->io_error, ENOMEM);
        return seq;
    }
    size_t n = strlen(line);
    pthread_mutex_lock(&b->mu);
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) {
            pthread_mutex_unlock(&b->mu);
            free(line);
            atomic_store(&l->io_error, ENOMEM);
            return seq;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, line, n);
    b->data[b->len + n] = '\n';
    b->len += n + 1;
    pthread_mutex_unlock(&b->mu);
    free(line);
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
        free(b);
        b = next;
    }
    free(l->spare);
    pthread_mutex_destroy(&l->bufs_mu);
    free(l->path);
    free(l);
    return rc;
}
