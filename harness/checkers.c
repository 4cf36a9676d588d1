/*
 * checkers.c - what every checker shares (verdicts, recording violations,
 * running them all, job-indexed views of a history) and the
 * double_complete checker.  exclusive_claim lives in check_claims.c,
 * no_lost_jobs and acked_durable (the final-snapshot checkers) in
 * check_jobs.c, stale_token_rejected, no_false_success, effects_once and
 * batch_bound in check_faults.c, recovery and bounded_failure in
 * check_recovery.c, no_early_reap in check_leases.c, group_exclusive and
 * group_order in check_groups.c, message_once in check_message.c.
 *
 * Invariants shared by every checker:
 *   - a checker is a pure function of the history: events are read in seq
 *     order and every grouping is sorted by (job, event index), so the same
 *     ledger always yields the same verdict, counts and messages;
 *   - the harness never raises a false alarm: a violation is recorded only
 *     when the ledger proves it; where an event's outcome or a time is
 *     unknown, the checker assumes whatever makes the system innocent;
 *   - a verdict is FAIL when nviolations > 0, else PASS when opportunities
 *     > 0, else INCONCLUSIVE, never PASS with zero opportunities;
 *   - nviolations is exact; at most QC_MAX_STORED_VIOLATIONS are kept, each
 *     with its job, up to QC_MAX_EVIDENCE ascending distinct ledger seqs and
 *     a one-line message.
 */
#include "checkers.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *qc_verdict_name(qc_verdict v)
{
    switch (v) {
    case QC_PASS:
        return "PASS";
    case QC_FAIL:
        return "FAIL";
    case QC_INCONCLUSIVE:
        return "INCONCLUSIVE";
    case QC_NOT_APPLICABLE:
        return "NOT_APPLICABLE";
    }
    return "UNKNOWN";
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

    return a < b ? -1 : a > b;
}

void qc__check_violation(qc_check *c, int64_t job, const int64_t *seqs, int nseq, const char *fmt,
                         ...)
{
    int64_t sorted[64];
    qc_violation *v;
    va_list ap;
    int n = 0;

    c->nviolations++;
    if (c->nstored >= QC_MAX_STORED_VIOLATIONS)
        return;
    if (c->v == NULL) {
        /* All at once: a few tens of kB, only for a failing checker.  When
         * it cannot be had the violation is still counted, so the verdict
         * stays right. */
        c->v = calloc(QC_MAX_STORED_VIOLATIONS, sizeof *c->v);
        if (c->v == NULL)
            return;
    }
    v = &c->v[c->nstored++];
    memset(v, 0, sizeof *v);
    v->job = job;
    if (nseq > (int)(sizeof sorted / sizeof sorted[0]))
        nseq = (int)(sizeof sorted / sizeof sorted[0]);
    if (seqs != NULL && nseq > 0) {
        memcpy(sorted, seqs, (size_t)nseq * sizeof *seqs);
        qsort(sorted, (size_t)nseq, sizeof *sorted, cmp_i64);
        for (int i = 0; i < nseq && n < QC_MAX_EVIDENCE; i++)
            if (n == 0 || sorted[i] != v->seq[n - 1])
                v->seq[n++] = sorted[i];
    }
    v->nseq = n;
    va_start(ap, fmt);
    vsnprintf(v->msg, sizeof v->msg, fmt, ap);
    va_end(ap);
    /* One line, whatever a token or an error text held. */
    for (char *p = v->msg; *p != '\0'; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
}

void qc__check_finish(qc_check *c)
{
    if (c->nviolations > 0)
        c->verdict = QC_FAIL;
    else if (c->opportunities > 0)
        c->verdict = QC_PASS;
    else
        c->verdict = QC_INCONCLUSIVE;
}

/* ---- job-indexed views ------------------------------------------------ */

/* Stores memo into *slot (a field of the const history, NULL until then)
 * unless another thread did first; returns the one kept (memo, or the
 * other's, memo being freed).  Memos are pure functions of the events, so
 * either is the same. */
static void *memo_publish(void *const *slot, void *memo)
{
    void *expected = NULL;

    if (__atomic_compare_exchange_n((void **)slot, &expected, memo, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return memo;
    free(memo);
    return expected;
}

/* Computed once per history (issue 16: six checkers asked for it, each a
 * pass over every event), kept in h->memo_answered; each call returns its
 * own copy as before. */
unsigned char *qc__answered_invokes(const qc_history *h)
{
    unsigned char *m = __atomic_load_n(&h->memo_answered, __ATOMIC_ACQUIRE), *a;

    if (m == NULL) {
        m = calloc(h->n + 1, 1);
        if (m == NULL)
            return NULL;
        for (size_t i = 0; i < h->n; i++)
            if (h->ev[i].invoke >= 0 && (size_t)h->ev[i].invoke < h->n)
                m[h->ev[i].invoke] = 1;
        m = memo_publish(&h->memo_answered, m);
    }
    a = malloc(h->n + 1);
    if (a != NULL)
        memcpy(a, m, h->n + 1);
    return a;
}

static int cmp_jobref(const void *pa, const void *pb)
{
    const qc__jobref *a = pa, *b = pb;

    if (a->job != b->job)
        return a->job < b->job ? -1 : 1;
    return a->ev < b->ev ? -1 : a->ev > b->ev;
}

/* Below this many refs qsort is as fast as the radix sort's passes. */
#define RADIX_MIN 512
#define RADIX_BITS 11

/* Sorts r by (job, ev).  The order is total and equal refs are equal
 * bytes, so any correct sort gives the same array; this one is chosen for
 * speed (issue 16: qsort's compare calls were a large share of the
 * checkers' time): nothing to do when r is already sorted; when the refs
 * come in ascending ev (as every checker collects them, scanning h->ev in
 * order) a stable LSD radix sort on job - min job, RADIX_BITS bits a pass
 * and only the passes the job range needs, keeps each job's refs in ev
 * order; otherwise, or without memory for its buffer, qsort. */
void qc__jobrefs_sort(qc__jobref *r, size_t n)
{
    int sorted = 1, ev_asc = 1;
    int64_t lo, hi;

    if (n < 2)
        return;
    lo = hi = r[0].job;
    for (size_t i = 1; i < n; i++) {
        if (r[i].job < lo)
            lo = r[i].job;
        if (r[i].job > hi)
            hi = r[i].job;
        if (r[i].ev <= r[i - 1].ev)
            ev_asc = 0;
        if (r[i].job < r[i - 1].job || (r[i].job == r[i - 1].job && r[i].ev < r[i - 1].ev))
            sorted = 0;
    }
    if (sorted)
        return;
    qc__jobref *tmp = n >= RADIX_MIN && ev_asc ? malloc(n * sizeof *tmp) : NULL;
    if (tmp == NULL) {
        qsort(r, n, sizeof *r, cmp_jobref);
        return;
    }
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    qc__jobref *src = r, *dst = tmp;
    for (int shift = 0; shift < 64 && (range >> shift) != 0; shift += RADIX_BITS) {
        size_t count[1u << RADIX_BITS];
        const uint64_t mask = (1u << RADIX_BITS) - 1;
        memset(count, 0, sizeof count);
        for (size_t i = 0; i < n; i++)
            count[(((uint64_t)src[i].job - (uint64_t)lo) >> shift) & mask]++;
        if (count[(((uint64_t)src[0].job - (uint64_t)lo) >> shift) & mask] == n)
            continue; /* every ref has this digit: the pass would not move one */
        size_t at = 0;
        for (size_t d = 0; d <= mask; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(((uint64_t)src[i].job - (uint64_t)lo) >> shift) & mask]++] = src[i];
        qc__jobref *t = src;
        src = dst;
        dst = t;
    }
    if (src != r)
        memcpy(r, src, n * sizeof *r);
    free(tmp);
}

/* The actor's slot in an open-addressing table of mask + 1 slots. */
static size_t actor_hash(const qc__actor *a, size_t mask)
{
    uint64_t k = (uint64_t)(uint32_t)a->file * 0x9E3779B97F4A7C15u ^
                 (uint64_t)(uint32_t)a->worker * 0xC2B2AE3D27D4EB4Fu ^
                 (uint64_t)(uint32_t)a->inc * 0x165667B19E3779F9u;
    k ^= k >> 29;
    return (size_t)(k & mask);
}

static int cmp_actor(const void *pa, const void *pb)
{
    const qc__actor *a = pa, *b = pb;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    if (a->worker != b->worker)
        return a->worker < b->worker ? -1 : 1;
    return (a->inc > b->inc) - (a->inc < b->inc);
}

/* A stable counting sort: the distinct actors are found with a hash
 * table (each slot: an actor and its index in the list of distinct ones),
 * sorted, counted, and the elements scattered in order into a buffer. */
int qc__actor_sort(void *base, size_t n, size_t size)
{
    typedef struct {
        qc__actor a;
        uint32_t id; /* index in act + 1; 0: empty slot */
    } slot;
    char *b = base;
    size_t mask = 15, nact = 0, cap_act = 16;
    slot *tab = NULL;
    qc__actor *act = NULL;
    uint32_t *id = NULL, *rank = NULL;
    size_t *start = NULL;
    char *tmp = NULL;
    int rc = QC_ENOMEM;

    if (n < 2)
        return 0;
    if ((tab = calloc(mask + 1, sizeof *tab)) == NULL || (act = malloc(cap_act * sizeof *act)) == NULL ||
        (id = malloc(n * sizeof *id)) == NULL)
        goto out;
    for (size_t i = 0; i < n; i++) {
        qc__actor a;
        memcpy(&a, b + i * size, sizeof a);
        size_t k = actor_hash(&a, mask);
        while (tab[k].id != 0 && cmp_actor(&tab[k].a, &a) != 0)
            k = (k + 1) & mask;
        if (tab[k].id == 0) {
            if (nact == UINT32_MAX - 1)
                goto out;
            if (nact == cap_act) {
                qc__actor *t = realloc(act, 2 * cap_act * sizeof *act);
                if (t == NULL)
                    goto out;
                act = t;
                cap_act *= 2;
            }
            act[nact] = a;
            tab[k] = (slot){a, (uint32_t)++nact};
            if (2 * nact > mask) { /* rehash at half full */
                size_t m2 = 2 * mask + 1;
                slot *t2 = calloc(m2 + 1, sizeof *t2);
                if (t2 == NULL)
                    goto out;
                for (size_t s = 0; s <= mask; s++) {
                    if (tab[s].id == 0)
                        continue;
                    size_t q = actor_hash(&tab[s].a, m2);
                    while (t2[q].id != 0)
                        q = (q + 1) & m2;
                    t2[q] = tab[s];
                }
                free(tab);
                tab = t2;
                mask = m2;
            }
            id[i] = (uint32_t)nact - 1;
        } else {
            id[i] = tab[k].id - 1;
        }
    }
    if (nact == 1) { /* one actor: the order is already the result */
        rc = 0;
        goto out;
    }
    /* rank[j]: place of distinct actor j in the sorted list */
    {
        qc__actor *sorted;
        if ((rank = malloc(nact * sizeof *rank)) == NULL ||
            (start = calloc(nact + 1, sizeof *start)) == NULL ||
            (sorted = malloc(nact * sizeof *sorted)) == NULL)
            goto out;
        memcpy(sorted, act, nact * sizeof *act);
        qsort(sorted, nact, sizeof *sorted, cmp_actor);
        for (size_t j = 0; j < nact; j++) {
            size_t k = actor_hash(&sorted[j], mask);
            while (cmp_actor(&tab[k].a, &sorted[j]) != 0)
                k = (k + 1) & mask;
            rank[tab[k].id - 1] = (uint32_t)j;
        }
        free(sorted);
    }
    for (size_t i = 0; i < n; i++)
        start[rank[id[i]] + 1]++;
    for (size_t j = 0; j < nact; j++)
        start[j + 1] += start[j];
    if ((tmp = malloc(n * size)) == NULL)
        goto out;
    for (size_t i = 0; i < n; i++)
        memcpy(tmp + start[rank[id[i]]]++ * size, b + i * size, size);
    memcpy(b, tmp, n * size);
    rc = 0;
out:
    free(tab);
    free(act);
    free(id);
    free(rank);
    free(start);
    free(tmp);
    return rc;
}

/* The final snapshot as kept in h->memo_snapshot: its counts and rows. */
typedef struct snapshot_memo {
    size_t n, nevents;
    qc__jobref row[];
} snapshot_memo;

static int snapshot_scan(const qc_history *h, qc__snapshot *s);

/* Computed once per history (six checkers build it), kept in
 * h->memo_snapshot; each call gets its own copy of the rows as before. */
int qc__snapshot_build(const qc_history *h, qc__snapshot *s)
{
    snapshot_memo *m = __atomic_load_n(&h->memo_snapshot, __ATOMIC_ACQUIRE);

    if (m == NULL) {
        qc__snapshot t;
        int rc = snapshot_scan(h, &t);
        if (rc != 0)
            return rc;
        m = malloc(sizeof *m + t.n * sizeof *t.row);
        if (m == NULL) {
            qc__snapshot_fini(&t);
            return QC_ENOMEM;
        }
        m->n = t.n;
        m->nevents = t.nevents;
        if (t.n > 0)
            memcpy(m->row, t.row, t.n * sizeof *t.row);
        qc__snapshot_fini(&t);
        m = memo_publish(&h->memo_snapshot, m);
    }
    memset(s, 0, sizeof *s);
    s->nevents = m->nevents;
    if (m->n == 0)
        return 0;
    s->row = malloc(m->n * sizeof *s->row);
    if (s->row == NULL)
        return QC_ENOMEM;
    memcpy(s->row, m->row, m->n * sizeof *s->row);
    s->n = m->n;
    return 0;
}

static int snapshot_scan(const qc_history *h, qc__snapshot *s)
{
    size_t n = 0, k = 0;

    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < h->n; i++) {
        if (h->ev[i].type != QC_EV_SNAPSHOT)
            continue;
        s->nevents++;
        n += h->ev[i].job != QC_NO_JOB;
    }
    if (n == 0)
        return 0;
    s->row = malloc(n * sizeof *s->row);
    if (s->row == NULL)
        return QC_ENOMEM;
    for (size_t i = 0; i < h->n; i++)
        if (h->ev[i].type == QC_EV_SNAPSHOT && h->ev[i].job != QC_NO_JOB)
            s->row[k++] = (qc__jobref){h->ev[i].job, i};
    qc__jobrefs_sort(s->row, n);
    /* Keep the last row of each job: a later snapshot is the final one. */
    k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && s->row[k - 1].job == s->row[i].job)
            k--;
        s->row[k++] = s->row[i];
    }
    s->n = k;
    return 0;
}

const qc_event *qc__snapshot_find(const qc_history *h, const qc__snapshot *s, int64_t job)
{
    size_t lo = 0, hi = s->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->row[mid].job < job)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->row[lo].job == job ? &h->ev[s->row[lo].ev] : NULL;
}

void qc__snapshot_fini(qc__snapshot *s)
{
    if (s == NULL)
        return;
    free(s->row);
    memset(s, 0, sizeof *s);
}

/* ---- double_complete --------------------------------------------------
 *
 * Innocent explanations: none can make two completes of one job both
 * answer rows > 0 on a correct protocol.  A lost answer followed by a
 * retry is one OK event (the lost one is INFO), unless the lost one is
 * known to have committed (the witness, or the answer qchaos discarded
 * said rows > 0): then a retry that changes rows again completed the job
 * a second time (a complete that does not check the job is still in
 * flight).  No time or order is used, so starvation, pauses and clocks
 * change nothing. */

/* Appends a short form of a token (the first 8 characters) to buf. */
static void short_token(char *buf, size_t n, const char *token)
{
    if (token == NULL)
        snprintf(buf, n, "no token");
    else if (strlen(token) > 8)
        snprintf(buf, n, "token %.8s..", token);
    else
        snprintf(buf, n, "token %s", token);
}

static void report_double(qc_check *c, const qc_history *h, const qc__jobref *r, size_t n)
{
    int64_t seqs[QC_MAX_EVIDENCE];
    char list[512]; /* QC_MAX_EVIDENCE items of at most ~60 chars */
    size_t len = 0;
    int ns = 0;

    list[0] = '\0';
    for (size_t i = 0; i < n && ns < QC_MAX_EVIDENCE; i++) {
        const qc_event *e = &h->ev[r[i].ev];
        char tok[32];
        seqs[ns++] = e->seq;
        short_token(tok, sizeof tok, qc__event_token(h, e));
        if (len < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%sseq %lld (worker %d, %s%s)",
                                    i > 0 ? ", " : "", (long long)e->seq, e->worker, tok,
                                    e->type != QC_EV_INFO ? ""
                                    : qc_x(e->x)->discarded_rows > 0
                                        ? ", answer lost after it said rows > 0"
                                        : ", answer lost, committed by the witness");
    }
    qc__check_violation(c, r[0].job, seqs, ns, "job %lld completed %zu times with rows > 0: %s%s",
                        (long long)r[0].job, n, list,
                        n > (size_t)ns || len >= sizeof list ? ", ..." : "");
}

int qc_check_double_complete(const qc_history *h, qc_check *out)
{
    qc__jobref *r = NULL;
    size_t n = 0;
    long jobs = 0, lost = 0;
    char lostbuf[80];

    memset(out, 0, sizeof *out);
    out->name = "double_complete";
    if (h->n > 0 && (r = malloc(h->n * sizeof *r)) == NULL)
        return QC_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job;
        /* a complete whose answer was lost counts when the witness shows
         * it committed (issue 13), or when qchaos itself threw the answer
         * away (a client-side lost ack) and it said rows > 0: the step
         * had committed (decision 1101) */
        int by_witness = e->type == QC_EV_INFO && e->op == QC_OP_COMPLETE &&
                         (e->w_resolved == 1 || qc_x(e->x)->discarded_rows > 0);
        if (!by_witness && (e->type != QC_EV_OK || e->op != QC_OP_COMPLETE))
            continue;
        if ((job = qc__event_job(h, e)) == QC_NO_JOB)
            continue;
        out->opportunities++;
        lost += by_witness;
        if (by_witness || e->rows > 0)
            r[n++] = (qc__jobref){job, i};
    }
    qc__jobrefs_sort(r, n);
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && r[b].job == r[a].job; b++)
            ;
        jobs++;
        if (b - a > 1)
            report_double(out, h, r + a, b - a);
    }
    free(r);
    snprintf(lostbuf, sizeof lostbuf, " (%ld of them lost answers known to have committed)", lost);
    snprintf(out->summary, sizeof out->summary,
             "%ld acknowledged completes%s, %ld jobs completed with rows > 0, "
             "%ld completed more than once",
             out->opportunities, lost > 0 ? lostbuf : "", jobs, out->nviolations);
    qc__check_finish(out);
    return 0;
}

/* ---- all checkers ----------------------------------------------------- */

/* The checkers qc_check_all runs, in the order of its results. */
static int (*const check_fns[])(const qc_history *, qc_check *) = {
    qc_check_exclusive_claim,
    qc_check_double_complete,
    qc_check_no_lost_jobs,
    qc_check_acked_durable,
    qc_check_stale_token_rejected,
    qc_check_no_false_success,
    qc_check_effects_once,
    qc_check_exclusive_run,
    qc_check_recovery,
    qc_check_bounded_failure,
    qc_check_no_early_reap,
    qc_check_batch_bound,
    qc_check_retry_delay,
    qc_check_bounded_idle_polling,
    qc_check_witness_agrees,
    qc_check_witness_owner,
    qc_check_worker_progress,
    qc_check_own_lease,
    qc_check_message_once,
    qc_check_group_exclusive,
    qc_check_group_order,
};
#define CHECK_COUNT (sizeof check_fns / sizeof check_fns[0])

/* Below this many events the checkers run on the calling thread: starting
 * threads would cost more than it saves (unit tests, the fuzzer). */
#define CHECK_PARALLEL_MIN_EVENTS 20000

/* What the checker threads share: the next checker to take, in order. */
typedef struct check_pool {
    const qc_history *h;
    qc_check *c;
    int rc[CHECK_COUNT]; /* each checker's return */
    pthread_mutex_t mu;
    size_t next;
} check_pool;

static void run_one(const qc_history *h, size_t i, qc_check *c, int *rc)
{
    struct timespec a, b;

    clock_gettime(CLOCK_MONOTONIC, &a);
    *rc = check_fns[i](h, c);
    clock_gettime(CLOCK_MONOTONIC, &b);
    c->elapsed_ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

static void *check_worker(void *arg)
{
    check_pool *p = arg;

    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= CHECK_COUNT)
            return NULL;
        run_one(p->h, i, &p->c[i], &p->rc[i]);
    }
}

int qc_check_threads(size_t nevents)
{
    const char *v = getenv("QC_AUDIT_THREADS");
    long n = 0;

    if (v != NULL && v[0] != '\0') {
        char *end;
        n = strtol(v, &end, 10);
        if (*end != '\0' || n < 1)
            n = 0; /* not a count: the default (the CLI refuses it first) */
    }
    if (n == 0) {
        if (nevents < CHECK_PARALLEL_MIN_EVENTS)
            return 1;
        n = sysconf(_SC_NPROCESSORS_ONLN);
    }
    if (n < 1)
        n = 1;
    if (n > (long)CHECK_COUNT)
        n = (long)CHECK_COUNT;
    return (int)n;
}

int qc_check_all(const qc_history *h, qc_check **out, size_t *n)
{
    size_t count = CHECK_COUNT;
    qc_check *c = calloc(count, sizeof *c);
    check_pool pool;
    pthread_t tid[CHECK_COUNT];
    int nthreads, started = 0, rc = 0;

    *out = NULL;
    *n = 0;
    if (c == NULL)
        return QC_ENOMEM;
    memset(&pool, 0, sizeof pool);
    pool.h = h;
    pool.c = c;
    nthreads = qc_check_threads(h->n);
    if (nthreads > 1 && pthread_mutex_init(&pool.mu, NULL) == 0) {
        /* The checkers are pure functions of the const history, each
         * writing only its own c[i]: any interleaving gives the serial
         * results, in c's fixed order. */
        for (int t = 1; t < nthreads; t++)
            if (pthread_create(&tid[started], NULL, check_worker, &pool) == 0)
                started++;
        check_worker(&pool);
        for (int t = 0; t < started; t++)
            pthread_join(tid[t], NULL);
        pthread_mutex_destroy(&pool.mu);
    } else {
        /* one thread: in order, stopping at the first error */
        for (size_t i = 0; i < count && rc == 0; i++)
            run_one(h, i, &c[i], &rc);
    }
    for (size_t i = 0; i < count && rc == 0; i++)
        rc = pool.rc[i];
    if (rc != 0) {
        qc_checks_free(c, count);
        return rc;
    }
    for (size_t i = 0; i < count; i++)
        qc__check_model(h, &c[i]);
    qc__witness_confirm(h, c, count);
    *out = c;
    *n = count;
    return 0;
}

int qc__grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t cap2 = *cap ? *cap : 8;
    while (cap2 < need)
        cap2 *= 2;
    void *q = realloc(*p, cap2 * size);
    if (q == NULL)
        return QC_ENOMEM;
    *p = q;
    *cap = cap2;
    return 0;
}

/* The coarsest of {1000, 100, 10, 1, 0.1, 0.01, 0.001} ms that v is a
 * whole multiple of. */
static double value_step(double v)
{
    static const double steps[] = {1000, 100, 10, 1, 0.1, 0.01};

    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        double q = v / steps[i];
        if (fabs(q - floor(q + 0.5)) < 1e-6)
            return steps[i];
    }
    return 0.001;
}

static double clock_resolution_scan(const qc_history *h);

/* Memoized in h->clock_res (issue 16: eleven checkers asked for it, each
 * a pass over every event, 5 % of an audit): a pure function of the
 * events, so threads that compute it at once store the same value. */
double qc__clock_resolution(const qc_history *h)
{
    double *memo = (double *)&((qc_history *)h)->clock_res, res;

    __atomic_load(memo, &res, __ATOMIC_ACQUIRE);
    if (res > 0)
        return res;
    res = clock_resolution_scan(h);
    __atomic_store(memo, &res, __ATOMIC_RELEASE);
    return res;
}

static double clock_resolution_scan(const qc_history *h)
{
    enum { F_CLAIM_NOW, F_CLAIM_UNTIL, F_RENEW_NOW, F_RENEW_UNTIL, F_DONE_NOW, F_REAP_NOW, F_N };
    double finest[F_N];
    double res = 0.001;

    for (int f = 0; f < F_N; f++)
        finest[f] = -1;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int fn = -1, fu = -1;
        if (e->type != QC_EV_OK)
            continue;
        switch (e->op) {
        case QC_OP_CLAIM:
            fn = F_CLAIM_NOW;
            fu = F_CLAIM_UNTIL;
            break;
        case QC_OP_RENEW:
            fn = F_RENEW_NOW;
            fu = F_RENEW_UNTIL;
            break;
        case QC_OP_COMPLETE:
        case QC_OP_FAIL:
            fn = F_DONE_NOW;
            break;
        case QC_OP_REAP:
            fn = F_REAP_NOW;
            break;
        default:
            continue;
        }
        /* 0.001 is the finest step: once there, a field needs no more
         * looking at (value_step is most of this loop's cost). */
        if (fn >= 0 && finest[fn] != 0.001 && qc__has_time(e->now)) {
            double st = value_step(e->now);
            if (finest[fn] < 0 || st < finest[fn])
                finest[fn] = st;
        }
        if (fu >= 0 && finest[fu] != 0.001 && qc__has_time(e->lease_until)) {
            double st = value_step(e->lease_until);
            if (finest[fu] < 0 || st < finest[fu])
                finest[fu] = st;
        }
    }
    for (int f = 0; f < F_N; f++)
        if (finest[f] > res)
            res = finest[f];
    return res;
}

int qc__lapse_excused(const qc_history *h, const qc_event *ca, const qc_event *cb, int knew_a,
                      double work_a, int knew_b, double work_b, int renews, double res,
                      int need_plan)
{
    const qc_event *x = ca, *y = cb;
    int knew = knew_a;
    double work = work_a, until;

    if (strcmp(h->info.model, "transaction") == 0)
        return 0;
    if (!qc__has_time(ca->now) || !qc__has_time(cb->now) || !qc__has_time(ca->lease_until) ||
        !qc__has_time(cb->lease_until))
        return 0;
    if (cb->now < ca->now) {
        x = cb;
        y = ca;
        knew = knew_b;
        work = work_b;
    }
    if (knew)
        return 0;
    until = x->lease_until;
    int stopped = 0; /* X's worker stopped renewing by plan before Y's claim (C07) */
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type == QC_EV_OK && e->op == QC_OP_RENEW && e->rows > 0 && e->file == x->file &&
            e->worker == x->worker && e->inc == x->inc && qc__event_job(h, e) == x->job &&
            e->seq > x->seq && qc__has_time(e->lease_until) && e->lease_until > until &&
            (!qc__has_time(e->now) || e->now < y->now))
            until = e->lease_until;
        if (need_plan && h->info.stop_heartbeat_first == 1 && e->type == QC_EV_FAULT &&
            qc_x(e->x)->fault != NULL && strcmp(qc_x(e->x)->fault, "graceful_stop") == 0 &&
            e->file == x->file && e->worker == x->worker && e->inc == x->inc && e->job == x->job &&
            e->seq > x->seq && e->file == y->file && e->seq < y->seq)
            stopped = 1;
    }
    if (y->now + res < until)
        return 0; /* provably handed out while the first lease was live */
    if (!need_plan)
        return 1;
    if (h->info.heartbeat == 1 && renews && !stopped)
        return 1;
    return qc__has_time(work) && work + 50.0 < x->lease_until - x->now;
}

/* One ledger's drain (file): its last end event and its own monitor
 * samples, on its own client clock.  Progress between the last sample and
 * one at most 5 s before it: done + dead grew, when both samples count
 * done (the full monitor); else (a monitor_live sample, issue 16, or a
 * monitor without done) ready + inflight shrank.  In the drain no job is
 * enqueued and none leaves the table, so the two say the same: a job
 * leaves ready + inflight exactly when it enters done or dead; a job
 * stuck in flight or ready moves neither. */
static int drain_cut_short_in(const qc_history *h, int file)
{
    const qc_event *end = NULL, *last = NULL;

    for (size_t i = h->n; i-- > 0 && end == NULL;)
        if (h->ev[i].type == QC_EV_END && h->ev[i].file == file)
            end = &h->ev[i];
    if (end == NULL || qc_x(end->x)->timed_out != 1)
        return 0;
    for (size_t i = h->n; i-- > 0;) {
        const qc_event *m = &h->ev[i];
        if (m->type != QC_EV_MONITOR || m->file != file || !qc__has_time(m->t) ||
            (qc_x(m->x)->done < 0 && (qc_x(m->x)->ready < 0 || qc_x(m->x)->inflight < 0)))
            continue;
        if (last == NULL) {
            last = m;
            continue;
        }
        if (last->t - m->t > 5000.0)
            break;
        if (qc_x(last->x)->done >= 0 && qc_x(m->x)->done >= 0) {
            if (qc_x(last->x)->done + (qc_x(last->x)->dead > 0 ? qc_x(last->x)->dead : 0) >
                qc_x(m->x)->done + (qc_x(m->x)->dead > 0 ? qc_x(m->x)->dead : 0))
                return 1;
        } else if (qc_x(last->x)->ready >= 0 && qc_x(last->x)->inflight >= 0 && qc_x(m->x)->ready >= 0 &&
                   qc_x(m->x)->inflight >= 0 &&
                   qc_x(last->x)->ready + qc_x(last->x)->inflight < qc_x(m->x)->ready + qc_x(m->x)->inflight) {
            return 1;
        }
    }
    return 0;
}

/* Several ledgers (a sharded run): cut short when any process's drain was
 * (each judged on its own end event and monitor samples). */
int qc__drain_cut_short(const qc_history *h)
{
    int nfiles = 0;
    for (size_t i = 0; i < h->n; i++)
        if (h->ev[i].file >= nfiles)
            nfiles = h->ev[i].file + 1;
    for (int f = 0; f < nfiles; f++)
        if (drain_cut_short_in(h, f))
            return 1;
    return 0;
}

/* Interrupted when the last end event of any ledger says so (a sharded
 * run: one interrupted process interrupts the run). */
int qc__run_interrupted(const qc_history *h)
{
    int nfiles = 0;
    for (size_t i = 0; i < h->n; i++)
        if (h->ev[i].file >= nfiles)
            nfiles = h->ev[i].file + 1;
    for (int f = 0; f < nfiles; f++)
        for (size_t i = h->n; i-- > 0;)
            if (h->ev[i].type == QC_EV_END && h->ev[i].file == f) {
                if (qc_x(h->ev[i].x)->interrupted == 1)
                    return 1;
                break;
            }
    return 0;
}

void qc__check_model(const qc_history *h, qc_check *c)
{
    /* The transaction model (claim's transaction open until complete) has
     * no lease and no reaper: these rules have nothing to stand on there.
     * A violation they found would still be evidence, so FAIL stays.
     * exclusive_claim judges itself there (claims after an acknowledged
     * complete, check_claims.c). */
    static const char *const lease_only[] = {"stale_token_rejected", "no_early_reap",
                                             "recovery"};
    if (strcmp(h->info.model, "transaction") != 0 || c->verdict == QC_FAIL)
        return;
    for (size_t k = 0; k < sizeof lease_only / sizeof *lease_only; k++) {
        if (!strcmp(c->name, lease_only[k])) {
            c->verdict = QC_NOT_APPLICABLE;
            snprintf(c->summary, sizeof c->summary,
                     "not applicable to the transaction model (no lease, no reaper)");
            c->opportunities = 0;
            return;
        }
    }
}

void qc_checks_free(qc_check *c, size_t n)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(c[i].v);
    free(c);
}
