/*
 * check_wedged.c - worker_progress (issue 17, shared/cases.md C20): a
 * worker incarnation that is alive but makes no progress.
 *
 * Bound B: the header's "max_wedged_ms" ([bounds] max_wedged_ms, else
 * max(5000, 3 x lease_ms, 2 x work_ms max + lease_ms): scenario.h); an
 * older ledger without it: max(5000, 3 x lease_ms).
 *
 * Rule (a), a failing streak: a worker incarnation's requests answered
 * "fail" (an error answer: it definitely did not take effect), with no
 * other answer of that incarnation in between (seq order), at least 3 of
 * them, the first one's invoke and the last one's answer more than B apart
 * (client ms), is wedged: it is alive (it keeps sending) and nothing it
 * sends works (Laravel C20: every pop in a transaction that never ended).
 * Innocent explanations, and what the rule does about them:
 *   - the server was restarting, paused or terminating sessions (a planned
 *     fault: nemesis fault events), or the worker was in a planned fault of
 *     its own (stall, kill ...): a streak is cut at every fault event's
 *     window (its t to its until_t, or its t) plus B, and only the failures
 *     after it count;
 *   - an overloaded server cancelling statements (SQLSTATE 57014, the
 *     statement timeout): such an answer is the server's, not the
 *     worker's; it ends the streak like an OK answer;
 *   - a lost connection ("info"): the worker reconnects, a new session;
 *     it ends the streak;
 *   - a starved client: it sends less often, but each failure is still an
 *     error answer from the server; a streak of few requests over a long
 *     time is judged only from 3 failures up, and no failure is inferred
 *     from a missing answer.
 *   Opportunities: worker incarnations whose requests span more than B
 *   (first invoke to last answer) with a stretch longer than B that no
 *   fault window (plus B) cuts: only they could show such a streak
 *   (decision 1142).
 *
 * Rule (b), a transaction left open between requests: a session sample
 * (type "session", sessions.h: pg_stat_activity / INNODB_TRX) of the
 * worker's session in state "idle in transaction" (or "... (aborted)")
 * whose transaction is older than B, taken while the incarnation was
 * between requests (its latest request before the sample was answered
 * before the sampling query was sent), and whose transaction provably
 * began before that latest request was sent (sample t - xact_ms < the
 * request's invoke t: the server's now lies between the query's send and
 * its answer), is a transaction a finished step left open.  The sample's
 * session is the incarnation's by the worker's "session" note (worker,
 * inc, pid) of its latest connect before the sample.
 * Innocent explanations:
 *   - the transaction model (skip_locked_txn): the claim's transaction is
 *     held through the work until complete or fail, by design, and the
 *     worker opens it before its claim is logged and rolls an empty
 *     claim's back after the answer is logged, both unlogged: a thread
 *     starved there sits in a transaction between logged requests.  The
 *     ledger cannot tell that from a leak, so rule (b) judges no sample
 *     in the transaction model (rule (a) still applies);
 *   - a step of several statements in flight, a worker held at a point
 *     between statements, a client starved between two statements, a
 *     server paused mid-step: the request is in flight (invoke without an
 *     answer before the sample was sent), not judged;
 *   - a stall in work (lease model): the session is idle, not in a
 *     transaction, and is judged as such (no violation);
 *   - a reconnect between the sample and the note: the sampler drops a
 *     session whose worker's published id changed while it ran, and the
 *     note must name the same pid.
 *   Opportunities: session samples mapped to an incarnation between
 *   requests and not excused, sent more than B after the session's
 *   connect (its "session" note): an earlier one cannot show a
 *   transaction older than B, so a run shorter than B is INCONCLUSIVE,
 *   never PASS (decision 1141).
 *
 * Each wedged incarnation is reported once per rule, with the ledger seqs
 * of the first and last failed requests (a), or of the request the
 * transaction outlived, its answer, the session note and the sample (b).
 */
#include "checkers.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct incref {
    int file, worker, inc;
    size_t ev;
} incref;
_Static_assert(offsetof(incref, file) == offsetof(qc__actor, file) &&
                   offsetof(incref, worker) == offsetof(qc__actor, worker) &&
                   offsetof(incref, inc) == offsetof(qc__actor, inc),
               "incref begins with a qc__actor (qc__actor_sort)");

static int cmp_incref(const void *pa, const void *pb)
{
    const incref *a = pa, *b = pb;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    if (a->worker != b->worker)
        return a->worker < b->worker ? -1 : 1;
    if (a->inc != b->inc)
        return a->inc < b->inc ? -1 : 1;
    return a->ev < b->ev ? -1 : a->ev > b->ev;
}

static int is_completion(const qc_event *e)
{
    return e->type == QC_EV_OK || e->type == QC_EV_FAIL || e->type == QC_EV_INFO;
}

static int is_timeout(const qc_event *e)
{
    return qc_s(e->error) != NULL && (strncmp(qc_s(e->error), "57014", 5) == 0 ||
                                strstr(qc_s(e->error), "statement timeout") != NULL ||
                                strstr(qc_s(e->error), "canceling statement") != NULL);
}

/* A planned fault's window, client ms: [s, e]. */
typedef struct window {
    int file;
    double s, e;
} window;

/* The latest end (plus slack) of a fault window of file that overlaps
 * [from, to] (client ms), or -1 when none does. */
static double fault_cut(const window *w, size_t nw, int file, double from, double to,
                        double slack)
{
    double cut = -1;
    for (size_t i = 0; i < nw; i++) {
        double we = w[i].e + slack;
        if (w[i].file == file && w[i].s <= to && we >= from && we > cut)
            cut = we;
    }
    return cut;
}

static int cmp_span(const void *pa, const void *pb)
{
    const double *a = pa, *b = pb;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* Whether [from, to] (client ms) holds a stretch longer than bound that no
 * fault window of file, with bound after its end, covers: only there can a
 * failing streak outlast the bound (the streak rule cuts at every window).
 * Out of memory: assumes it does. */
static int uncut_stretch(const window *w, size_t nw, int file, double from, double to,
                         double bound)
{
    double *sp = malloc((nw > 0 ? nw : 1) * 2 * sizeof *sp);
    size_t m = 0;
    if (sp == NULL)
        return to - from > bound;
    for (size_t i = 0; i < nw; i++)
        if (w[i].file == file && w[i].s <= to && w[i].e + bound >= from) {
            sp[2 * m] = w[i].s;
            sp[2 * m + 1] = w[i].e + bound;
            m++;
        }
    qsort(sp, m, 2 * sizeof *sp, cmp_span);
    double cur = from;
    int found = 0;
    for (size_t i = 0; i < m && !found; i++) {
        if (sp[2 * i] - cur > bound)
            found = 1;
        if (sp[2 * i + 1] > cur)
            cur = sp[2 * i + 1];
    }
    if (!found && to - cur > bound)
        found = 1;
    free(sp);
    return found;
}

static double request_t0(const qc_history *h, const qc_event *e)
{
    const qc_event *inv = qc__invoke_of(h, e);
    return inv != NULL && qc__has_time(inv->t) ? inv->t : e->t;
}

/* Rule (a) over one incarnation's events r[0..n) (seq order). */
static void judge_streaks(const qc_history *h, const incref *r, size_t n, const window *w,
                          size_t nw, double bound, qc_check *c)
{
    const qc_event *first_any = NULL, *last_any = NULL;
    double start = -1;
    size_t firstk = 0;
    long nfail = 0;

    for (size_t k = 0; k < n; k++) {
        const qc_event *e = &h->ev[r[k].ev];
        if (e->type == QC_EV_INVOKE && first_any == NULL && qc__has_time(e->t))
            first_any = e;
        if (is_completion(e) && qc__has_time(e->t))
            last_any = e;
    }
    if (first_any != NULL && last_any != NULL && last_any->t - first_any->t > bound &&
        uncut_stretch(w, nw, first_any->file, first_any->t, last_any->t, bound))
        c->opportunities++;
    for (size_t k = 0; k < n; k++) {
        const qc_event *e = &h->ev[r[k].ev];
        if (!is_completion(e))
            continue;
        if (e->type != QC_EV_FAIL || is_timeout(e) || !qc__has_time(e->t)) {
            start = -1; /* an answer that worked, a lost connection, a timeout */
            nfail = 0;
            continue;
        }
        double t0 = request_t0(h, e);
        if (start < 0) {
            start = t0;
            firstk = k;
            nfail = 0;
        }
        /* a planned fault's window (plus B) cuts the streak: count from
         * the first failure sent after it */
        double cut = fault_cut(w, nw, e->file, start, e->t, bound);
        if (cut >= 0) {
            if (t0 <= cut) {
                start = -1;
                nfail = 0;
                continue;
            }
            start = t0;
            firstk = k;
            nfail = 0;
        }
        nfail++;
        if (nfail >= 3 && e->t - start > bound) {
            const qc_event *a = &h->ev[r[firstk].ev], *inv = qc__invoke_of(h, a);
            int64_t seqs[3];
            int ns = 0;
            if (inv != NULL)
                seqs[ns++] = inv->seq;
            seqs[ns++] = a->seq;
            seqs[ns++] = e->seq;
            qc__check_violation(c, QC_NO_JOB, seqs, ns,
                                "worker %d (incarnation %d): every request failed for %.0f ms "
                                "(%ld in a row, bound %.0f ms), the first: %.60s",
                                a->worker, a->inc, e->t - start, nfail, bound,
                                qc_s(a->error) ? qc_s(a->error) : "(no error text)");
            return; /* once per incarnation */
        }
    }
}

/* The latest "session" note (a connect: worker, inc, pid) of each
 * worker of each ledger, kept while the events are read in seq order. */
typedef struct latest_note {
    int file, worker;
    const qc_event *note;
} latest_note;

static latest_note *note_slot(latest_note **v, size_t *n, size_t *cap, int file, int worker)
{
    for (size_t i = 0; i < *n; i++)
        if ((*v)[i].file == file && (*v)[i].worker == worker)
            return &(*v)[i];
    if (qc__grow((void **)v, cap, *n + 1, sizeof **v) != 0)
        return NULL;
    (*v)[*n] = (latest_note){file, worker, NULL};
    return &(*v)[(*n)++];
}

/* Per incarnation (by its first index in the sorted refs): a cursor over
 * its events up to the latest sample (samples of one incarnation come in
 * seq order: they are of one ledger), what they showed, and the first
 * sample of the current run of in-transaction samples. */
typedef struct inc_state {
    size_t key;
    size_t pos;                          /* next of its events to read */
    const qc_event *last_inv, *last_ans; /* its latest request and answer so far */
    int64_t last_ok;                     /* seq of its latest OK answer; -1 none */
    const qc_event *run_first;
    int reported;
} inc_state;

/* Advances st over the incarnation's events r[0..n) before sample si and
 * classifies the sample: 0 not judged (no request yet, one in flight, an
 * answer that may have come while the sample ran, the transaction
 * model), 1 judged (*in_txn set). */
static int view_sample(const qc_history *h, size_t si, const incref *r, size_t n, int txn_model,
                       inc_state *st, int *in_txn)
{
    const qc_event *s = &h->ev[si];

    for (; st->pos < n; st->pos++) {
        const qc_event *e = &h->ev[r[st->pos].ev];
        if (e->seq >= s->seq || e->file != s->file)
            break;
        if (e->type == QC_EV_INVOKE)
            st->last_inv = e;
        else if (is_completion(e))
            st->last_ans = e;
        if (e->type == QC_EV_OK)
            st->last_ok = e->seq;
    }
    if (!qc__has_time(qc_x(s->x)->sent_t) || !qc__has_time(s->t) || qc_s(s->state) == NULL)
        return 0;
    if (st->last_inv == NULL || st->last_ans == NULL || st->last_ans->invoke < 0 ||
        &h->ev[st->last_ans->invoke] != st->last_inv)
        return 0; /* no request yet, or one in flight */
    if (!qc__has_time(st->last_ans->t) || st->last_ans->t >= qc_x(s->x)->sent_t ||
        !qc__has_time(st->last_inv->t))
        return 0; /* its answer may have come while the sample ran */
    if (txn_model)
        return 0; /* its transactions begin and end around logged requests */
    *in_txn = strncmp(qc_s(s->state), "idle in transaction", 19) == 0;
    return 1;
}

static const char *outcome_name(const qc_event *e)
{
    return e->type == QC_EV_OK ? "ok" : e->type == QC_EV_FAIL ? "fail" : "info";
}

int qc_check_worker_progress(const qc_history *h, qc_check *out)
{
    incref *r = NULL;
    size_t nr = 0, cap = 0;
    long nsamples = 0, streak_opp, sample_opp;
    long streak_v, sample_v;
    double bound = (double)h->info.max_wedged_ms;
    int txn_model = strcmp(h->info.model, "transaction") == 0;

    out->name = "worker_progress";
    if (bound <= 0) {
        bound = 5000;
        if (3.0 * (double)h->info.lease_ms > bound)
            bound = 3.0 * (double)h->info.lease_ms;
    }
    window *w = NULL;
    size_t nw = 0, wcap = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type == QC_EV_FAULT && qc__has_time(e->t)) {
            if (qc__grow((void **)&w, &wcap, nw + 1, sizeof *w) != 0) {
                free(w);
                free(r);
                return QC_ENOMEM;
            }
            w[nw++] = (window){e->file, e->t,
                               qc__has_time(qc_x(e->x)->until_t) && qc_x(e->x)->until_t > e->t ? qc_x(e->x)->until_t
                                                                                   : e->t};
            continue;
        }
        if (e->worker < 0 || (e->type != QC_EV_INVOKE && !is_completion(e)))
            continue;
        if (qc__grow((void **)&r, &cap, nr + 1, sizeof *r) != 0) {
            free(w);
            free(r);
            return QC_ENOMEM;
        }
        r[nr++] = (incref){e->file, e->worker, e->inc, i};
    }
    /* r was collected in ev order: the stable sort by actor is the sort by
     * (file, worker, inc, ev) (qsort when out of memory for it); r is NULL
     * when there is no request */
    if (nr > 1 && qc__actor_sort(r, nr, sizeof *r) != 0)
        qsort(r, nr, sizeof *r, cmp_incref);
    for (size_t i = 0; i < nr;) {
        size_t j = i;
        while (j < nr && r[j].file == r[i].file && r[j].worker == r[i].worker &&
               r[j].inc == r[i].inc)
            j++;
        judge_streaks(h, r + i, j - i, w, nw, bound, out);
        i = j;
    }
    streak_opp = out->opportunities;
    streak_v = out->nviolations;
    /* Rule (b): each sample against its incarnation's requests. */
    inc_state *sts = NULL;
    size_t nst = 0, stcap = 0;
    latest_note *notes = NULL;
    size_t nnotes = 0, notecap = 0;
    for (size_t si = 0; si < h->n; si++) {
        const qc_event *s = &h->ev[si], *note = NULL;
        if (s->type == QC_EV_NOTE && s->worker >= 0 && qc_x(s->x)->pid >= 0 && qc_x(s->x)->note != NULL &&
            strcmp(qc_x(s->x)->note, "session") == 0) {
            latest_note *ln = note_slot(&notes, &nnotes, &notecap, s->file, s->worker);
            if (ln != NULL)
                ln->note = s;
            continue;
        }
        if (s->type != QC_EV_SESSION || s->worker < 0 || qc_x(s->x)->pid < 0)
            continue;
        nsamples++;
        /* the sample's session is the incarnation's whose latest connect
         * named its id (the worker's latest note, same ledger) */
        latest_note *ln = note_slot(&notes, &nnotes, &notecap, s->file, s->worker);
        if (ln == NULL || ln->note == NULL || qc_x(ln->note->x)->pid != qc_x(s->x)->pid)
            continue;
        note = ln->note;
        int inc = note->inc;
        if (nr == 0)
            continue; /* no request at all: nothing to judge the sample against */
        /* the incarnation's events: binary search for its first */
        size_t lo = 0, hi = nr;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            const incref *m = &r[mid];
            int less = m->file != s->file ? m->file < s->file
                       : m->worker != s->worker ? m->worker < s->worker
                                                : m->inc < inc;
            if (less)
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t end = lo;
        while (end < nr && r[end].file == s->file && r[end].worker == s->worker &&
               r[end].inc == inc)
            end++;
        inc_state *st = NULL;
        for (size_t k = 0; k < nst && st == NULL; k++)
            if (sts[k].key == lo)
                st = &sts[k];
        if (st == NULL) {
            if (qc__grow((void **)&sts, &stcap, nst + 1, sizeof *sts) != 0)
                continue; /* out of memory: this sample is not judged */
            st = &sts[nst++];
            memset(st, 0, sizeof *st);
            st->key = lo;
            st->last_ok = -1;
        }
        int in_txn = 0;
        if (!view_sample(h, si, r + lo, end - lo, txn_model, st, &in_txn))
            continue;
        /* an opportunity only when the session had been connected longer
         * than the bound when the sample was answered (its xact_ms may have
         * grown until then): before, no transaction on it can be older
         * than the bound (b1), and no run of samples in one can span it
         * (b2) */
        double seen = qc__has_time(s->t) ? s->t : qc_x(s->x)->sent_t;
        int early = !qc__has_time(note->t) || !qc__has_time(seen) || seen - note->t <= bound;
        if (!early)
            out->opportunities++;
        if (!in_txn) {
            st->run_first = NULL;
            continue;
        }
        if (st->run_first == NULL || st->last_ok > st->run_first->seq)
            st->run_first = s; /* an answer that worked since: a new run */
        if (early || st->reported)
            continue;
        /* (b1) the transaction's own age, when the server gives it (an
         * aborted one has no xact_start in pg_stat_activity) */
        int open_age = qc__has_time(qc_x(s->x)->xact_ms) && qc_x(s->x)->xact_ms > bound &&
                       s->t - qc_x(s->x)->xact_ms < st->last_inv->t;
        /* (b2) in a transaction between requests at every sample of a run
         * longer than the bound, and nothing answered OK in between */
        double span = qc_x(s->x)->sent_t - st->run_first->t;
        int open_run = st->run_first != s && span > bound;
        if (!open_age && !open_run)
            continue;
        int64_t seqs[5] = {st->last_inv->seq, st->last_ans->seq, note->seq, st->run_first->seq, s->seq};
        if (open_age)
            qc__check_violation(out, QC_NO_JOB, seqs, 5,
                                "worker %d (incarnation %d): its session %d sat '%s' in a "
                                "transaction open %.0f ms (bound %.0f ms) after its %s was "
                                "answered (%s): a transaction left open",
                                s->worker, note->inc, qc_x(s->x)->pid, qc_s(s->state), qc_x(s->x)->xact_ms, bound,
                                qc_op_name(st->last_ans->op), outcome_name(st->last_ans));
        else
            qc__check_violation(out, QC_NO_JOB, seqs, 5,
                                "worker %d (incarnation %d): its session %d was '%s' between "
                                "its requests at every sample for %.0f ms (bound %.0f ms), no "
                                "request answered ok meanwhile (the last: %s, %s): a "
                                "transaction left open",
                                s->worker, note->inc, qc_x(s->x)->pid, qc_s(s->state), span, bound,
                                qc_op_name(st->last_ans->op), outcome_name(st->last_ans));
        st->reported = 1;
    }
    free(sts);
    free(notes);
    free(w);
    free(r);
    sample_opp = out->opportunities - streak_opp;
    sample_v = out->nviolations - streak_v;
    snprintf(out->summary, sizeof out->summary,
             "bound %.0f ms: %ld incarnations watched longer, %ld wedged by failing requests; "
             "%ld session samples (%ld judged between requests), %ld transactions left open%s",
             bound, streak_opp, streak_v, nsamples, sample_opp, sample_v,
             nsamples == 0 ? " (no session samples: the engine or topology gives none)" : "");
    qc__check_finish(out);
    return 0;
}
