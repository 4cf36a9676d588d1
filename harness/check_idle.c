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
 *  3. pickup: a claim that provably ran after a job fell due (enqueue
 *     answer + delay_ms) and before anyone claimed it must not come back
 *     empty (check_pickups says why this, and not a latency bound, is
 *     judged); the latency to the first claim is reported;
 *  4. wake-up (LISTEN/NOTIFY, issue 17, C28): a job whose notification
 *     was sent to a worker's live listen session must not wait past
 *     max_pickup_ms while that worker sleeps on a fallback timer that
 *     runs out with no notification (check_wakeups).
 * A worker sleeping in LISTEN is not idle polling: a claim after a listen
 * wait ("wake" on its invoke) is not a pause of the idle policy, so part 2
 * does not judge it (part 4 judges the wait); its empty claims count in
 * part 1's streaks like any other, so a dead listen connection that
 * answers every wait at once (a hot loop) fails the rate rule.
 * Innocent explanations of parts 1 and 2: a starved thread sends fewer
 * claims, never more (rate); it oversleeps, so where the worker wrote down
 * the pause its policy planned ("pause_ms"), that is judged, not the gap
 * (pause); the gap is judged only for workers that do not say (adapters).
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
        /* pause: from the previous empty claim's answer to this claim.
         * When the idle policy wrote down the pause it planned ("pause_ms"
         * on the claim's invoke), that is what is judged: the measured gap
         * also holds the time a starved thread overslept, which is the
         * machine's doing, not the policy's. */
        const qc_event *ie = e->invoke >= 0 && (size_t)e->invoke < h->n ? &h->ev[e->invoke]
                                                                       : NULL;
        if (w->prev_ok >= 0 && b->pause > 0 && (ie == NULL || qc_x(ie->x)->wake == NULL)) {
            int planned = ie != NULL && qc__has_time(ie->pause_ms);
            double gap = planned ? ie->pause_ms : inv - w->prev_ok;
            c->opportunities++;
            (*npauses)++;
            if (gap > *max_pause)
                *max_pause = gap;
            if (gap > b->pause) {
                int64_t seqs[2] = {w->prev_seq, e->seq};
                qc__check_violation(c, QC_NO_JOB, seqs, 2,
                                    "worker %d (incarnation %d) %s %.0f ms after an empty "
                                    "claim; bound %.0f ms",
                                    e->worker, e->inc, planned ? "planned a pause of" : "paused",
                                    gap, b->pause);
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

/* Part 3, pickup: a job that was due and ready must not be missed by a
 * claim that provably ran after it fell due.  Job J (not grouped: an
 * earlier job of its group may hold it back) was enqueued (OK enqueue at
 * client t_e, scheduled delay_ms ahead: the server's run_after is at most
 * the server time at t_e + delay_ms).  A claim E answered OK with no row
 * (an empty claim) that was sent after t_e + delay_ms + margin and after
 * the enqueue's answer, and answered before J's first claim was sent,
 * ran while J was ready and due: the queue said it had nothing.
 *
 * Innocent explanations, and why they cannot raise this alarm:
 *   - a starved client: only requests SENT after J fell due are judged,
 *     by what the server answered; how late a worker woke is not judged
 *     here (the pause rule judges the planned pauses);
 *   - SKIP LOCKED: J may have been locked by another claim in flight at
 *     the same time; a claim that returned J is J's first claim (then E
 *     was answered after it was sent and is not judged), and any claim in
 *     flight during E that did not answer OK (it may have locked J and
 *     rolled back) excuses E, as does a reap pass in flight (a reaper's
 *     scan may lock rows on some engines);
 *   - coarse clocks and drift: a margin of 1 ms, the clock resolution and
 *     0.1% of the delay;
 *   - the initial backlog: the same rule holds; SKIP LOCKED races are
 *     covered above;
 *   - several ledgers (a sharded run, qchaos audit L1 L2 ...): seq orders
 *     one ledger only and an empty claim carries no server time, so J is
 *     judged only against empty claims of the ledger its enqueue is in, and
 *     only when every claim that returned J is in that ledger too; a
 *     failed claim or reap pass of any other ledger excuses E (it may have
 *     held J's row lock at any time).
 * The latency from due to claim is measured for the summary only. */
typedef struct due {
    int64_t job;
    double due;         /* client ms after which the job was due */
    int64_t enq_seq;    /* the enqueue's answer */
    int64_t first_sent; /* invoke seq of the job's first claim, INT64_MAX never */
    double claimed;     /* client t of the first claim's answer, -1 never */
    int grouped;
    int file;
    int elsewhere;      /* 1: a ledger other than file's has a claim that returned
                           the job: its order against file's empty claims is not
                           known (seq orders one ledger only; an empty claim has
                           no server time), so the job is not judged */
    int64_t reap_sent;  /* invoke seq of the first OK reap that returned the job,
                           INT64_MAX none: before its first known claim, the job
                           was held by a claim the ledger cannot name */
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

/* An interval of the ledger (invoke seq .. answer seq) in which some
 * request that may have held a row lock was in flight. */
typedef struct span {
    int64_t from, to;
    int file; /* seqs of one ledger: from / to compare with that ledger's seqs only */
} span;

static int cmp_span(const void *a, const void *b)
{
    int64_t x = ((const span *)a)->from, y = ((const span *)b)->from;
    return (x > y) - (x < y);
}

/* Claims that did not answer OK (fail, info, never answered) and reap
 * passes: while one is in flight, a ready row may be locked by it. */
static int lock_spans(const qc_history *h, span **out, size_t *n)
{
    unsigned char *answered = qc__answered_invokes(h);
    size_t cap = 0;
    span *sp = NULL;
    int64_t *last = NULL; /* per invoke index: seq of its last answer */

    *out = NULL;
    *n = 0;
    if (answered == NULL)
        return QC_ENOMEM;
    if ((last = malloc((h->n + 1) * sizeof *last)) == NULL) {
        free(answered);
        return QC_ENOMEM;
    }
    for (size_t i = 0; i < h->n; i++)
        last[i] = -1;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->invoke >= 0 && (size_t)e->invoke < h->n && e->seq > last[e->invoke])
            last[e->invoke] = e->seq;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int risky;
        if (e->type != QC_EV_INVOKE || (e->op != QC_OP_CLAIM && e->op != QC_OP_REAP))
            continue;
        risky = e->op == QC_OP_REAP || !answered[i];
        if (!risky) {
            /* a claim answered with fail or info */
            for (size_t k = i + 1; k < h->n && !risky; k++) {
                const qc_event *x = &h->ev[k];
                if (x->invoke == (long)i)
                    risky = x->type != QC_EV_OK;
                if (x->seq > last[i])
                    break;
            }
        }
        if (!risky)
            continue;
        if (qc__grow((void **)&sp, &cap, *n + 1, sizeof *sp) != 0) {
            free(sp);
            free(last);
            free(answered);
            return QC_ENOMEM;
        }
        sp[(*n)++] = (span){e->seq, answered[i] ? last[i] : INT64_MAX, e->file};
    }
    if (*n > 1)
        qsort(sp, *n, sizeof *sp, cmp_span);
    free(last);
    free(answered);
    *out = sp;
    return 0;
}

/* Does any lock span overlap [from, to] (seqs of ledger file)?  A span of
 * another ledger (a process of a sharded run) cannot be placed against
 * file's seqs, so it may have overlapped: it counts as overlapping (the
 * merged history never invents an order, DESIGN.md "Larger than one
 * machine"). */
static int locked_during(const span *sp, size_t n, int file, int64_t from, int64_t to)
{
    for (size_t k = 0; k < n; k++) {
        if (sp[k].file != file)
            return 1;
        if (sp[k].from <= to && sp[k].to >= from)
            return 1;
    }
    return 0;
}

static int check_pickups(const qc_history *h, qc_check *c, const bounds *b, long *npickups,
                         double *max_pickup)
{
    double res = qc__clock_resolution(h);
    due *d = NULL;
    size_t nd = 0, cap = 0, nsp = 0;
    span *sp = NULL;
    int rc = 0;

    (void)b;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_OK || e->op != QC_OP_ENQUEUE || e->job == QC_NO_JOB ||
            !qc__has_time(e->t))
            continue;
        if (qc__grow((void **)&d, &cap, nd + 1, sizeof *d) != 0) {
            free(d);
            return QC_ENOMEM;
        }
        double delay = (double)e->delay_ms;
        d[nd++] = (due){e->job,      e->t + delay + 1.0 + res + 1e-3 * delay,
                        e->seq,      INT64_MAX,
                        -1,          qc_s(e->group) != NULL,
                        e->file,     0,
                        INT64_MAX};
    }
    if (nd == 0)
        return 0;
    /* first OK claim of each job (binary search over jobs sorted by id) */
    if (nd > 0) /* d is NULL when nothing is due: qsort/bsearch(NULL) is undefined */
        qsort(d, nd, sizeof *d, cmp_job);
    for (size_t i = 0; nd > 0 && i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        /* An OK reap that returned the job before its first known claim
         * was sent: the job was held, from a time the ledger does not
         * know, by a claim it cannot name (one whose answer was lost, as
         * at a failover; decision 1119), so it is not judged at all. */
        int reaped = e->type == QC_EV_OK && e->op == QC_OP_REAP && e->job != QC_NO_JOB;
        if (!reaped && (e->type != QC_EV_OK || e->op != QC_OP_CLAIM || e->job == QC_NO_JOB))
            continue;
        due key = {.job = e->job};
        due *k = bsearch(&key, d, nd, sizeof *d, cmp_job);
        /* the earliest SENT claim that returned the job: a claim answered
         * late may have taken it before the others (a starved client) */
        const qc_event *inv = qc__invoke_of(h, e);
        int64_t sent = inv != NULL ? inv->seq : e->seq;
        if (k && e->file != k->file) {
            k->elsewhere = 1;
            continue;
        }
        if (k && reaped) {
            if (sent < k->reap_sent)
                k->reap_sent = sent;
            continue;
        }
        if (k && sent < k->first_sent)
            k->first_sent = sent;
        if (k && k->claimed < 0)
            k->claimed = e->t;
    }
    if ((rc = lock_spans(h, &sp, &nsp)) != 0) {
        free(d);
        return rc;
    }
    /* The empty claims, in seq order (h->ev is). */
    size_t ne = 0, cape = 0;
    size_t *em = NULL;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i], *inv;
        if (e->type != QC_EV_OK || e->op != QC_OP_CLAIM || e->rows != 0 || e->worker < 0)
            continue;
        if ((inv = qc__invoke_of(h, e)) == NULL || !qc__has_time(inv->t))
            continue;
        if (qc__grow((void **)&em, &cape, ne + 1, sizeof *em) != 0) {
            free(em);
            free(sp);
            free(d);
            return QC_ENOMEM;
        }
        em[ne++] = i;
    }
    qsort(d, nd, sizeof *d, cmp_due);
    for (size_t k = 0; k < nd; k++) {
        if (d[k].claimed >= 0 && d[k].claimed - d[k].due > *max_pickup)
            *max_pickup = d[k].claimed - d[k].due;
        if (d[k].grouped || d[k].elsewhere || d[k].reap_sent < d[k].first_sent)
            continue;
        /* the first empty claim answered after the enqueue's answer */
        size_t lo = 0, hi = ne;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (h->ev[em[mid]].seq <= d[k].enq_seq)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t j = lo; j < ne; j++) {
            const qc_event *e = &h->ev[em[j]], *inv = qc__invoke_of(h, e);
            if (e->seq >= d[k].first_sent)
                break; /* from here on the job had been claimed */
            if (e->file != d[k].file || inv->t <= d[k].due || inv->seq <= d[k].enq_seq)
                continue;
            if (locked_during(sp, nsp, e->file, inv->seq, e->seq))
                continue;
            c->opportunities++;
            (*npickups)++;
            int64_t seqs[3] = {d[k].enq_seq, inv->seq, e->seq};
            qc__check_violation(c, d[k].job, seqs, 3,
                                "job %lld was due and ready (enqueued seq %lld) but the claim by "
                                "worker %d sent at seq %lld, %.0f ms after it fell due, found "
                                "nothing",
                                (long long)d[k].job, (long long)d[k].enq_seq, e->worker,
                                (long long)inv->seq, inv->t - d[k].due);
            break; /* one violation per job */
        }
    }
    free(em);
    free(sp);
    free(d);
    return 0;
}

/* Part 4, wake-up (issue 17, shared/cases.md C28): workers that wait on
 * LISTEN after an empty claim, with a fallback timer.  Job J (not
 * grouped, due at once: delay 0; a delayed job falls due with no
 * notification) was enqueued with its notify in the enqueue's transaction
 * ("notify":"commit", sent at notify_t, committed by the enqueue's answer
 * at t_E).  A worker incarnation W whose listen connection was opened
 * (note "listen" state "open", after the LISTEN's answer) before the
 * notify was sent, and not lost or closed since, waited from wait_t to the
 * claim C; when C says "wake":"poll", W's fallback timer ran out (planned
 * end wait_t + wait_ms) and no notification had reached its session (a
 * wait the end of the run cut short is a note "listen wait" with "wake":
 * "stop", written after the socket was read once more: silent up to the
 * note's t, which is then its end).  If
 * that wait began before t_E + B and was planned to end after it, and no
 * claim of J was sent until t_E + B, then J waited past the pickup bound B
 * while a worker told of it slept: a violation.
 *
 * Innocent explanations, and why they cannot raise it:
 *   - a starved worker thread: the planned end is judged, not when it
 *     woke; and a notification that came while it was late is still read
 *     (the driver drains the socket after poll returns), so it says
 *     "notify", never "poll";
 *   - a notification consumed by an earlier wait of W (whose claim then
 *     missed J, say beside a claim that locked J and failed): only jobs
 *     whose notify was sent after W's claim before this wait are judged,
 *     so their notification cannot have reached W before this wait;
 *   - a LISTEN registered after the notify (a re-LISTEN racing the
 *     enqueue): only notifications sent after the open note are judged;
 *   - a lost or dropped listen connection: its wait ends "lost", not
 *     "poll", and after a lost note nothing of W is judged until the next
 *     open;
 *   - notify faults (lost, early) and delayed jobs: not judged here (the
 *     fallback timer picks them up; parts 1-3 judge the polls);
 *   - a server that delays delivering a committed notification by more
 *     than B: possible in principle on a starved server; B (max_pickup_ms)
 *     is the scenario's, well above the milliseconds delivery takes.
 * Opportunities: jobs with a notification judged against at least one
 * such wait that covered t_E + B. */
typedef struct wjob {
    int64_t job;
    double t_e, notify_t, first_sent;
    int64_t enq_seq;
    int judged, violated;
} wjob;

typedef struct lstate {
    int worker, inc, open;
    double open_t;
    int64_t open_seq;
    double prev_claim_t; /* the incarnation's latest claim invoke, -inf none */
} lstate;

static int cmp_wjob_id(const void *a, const void *b)
{
    int64_t x = ((const wjob *)a)->job, y = ((const wjob *)b)->job;
    return (x > y) - (x < y);
}

static int cmp_wjob_t(const void *a, const void *b)
{
    double x = ((const wjob *)a)->t_e, y = ((const wjob *)b)->t_e;
    return (x > y) - (x < y);
}

static lstate *find_lstate(lstate **ls, size_t *n, size_t *cap, int worker, int inc)
{
    for (size_t i = 0; i < *n; i++)
        if ((*ls)[i].worker == worker && (*ls)[i].inc == inc)
            return &(*ls)[i];
    if (qc__grow((void **)ls, cap, *n + 1, sizeof **ls) != 0)
        return NULL;
    lstate *l = &(*ls)[(*n)++];
    memset(l, 0, sizeof *l);
    l->worker = worker;
    l->inc = inc;
    l->prev_claim_t = -INFINITY;
    return l;
}

static int check_wakeups(const qc_history *h, qc_check *c, const bounds *b, long *njudged,
                         long *nwaits, double *max_silence)
{
    wjob *j = NULL;
    lstate *ls = NULL;
    size_t nj = 0, capj = 0, nl = 0, capl = 0;
    double B = b->pickup;

    if (B <= 0)
        return 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_OK || e->op != QC_OP_ENQUEUE || e->job == QC_NO_JOB ||
            qc_x(e->x)->notify == NULL || strcmp(qc_x(e->x)->notify, "commit") != 0 || e->delay_ms != 0 ||
            qc_s(e->group) != NULL || !qc__has_time(qc_x(e->x)->notify_t) || !qc__has_time(e->t))
            continue;
        if (qc__grow((void **)&j, &capj, nj + 1, sizeof *j) != 0) {
            free(j);
            return QC_ENOMEM;
        }
        j[nj++] = (wjob){e->job, e->t, qc_x(e->x)->notify_t, INFINITY, e->seq, 0, 0};
    }
    if (nj == 0)
        return 0;
    qsort(j, nj, sizeof *j, cmp_wjob_id);
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i], *inv;
        if (e->type != QC_EV_OK || e->op != QC_OP_CLAIM || e->job == QC_NO_JOB)
            continue;
        wjob key = {.job = e->job};
        wjob *k = bsearch(&key, j, nj, sizeof *j, cmp_wjob_id);
        inv = qc__invoke_of(h, e);
        double sent = inv != NULL ? inv->t : e->t;
        if (k != NULL && sent < k->first_sent)
            k->first_sent = sent;
    }
    qsort(j, nj, sizeof *j, cmp_wjob_t);
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->worker < 0)
            continue;
        if (e->type == QC_EV_NOTE && qc_x(e->x)->note != NULL && !strcmp(qc_x(e->x)->note, "listen")) {
            lstate *l = find_lstate(&ls, &nl, &capl, e->worker, e->inc);
            if (l == NULL) {
                free(j);
                free(ls);
                return QC_ENOMEM;
            }
            if (qc_s(e->state) != NULL && !strcmp(qc_s(e->state), "open")) {
                l->open = 1;
                l->open_t = e->t;
                l->open_seq = e->seq;
            } else {
                l->open = 0;
            }
            continue;
        }
        /* a wait the end of the run cut short: "stop" with nothing in the
         * socket when the worker looked (at the note's t) */
        int stopped = e->type == QC_EV_NOTE && qc_x(e->x)->note != NULL &&
                      !strcmp(qc_x(e->x)->note, "listen wait") && qc_x(e->x)->wake != NULL &&
                      !strcmp(qc_x(e->x)->wake, "stop");
        if (!stopped && (e->type != QC_EV_INVOKE || e->op != QC_OP_CLAIM))
            continue;
        lstate *l = find_lstate(&ls, &nl, &capl, e->worker, e->inc);
        if (l == NULL) {
            free(j);
            free(ls);
            return QC_ENOMEM;
        }
        double prev_claim = l->prev_claim_t;
        if (!stopped)
            l->prev_claim_t = e->t;
        if (qc_x(e->x)->wake == NULL || !qc__has_time(qc_x(e->x)->wait_t) || !l->open)
            continue;
        int poll = !strcmp(qc_x(e->x)->wake, "poll") && qc__has_time(qc_x(e->x)->wait_ms);
        double end = poll ? qc_x(e->x)->wait_t + qc_x(e->x)->wait_ms : e->t;
        poll |= stopped; /* silent until e->t: as good as a timer that ran out */
        (*nwaits)++;
        /* jobs whose bound t_E + B falls inside (wait_t, end) */
        size_t lo = 0, hi = nj;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (j[mid].t_e + B <= qc_x(e->x)->wait_t)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = lo; k < nj && j[k].t_e + B < end; k++) {
            wjob *x = &j[k];
            if (x->notify_t <= l->open_t || x->enq_seq <= l->open_seq)
                continue; /* sent before this LISTEN registered */
            if (x->notify_t <= prev_claim)
                continue; /* may have been read by an earlier wait of W's */
            if (!poll)
                continue; /* a wait a notification ended cannot show one that never
                             came: no opportunity (decision 1142) */
            x->judged = 1;
            if (x->first_sent <= x->t_e + B)
                continue; /* picked up within the bound: fine */
            if (x->violated)
                continue;
            double silence = end - x->t_e;
            if (silence > *max_silence)
                *max_silence = silence;
            x->violated = 1;
            int64_t seqs[3] = {x->enq_seq, l->open_seq, e->seq};
            qc__check_violation(c, x->job, seqs, 3,
                                "job %lld (notify sent at %.0f ms, enqueue answered at %.0f) was "
                                "not claimed within %.0f ms: worker %d (incarnation %d), "
                                "listening since %.0f ms, waited from %.0f ms to %s at %.0f ms "
                                "with no notification",
                                (long long)x->job, x->notify_t, x->t_e, B, e->worker, e->inc,
                                l->open_t, qc_x(e->x)->wait_t,
                                stopped ? "the end of the run" : "its fallback timer", end);
        }
    }
    for (size_t k = 0; k < nj; k++)
        if (j[k].judged) {
            c->opportunities++;
            (*njudged)++;
        }
    free(j);
    free(ls);
    return 0;
}

/* The server's own count against the ledger's. */
static void check_server_count(const qc_history *h, qc_check *c, char *note, size_t n)
{
    long invokes = 0, answered = 0;
    int64_t calls = -1, seq = -1;
    int shared_ok = 1; /* the upper bound may be judged (the server was the run's alone) */
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
        if (e->type == QC_EV_NOTE && qc_x(e->x)->note && !strcmp(qc_x(e->x)->note, "server_count") &&
            qc_x(e->x)->calls >= 0) {
            calls = qc_x(e->x)->calls;
            seq = e->seq;
            shared_ok = qc_x(e->x)->exclusive != 0;
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
    /* Innocent explanation of a higher count: on a server qchaos did not
     * start, other clients (another run, the user's application) may run
     * the same statement text; only a lower count proves something there. */
    if (calls < answered - margin || (calls > invokes + margin && shared_ok)) {
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
    long wjudged = 0, wwaits = 0;
    double max_silence = 0;
    if (check_wakeups(h, out, &b, &wjudged, &wwaits, &max_silence) != 0) {
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
    char wake[160] = "";
    if (wwaits > 0)
        snprintf(wake, sizeof wake,
                 "; %ld LISTEN waits, %ld notified jobs judged against them (pickup bound %.0f "
                 "ms)",
                 wwaits, wjudged, b.pickup);
    snprintf(out->summary, sizeof out->summary,
             "%ld idle streaks (max %.1f/s; bound %.1f/s%s%.40s), %ld pauses (max %.0f ms; "
             "bound %.0f), %ld empty claims judged against a due job (longest due-to-claim "
             "%.0f ms)%s; %.60s",
             streaks, max_rate, b.rate, per[0] ? "; " : "", per, pauses, max_pause, b.pause,
             pickups, max_pickup, wake, server);
    qc__check_finish(out);
    return 0;
}
