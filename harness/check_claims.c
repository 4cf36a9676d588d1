/*
 * check_claims.c - the exclusive_claim checker: no job may have two live
 * leases at once (DESIGN.md "Checkers"), judged on the server times the
 * ledger recorded, never on the workers' hopes.
 *
 * Model.  Each OK claim event with a job opens a lease: start = its "now",
 * end = its "lease_until" (server epoch ms).  Events of the same job are
 * then read in seq order:
 *   - an OK renew with rows > 0 whose token is the lease's (first or
 *     current, rotated) token sets the end to the renew's lease_until, and
 *     a "new_token" becomes the lease's current token.  When the renew came
 *     after the lease had lapsed, the lease is live again only from the
 *     renew on: a second live interval (segment) [renew time, lease_until);
 *   - an OK complete or fail with rows > 0 (or unknown rows), or one whose
 *     outcome is unknown (INFO, or an invoke never answered), ends the lease
 *     no later than its server time: "now" when the answer carried it, else
 *     the lower bound
 *         start + (t of its invoke - t of the claim's answer)
 *     (client monotonic ms: the server cannot have run it earlier);
 *   - a reap does not end a lease: a reap of a live lease followed by a new
 *     claim is exactly the overlap this checker exists to find.
 * Two leases of one job from different claim events overlap when, taking
 * the segment x that starts first and the other y, y.start + r < x.end,
 * where r is the resolution of the server clock the ledger shows
 * (qc__clock_resolution: 1000 ms when a protocol reports whole seconds).
 * Each overlapping pair of leases is reported once.
 *
 * Innocent explanations, and why they cannot raise this alarm: a starved
 * client or a paused server delays answers but not the server times they
 * carry, and lower bounds taken from client times stay lower bounds (the
 * server cannot have run a request before it was sent, nor answered a
 * claim before it ran); a coarse clock (whole seconds, ms rounded) or two
 * readings of different resolution is the margin r; a reordered ledger is
 * sorted by seq and only events of one ledger are combined; a claim whose
 * "now" is its transaction's start (now() in a step of several statements)
 * may have taken the row up to its request's duration later: the later
 * lease of a pair is taken to begin that much later (qc__lease_seg_slack),
 * so only an overlap longer than the claim took is proven.
 *
 * No false alarm.  Every unknown is resolved in the system's favour: a lease
 * whose claim has no "now" cannot be placed and is not checked (nor counted
 * as an opportunity); a claim without lease_until is live only at its
 * start; an INFO renew, a renew with unknown rows or an unknown lease_until
 * extends nothing; a renew after a (possible) release extends nothing; a
 * renew without "now" is placed at the latest moment it can have run,
 *     start + (t of its answer - t of the claim's invoke);
 * a complete or fail whose token matches no lease of the job (no token, or
 * a token the ledger never saw) is assumed to have ended every lease of the
 * job, each at the lower bound above.
 *
 * The lease building (qc__leases_visit) is shared with group_exclusive
 * (check_groups.c), which sweeps the leases of all jobs of one group
 * instead of those of one job.
 *
 * Cost: O(n log n) (one sort of the relevant events by job); per job,
 * O(k log k + pairs) in its k segments.
 */
#include "checkers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEGS QC__LEASE_MAX_SEGS

typedef qc__lease lease;
typedef qc__lease_seg seg;

/* The leases of the job being built. */
typedef struct job_scan {
    lease *l;
    size_t nl, capl;
} job_scan;

/* One segment of one lease, for the per-job sweep.  slack: how much
 * later than s the segment may really have begun (its opener's "now" may be
 * any reading taken while its request ran: the transaction start, say). */
typedef struct item {
    double s, e, slack;
    size_t lease;
    int seg;
} item;

/* exclusive_claim's state across jobs. */
typedef struct claim_scan {
    qc_check *c;
    item *it;
    size_t capit;
    size_t *pair; /* reported lease pairs (a, b), two entries each */
    size_t npair, cappair;
    size_t jobs;
    long unplaced;
    double res; /* server clock resolution (qc__clock_resolution): the margin of an overlap */
} claim_scan;

static int is_claim(const qc_event *e)
{
    return e->type == QC_EV_OK && e->op == QC_OP_CLAIM && e->job != QC_NO_JOB && e->rows != 0;
}

/* Renew, complete or fail events that may change a lease: answers (ok or
 * info), and complete / fail invokes left unanswered (outcome unknown). */
static int is_lease_change(const qc_event *e, int answered)
{
    if (e->op == QC_OP_RENEW)
        return e->type == QC_EV_OK;
    if (e->op != QC_OP_COMPLETE && e->op != QC_OP_FAIL)
        return 0;
    return e->type == QC_EV_OK || e->type == QC_EV_INFO || (e->type == QC_EV_INVOKE && !answered);
}

/* Client time at which the request of event e was sent. */
static double invoke_t(const qc_history *h, const qc_event *e)
{
    if (e->type == QC_EV_INVOKE)
        return e->t;
    return e->invoke >= 0 ? h->ev[e->invoke].t : QC_NO_TIME;
}

static int add_lease(job_scan *js, const qc_history *h, size_t i)
{
    const qc_event *e = &h->ev[i];
    lease *l;

    if (qc__grow((void **)&js->l, &js->capl, js->nl + 1, sizeof *js->l) != 0)
        return QC_ENOMEM;
    l = &js->l[js->nl++];
    memset(l, 0, sizeof *l);
    l->claim = (long)i;
    l->token0 = l->token = qc_s(e->token);
    l->worker = e->worker;
    l->inc = e->inc;
    l->placed = qc__has_time(e->now);
    l->start = e->now;
    l->t_ok = e->t;
    l->t_inv = invoke_t(h, e);
    if (l->placed) {
        l->nseg = 1;
        l->seg[0].s = e->now;
        l->seg[0].e = qc__has_time(e->lease_until) ? e->lease_until : e->now;
        l->seg[0].s_ev = (long)i;
        l->seg[0].e_ev = -1;
        l->seg[0].kind = QC__END_CLAIM;
    }
    return 0;
}

static int token_is(const lease *l, const char *token)
{
    return (l->token != NULL && strcmp(l->token, token) == 0) ||
           (l->token0 != NULL && strcmp(l->token0, token) == 0);
}

/* The lease an event's token names: the newest one with that token, the
 * sender's own first. */
static lease *find_lease(job_scan *js, const char *token, const qc_event *e)
{
    if (token == NULL)
        return NULL;
    for (size_t k = js->nl; k-- > 0;)
        if (js->l[k].worker == e->worker && js->l[k].inc == e->inc && token_is(&js->l[k], token))
            return &js->l[k];
    for (size_t k = js->nl; k-- > 0;)
        if (token_is(&js->l[k], token))
            return &js->l[k];
    return NULL;
}

static void renew_lease(lease *l, const qc_history *h, size_t i)
{
    const qc_event *e = &h->ev[i];
    seg *last;
    double at;

    if (l->released)
        return;
    if (qc_s(e->new_token) != NULL)
        l->token = qc_s(e->new_token);
    if (!l->placed || !qc__has_time(e->lease_until))
        return;
    last = &l->seg[l->nseg - 1];
    if (qc__has_time(e->now))
        at = e->now;
    else if (qc__has_time(e->t) && qc__has_time(l->t_inv))
        at = l->start + (e->t - l->t_inv); /* the latest it can have run */
    else
        return;
    if (at < last->e) {
        last->e = e->lease_until;
        last->e_ev = (long)i;
        last->kind = QC__END_RENEW;
    } else if (at < e->lease_until && l->nseg < MAX_SEGS) {
        /* The lease had lapsed: live again from the renew on. */
        seg *s = &l->seg[l->nseg++];
        s->s = at;
        s->e = e->lease_until;
        s->s_ev = (long)i;
        s->e_ev = -1;
        s->kind = QC__END_CLAIM;
    }
}

static void release_lease(lease *l, const qc_history *h, size_t i)
{
    const qc_event *e = &h->ev[i];
    int exact = e->type == QC_EV_OK && qc__has_time(e->now);
    double at, t_inv = invoke_t(h, e);

    l->released = 1;
    if (!l->placed)
        return;
    if (exact)
        at = e->now;
    else if (qc__has_time(t_inv) && qc__has_time(l->t_ok) && t_inv > l->t_ok)
        at = l->start + (t_inv - l->t_ok);
    else
        at = l->start;
    for (int k = 0; k < l->nseg; k++) {
        if (l->seg[k].e > at) {
            l->seg[k].e = at;
            l->seg[k].e_ev = (long)i;
            l->seg[k].kind = exact ? QC__END_RELEASE : QC__END_RELEASE_BOUND;
        }
    }
}

static void change_lease(job_scan *js, const qc_history *h, size_t i)
{
    const qc_event *e = &h->ev[i];
    lease *l = find_lease(js, qc__event_token(h, e), e);

    if (e->op == QC_OP_RENEW) {
        if (e->type == QC_EV_OK && e->rows > 0 && l != NULL)
            renew_lease(l, h, i);
        return;
    }
    if (e->type == QC_EV_OK && e->rows == 0)
        return; /* the server says nothing changed */
    if (l != NULL) {
        release_lease(l, h, i);
        return;
    }
    for (size_t k = 0; k < js->nl; k++)
        release_lease(&js->l[k], h, i);
}

static int cmp_item(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;

    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    if (a->lease != b->lease)
        return a->lease < b->lease ? -1 : 1;
    return a->seg - b->seg;
}

double qc__lease_seg_slack(const qc_history *h, const lease *l, const seg *x)
{
    const qc_event *op = &h->ev[x->s_ev], *inv = qc__invoke_of(h, op);

    if (x->s_ev != l->claim || inv == NULL || !qc__has_time(inv->t) || !qc__has_time(op->t) ||
        op->t <= inv->t)
        return 0; /* a renew's segment starts at the latest it can have run already */
    return (op->t - inv->t) * 1.001;
}

/* Says how segment x came to end, for the message. */
void qc__lease_describe_end(char *buf, size_t n, const qc_history *h, const lease *a, const seg *x)
{
    const qc_event *opener = &h->ev[x->s_ev];
    const qc_event *ender = x->e_ev >= 0 ? &h->ev[x->e_ev] : NULL;
    char from[64] = "";
    double rel = x->e - a->start;

    if (x->s_ev != a->claim)
        snprintf(from, sizeof from, "live again from renew seq %lld, ", (long long)opener->seq);
    switch (x->kind) {
    case QC__END_CLAIM:
        if (x->s_ev == a->claim && !qc__has_time(opener->lease_until))
            snprintf(buf, n, "%sno lease_until", from);
        else
            snprintf(buf, n, "%slease until +%.0f ms", from, rel);
        break;
    case QC__END_RENEW:
        snprintf(buf, n, "%srenewed at seq %lld until +%.0f ms", from, (long long)ender->seq, rel);
        break;
    case QC__END_RELEASE:
        snprintf(buf, n, "%sreleased by %s seq %lld at +%.0f ms", from, qc_op_name(ender->op),
                 (long long)ender->seq, rel);
        break;
    case QC__END_RELEASE_BOUND:
        snprintf(buf, n, "%sreleased by %s seq %lld no earlier than +%.0f ms", from,
                 qc_op_name(ender->op), (long long)ender->seq, rel);
        break;
    }
}

int qc__leases_visit(const qc_history *h, qc__lease_visit_fn visit, void *arg)
{
    qc__jobref *r = NULL;
    unsigned char *answered = NULL;
    job_scan js;
    size_t n = 0;
    int rc = 0;

    memset(&js, 0, sizeof js);
    answered = qc__answered_invokes(h);
    r = malloc((h->n + 1) * sizeof *r);
    if (answered == NULL || r == NULL) {
        rc = QC_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job;
        if (is_claim(e))
            r[n++] = (qc__jobref){e->job, i};
        else if (is_lease_change(e, answered[i]) && (job = qc__event_job(h, e)) != QC_NO_JOB)
            r[n++] = (qc__jobref){job, i};
    }
    qc__jobrefs_sort(r, n);
    for (size_t a = 0, b; a < n && rc == 0; a = b) {
        js.nl = 0;
        for (b = a; b < n && r[b].job == r[a].job && rc == 0; b++) {
            if (is_claim(&h->ev[r[b].ev]))
                rc = add_lease(&js, h, r[b].ev);
            else
                change_lease(&js, h, r[b].ev);
        }
        if (rc == 0 && js.nl > 0)
            rc = visit(arg, h, r[a].job, js.l, js.nl);
    }
out:
    free(r);
    free(answered);
    free(js.l);
    return rc;
}

/* ---- exclusive_claim -------------------------------------------------- */

static void report_overlap(qc_check *c, const qc_history *h, int64_t job, const lease *a,
                           const seg *x, const lease *b, const seg *y)
{
    int64_t seqs[5];
    int ns = 0;
    char end[160], begin[80];
    const qc_event *ca = &h->ev[a->claim], *cb = &h->ev[b->claim];

    seqs[ns++] = ca->seq;
    seqs[ns++] = cb->seq;
    seqs[ns++] = h->ev[x->s_ev].seq;
    seqs[ns++] = h->ev[y->s_ev].seq;
    if (x->e_ev >= 0)
        seqs[ns++] = h->ev[x->e_ev].seq;
    qc__lease_describe_end(end, sizeof end, h, a, x);
    if (y->s_ev == b->claim)
        snprintf(begin, sizeof begin, "at +%.0f ms", y->s - a->start);
    else
        snprintf(begin, sizeof begin, "renewed at seq %lld, +%.0f ms",
                 (long long)h->ev[y->s_ev].seq, y->s - a->start);
    qc__check_violation(c, job, seqs, ns,
                        "job %lld claimed by worker %d (seq %lld, %s) and by worker %d "
                        "(seq %lld, %s) while the first lease was live",
                        (long long)job, ca->worker, (long long)ca->seq, end, cb->worker,
                        (long long)cb->seq, begin);
}

/* Was the pair of leases (a, b) already reported for this job? */
static int seen_pair(claim_scan *cs, size_t a, size_t b, int *err)
{
    size_t lo = a < b ? a : b, hi = a < b ? b : a;

    for (size_t k = 0; k < cs->npair; k++)
        if (cs->pair[2 * k] == lo && cs->pair[2 * k + 1] == hi)
            return 1;
    if (qc__grow((void **)&cs->pair, &cs->cappair, 2 * (cs->npair + 1), sizeof *cs->pair) != 0) {
        *err = QC_ENOMEM;
        return 1;
    }
    cs->pair[2 * cs->npair] = lo;
    cs->pair[2 * cs->npair + 1] = hi;
    cs->npair++;
    return 0;
}

/* Counts one job's claims and sweeps the segments of its leases for
 * overlaps (a qc__lease_visit_fn). */
static int sweep_job(void *arg, const qc_history *h, int64_t job, const lease *l, size_t nl)
{
    claim_scan *cs = arg;
    size_t n = 0;
    int rc = 0;

    cs->jobs++;
    for (size_t k = 0; k < nl; k++) {
        if (l[k].placed)
            cs->c->opportunities++;
        else
            cs->unplaced++;
        n += (size_t)l[k].nseg;
    }
    if (qc__grow((void **)&cs->it, &cs->capit, n, sizeof *cs->it) != 0)
        return QC_ENOMEM;
    n = 0;
    for (size_t k = 0; k < nl; k++)
        for (int s = 0; s < l[k].nseg; s++)
            cs->it[n++] = (item){l[k].seg[s].s, l[k].seg[s].e,
                                 qc__lease_seg_slack(h, &l[k], &l[k].seg[s]), k, s};
    if (n < 2)
        return 0; /* one segment cannot overlap another */
    qsort(cs->it, n, sizeof *cs->it, cmp_item);
    cs->npair = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const item *x = &cs->it[i];
        for (size_t j = i + 1; j < n && cs->it[j].s + cs->res < x->e && rc == 0; j++) {
            const item *y = &cs->it[j];
            if (y->s + y->slack + cs->res >= x->e)
                continue; /* it may have begun only when x had ended */
            if (y->lease == x->lease || seen_pair(cs, x->lease, y->lease, &rc))
                continue;
            const lease *a = &l[x->lease], *b = &l[y->lease];
            report_overlap(cs->c, h, job, a, &a->seg[x->seg], b, &b->seg[y->seg]);
        }
    }
    return rc;
}

/* ---- claimed while or after being completed -----------------------------
 *
 * A complete K of job J acknowledged with rows > 0 made J done, and done is
 * final.  Let CY be the claim that gave the completing worker Y the job: its
 * latest OK claim of J answered before K was sent.  A claim C of J (by anyone
 * but CY itself) that was SENT after CY was answered and ANSWERED after K was
 * sent, in the same ledger, is a violation:
 *   - C ran after CY (it was sent after CY's answer arrived);
 *   - if C ran after K, it handed out a finished job (shared/cases.md C01: a
 *     claim read from a snapshot older than the completion; the job runs
 *     twice);
 *   - if it ran between CY and K, the job was free for C only if Y had lost
 *     it (lease expired, reaped, or a claim that takes expired leases), and
 *     then Y's complete must have been refused; it was accepted, so the job
 *     was taken from a live owner or a superseded claim was honoured.
 *
 * Innocent explanations, and why they cannot raise this alarm:
 *   - a starved client (answers delayed by more than a lease): C may have
 *     run long before its answer was logged, even before CY, and the job
 *     was then recovered from C's worker and claimed by Y (issue 11: job
 *     15770).  That is why C must have been SENT after CY was answered; a
 *     claim sent earlier is never judged here, however late its answer;
 *   - a paused server: it delays answers, never reorders a request sent
 *     after another's answer arrived ahead of it;
 *   - coarse or early server clocks (whole seconds, now() = transaction
 *     start): no server time is used at all, so the rule holds in every
 *     model;
 *   - a reordered ledger file: seq is taken when an event is appended (an
 *     invoke before the request is sent, an answer after it arrived), and
 *     the reader sorts by seq; ledgers of different harness processes are
 *     never compared (their seqs do not order).
 *
 * Opportunities: completed jobs for which the ledger has some claim (of any
 * job) sent after the completer's claim was answered and answered after the
 * complete was sent: the window in which a violation could be seen. */

typedef struct claim_window {
    int64_t ok;      /* seq of the claim's answer */
    int64_t inv_max; /* greatest invoke seq of the claims answered at or after ok */
} claim_window;

static int cmp_window(const void *pa, const void *pb)
{
    const claim_window *a = pa, *b = pb;

    return a->ok < b->ok ? -1 : a->ok > b->ok;
}

/* Claims of one ledger file, sorted by answer seq, each with the greatest
 * invoke seq among the claims answered at or after it (a suffix maximum). */
typedef struct file_claims {
    claim_window *w;
    size_t n, cap;
} file_claims;

/* Is there a claim sent after seq sent_after and answered after seq
 * answered_after in fc? */
static int window_open(const file_claims *fc, int64_t sent_after, int64_t answered_after)
{
    size_t lo = 0, hi = fc->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (fc->w[mid].ok <= answered_after)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < fc->n && fc->w[lo].inv_max > sent_after;
}

static void report_claimed_after_done(qc_check *c, int64_t job,
                                      const qc_event *cy, const qc_event *dinv,
                                      const qc_event *done, const qc_event *inv,
                                      const qc_event *e)
{
    int64_t seqs[6];
    int ns = 0;

    seqs[ns++] = cy->seq;
    if (dinv != NULL)
        seqs[ns++] = dinv->seq;
    seqs[ns++] = done->seq;
    seqs[ns++] = inv->seq;
    seqs[ns++] = e->seq;
    if (inv->seq > done->seq)
        qc__check_violation(c, job, seqs, ns,
                            "job %lld claimed again by worker %d (req %lld, sent at seq %lld) "
                            "after its complete by worker %d was acknowledged with rows %ld at seq "
                            "%lld",
                            (long long)job, e->worker, (long long)e->req, (long long)inv->seq,
                            done->worker, (long)done->rows, (long long)done->seq);
    else
        qc__check_violation(c, job, seqs, ns,
                            "job %lld claimed by worker %d (sent at seq %lld, after worker %d's "
                            "claim seq %lld was answered; answered at seq %lld) while worker %d's "
                            "complete was in flight (sent at seq %lld, acknowledged with rows %ld "
                            "at seq %lld)",
                            (long long)job, e->worker, (long long)inv->seq, cy->worker,
                            (long long)cy->seq, (long long)e->seq, done->worker,
                            (long long)(dinv != NULL ? dinv->seq : done->seq), (long)done->rows,
                            (long long)done->seq);
}

static int check_claimed_after_done(const qc_history *h, qc_check *c, long *watched,
                                    long *again)
{
    qc__jobref *r = NULL;
    size_t n = 0;
    file_claims *fc = NULL;
    int nfiles = 1, rc = 0;

    *watched = *again = 0;
    for (size_t i = 0; i < h->n; i++)
        if (h->ev[i].file >= nfiles)
            nfiles = h->ev[i].file + 1;
    if ((fc = calloc((size_t)nfiles, sizeof *fc)) == NULL ||
        (h->n > 0 && (r = malloc(h->n * sizeof *r)) == NULL)) {
        rc = QC_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i], *inv;
        if (qc__is_claim(e) && e->file >= 0 && (inv = qc__invoke_of(h, e)) != NULL) {
            file_claims *f = &fc[e->file];
            if (qc__grow((void **)&f->w, &f->cap, f->n + 1, sizeof *f->w) != 0) {
                rc = QC_ENOMEM;
                goto out;
            }
            f->w[f->n++] = (claim_window){e->seq, inv->seq};
        }
        if (qc__is_claim(e) ||
            (e->type == QC_EV_OK && e->op == QC_OP_COMPLETE && e->rows > 0)) {
            int64_t job = qc__event_job(h, e);
            if (job != QC_NO_JOB)
                r[n++] = (qc__jobref){job, i};
        }
    }
    for (int f = 0; f < nfiles; f++) {
        file_claims *x = &fc[f];
        if (x->n > 1)
            qsort(x->w, x->n, sizeof *x->w, cmp_window);
        for (size_t k = x->n; k-- > 1;)
            if (x->w[k].inv_max > x->w[k - 1].inv_max)
                x->w[k - 1].inv_max = x->w[k].inv_max;
    }
    qc__jobrefs_sort(r, n);
    for (size_t a = 0, b; a < n; a = b) {
        const qc_event *done = NULL, *dinv = NULL, *cy = NULL;
        int64_t sent = INT64_MAX; /* seq the first acknowledged complete was sent at */
        for (b = a + 1; b < n && r[b].job == r[a].job; b++)
            ;
        for (size_t k = a; k < b; k++) {
            const qc_event *e = &h->ev[r[k].ev], *inv;
            if (e->op != QC_OP_COMPLETE)
                continue;
            inv = qc__invoke_of(h, e);
            int64_t s = inv != NULL ? inv->seq : e->seq;
            if (s < sent) {
                sent = s;
                done = e;
                dinv = inv;
            }
        }
        if (done == NULL)
            continue;
        /* The completer's own claim: its latest OK claim of the job
         * answered before the complete was sent. */
        for (size_t k = a; k < b; k++) {
            const qc_event *e = &h->ev[r[k].ev];
            if (e->op == QC_OP_CLAIM && e->file == done->file && e->worker == done->worker &&
                e->inc == done->inc && e->seq < sent)
                cy = e;
        }
        if (cy == NULL || done->file < 0)
            continue; /* nothing proves when the completer got the job */
        if (window_open(&fc[done->file], cy->seq, sent))
            (*watched)++;
        for (size_t k = a; k < b; k++) {
            const qc_event *e = &h->ev[r[k].ev], *inv;
            if (e->op != QC_OP_CLAIM || e == cy || e->file != done->file || e->seq <= sent)
                continue;
            inv = qc__invoke_of(h, e);
            if (inv == NULL || inv->seq <= cy->seq)
                continue; /* it may have run before the completer's claim */
            report_claimed_after_done(c, r[a].job, cy, dinv, done, inv, e);
            (*again)++;
            break; /* one violation per job */
        }
    }
out:
    for (int f = 0; fc != NULL && f < nfiles; f++)
        free(fc[f].w);
    free(fc);
    free(r);
    return rc;
}

/* ---- two open claims in the transaction model -------------------------
 *
 * Under the transaction model a claim holds its job from its answer until
 * its transaction commits (complete or fail answered OK: the worker writes
 * that answer only after the commit) or dies (issue 18: the model still
 * has an interval per claim).  Claim A of job J, answered at seq a, whose
 * worker then completed or failed J with an OK answer sent at seq c,
 * held J over [a, c].  Another worker's claim B of J that was SENT after
 * a and ANSWERED before c got J while A's transaction was provably open:
 * two open claims on one job (reads that do not honour the row lock).
 *
 * Innocent explanations: a starved client or a paused server delays the
 * answers, but B sent after A's answer arrived ran after A's claim, and B
 * answered before A's commit was sent ran before it; A's transaction cannot
 * have died and come back, since its commit was answered OK; no server time
 * is used; only events of one ledger are compared. */
static int check_open_claims(const qc_history *h, qc_check *c, long *pairs)
{
    qc__jobref *r = NULL;
    size_t n = 0;

    *pairs = 0;
    if (h->n > 0 && (r = malloc(h->n * sizeof *r)) == NULL)
        return QC_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job;
        if (qc__is_claim(e) && qc__invoke_of(h, e) != NULL)
            r[n++] = (qc__jobref){e->job, i};
        else if (e->type == QC_EV_OK && (e->op == QC_OP_COMPLETE || e->op == QC_OP_FAIL) &&
                 qc__invoke_of(h, e) != NULL && (job = qc__event_job(h, e)) != QC_NO_JOB)
            r[n++] = (qc__jobref){job, i};
    }
    qc__jobrefs_sort(r, n);
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && r[b].job == r[a].job; b++)
            ;
        int reported = 0;
        for (size_t k = a; k < b && !reported; k++) {
            const qc_event *ca = &h->ev[r[k].ev], *end = NULL;
            if (ca->op != QC_OP_CLAIM)
                continue;
            for (size_t j = k + 1; j < b && end == NULL; j++) {
                const qc_event *x = &h->ev[r[j].ev];
                if (x->op != QC_OP_CLAIM && x->file == ca->file && x->worker == ca->worker &&
                    x->inc == ca->inc)
                    end = x;
            }
            if (end == NULL)
                continue;
            const qc_event *einv = qc__invoke_of(h, end);
            /* The commit must be the first request A sent after its claim:
             * after a lost answer its transaction's fate is unknown. */
            int first = 1;
            for (size_t x = r[k].ev + 1; x < h->n && h->ev[x].seq < einv->seq && first; x++) {
                const qc_event *y = &h->ev[x];
                if (y->type == QC_EV_INVOKE && y->file == ca->file && y->worker == ca->worker &&
                    y->inc == ca->inc)
                    first = 0;
            }
            if (!first)
                continue;
            (*pairs)++;
            for (size_t j = a; j < b; j++) {
                const qc_event *cb = &h->ev[r[j].ev], *binv;
                if (cb->op != QC_OP_CLAIM || cb == ca || cb->file != ca->file ||
                    (cb->worker == ca->worker && cb->inc == ca->inc))
                    continue;
                binv = qc__invoke_of(h, cb);
                if (binv->seq <= ca->seq || cb->seq >= einv->seq)
                    continue;
                int64_t seqs[] = {ca->seq, binv->seq, cb->seq, einv->seq, end->seq};
                qc__check_violation(c, r[a].job, seqs, 5,
                                    "job %lld claimed by worker %d (sent seq %lld, answered seq "
                                    "%lld) while worker %d held it in its open transaction "
                                    "(claim answered seq %lld, committed by the %s sent at seq "
                                    "%lld)",
                                    (long long)r[a].job, cb->worker, (long long)binv->seq,
                                    (long long)cb->seq, ca->worker, (long long)ca->seq,
                                    qc_op_name(end->op), (long long)einv->seq);
                reported = 1;
                break;
            }
        }
    }
    free(r);
    return 0;
}

int qc_check_exclusive_claim(const qc_history *h, qc_check *out)
{
    claim_scan cs;
    long watched = 0, again = 0;
    int rc, txn = strcmp(h->info.model, "transaction") == 0;

    memset(out, 0, sizeof *out);
    memset(&cs, 0, sizeof cs);
    out->name = "exclusive_claim";
    cs.c = out;
    cs.res = qc__clock_resolution(h);
    rc = qc__leases_visit(h, sweep_job, &cs);
    free(cs.it);
    free(cs.pair);
    long pairs = out->nviolations;
    if (rc == 0) {
        /* The transaction model has no lease: its claims are not placed
         * on a lease timeline (an overlap found anyway stays a FAIL). */
        if (txn)
            out->opportunities = 0;
        rc = check_claimed_after_done(h, out, &watched, &again);
    }
    long held = 0, open_pairs = 0;
    if (rc == 0 && txn) {
        long before = out->nviolations;
        rc = check_open_claims(h, out, &held);
        open_pairs = out->nviolations - before;
        out->opportunities += held;
    }
    if (rc != 0) {
        free(out->v);
        out->v = NULL;
        out->nstored = 0;
        return rc;
    }
    long leases = out->opportunities;
    out->opportunities += watched;
    int len;
    if (txn)
        len = snprintf(out->summary, sizeof out->summary,
                       "transaction model (no leases): %ld claims held to their commit, %ld "
                       "claimed by another worker meanwhile; %ld completed jobs watched for a "
                       "later claim, %ld claimed again while or after being completed",
                       held, open_pairs, watched, again);
    else
        len = snprintf(out->summary, sizeof out->summary,
                       "%ld claims with a server time on %zu jobs, %ld overlapping lease pairs; "
                       "%ld completed jobs watched for a later claim, %ld claimed again while or after "
                       "being completed",
                       leases, cs.jobs, pairs, watched, again);
    if (!txn && cs.unplaced > 0 && len > 0 && (size_t)len < sizeof out->summary)
        snprintf(out->summary + len, sizeof out->summary - (size_t)len,
                 ", %ld claims without a server time not checked", cs.unplaced);
    qc__check_finish(out);
    return 0;
}
