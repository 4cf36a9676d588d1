/*
 * check_leases.c - the no_early_reap checker: a lease must not be taken
 * away before its lease_until (DESIGN.md "Checkers").
 *
 * Model.  Each OK claim event with a job opens a lease: its token, its
 * owner (worker and incarnation), and lease_until (server epoch ms).  Events
 * of the job are read in seq order; an OK renew with rows > 0 carrying the
 * lease's current (or first) token sets lease_until to the renew's (the
 * latest such renew's, even when it is shorter than what the lease had:
 * a renew that extends by a fixed time shorter than the claim's lease is
 * what the server holds from then on; decision 1125) and may rotate the
 * current token ("new_token").  Two ways to lose a lease
 * early are judged:
 *
 *   (a) reap: an OK reap event of the job that provably ran before the
 *       lease's lease_until (counting only renews answered before the reap
 *       was sent: a renew answered later may have run after the reap;
 *       except that a renew sent before the reap's answer and acknowledged
 *       with rows > 0 may set a lower lease_until: it may have run first,
 *       decision 1127).  The
 *       reaped lease is the one whose token the reap returned; a reap
 *       without a token took the job's latest lease answered before the
 *       reap was sent, unless another claim of the job was in flight while
 *       the reap ran (then it is not judged).  The reap ran at a server time
 *       of at most
 *           its "now" + the clock resolution + its own duration (client
 *           ms from invoke to answer: "now" may be read anywhere in it), or
 *           the lease's anchor bound below at the reap's answer,
 *       whichever is less; a reap with neither is not judged (counted and
 *       named in the summary: the protocol's reap returns no now_ms and the
 *       claim no now_ms either);
 *   (b) rejection: the owner's complete or renew with the current token
 *       answered OK with rows 0 although it provably ran before
 *       lease_until.  The server time it ran at is at most
 *           now(anchor) + (t of its answer - t of the anchor's invoke)
 *       for any anchor (the claim, or an acknowledged renew, with server
 *       "now"): the anchor's "now" was read after its invoke was sent and
 *       the request ran before its answer came.  The least such bound plus
 *       a clock margin (CLOCK_SLACK_MS + the ledger's clock resolution +
 *       CLOCK_DRIFT of the elapsed client time: the server's wall clock and
 *       the client's monotonic clock may be slewed apart) must be below
 *       lease_until.
 *
 *   (c) a lease granted short: an OK claim (or an OK renew with rows > 0:
 *       decision 962) whose lease_until is less than half the lease it
 *       asked for (`:lease_ms`, the header's lease_ms, judged only when the
 *       header says the step reads it: claim_reads_lease_ms,
 *       renew_reads_lease_ms) after its own server "now".  The lease began at a clock reading taken while the
 *       claim ran, so it is at most lease_until - now + the claim's own
 *       duration (client ms, invoke to answer) + the clock resolution; when
 *       even that is below lease_ms / 2 the lease is short (a unit slip,
 *       integer division: 600 ms -> 0 s).  Half, not all of it: a lease
 *       rounded to the server's clock resolution or to whole seconds up to
 *       a second short of a long lease is a protocol's choice.
 *
 * Innocent explanations, and why they cannot raise this alarm:
 *   - a starved client: answers logged late only raise the upper bounds
 *     (both are taken at the answer), so fewer requests and reaps are
 *     judged, never more;
 *   - a paused server: its clock runs on while it is stopped, and every
 *     bound is taken at an answer that came after the pause;
 *   - coarse server clocks (whole seconds, or ms rounded): the margin holds
 *     the coarsest resolution the ledger's server times show
 *     (qc__clock_resolution); a reported lease_until truncated down is
 *     earlier than the real one, which only weakens the rule;
 *   - "now" = the transaction start (now() in PostgreSQL): it is still a
 *     reading taken after the request was sent, which is all the bounds
 *     assume;
 *   - a server clock that steps (NTP, a VM resumed): a lease_until on the
 *     server's clock then passes sooner in real time, and a reap by the
 *     server's clock is right.  A reap's own "now" is preferred to the
 *     anchor bound, and when the ledger's server times contradict its
 *     client times (clock_consistent) the anchor bounds are not used at all;
 *   - a reordered ledger: bounds use client times and seq order within one
 *     ledger only;
 *   - several ledgers (a sharded run merged by qchaos audit): each has its
 *     own client clock and seqs, so the clock check is made per ledger, a
 *     lease's anchors and its owner's requests are of the claim's ledger
 *     (owner = worker, incarnation and ledger), a renew counts for a reap
 *     only when it provably came first (qc__before: the same ledger), and
 *     a reap of another ledger is judged by its own server "now" alone.
 *
 * No false alarm.  A rejection is not judged once the lease may have ended
 * or changed hands legitimately: after a complete or fail of it answered
 * OK with rows > 0 or unknown rows, or whose outcome is unknown (INFO, or an
 * invoke never answered: a lost_ack retry is rightly refused; but an INFO
 * followed by its worker's reset fault of the same job and token is a
 * request qchaos's proxy dropped before the server got it: known not to
 * have happened, so the retry after it is judged); after a
 * renew of it whose outcome is unknown (its token may have rotated); after
 * any request of its owner was refused; or after a violation was
 * already reported on it (one early loss, one violation).  A complete or
 * fail whose token names no lease of the job may have ended any of them.
 * A reap is not judged after the lease may have been released, nor without
 * its server "now" or a lease_until.  A request is only the owner's when
 * its worker and incarnation are the claim's.
 *
 * Cost: one sort of the relevant events by job, O(n log n); per job,
 * O(k * leases) in its k events.
 */
#include "checkers.h"
#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLOCK_SLACK_MS 1.0 /* timestamps are truncated to a microsecond or so */
#define CLOCK_DRIFT 1e-3   /* NTP slews a clock by at most 500 ppm */

typedef struct renewal {
    size_t lease; /* index in job_scan.l */
    size_t ev;    /* the OK renew event */
    double lease_until;
} renewal;

typedef struct lease {
    size_t claim;       /* the claim's OK event */
    const char *token0; /* token the claim returned */
    const char *token;  /* current token (after rotations) */
    int worker, inc;
    int file;           /* the claim's ledger: its owner's requests and its
                           anchors (base, t0) are on that ledger's client clock */
    double claim_until; /* the claim's lease_until, QC_NO_TIME */
    double until;       /* lease_until after acknowledged renews */
    long until_ev;      /* renew that set until, -1 for the claim */
    double t0;          /* client t of the claim's invoke, QC_NO_TIME */
    double base;        /* least (server now - client t of its invoke) */
    int has_base;
    int released; /* a complete / fail ended it, or may have */
    int lost;     /* a request of it was refused, or a renew's outcome is unknown */
    int reported; /* a violation was reported on it */
} lease;

typedef struct job_scan {
    lease *l;
    size_t nl, capl;
    renewal *rn;
    size_t nrn, caprn;
    int clock_ok; /* the server's clock agrees with the client's (clock_consistent) */
} job_scan;

/* Do the ledger's server times agree with its client times?  Every server
 * "now" was read between its request's invoke and answer, so the offset
 * (server - client) lies in [now - t answer, now - t invoke] for each; if
 * the greatest lower end exceeds the least upper end by more than the
 * drift over the run and the clock resolution, the server's clock stepped
 * (an NTP step, a VM pause) and bounds anchored on one reading cannot be
 * carried to another. */
static int clock_consistent_in(const qc_history *h, double res, int file, int *more)
{
    double lo = 0, hi = 0, t_min = 0, t_max = 0;
    int any = 0;

    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i], *inv;
        if (e->file > file)
            *more = 1;
        if (e->file != file || e->type != QC_EV_OK || !qc__has_time(e->now) ||
            !qc__has_time(e->t))
            continue;
        if ((inv = qc__invoke_of(h, e)) == NULL || !qc__has_time(inv->t) || inv->file != e->file)
            continue;
        double a = e->now - e->t, b = e->now - inv->t;
        if (!any || a > lo)
            lo = a;
        if (!any || b < hi)
            hi = b;
        if (!any || inv->t < t_min)
            t_min = inv->t;
        if (!any || e->t > t_max)
            t_max = e->t;
        any = 1;
    }
    return !any || lo <= hi + CLOCK_SLACK_MS + res + CLOCK_DRIFT * (t_max - t_min);
}

/* Per ledger: each harness process has its own client clock origin (t is
 * ms since its own start), so one offset (server - client) is looked for
 * in each ledger, never across two (a sharded run's ledgers would
 * otherwise look like a stepped server clock). */
static int clock_consistent(const qc_history *h, double res)
{
    int more = 1;
    for (int f = 0; more; f++) {
        more = 0;
        if (!clock_consistent_in(h, res, f, &more))
            return 0;
    }
    return 1;
}

static int is_request_op(qc_op op)
{
    return op == QC_OP_COMPLETE || op == QC_OP_RENEW || op == QC_OP_FAIL;
}

/* Events that matter: claims, reaps with a token, and complete / renew /
 * fail answers (ok, info) or invokes left unanswered. */
static int is_relevant(const qc_event *e, int answered)
{
    if (qc__is_claim(e))
        return 1;
    if (e->op == QC_OP_REAP)
        return e->type == QC_EV_OK && e->job != QC_NO_JOB;
    if (!is_request_op(e->op))
        return 0;
    return e->type == QC_EV_OK || e->type == QC_EV_INFO || (e->type == QC_EV_INVOKE && !answered);
}

static void anchor(lease *l, const qc_history *h, const qc_event *e)
{
    const qc_event *inv = qc__invoke_of(h, e);
    double b;

    if (inv == NULL || !qc__has_time(inv->t) || !qc__has_time(e->now) || e->file != l->file)
        return; /* another ledger's client clock has another origin */
    b = e->now - inv->t;
    if (!l->has_base || b < l->base)
        l->base = b;
    l->has_base = 1;
}

static int add_lease(job_scan *js, const qc_history *h, size_t i)
{
    const qc_event *e = &h->ev[i], *inv = qc__invoke_of(h, e);
    lease *l;

    if (qc__grow((void **)&js->l, &js->capl, js->nl + 1, sizeof *js->l) != 0)
        return QC_ENOMEM;
    l = &js->l[js->nl++];
    memset(l, 0, sizeof *l);
    l->claim = i;
    l->token0 = l->token = qc_s(e->token);
    l->worker = e->worker;
    l->inc = e->inc;
    l->file = e->file;
    l->claim_until = l->until = e->lease_until;
    l->until_ev = -1;
    l->t0 = inv != NULL ? inv->t : QC_NO_TIME;
    anchor(l, h, e);
    return 0;
}

static int token_is(const lease *l, const char *token)
{
    return (l->token != NULL && strcmp(l->token, token) == 0) ||
           (l->token0 != NULL && strcmp(l->token0, token) == 0);
}

/* The lease a token names: the newest one with it, the sender's own first. */
static lease *find_lease(job_scan *js, const char *token, const qc_event *e)
{
    if (token == NULL)
        return NULL;
    for (size_t k = js->nl; k-- > 0;)
        if (js->l[k].worker == e->worker && js->l[k].inc == e->inc && js->l[k].file == e->file &&
            token_is(&js->l[k], token))
            return &js->l[k];
    for (size_t k = js->nl; k-- > 0;)
        if (token_is(&js->l[k], token))
            return &js->l[k];
    return NULL;
}

/* Server ms relative to the lease's claim, for messages. */
static double rel(const qc_history *h, const lease *l, double server_ms)
{
    return server_ms - h->ev[l->claim].now;
}

/* Why reaps went unjudged, for the summary. */
typedef struct reap_tally {
    long judged, no_time, ambiguous, no_until;
} reap_tally;

/* (a): an OK reap of lease l at event i; refs[from..to) are the job's relevant
 * events after it (seq order), for the renews in flight while it ran. */
static void judge_reap(qc_check *c, const qc_history *h, job_scan *js, lease *l, size_t i,
                       const qc__jobref *refs, size_t from, size_t to, double res, reap_tally *rt)
{
    const qc_event *e = &h->ev[i], *inv = qc__invoke_of(h, e), *cl = &h->ev[l->claim];
    double until = l->claim_until, ub = -1;
    long until_ev = -1;
    int64_t seqs[3];
    int ns = 0;
    char tok[32], by[48];

    if (l->released || l->reported)
        return;
    for (size_t k = 0; k < js->nrn && inv != NULL; k++) {
        const renewal *r = &js->rn[k];
        /* answered before the reap was sent: provable in one ledger only */
        /* the latest one sets the lease (decision 1125): rn is in seq order */
        if (&js->l[r->lease] == l && qc__before(&h->ev[r->ev], inv)) {
            until = r->lease_until;
            until_ev = (long)r->ev;
        }
    }
    /* A renew of this lease sent before the reap was answered and
     * acknowledged with rows > 0 after it (decision 1127): it matched the
     * token, so in a protocol whose reap clears it, it ran first and its
     * lease (a fixed extension may be shorter than the claim's) may be the
     * one the reap saw.  Lowering the lease only removes violations. */
    for (size_t k = from; k < to && inv != NULL; k++) {
        const qc_event *f = &h->ev[refs[k].ev], *finv;
        const char *ft;
        if (f->op != QC_OP_RENEW || f->type != QC_EV_OK || f->rows <= 0 ||
            !qc__has_time(f->lease_until) || f->file != e->file ||
            (ft = qc__event_token(h, f)) == NULL || !token_is(l, ft) ||
            (finv = qc__invoke_of(h, f)) == NULL || !qc__before(finv, e))
            continue;
        if (!qc__has_time(until) || f->lease_until < until) {
            until = f->lease_until;
            until_ev = (long)refs[k].ev;
        }
    }
    if (!qc__has_time(until)) {
        rt->no_until++;
        return;
    }
    if (qc__has_time(e->now)) {
        double dur = 0;
        if (inv != NULL && qc__has_time(inv->t) && qc__has_time(e->t) && e->t > inv->t)
            dur = (e->t - inv->t) * (1.0 + CLOCK_DRIFT);
        ub = e->now + res + dur;
    }
    if (ub < 0 && l->has_base && qc__has_time(e->t) && js->clock_ok && e->file == l->file) {
        /* Only without the reap's own time: a server clock that stepped
         * forward makes the reap's "now" right and the anchor wrong. */
        double b = l->base + e->t + CLOCK_SLACK_MS + res +
                   (qc__has_time(l->t0) && e->t > l->t0 ? CLOCK_DRIFT * (e->t - l->t0) : 0);
        ub = b;
    }
    if (ub < 0) {
        rt->no_time++;
        return;
    }
    rt->judged++;
    c->opportunities++;
    if (ub >= until)
        return;
    l->reported = 1;
    seqs[ns++] = cl->seq;
    if (until_ev >= 0)
        seqs[ns++] = h->ev[until_ev].seq;
    seqs[ns++] = e->seq;
    qc__token_text(tok, sizeof tok, qc_s(e->token));
    if (until_ev >= 0)
        snprintf(by, sizeof by, "renew seq %lld", (long long)h->ev[until_ev].seq);
    else
        snprintf(by, sizeof by, "claim seq %lld", (long long)cl->seq);
    if (qc__has_time(cl->now))
        qc__check_violation(c, cl->job, seqs, ns,
                            "job %lld: reaped with %s at seq %lld (at the latest +%.0f ms after "
                            "the claim's server time) while its lease ran until +%.0f ms (%s): "
                            "%.0f ms early",
                            (long long)cl->job, tok, (long long)e->seq, rel(h, l, ub),
                            rel(h, l, until), by, until - ub);
    else
        qc__check_violation(c, cl->job, seqs, ns,
                            "job %lld: reaped with %s at seq %lld at least %.0f ms before its "
                            "lease_until (%s)",
                            (long long)cl->job, tok, (long long)e->seq, until - ub, by);
}

/* The lease a reap without a token took: the job's latest lease answered
 * before the reap was sent, when no other claim of the job (r[from..to))
 * was in flight while the reap ran.  NULL when that cannot be told. */
static lease *reaped_lease(job_scan *js, const qc_history *h, const qc_event *e,
                           const qc__jobref *r, size_t from, size_t to)
{
    const qc_event *inv = qc__invoke_of(h, e);
    lease *l = NULL;

    if (inv == NULL)
        return NULL;
    for (size_t k = 0; k < js->nl; k++) {
        const qc_event *cl = &h->ev[js->l[k].claim];
        if (!qc__before(cl, inv))
            return NULL; /* answered while the reap was in flight */
        l = &js->l[k];
    }
    for (size_t k = from; k < to; k++) {
        const qc_event *x = &h->ev[r[k].ev], *xi;
        if (!qc__is_claim(x))
            continue;
        xi = qc__invoke_of(h, x);
        if (xi == NULL || !qc__before(e, xi))
            return NULL; /* sent before the reap was answered: it may have run first */
    }
    return l;
}

/* (b): an OK complete / renew answer at event i, before it changes l. */
static void judge_request(qc_check *c, const qc_history *h, lease *l, size_t i, double res,
                          int clock_ok)
{
    const qc_event *e = &h->ev[i], *inv = qc__invoke_of(h, e), *cl = &h->ev[l->claim];
    const char *token = qc__event_token(h, e);
    double ub, margin;
    int64_t seqs[4];
    int ns = 0;
    char tok[32];

    if (e->op == QC_OP_FAIL || e->worker != l->worker || e->inc != l->inc || e->file != l->file)
        return;
    if (token == NULL || l->token == NULL || strcmp(token, l->token) != 0)
        return; /* not the current token */
    if (l->released || l->lost || l->reported || e->rows < 0)
        return;
    if (!qc__has_time(l->until) || !l->has_base || !qc__has_time(e->t) || !clock_ok)
        return;
    ub = l->base + e->t;
    margin = CLOCK_SLACK_MS + res +
             (qc__has_time(l->t0) && e->t > l->t0 ? CLOCK_DRIFT * (e->t - l->t0) : 0);
    if (!(ub + margin < l->until))
        return; /* it may have run after lease_until */
    c->opportunities++;
    if (e->rows != 0)
        return;
    l->reported = 1;
    seqs[ns++] = cl->seq;
    if (l->until_ev >= 0)
        seqs[ns++] = h->ev[l->until_ev].seq;
    if (inv != NULL)
        seqs[ns++] = inv->seq;
    seqs[ns++] = e->seq;
    qc__token_text(tok, sizeof tok, token);
    qc__check_violation(c, cl->job, seqs, ns,
                        "job %lld: %s by its owner worker %d with the current %s was refused "
                        "(rows 0, seq %lld) although it ran by +%.0f ms at the latest, before the "
                        "lease's end at +%.0f ms (claim seq %lld)",
                        (long long)cl->job, qc_op_name(e->op), e->worker, tok, (long long)e->seq,
                        rel(h, l, ub + margin), rel(h, l, l->until), (long long)cl->seq);
}

/* Is INFO event i a request the network dropped before the server got it?
 * The worker records the proxy's reset fault right after the request's
 * info, with the same job and token, only when the proxy dropped that
 * request itself (worker.c QC_FAULT_RESET, proxy.c: the first bytes after
 * the arm on an established connection): the outcome is known, it did not
 * happen.  Only the worker's next event is looked at. */
static int dropped_by_proxy(const qc_history *h, size_t i)
{
    const qc_event *e = &h->ev[i];
    const char *token = qc__event_token(h, e);

    for (size_t k = i + 1; k < h->n; k++) {
        const qc_event *f = &h->ev[k];
        if (f->file != e->file || f->worker != e->worker || f->inc != e->inc)
            continue;
        const char *ft = qc__event_token(h, f);
        return f->type == QC_EV_FAULT && qc_x(f->x)->fault != NULL && strcmp(qc_x(f->x)->fault, "reset") == 0 &&
               f->job == e->job && token != NULL && ft != NULL && strcmp(token, ft) == 0;
    }
    return 0;
}

/* Applies a renew, complete or fail event (any type) to the job's leases. */
static int change_lease(qc_check *c, job_scan *js, const qc_history *h, size_t i, double res)
{
    const qc_event *e = &h->ev[i];
    lease *l = find_lease(js, qc__event_token(h, e), e);
    int known = e->type == QC_EV_OK && e->rows >= 0;
    int owner = l != NULL && e->worker == l->worker && e->inc == l->inc && e->file == l->file;

    if (e->type == QC_EV_OK && l != NULL)
        judge_request(c, h, l, i, res, js->clock_ok);
    if (e->op == QC_OP_RENEW) {
        if (l == NULL)
            return 0;
        if (!known) {
            l->lost = 1; /* outcome unknown: the token may have rotated */
            return 0;
        }
        if (e->rows == 0) {
            l->lost |= owner; /* the owner was refused: the lease is gone */
            return 0;
        }
        if (qc__has_time(e->lease_until)) {
            if (qc__grow((void **)&js->rn, &js->caprn, js->nrn + 1, sizeof *js->rn) != 0)
                return QC_ENOMEM;
            js->rn[js->nrn++] = (renewal){(size_t)(l - js->l), i, e->lease_until};
            l->until = e->lease_until; /* the latest renew's (decision 1125) */
            l->until_ev = (long)i;
        }
        if (qc_s(e->new_token) != NULL)
            l->token = qc_s(e->new_token);
        anchor(l, h, e);
        return 0;
    }
    if (known && e->rows == 0) {
        if (owner)
            l->lost = 1;
        return 0;
    }
    if (e->type == QC_EV_INFO && dropped_by_proxy(h, i))
        return 0; /* it never reached the server: the lease is as it was */
    if (l != NULL) {
        l->released = 1;
        return 0;
    }
    for (size_t k = 0; k < js->nl; k++)
        js->l[k].released = 1; /* a token of no lease: it may have ended any */
    return 0;
}

/* (c): an OK claim event i, or an OK renew with rows > 0 (decision 962),
 * granted less than half its :lease_ms. */
static void judge_grant(qc_check *c, const qc_history *h, size_t i, double res)
{
    const qc_event *e = &h->ev[i], *inv = qc__invoke_of(h, e);
    int64_t seqs[2];
    int ns = 0;
    int reads = e->op == QC_OP_RENEW ? h->info.renew_reads_lease_ms : h->info.claim_reads_lease_ms;

    if (e->op == QC_OP_RENEW && !(e->type == QC_EV_OK && e->rows > 0))
        return;
    if (reads != 1 || h->info.lease_ms <= 0 || !qc__has_time(e->now) ||
        !qc__has_time(e->lease_until))
        return;
    double dur = 0;
    if (inv != NULL && qc__has_time(inv->t) && qc__has_time(e->t) && e->t > inv->t)
        dur = (e->t - inv->t) * (1.0 + CLOCK_DRIFT);
    double most = e->lease_until - e->now + dur + res;
    c->opportunities++;
    if (most >= (double)h->info.lease_ms / 2.0)
        return;
    if (inv != NULL)
        seqs[ns++] = inv->seq;
    seqs[ns++] = e->seq;
    qc__check_violation(c, qc__event_job(h, e), seqs, ns,
                        "job %lld: %s by worker %d (seq %lld) was granted a lease of %.0f ms "
                        "(lease_until - its now; at most %.0f ms counting its %.0f ms in flight) "
                        "where it asked for :lease_ms = %ld ms: the lease is short",
                        (long long)qc__event_job(h, e), qc_op_name(e->op), e->worker,
                        (long long)e->seq,
                        (double)lround(e->lease_until - e->now), most, dur, h->info.lease_ms);
}

int qc_check_no_early_reap(const qc_history *h, qc_check *out)
{
    qc__jobref *r = NULL;
    unsigned char *answered = NULL;
    job_scan js;
    size_t n = 0;
    reap_tally rt = {0, 0, 0, 0};
    double res = qc__clock_resolution(h);
    int rc = 0;

    memset(out, 0, sizeof *out);
    memset(&js, 0, sizeof js);
    out->name = "no_early_reap";
    js.clock_ok = clock_consistent(h, res);
    answered = qc__answered_invokes(h);
    r = malloc((h->n + 1) * sizeof *r);
    if (answered == NULL || r == NULL) {
        rc = QC_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job;
        if (is_relevant(e, answered[i]) && (job = qc__event_job(h, e)) != QC_NO_JOB)
            r[n++] = (qc__jobref){job, i};
    }
    qc__jobrefs_sort(r, n);
    for (size_t a = 0, b; a < n && rc == 0; a = b) {
        js.nl = 0;
        js.nrn = 0;
        for (b = a; b < n && r[b].job == r[a].job && rc == 0; b++) {
            const qc_event *e = &h->ev[r[b].ev];
            if (qc__is_claim(e)) {
                rc = add_lease(&js, h, r[b].ev);
                judge_grant(out, h, r[b].ev, res);
            } else if (e->op == QC_OP_REAP) {
                size_t end = b + 1;
                while (end < n && r[end].job == r[a].job)
                    end++;
                lease *l = qc_s(e->token) != NULL ? find_lease(&js, qc_s(e->token), e)
                                            : reaped_lease(&js, h, e, r, b + 1, end);
                if (l != NULL)
                    judge_reap(out, h, &js, l, r[b].ev, r, b + 1, end, res, &rt);
                else if (qc_s(e->token) == NULL && js.nl > 0)
                    rt.ambiguous++;
            } else {
                rc = change_lease(out, &js, h, r[b].ev, res);
                if (e->op == QC_OP_RENEW)
                    judge_grant(out, h, r[b].ev, res);
            }
        }
    }
out:
    free(r);
    free(answered);
    free(js.l);
    free(js.rn);
    if (rc != 0) {
        free(out->v);
        out->v = NULL;
        out->nstored = 0;
        return rc;
    }
    int len = snprintf(out->summary, sizeof out->summary,
                       "%ld reaps of known leases, %ld owner completes / renews sent before "
                       "lease_until; %ld leases taken away early",
                       rt.judged, out->opportunities - rt.judged, out->nviolations);
    if (!js.clock_ok && len > 0 && (size_t)len < sizeof out->summary)
        len += snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                        "; the server's clock stepped against the client's: owner requests and "
                        "reaps without their own time not judged");
    long unjudged = rt.no_time + rt.ambiguous + rt.no_until;
    if (unjudged > 0 && len > 0 && (size_t)len < sizeof out->summary)
        snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                 "; %s%ld reaps not judged (%ld without a server time: no now_ms in reap or "
                 "claim, %ld with another claim in flight, %ld without lease_until)",
                 rt.judged == 0 ? "reap rule NOT JUDGED: " : "", unjudged, rt.no_time,
                 rt.ambiguous, rt.no_until);
    qc__check_finish(out);
    return 0;
}
