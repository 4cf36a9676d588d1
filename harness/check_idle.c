/*
 * check_idle.c - bounded_idle_polling: an empty claim must lead to a
 * bounded pause, not a loop that queries the database without rest
 * (shared/seeds/sqlserver-queue-readpast.txt, last section; shared/cases.md
 * C16), and the pause must stay short enough that new work is picked up.
 *
 * Three parts, all from the ledger (client monotonic times):
 *  1. rate: in every idle streak (a worker incarnation's consecutive empty
 *     claims) of window D ms with N empty claims, N <= ceil(D/1000 * R) + 2
 *     + ramp, where R is the header's max_idle_polls_per_s and ramp the
 *     doublings from the declared base to cap (C16's "ceil(60/interval)+2"
 *     when base = cap);
 *  2. pause: from an empty claim's answer to the worker's next claim, at
 *     most max_idle_pause_ms;
 *  3. pickup: a job falling due (enqueue answer + delay_ms) while no other
 *     due job waits and some worker is idle is claimed within max_pickup_ms.
 * And the harness is not taken at its word: a "server_count" note (the
 * claim statement's calls in pg_stat_statements) must agree with the
 * ledger's claim requests; a disagreement is reported as a violation.
 */
#include "checkers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct streak {
    int worker, inc;
    double start;      /* first empty claim's invoke t */
    double last_ok;    /* last empty claim's answer t */
    double end;        /* next claim's invoke t, or last_ok */
    long n;            /* empty claims */
    int64_t first_seq, last_seq;
} streak;

typedef struct wstate {
    int worker, inc;
    int open;            /* inside a streak */
    streak s;
    double prev_ok;      /* answer t of the previous empty claim, -1 none */
    int64_t prev_seq;
    double max_rate;     /* highest rate over streaks of >= 1 s */
} wstate;

static double invoke_t(const qc_history *h, const qc_event *e)
{
    if (e->invoke >= 0 && (size_t)e->invoke < h->n)
        return h->ev[e->invoke].t;
    return e->t;
}

static wstate *find_worker(wstate **ws, size_t *nw, int worker, int inc)
{
    for (size_t i = 0; i < *nw; i++)
        if ((*ws)[i].worker == worker && (*ws)[i].inc == inc)
            return &(*ws)[i];
    wstate *g = realloc(*ws, sizeof **ws * (*nw + 1));
    if (!g)
        return NULL;
    *ws = g;
    wstate *w = &g[(*nw)++];
    memset(w, 0, sizeof *w);
    w->worker = worker;
    w->inc = inc;
    w->prev_ok = -1;
    return w;
}

typedef struct bounds {
    double rate;   /* polls per second per worker, 0 = not judged */
    double pause;  /* ms, 0 = not judged */
    double pickup; /* ms, 0 = not judged */
    long ramp;
} bounds;

static void judge_streak(qc_check *c, const bounds *b, wstate *w, long *streaks)
{
    streak *s = &w->s;
    w->open = 0;
    if (s->n < 2 || b->rate <= 0)
        return;
    double d = s->last_ok - s->start;
    double allowed = ceil(d / 1000.0 * b->rate) + 2 + (double)b->ramp;
    double rate = d > 0 ? (double)s->n * 1000.0 / d : 0;
    c->opportunities++;
    (*streaks)++;
    if (d >= 1000 && rate > w->max_rate)
        w->max_rate = rate;
    if ((double)s->n > allowed) {
        int64_t seqs[2] = {s->first_seq, s->last_seq};
        qc__check_violation(c, QC_NO_JOB, seqs, 2,
                            "worker %d (incarnation %d): %ld empty claims in %.0f ms of an idle "
                            "streak (%.1f/s); bound %.2f/s allows at most %.0f",
                            s->worker, s->inc, s->n, d, rate, b->rate, allowed);
    }
}

/* Parts 1 and 2: streaks and pauses, per worker incarnation. */
static int check_streaks(const qc_history *h, qc_check *c, const bounds *b, long *nstreaks,
                         long *npauses, double *max_pause, double *max_rate, wstate **wsp,
                         size_t *nwp)
{
    wstate *ws = NULL;
    size_t nw = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->worker < 0 || e->op != QC_OP_CLAIM ||
            (e->type != QC_EV_OK && e->type != QC_EV_FAIL && e->type != QC_EV_INFO))
            continue;
        wstate *w = find_worker(&ws, &nw, e->worker, e->inc);
        if (!w) {
            free(ws);
            return QC_ENOMEM;
        }
        double inv = invoke_t(h, e);
        /* pause: from the previous empty claim's answer to this claim */
        if (w->prev_ok >= 0 && b->pause > 0) {
            double gap = inv - w->prev_ok;
            c->opportunities++;
            (*npauses)++;
            if (gap > *max_pause)
                *max_pause = gap;
            if (gap > b->pause) {
                int64_t seqs[2] = {w->prev_seq, e->seq};
                qc__check_violation(c, QC_NO_JOB, seqs, 2,
                                    "worker %d (incarnation %d) paused %.0f ms after an empty "
                                    "claim; bound %.0f ms",
                                    e->worker, e->inc, gap, b->pause);
            }
        }
        int empty = e->type == QC_EV_OK && e->rows == 0 && e->job == QC_NO_JOB;
        if (empty) {
            if (!w->open) {
                w->open = 1;
                memset(&w->s, 0, sizeof w->s);
                w->s.worker = e->worker;
                w->s.inc = e->inc;
                w->s.start = inv;
                w->s.first_seq = e->seq;
            }
            w->s.n++;
            w->s.last_ok = e->t;
            w->s.end = e->t;
            w->s.last_seq = e->seq;
            w->prev_ok = e->t;
            w->prev_seq = e->seq;
        } else {
            if (w->open) {
                w->s.end = inv;
                judge_streak(c, b, w, nstreaks);
            }
            w->prev_ok = -1;
        }
    }
    for (size_t i = 0; i < nw; i++) {
        if (ws[i].open)
            judge_streak(c, b, &ws[i], nstreaks);
        if (ws[i].max_rate > *max_rate)
            *max_rate = ws[i].max_rate;
    }
    *wsp = ws;
    *nwp = nw;
    return 0;
}

typedef struct due {
    int64_t job;
    double due, claimed; /* claimed -1: never */
    int64_t enq_seq, claim_seq;
} due;

static int cmp_job(const void *a, const void *b)
{
    int64_t x = ((const due *)a)->job, y = ((const due *)b)->job;
    return (x > y) - (x < y);
}

static int cmp_due(const void *a, const void *b)
{
    double x = ((const due *)a)->due, y = ((const due *)b)->due;
    return (x > y) - (x < y);
}

/* Was some worker inside an idle streak at time t? */
static int someone_idle(const qc_history *h, double t)
{
    /* A worker is idle at t when its last claim answered before t was
     * empty and its next claim was sent after t (or never).  One pass over
     * the claim events per query is too slow for big ledgers, so this is
     * only called for the few candidate pickups. */
    int idle = 0;
    for (size_t i = 0; i < h->n && !idle; i++) {
        const qc_event *e = &h->ev[i];
        if (e->worker < 0 || e->op != QC_OP_CLAIM || e->type != QC_EV_OK || e->rows != 0 ||
            e->t > t)
            continue;
        /* e is an empty claim answered before t; is there a later claim by
         * the same incarnation sent before t? */
        int later = 0;
        for (size_t k = i + 1; k < h->n; k++) {
            const qc_event *f = &h->ev[k];
            if (f->type == QC_EV_INVOKE && f->op == QC_OP_CLAIM && f->worker == e->worker &&
                f->inc == e->inc) {
                later = f->t < t;
                break;
            }
        }
        if (!later)
            idle = 1;
    }
    return idle;
}

/* Part 3: pickup latency of jobs falling due on an empty queue. */
static int check_pickups(const qc_history *h, qc_check *c, const bounds *b, long *npickups,
                         double *max_pickup)
{
    if (b->pickup <= 0)
        return 0;
    double first_claim = -1;
    for (size_t i = 0; i < h->n; i++)
        if (h->ev[i].type == QC_EV_INVOKE && h->ev[i].op == QC_OP_CLAIM) {
            first_claim = h->ev[i].t;
            break;
        }
    if (first_claim < 0)
        return 0;
    due *d = NULL;
    size_t nd = 0, cap = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_OK || e->op != QC_OP_ENQUEUE || e->job == QC_NO_JOB)
            continue;
        if (nd == cap) {
            cap = cap ? cap * 2 : 256;
            due *g = realloc(d, sizeof *d * cap);
            if (!g) {
                free(d);
                return QC_ENOMEM;
            }
            d = g;
        }
        d[nd++] = (due){e->job, e->t + (double)e->delay_ms, -1, e->seq, -1};
    }
    /* first OK claim of each job (binary search over jobs sorted by id) */
    if (nd > 0) /* d is NULL when nothing is due: qsort/bsearch(NULL) is undefined */
        qsort(d, nd, sizeof *d, cmp_job);
    for (size_t i = 0; nd > 0 && i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_OK || e->op != QC_OP_CLAIM || e->job == QC_NO_JOB)
            continue;
        due key = {.job = e->job};
        due *k = bsearch(&key, d, nd, sizeof *d, cmp_job);
        if (k && k->claimed < 0) {
            k->claimed = e->t;
            k->claim_seq = e->seq;
        }
    }
    if (nd > 0)
        qsort(d, nd, sizeof *d, cmp_due);
    /* latest claim time among jobs due so far (never claimed = +inf) */
    double latest_claim = -1;
    for (size_t k = 0; k < nd; k++) {
        double prev_latest = latest_claim;
        double ck = d[k].claimed < 0 ? INFINITY : d[k].claimed;
        if (ck > latest_claim)
            latest_claim = ck;
        if (d[k].due <= first_claim)
            continue; /* the initial backlog is not an idle-phase pickup */
        /* the queue must be empty: no other job due earlier and unclaimed */
        int waiting = k > 0 && prev_latest > d[k].due;
        if (waiting || !someone_idle(h, d[k].due))
            continue;
        c->opportunities++;
        (*npickups)++;
        double lat = d[k].claimed < 0 ? -1 : d[k].claimed - d[k].due;
        if (lat > *max_pickup)
            *max_pickup = lat;
        if (lat < 0 && d[k].claimed >= 0)
            continue; /* claimed before its enqueue answer arrived */
        if (d[k].claimed < 0 || lat > b->pickup) {
            int64_t seqs[2] = {d[k].enq_seq, d[k].claim_seq};
            if (d[k].claimed < 0)
                qc__check_violation(c, d[k].job, seqs, 1,
                                    "job %lld fell due on an empty queue and was never claimed",
                                    (long long)d[k].job);
            else
                qc__check_violation(c, d[k].job, seqs, 2,
                                    "job %lld fell due on an empty queue with idle workers and "
                                    "was claimed %.0f ms later; bound %.0f ms",
                                    (long long)d[k].job, lat, b->pickup);
        }
    }
    free(d);
    return 0;
}

/* The server's own count against the ledger's. */
static void check_server_count(const qc_history *h, qc_check *c, char *note, size_t n)
{
    long invokes = 0, answered = 0;
    int64_t calls = -1, seq = -1;
    /* a claim answered OK ran its statements; a batch claim has one OK line
     * per claimed job with the same invoke, so count distinct invokes */
    unsigned char *seen = calloc(h->n ? h->n : 1, 1);
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->op == QC_OP_CLAIM && e->worker >= 0 && e->type == QC_EV_INVOKE)
            invokes++;
        if (e->op == QC_OP_CLAIM && e->worker >= 0 && e->type == QC_EV_OK) {
            if (e->invoke < 0 || !seen || (size_t)e->invoke >= h->n)
                answered++;
            else if (!seen[e->invoke]) {
                seen[e->invoke] = 1;
                answered++;
            }
        }
        if (e->type == QC_EV_NOTE && e->note && !strcmp(e->note, "server_count") &&
            e->calls >= 0) {
            calls = e->calls;
            seq = e->seq;
        }
    }
    free(seen);
    if (calls < 0) {
        snprintf(note, n, "no server count");
        return;
    }
    long margin = invokes / 100 + 2;
    c->opportunities++;
    snprintf(note, n, "ledger %ld claim requests (%ld answered), server %lld", invokes, answered,
             (long long)calls);
    if (calls < answered - margin || calls > invokes + margin) {
        int64_t seqs[1] = {seq};
        qc__check_violation(c, QC_NO_JOB, seqs, 1,
                            "the ledger has %ld claim requests (%ld answered) but the server "
                            "counted %lld claim statements (pg_stat_statements)",
                            invokes, answered, (long long)calls);
    }
}

int qc_check_bounded_idle_polling(const qc_history *h, qc_check *out)
{
    memset(out, 0, sizeof *out);
    out->name = "bounded_idle_polling";
    const qc_run_info *in = &h->info;
    bounds b = {0};
    double cap_lo = (double)in->idle_cap_ms * (1.0 - in->idle_jitter);
    b.rate = in->max_idle_polls_per_s > 0 ? in->max_idle_polls_per_s
             : cap_lo > 0                ? 2.0 * 1000.0 / cap_lo
                                         : 0;
    b.pause = (double)in->max_idle_pause_ms;
    b.pickup = (double)in->max_pickup_ms;
    if (in->idle_base_ms > 0 && in->idle_cap_ms > in->idle_base_ms)
        b.ramp = (long)ceil(log2((double)in->idle_cap_ms / (double)in->idle_base_ms));
    long streaks = 0, pauses = 0, pickups = 0;
    double max_pause = 0, max_rate = 0, max_pickup = 0;
    wstate *ws = NULL;
    size_t nw = 0;
    if (check_streaks(h, out, &b, &streaks, &pauses, &max_pause, &max_rate, &ws, &nw) != 0)
        return QC_ENOMEM;
    if (check_pickups(h, out, &b, &pickups, &max_pickup) != 0) {
        free(ws);
        return QC_ENOMEM;
    }
    char server[128];
    check_server_count(h, out, server, sizeof server);
    /* per-worker highest rate, as far as the summary has room */
    char per[96] = "";
    size_t len = 0;
    for (size_t i = 0; i < nw; i++) {
        if (ws[i].max_rate <= 0)
            continue;
        char one[32];
        int k = snprintf(one, sizeof one, "%sw%d %.1f", len ? " " : "", ws[i].worker,
                         ws[i].max_rate);
        if (k < 0 || len + (size_t)k + 4 >= 40) {
            snprintf(per + len, sizeof per - len, " ...");
            break;
        }
        memcpy(per + len, one, (size_t)k + 1);
        len += (size_t)k;
    }
    free(ws);
    snprintf(out->summary, sizeof out->summary,
             "%ld idle streaks (max %.1f/s; bound %.1f/s%s%.40s), %ld pauses (max %.0f ms; "
             "bound %.0f), %ld pickups (max %.0f ms; bound %.0f); %.60s",
             streaks, max_rate, b.rate, per[0] ? "; " : "", per, pauses, max_pause, b.pause,
             pickups, max_pickup, b.pickup, server);
    qc__check_finish(out);
    return 0;
}
