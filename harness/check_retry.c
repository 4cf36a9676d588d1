/*
 * check_retry.c - retry_delay: a job given back by fail with a retry delay
 * must not be claimed again before the delay has passed (checkers.h).
 *
 * The field case is shared/cases.md C04 (Quartz JDBC JobStore, an ABA):
 * a claim reads a candidate row without a lock, then changes it with a
 * conditional UPDATE that re-checks only the state.  Between the read and
 * the write another worker claims the job, fails it, and the job goes back
 * to ready with a run_after in the future; the stale UPDATE still matches
 * (state is 'ready' again) and the job runs again at once, the "same fire
 * time twice".  A claim that ignores run_after altogether, or a fail that
 * does not set it, shows up the same way.
 *
 * The rule.  A fail F of job J answered OK with rows > 0 and a delay D > 0
 * (the worker writes "delay_ms" on the fail's ok event: the scenario's
 * [lease] retry_delay_ms, the delay it asked for; a fail whose answer says
 * state "dead" is not a retry and is skipped) must put J's run_after at the
 * server's clock during F plus D or later.  A fail step that never reads
 * :delay_ms (header "fail_reads_delay_ms": false) ignores the delay asked
 * for and is judged all the same (decision 960: a retry at once is the bug,
 * not an excuse); its violations say so.  That clock reading came after F was sent.  The first OK claim C
 * of J answered after F was sent (same ledger) ran on the server before C's
 * answer arrived.  So, on one clock that runs at the rate of the server's:
 *
 *     answer(C) - sent(F) >= D     for every claim that honoured run_after.
 *
 * A violation needs the client's clock (the ledger's t, CLOCK_MONOTONIC)
 * to show answer(C) < sent(F) + D - margin, and, when both C and F report
 * a server time ("now"), the server's clock to agree: now(C) < now(F) + D -
 * margin.  margin = 1 ms + the server clock's resolution as the ledger shows
 * it (qc__clock_resolution) + 0.1 % of D.
 *
 * Innocent explanations, and why they cannot raise this alarm:
 *   - a starved client (late wake-ups, late answers): it can only make
 *     answer(C) later and sent(F) earlier than the server's work, which
 *     widens the measured gap; the rule never uses when a request was
 *     answered for F or sent for C;
 *   - a claim sent long before the fail (held in the harness, or waiting
 *     for a lock): what counts is when it was answered, after F was sent;
 *   - a server clock that steps forward between F and C (an NTP step):
 *     run_after passes early in real time and the client clock alone would
 *     call C early; the server times then show the full delay, and the rule
 *     needs both to agree.  A protocol that reports no server time is
 *     judged on the client clock alone (the summary says so);
 *   - a coarse server clock (whole seconds) and drift: the margin;
 *   - a reap: it only touches jobs in flight, never a ready job's run_after;
 *     a claim between F and C that returned J is C itself (the first);
 *   - a fail with a stale token that the protocol accepted: then J may have
 *     been claimed by someone else before F ran (stale_token_rejected judges
 *     that); only F's with rows > 0 of a claim answered before F was sent
 *     are judged here, and C must be answered after F was sent, so a claim
 *     that ran before F's UPDATE is still a claim of a job that was in
 *     flight, a violation of its own;
 *   - several ledgers (a run split over processes): F and C must be in one
 *     ledger; no order across ledgers is inferred.
 * The transaction model is judged the same way: its fail commits the
 * claim's transaction with the job back to ready at run_after.
 *
 * The enqueue rule (decision 1123).  An enqueue E of job J with a delay D
 * > 0 (its ok event's "delay_ms": [feed] delay_ms, the delay the enqueue
 * step was given as :delay_ms) puts J's run_after at the server's clock
 * while E ran plus D or later, and E ran after its transaction's first
 * request was sent (the ok event's "sent_t").  So the first OK claim C of
 * J in the same ledger must have
 *
 *     answer(C) - sent_t(E) >= D - margin,
 *
 * with the margin above.  The enqueue reports no server time, so this rule
 * is judged on the client clock alone; every innocent explanation above
 * that widens the gap (a starved client, a claim held or waiting) holds
 * for it too.  A protocol that truncates the delay to whole seconds, drops
 * it, or reads it in the wrong unit lets J be claimed before it fell due.
 */
#include "checkers.h"
#include "err.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_retry_fail(const qc_event *e)
{
    return e->type == QC_EV_OK && e->op == QC_OP_FAIL && e->rows > 0 && e->delay_ms > 0 &&
           !(qc_s(e->state) != NULL && strcmp(qc_s(e->state), "dead") == 0);
}

/* An ok enqueue with a delay and the time its transaction was sent. */
static int is_delayed_enqueue(const qc_event *e)
{
    return e->type == QC_EV_OK && e->op == QC_OP_ENQUEUE && e->delay_ms > 0 &&
           qc__has_time(qc_x(e->x)->sent_t);
}

int qc_check_retry_delay(const qc_history *h, qc_check *out)
{
    qc__jobref *r = NULL;
    size_t n = 0, cap = 0;
    long early = 0, client_only = 0, enq_opps = 0, enq_early = 0;
    double worst = 0, worst_delay = 0, short_by = -1, enq_worst = 0, enq_worst_delay = 0,
           enq_short_by = -1;

    memset(out, 0, sizeof *out);
    out->name = "retry_delay";
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (!is_retry_fail(e) && !qc__is_claim(e) && !is_delayed_enqueue(e))
            continue;
        int64_t job = qc__event_job(h, e);
        if (job == QC_NO_JOB)
            continue;
        if (qc__grow((void **)&r, &cap, n + 1, sizeof *r) != 0) {
            free(r);
            return QC_ENOMEM;
        }
        r[n++] = (qc__jobref){job, i};
    }
    qc__jobrefs_sort(r, n);
    double res = qc__clock_resolution(h);
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && r[b].job == r[a].job; b++)
            ;
        for (size_t k = a; k < b; k++) {
            const qc_event *f = &h->ev[r[k].ev];
            if (is_delayed_enqueue(f)) {
                double sent = qc_x(f->x)->sent_t;
                const qc_event *c = NULL;
                for (size_t j = a; j < b && c == NULL; j++) {
                    const qc_event *e = &h->ev[r[j].ev];
                    if (qc__is_claim(e) && e->file == f->file && qc__has_time(e->t))
                        c = e;
                }
                double d = (double)f->delay_ms, margin = 1.0 + res + 1e-3 * d;
                if (c == NULL || d <= margin)
                    continue; /* no claim, or a delay within the clocks' margin: no claim
                                 could be shown early (decision 1142) */
                out->opportunities++;
                enq_opps++;
                double gap = c->t - sent;
                if (!(gap < d - margin))
                    continue;
                early++;
                enq_early++;
                if (d - gap > enq_short_by) {
                    enq_short_by = d - gap;
                    enq_worst = gap;
                    enq_worst_delay = d;
                }
                int64_t seqs[] = {f->seq, c->seq};
                qc__check_violation(out, r[a].job, seqs, 2,
                                    "job %lld: claimed by worker %d (seq %lld) %.1f ms after its "
                                    "enqueue was sent (seq %lld), which scheduled it %ld ms "
                                    "ahead: claimed before it fell due",
                                    (long long)r[a].job, c->worker, (long long)c->seq, gap,
                                    (long long)f->seq, (long)f->delay_ms);
                continue;
            }
            if (!is_retry_fail(f))
                continue;
            const qc_event *fi = qc__invoke_of(h, f);
            if (fi == NULL)
                continue;
            /* the job's first claim answered after the fail was sent */
            const qc_event *c = NULL;
            for (size_t j = a; j < b && c == NULL; j++) {
                const qc_event *e = &h->ev[r[j].ev];
                if (qc__is_claim(e) && e->file == fi->file && e->seq > fi->seq)
                    c = e;
            }
            double d = (double)f->delay_ms;
            double margin = 1.0 + res + 1e-3 * d;
            if (c == NULL || d <= margin)
                continue; /* as above */
            out->opportunities++;
            double gap = c->t - fi->t;
            if (!(gap < d - margin))
                continue;
            int servers = qc__has_time(c->now) && qc__has_time(f->now);
            if (servers && !(c->now - f->now < d - margin))
                continue; /* the server's clock shows the delay kept */
            early++;
            if (!servers)
                client_only++;
            if (d - gap > short_by) {
                short_by = d - gap;
                worst = gap;
                worst_delay = d;
            }
            int64_t seqs[] = {fi->seq, f->seq, c->seq};
            char srv[96] = "";
            if (servers)
                snprintf(srv, sizeof srv, ", %.1f ms on the server's clock", c->now - f->now);
            qc__check_violation(out, r[a].job, seqs, 3,
                                "job %lld: claimed by worker %d (seq %lld, attempt %d) %.1f ms "
                                "after worker %d's fail was sent (seq %lld)%s, which gave it "
                                "back with a retry delay of %ld ms (seq %lld)%s",
                                (long long)r[a].job, c->worker, (long long)c->seq, c->attempt, gap,
                                f->worker, (long long)fi->seq, srv, (long)f->delay_ms,
                                (long long)f->seq,
                                h->info.fail_reads_delay_ms == 0
                                    ? "; the protocol's fail never reads :delay_ms"
                                    : "");
        }
    }
    free(r);
    long fopps = out->opportunities - enq_opps, fearly = early - enq_early;
    char enq[200] = "";
    if (enq_opps > 0 && enq_early == 0)
        snprintf(enq, sizeof enq, "; %ld delayed enqueues followed by a claim, none claimed "
                                  "before it fell due", enq_opps);
    else if (enq_opps > 0)
        snprintf(enq, sizeof enq, "; %ld delayed enqueues followed by a claim, %ld claimed "
                                  "before they fell due (the earliest %.1f ms after the enqueue "
                                  "was sent, delay %.0f ms)",
                 enq_opps, enq_early, enq_worst, enq_worst_delay);
    if (out->opportunities == 0)
        snprintf(out->summary, sizeof out->summary,
                 "no fail with a retry delay nor delayed enqueue was followed by a claim of its "
                 "job");
    else if (fopps == 0)
        snprintf(out->summary, sizeof out->summary, "%s", enq + 2);
    else if (fearly == 0)
        snprintf(out->summary, sizeof out->summary,
                 "%ld fails with a retry delay followed by a claim of the job, none claimed "
                 "before its delay%s",
                 fopps, enq);
    else
        snprintf(out->summary, sizeof out->summary,
                 "%ld fails with a retry delay followed by a claim of the job, %ld claimed "
                 "before the delay passed (the earliest %.1f ms after the fail was sent, delay "
                 "%.0f ms)%s%s%s",
                 fopps, fearly, worst, worst_delay,
                 client_only > 0 ? "; some judged on the client clock alone (no server times)"
                                 : "",
                 h->info.fail_reads_delay_ms == 0
                     ? "; the protocol's fail never reads :delay_ms (the delay asked for is "
                       "ignored)"
                     : "",
                 enq);
    qc__check_finish(out);
    return 0;
}
