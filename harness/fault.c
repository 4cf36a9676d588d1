/*
 * fault.c - seeded per-job fault plan.
 *
 * The plan is an array sorted by job id (binary search); each entry's
 * "fired" flag is atomic, everything else is read-only after creation.
 * Kinds are assigned in enum order, each to jobs not yet holding a fault:
 * exact counts by a partial Fisher-Yates shuffle, rates by one draw per job.
 */
#include "fault.h"
#include "rng.h"

#include <stdatomic.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    int64_t job;
    int kind;
    atomic_int fired;
    atomic_int claims; /* claims of the job answered to workers */
    atomic_int hold;   /* 1: the next owner waits before its effect */
} entry;

struct qc_fault_plan {
    entry *e;
    size_t n;
    long counts[QC_FAULT_COUNT];
};

static const char *const names[QC_FAULT_COUNT] = {
    "none", "kill_after_claim", "kill_after_effect", "stall_beyond_lease",
    "lost_ack", "lost_request", "poison", "stall_until_reclaimed", "stall_in_work",
    "half_open", "reset", "graceful_stop", "late_renew",
    "lost_ack_on_fail",
    "notify_lost", "notify_early", "listen_close", "listen_terminate"};

int qc_fault_is_per_claim(qc_fault_kind k)
{
    return k > QC_FAULT_NONE && k < QC_FAULT_NOTIFY_LOST;
}

/* splitmix64: a stateless draw per (seed, index, kind). */
static double unit_of(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return (double)(x >> 11) / 9007199254740992.0;
}

qc_fault_kind qc_fault_notify_pick(uint64_t seed, const qc_fault_spec spec[QC_FAULT_COUNT],
                                   long index, long total)
{
    static const qc_fault_kind kinds[2] = {QC_FAULT_NOTIFY_LOST, QC_FAULT_NOTIFY_EARLY};
    for (int i = 0; i < 2; i++) {
        const qc_fault_spec *s = &spec[kinds[i]];
        double rate = s->count > 0 ? (total > 0 ? (double)s->count / (double)total : 0)
                                   : s->count < 0 ? s->rate : 0;
        if (rate > 0 &&
            unit_of(seed * 0x100000001b3ULL ^ ((uint64_t)index << 2) ^ (uint64_t)(i + 1)) < rate)
            return kinds[i];
    }
    return QC_FAULT_NONE;
}

const char *qc_fault_name(qc_fault_kind k)
{
    return (k >= 0 && k < QC_FAULT_COUNT) ? names[k] : "none";
}

qc_fault_kind qc_fault_from_name(const char *name)
{
    for (int k = 1; k < QC_FAULT_COUNT; k++)
        if (!strcmp(name, names[k]))
            return (qc_fault_kind)k;
    return QC_FAULT_NONE;
}

int qc_fault_spec_parse(const char *v, qc_fault_spec *spec)
{
    char *end;
    size_t len = strlen(v);
    if (len == 0)
        return -1;
    /* digits first: strtod and strtol also take blanks, a sign, "nan",
     * "inf" and hex, none of which is a count or a rate here */
    if (!isdigit((unsigned char)v[0]) && !(v[0] == '.' && isdigit((unsigned char)v[1])))
        return -1;
    if (v[len - 1] == '%') {
        double r = strtod(v, &end);
        if (end != v + len - 1 || !(r >= 0 && r <= 100))
            return -1;
        spec->count = -1;
        spec->rate = r / 100.0;
        return 0;
    }
    errno = 0;
    long c = strtol(v, &end, 10);
    if (*end || end == v || c < 0 || errno == ERANGE || c > QC_FAULT_COUNT_MAX)
        return -1;
    spec->count = c;
    spec->rate = 0;
    return 0;
}

static int cmp_job(const void *a, const void *b)
{
    int64_t x = ((const entry *)a)->job, y = ((const entry *)b)->job;
    return (x > y) - (x < y);
}

qc_fault_plan *qc_fault_plan_create(uint64_t seed, const qc_fault_spec spec[QC_FAULT_COUNT],
                                    const int64_t *jobs, size_t njobs)
{
    qc_fault_plan *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->e = calloc(njobs ? njobs : 1, sizeof *p->e);
    size_t *idx = malloc(sizeof *idx * (njobs ? njobs : 1));
    if (!p->e || !idx) {
        free(idx);
        qc_fault_plan_destroy(p);
        return NULL;
    }
    p->n = njobs;
    for (size_t i = 0; i < njobs; i++)
        p->e[i].job = jobs[i];
    qsort(p->e, njobs, sizeof *p->e, cmp_job);
    qc_rng rng;
    qc_rng_init(&rng, seed, 0xfa017);
    for (int k = 1; k < QC_FAULT_COUNT; k++) {
        const qc_fault_spec *s = &spec[k];
        if (!qc_fault_is_per_claim((qc_fault_kind)k))
            continue;
        /* candidates: jobs without a fault yet, in job order */
        size_t nfree = 0;
        for (size_t i = 0; i < njobs; i++)
            if (p->e[i].kind == QC_FAULT_NONE)
                idx[nfree++] = i;
        if (s->count > 0) {
            size_t want = (size_t)s->count < nfree ? (size_t)s->count : nfree;
            for (size_t i = 0; i < want; i++) {
                size_t j = i + (size_t)qc_rng_range(&rng, 0, (long)(nfree - i - 1));
                size_t t = idx[i];
                idx[i] = idx[j];
                idx[j] = t;
                p->e[idx[i]].kind = k;
                p->counts[k]++;
            }
        } else if (s->count < 0 && s->rate > 0) {
            for (size_t i = 0; i < nfree; i++) {
                if (qc_rng_unit(&rng) < s->rate) {
                    p->e[idx[i]].kind = k;
                    p->counts[k]++;
                }
            }
        }
    }
    free(idx);
    return p;
}

void qc_fault_plan_destroy(qc_fault_plan *p)
{
    if (!p)
        return;
    free(p->e);
    free(p);
}

static entry *find(const qc_fault_plan *p, int64_t job)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->e[mid].job < job)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < p->n && p->e[lo].job == job) ? &p->e[lo] : NULL;
}

qc_fault_kind qc_fault_plan_get(const qc_fault_plan *p, int64_t job)
{
    if (!p)
        return QC_FAULT_NONE;
    entry *e = find(p, job);
    return e ? (qc_fault_kind)e->kind : QC_FAULT_NONE;
}

int qc_fault_plan_take(qc_fault_plan *p, int64_t job)
{
    if (!p)
        return 0;
    entry *e = find(p, job);
    if (!e || e->kind == QC_FAULT_NONE)
        return 0;
    return atomic_exchange(&e->fired, 1) == 0;
}

int qc_fault_plan_rearm(qc_fault_plan *p, int64_t job)
{
    entry *e = p ? find(p, job) : NULL;
    return e && e->kind != QC_FAULT_NONE && atomic_exchange(&e->fired, 0) == 1;
}

long qc_fault_plan_count(const qc_fault_plan *p, qc_fault_kind k)
{
    return (p && k > 0 && k < QC_FAULT_COUNT) ? p->counts[k] : 0;
}

void qc_fault_plan_note_claim(qc_fault_plan *p, int64_t job)
{
    entry *e = p ? find(p, job) : NULL;
    if (e)
        atomic_fetch_add(&e->claims, 1);
}

int qc_fault_plan_claims(const qc_fault_plan *p, int64_t job)
{
    entry *e = p ? find(p, job) : NULL;
    return e ? atomic_load(&e->claims) : 0;
}

void qc_fault_plan_set_hold(qc_fault_plan *p, int64_t job, int on)
{
    entry *e = p ? find(p, job) : NULL;
    if (e)
        atomic_store(&e->hold, on != 0);
}

int qc_fault_plan_held(const qc_fault_plan *p, int64_t job)
{
    entry *e = p ? find(p, job) : NULL;
    return e ? atomic_load(&e->hold) : 0;
}
