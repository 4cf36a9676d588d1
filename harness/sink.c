/*
 * sink.c - effect sink: a sharded hash set of op keys.
 *
 * Invariant: a key is inserted into exactly one shard (by hash) under that
 * shard's mutex, so "first delivery wins" holds across threads.
 */
#include "sink.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NSHARD 64

typedef struct entry {
    struct entry *next;
    char key[];
} entry;

typedef struct shard {
    pthread_mutex_t mu; /* protects tab, cap, n */
    entry **tab;
    size_t cap, n;
} shard;

struct qc_sink {
    int idempotent;
    int per_job; /* the key is "<job>/<op key>": one job's redeliveries only */
    atomic_long delivered, applied;
    shard sh[NSHARD];
};

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

qc_sink *qc_sink_create(int idempotent, int per_job)
{
    qc_sink *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->idempotent = idempotent;
    s->per_job = per_job;
    for (int i = 0; i < NSHARD; i++)
        pthread_mutex_init(&s->sh[i].mu, NULL);
    return s;
}

void qc_sink_destroy(qc_sink *s)
{
    if (!s)
        return;
    for (int i = 0; i < NSHARD; i++) {
        shard *h = &s->sh[i];
        for (size_t j = 0; j < h->cap; j++) {
            entry *e = h->tab[j];
            while (e) {
                entry *next = e->next;
                free(e);
                e = next;
            }
        }
        free(h->tab);
        pthread_mutex_destroy(&h->mu);
    }
    free(s);
}

/* Inserts key; returns 1 when new, 0 when present, -1 on OOM. */
static int insert(shard *h, const char *key, uint64_t hv)
{
    if (h->n + 1 > h->cap * 3 / 4) {
        size_t cap = h->cap ? h->cap * 2 : 256;
        entry **tab = calloc(cap, sizeof *tab);
        if (!tab)
            return -1;
        for (size_t j = 0; j < h->cap; j++) {
            entry *e = h->tab[j];
            while (e) {
                entry *next = e->next;
                size_t b = hash(e->key) / NSHARD % cap;
                e->next = tab[b];
                tab[b] = e;
                e = next;
            }
        }
        free(h->tab);
        h->tab = tab;
        h->cap = cap;
    }
    size_t b = hv / NSHARD % h->cap;
    for (entry *e = h->tab[b]; e; e = e->next)
        if (!strcmp(e->key, key))
            return 0;
    size_t len = strlen(key);
    entry *e = malloc(sizeof *e + len + 1);
    if (!e)
        return -1;
    memcpy(e->key, key, len + 1);
    e->next = h->tab[b];
    h->tab[b] = e;
    h->n++;
    return 1;
}

int qc_sink_deliver(qc_sink *s, const char *op_key, int64_t job)
{
    char buf[32], both[192], *big = NULL;
    int fresh = -1; /* out of memory until inserted */
    if (!op_key) {
        snprintf(buf, sizeof buf, "%" PRId64, job);
        op_key = buf;
    } else if (s->per_job) {
        size_t need = strlen(op_key) + 24;
        char *to = need <= sizeof both ? both : (big = malloc(need));
        if (to != NULL)
            snprintf(to, need, "%" PRId64 "/%s", job, op_key);
        op_key = to; /* NULL: out of memory, applied unchecked below */
    }
    atomic_fetch_add(&s->delivered, 1);
    if (op_key != NULL) {
        uint64_t hv = hash(op_key);
        shard *h = &s->sh[hv % NSHARD];
        pthread_mutex_lock(&h->mu);
        fresh = insert(h, op_key, hv);
        pthread_mutex_unlock(&h->mu);
    }
    free(big);
    /* Out of memory counts as applied: never hide a delivery. */
    int applied = !s->idempotent || fresh != 0;
    if (applied)
        atomic_fetch_add(&s->applied, 1);
    return applied;
}

void qc_sink_counts(qc_sink *s, long *delivered, long *applied)
{
    *delivered = atomic_load(&s->delivered);
    *applied = atomic_load(&s->applied);
}
