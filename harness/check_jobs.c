/*
 * check_jobs.c - the checkers that judge the final snapshot against the
 * ledger: no_lost_jobs (every enqueued job ends done or dead, and nothing
 * appears that was never enqueued) and acked_durable (every complete
 * acknowledged with rows > 0 is done in the final snapshot, and, when the
 * primary of a replicated topology was switched, done in the state the
 * promoted replica started from: the ledger's switch_snapshot rows).
 *
 * Invariants:
 *   - the final snapshot is the last snapshot row (by seq) of each job; a
 *     ledger without snapshot events gives these checkers no evidence:
 *     zero opportunities, INCONCLUSIVE, summary "no final snapshot in the
 *     ledger", never a violation;
 *   - a job is enqueued when an OK enqueue event names it; an enqueue whose
 *     outcome is unknown (INFO, an invoke never answered, or OK without a
 *     job id) may have created a job the ledger cannot name, so each one
 *     excuses one snapshot job that no enqueue produced;
 *   - an acknowledged complete is an OK complete with rows > 0; rows
 *     unknown proves nothing and is not counted.
 *
 * Innocent explanations: a run stopped before its drain (SIGINT), or a
 * drain that timed out while the queue was still finishing jobs (a starved
 * harness or a slow server: qc__drain_cut_short), leaves jobs unfinished
 * that were never lost: not judged.  An enqueue whose answer was lost may
 * have created a job the ledger cannot name.  No time is compared, so
 * starved answers, pauses and coarse clocks change nothing.  acked_durable
 * has none: a complete acknowledged with rows > 0 made the job done, and
 * nothing may undo it.
 */
#include "checkers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_name(qc_ev_type t)
{
    switch (t) {
    case QC_EV_INVOKE:
        return "invoke";
    case QC_EV_OK:
        return "ok";
    case QC_EV_FAIL:
        return "fail";
    case QC_EV_INFO:
        return "info";
    case QC_EV_EFFECT:
        return "effect";
    case QC_EV_FAULT:
        return "fault";
    case QC_EV_SNAPSHOT:
        return "snapshot";
    case QC_EV_MONITOR:
        return "monitor";
    case QC_EV_END:
        return "end";
    case QC_EV_NOTE:
        return "note";
    case QC_EV_WITNESS:
        return "witness";
    case QC_EV_SWITCH_SNAPSHOT:
        return "switch_snapshot";
    case QC_EV_SESSION:
        return "session";
    case QC_EV_OTHER:
        break;
    }
    return "event";
}

/* "ok complete", "invoke claim", "fault kill_after_claim", "effect". */
static void describe_event(char *buf, size_t n, const qc_event *e)
{
    if (e->type == QC_EV_FAULT && qc_x(e->x)->fault != NULL)
        snprintf(buf, n, "fault %s", qc_x(e->x)->fault);
    else if (e->op != QC_OP_NONE)
        snprintf(buf, n, "%s %s", type_name(e->type), qc_op_name(e->op));
    else
        snprintf(buf, n, "%s", type_name(e->type));
}

static int is_final(const char *state)
{
    return state != NULL && (strcmp(state, "done") == 0 || strcmp(state, "dead") == 0);
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;

    return a < b ? -1 : a > b;
}

/* Checks one enqueued job (its ledger events r[0..n), in seq order, the
 * first OK enqueue at enq) against the final snapshot. */
/* A final state must have been earned.  "done" needs a complete that may
 * have taken effect (acknowledged with rows > 0, or of unknown outcome):
 * otherwise the job was dropped, not finished (a reaper or enqueue that
 * writes done).  "dead" before max_attempts needs an acknowledged fail (a
 * protocol may dead-letter on failure): a job the ledger saw claimed fewer
 * than max_attempts times, whose own attempt counter agrees, and that no
 * worker failed, was dead-lettered by something else. */
static void check_final(qc_check *c, const qc_history *h, const qc__jobref *r, size_t n,
                        const qc_event *enq, const qc_event *row, long *unfinished)
{
    int may_complete = 0, failed = 0;
    long claims = 0;
    int64_t claim_seq = -1;
    for (size_t i = 0; i < n; i++) {
        const qc_event *e = &h->ev[r[i].ev];
        if (e->op == QC_OP_COMPLETE &&
            ((e->type == QC_EV_OK && e->rows != 0) || e->type == QC_EV_INFO ||
             e->type == QC_EV_INVOKE))
            may_complete = 1; /* an invoke counts: its answer may never have come */
        if (e->op == QC_OP_FAIL && (e->type == QC_EV_OK || e->type == QC_EV_INFO ||
                                    e->type == QC_EV_INVOKE))
            failed = 1;
        if (e->op == QC_OP_CLAIM && e->type == QC_EV_OK) {
            claims++;
            claim_seq = e->seq;
        }
    }
    if (!strcmp(qc_s(row->state), "done") && !may_complete) {
        int64_t seqs[] = {enq->seq, claim_seq >= 0 ? claim_seq : enq->seq, row->seq};
        (*unfinished)++;
        qc__check_violation(c, row->job, seqs, 3,
                            "job %lld is done in the final snapshot (seq %lld) but no complete "
                            "was ever sent for it (%ld claims): it was dropped, not finished",
                            (long long)row->job, (long long)row->seq, claims);
    } else if (!strcmp(qc_s(row->state), "dead") && !failed && h->info.max_attempts > 0 &&
               claims < h->info.max_attempts && row->attempt >= 0 &&
               row->attempt < h->info.max_attempts) {
        int64_t seqs[] = {enq->seq, claim_seq >= 0 ? claim_seq : enq->seq, row->seq};
        (*unfinished)++;
        qc__check_violation(c, row->job, seqs, 3,
                            "job %lld is dead in the final snapshot (seq %lld) after %ld claims "
                            "(attempt %d) of max_attempts %ld, and no worker failed it",
                            (long long)row->job, (long long)row->seq, claims, row->attempt,
                            h->info.max_attempts);
    }
}

/* *stopped: whether the run stopped before its drain or the drain was
 * cut short while progressing (-1: not yet known; each of those reads the
 * whole history, so it is worked out once, at the first unfinished job,
 * not once per job: an interrupted run of 30,000 jobs took minutes). */
static void check_enqueued(qc_check *c, const qc_history *h, const qc__snapshot *snap,
                           const qc__jobref *r, size_t n, const qc_event *enq, long *missing,
                           long *unfinished, int *stopped)
{
    const qc_event *last = &h->ev[r[n - 1].ev];
    const qc_event *row = qc__snapshot_find(h, snap, r[0].job);
    char what[64];

    describe_event(what, sizeof what, last);
    if (row == NULL && h->info.missing[0]) {
        /* "-- missing: done" (issue 13): the protocol deletes a finished
         * job.  Missing is done (or dead) only after a request that may
         * have finished it: an acknowledged complete, or one whose answer
         * was lost; a job deleted without one is still lost. */
        int dead = !strcmp(h->info.missing, "dead");
        for (size_t k = 0; k < n; k++) {
            const qc_event *e = &h->ev[r[k].ev];
            qc_op want = dead ? QC_OP_FAIL : QC_OP_COMPLETE;
            if (e->op == want && ((e->type == QC_EV_OK && e->rows != 0) ||
                                  (e->type == QC_EV_INFO && e->w_resolved != 0)))
                return;
        }
    }
    if (row == NULL) {
        int64_t seqs[] = {enq->seq, last->seq};
        (*missing)++;
        qc__check_violation(c, r[0].job, seqs, 2,
                            "job %lld was enqueued (seq %lld) but is missing from the final "
                            "snapshot; its last ledger event is seq %lld (%s)",
                            (long long)r[0].job, (long long)enq->seq, (long long)last->seq, what);
    } else if (!is_final(qc_s(row->state))) {
        int64_t seqs[] = {enq->seq, last->seq, row->seq};
        (*unfinished)++;
        if (*stopped < 0)
            *stopped = qc__run_interrupted(h) || qc__drain_cut_short(h);
        if (*stopped)
            return; /* stopped before the drain, or still finishing: not judged */
        qc__check_violation(c, r[0].job, seqs, 3,
                            "job %lld is %s in the final snapshot (seq %lld), not done or dead; "
                            "enqueued at seq %lld, its last ledger event is seq %lld (%s)",
                            (long long)r[0].job,
                            qc_s(row->state) != NULL ? qc_s(row->state) : "without a state",
                            (long long)row->seq, (long long)enq->seq, (long long)last->seq, what);
    } else {
        check_final(c, h, r, n, enq, row, unfinished);
    }
}

int qc_check_no_lost_jobs(const qc_history *h, qc_check *out)
{
    qc__snapshot snap;
    qc__jobref *r = NULL;
    int64_t *enqueued = NULL;
    size_t *unexpected = NULL;
    unsigned char *answered = NULL;
    size_t n = 0, nenq = 0, nunexp = 0;
    long unknown = 0, missing = 0, unfinished = 0;
    int stopped = -1; /* check_enqueued */
    int rc;

    memset(out, 0, sizeof *out);
    out->name = "no_lost_jobs";
    rc = qc__snapshot_build(h, &snap);
    if (rc != 0)
        return rc;
    if (snap.nevents == 0) {
        snprintf(out->summary, sizeof out->summary, "no final snapshot in the ledger");
        goto done;
    }
    r = malloc(h->n * sizeof *r);
    enqueued = malloc(h->n * sizeof *enqueued);
    unexpected = malloc((snap.n > 0 ? snap.n : 1) * sizeof *unexpected);
    answered = qc__answered_invokes(h);
    if (r == NULL || enqueued == NULL || unexpected == NULL || answered == NULL) {
        rc = QC_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job = qc__event_job(h, e);
        if (e->type == QC_EV_SNAPSHOT)
            continue;
        if (e->op == QC_OP_ENQUEUE &&
            (e->type == QC_EV_INFO || (e->type == QC_EV_OK && job == QC_NO_JOB) ||
             (e->type == QC_EV_INVOKE && !answered[i])))
            unknown++;
        if (job != QC_NO_JOB)
            r[n++] = (qc__jobref){job, i};
    }
    qc__jobrefs_sort(r, n);
    for (size_t a = 0, b; a < n; a = b) {
        const qc_event *enq = NULL;
        for (b = a; b < n && r[b].job == r[a].job; b++) {
            const qc_event *e = &h->ev[r[b].ev];
            if (enq == NULL && e->type == QC_EV_OK && e->op == QC_OP_ENQUEUE)
                enq = e;
        }
        if (enq == NULL)
            continue;
        enqueued[nenq++] = r[a].job; /* ascending */
        out->opportunities++;
        check_enqueued(out, h, &snap, r + a, b - a, enq, &missing, &unfinished, &stopped);
    }
    for (size_t k = 0; k < snap.n; k++)
        if (bsearch(&snap.row[k].job, enqueued, nenq, sizeof *enqueued, cmp_i64) == NULL)
            unexpected[nunexp++] = snap.row[k].ev;
    /* Each enqueue of unknown outcome excuses one unexpected job; which ones
     * cannot be told apart, so the report names the last ones by job id. */
    for (size_t k = unknown > 0 ? (size_t)unknown : 0; k < nunexp; k++) {
        const qc_event *row = &h->ev[unexpected[k]];
        if (unknown > 0)
            qc__check_violation(out, row->job, &row->seq, 1,
                                "job %lld appears in the final snapshot (seq %lld, state %s) but "
                                "was never enqueued (%zu such jobs, %ld enqueues with an unknown "
                                "outcome)",
                                (long long)row->job, (long long)row->seq,
                                qc_s(row->state) != NULL ? qc_s(row->state) : "none", nunexp, unknown);
        else
            qc__check_violation(out, row->job, &row->seq, 1,
                                "job %lld appears in the final snapshot (seq %lld, state %s) but "
                                "was never enqueued",
                                (long long)row->job, (long long)row->seq,
                                qc_s(row->state) != NULL ? qc_s(row->state) : "none");
    }
    snprintf(out->summary, sizeof out->summary,
             "%ld enqueued jobs, %zu jobs in the final snapshot, %ld not done or dead (or not earned), "
             "%ld missing, %zu never enqueued (%ld enqueues with an unknown outcome)",
             out->opportunities, snap.n, unfinished, missing, nunexp, unknown);
done:
    qc__check_finish(out);
    if (out->verdict == QC_PASS && qc__run_interrupted(h)) {
        out->verdict = QC_INCONCLUSIVE;
        snprintf(out->summary, sizeof out->summary,
                 "run interrupted before the drain: unfinished jobs not judged");
    } else if (out->verdict == QC_PASS && unfinished > 0 && qc__drain_cut_short(h)) {
        out->verdict = QC_INCONCLUSIVE;
        snprintf(out->summary, sizeof out->summary,
                 "the drain timed out while jobs were still finishing (the queue was making "
                 "progress): %ld unfinished jobs not judged; give [drain] timeout_s more time",
                 unfinished);
    }
out:
    free(r);
    free(enqueued);
    free(unexpected);
    free(answered);
    qc__snapshot_fini(&snap);
    if (rc != 0) {
        free(out->v);
        out->v = NULL;
        out->nstored = 0;
    }
    return rc;
}

/* The rows of the switch snapshot (nemesis.c switch_snapshot): the state a
 * promoted replica started from, read after the old primary was gone
 * (failover, switchover: before any client could write to the replica).
 * first_seq is the seq of its first event, the marker written before the
 * read was sent (INT64_MAX when the ledger has no row). */
typedef struct switch_snap {
    qc__jobref *row; /* sorted by job */
    size_t n;
    int64_t first_seq;
    const char *kind; /* "failover", "switchover" */
} switch_snap;

static int switch_snap_build(const qc_history *h, switch_snap *sw)
{
    memset(sw, 0, sizeof *sw);
    sw->first_seq = INT64_MAX;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_SWITCH_SNAPSHOT)
            continue;
        if (e->job != QC_NO_JOB)
            sw->n++;
        if (e->seq < sw->first_seq) { /* the marker sent before the read */
            sw->first_seq = e->seq;
            sw->kind = qc_x(e->x)->fault;
        }
    }
    if (sw->n == 0) {
        sw->first_seq = INT64_MAX;
        return 0;
    }
    sw->row = malloc(sw->n * sizeof *sw->row);
    if (sw->row == NULL)
        return QC_ENOMEM;
    sw->n = 0;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        if (e->type != QC_EV_SWITCH_SNAPSHOT || e->job == QC_NO_JOB)
            continue;
        sw->row[sw->n++] = (qc__jobref){e->job, i};
    }
    qc__jobrefs_sort(sw->row, sw->n);
    return 0;
}

static const qc_event *switch_snap_find(const qc_history *h, const switch_snap *sw, int64_t job)
{
    size_t lo = 0, hi = sw->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sw->row[mid].job < job)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < sw->n && sw->row[lo].job == job ? &h->ev[sw->row[lo].ev] : NULL;
}

/* acked_durable across a switch of the primary: a complete acknowledged
 * (rows > 0) before the switch snapshot's read was sent made its job done
 * on the server that answered; the node that is primary from then on must
 * have it done when it is read (failover, switchover: the old primary
 * answered, the replica was in recovery and took no write; unfenced: a
 * complete answered by the new primary is done there too, unless undone,
 * which is a loss as well).  Judged only where the final snapshot found the
 * job done: a job redone after the switch hides the loss from the final
 * snapshot, never from this one.  Returns 1 for a violation. */
static int judge_switch(const qc_history *h, const switch_snap *sw, const qc_event *e,
                        int64_t job, qc_check *out)
{
    const qc_event *row = switch_snap_find(h, sw, job);
    if (row == NULL && !strcmp(h->info.missing, "done"))
        return 0;
    if (row != NULL && qc_s(row->state) != NULL && !strcmp(qc_s(row->state), "done"))
        return 0;
    int64_t seqs[] = {e->seq, row != NULL ? row->seq : sw->first_seq};
    qc__check_violation(out, job, seqs, 2,
                        "job %lld: complete acknowledged with rows %ld (seq %lld, worker %d) "
                        "before the %s, but the replica that was promoted had the job %s (seq "
                        "%lld): the new primary lacks the acknowledged complete",
                        (long long)job, (long)e->rows, (long long)e->seq, e->worker,
                        sw->kind ? sw->kind : "switch",
                        row == NULL          ? "missing"
                        : qc_s(row->state) != NULL ? qc_s(row->state)
                                             : "without a state",
                        (long long)seqs[1]);
    return 1;
}

int qc_check_acked_durable(const qc_history *h, qc_check *out)
{
    qc__snapshot snap;
    switch_snap sw;
    long bad = 0, before_switch = 0, lost_at_switch = 0;
    int rc;

    memset(out, 0, sizeof *out);
    out->name = "acked_durable";
    rc = qc__snapshot_build(h, &snap);
    if (rc != 0)
        return rc;
    if ((rc = switch_snap_build(h, &sw)) != 0) {
        qc__snapshot_fini(&snap);
        return rc;
    }
    if (snap.nevents == 0) {
        snprintf(out->summary, sizeof out->summary, "no final snapshot in the ledger");
        goto out;
    }
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        int64_t job;
        /* an answer lost, but the witness shows the complete committed:
         * as durable as an acknowledged one */
        int by_witness = e->type == QC_EV_INFO && e->op == QC_OP_COMPLETE && e->w_resolved == 1;
        if (!by_witness && (e->type != QC_EV_OK || e->op != QC_OP_COMPLETE || e->rows <= 0))
            continue;
        if ((job = qc__event_job(h, e)) == QC_NO_JOB)
            continue;
        out->opportunities++;
        if (by_witness) {
            const qc_event *row = qc__snapshot_find(h, &snap, job);
            if (row != NULL && qc_s(row->state) != NULL && !strcmp(qc_s(row->state), "done"))
                continue;
            if (row == NULL && !strcmp(h->info.missing, "done"))
                continue;
            int64_t seqs[] = {e->seq, h->ev[e->w_ev].seq, row != NULL ? row->seq : e->seq};
            bad++;
            qc__check_violation(out, job, seqs, row != NULL ? 3 : 2,
                                "job %lld: complete whose answer was lost (seq %lld, worker %d) "
                                "committed by the witness (seq %lld) but the job is %s in the "
                                "final snapshot",
                                (long long)job, (long long)e->seq, e->worker,
                                (long long)h->ev[e->w_ev].seq,
                                row == NULL ? "missing"
                                : qc_s(row->state) != NULL ? qc_s(row->state)
                                                     : "without a state");
            continue;
        }
        const qc_event *row = qc__snapshot_find(h, &snap, job);
        if (row == NULL && !strcmp(h->info.missing, "done"))
            continue; /* the protocol deletes a completed job (header "missing") */
        if (row == NULL) {
            bad++;
            qc__check_violation(out, job, &e->seq, 1,
                                "job %lld: complete acknowledged with rows %ld (seq %lld, worker "
                                "%d) but the job is missing from the final snapshot",
                                (long long)job, (long)e->rows, (long long)e->seq, e->worker);
        } else if (qc_s(row->state) == NULL || strcmp(qc_s(row->state), "done") != 0) {
            int64_t seqs[] = {e->seq, row->seq};
            bad++;
            qc__check_violation(out, job, seqs, 2,
                                "job %lld: complete acknowledged with rows %ld (seq %lld, worker "
                                "%d) but the job is %s in the final snapshot (seq %lld)",
                                (long long)job, (long)e->rows, (long long)e->seq, e->worker,
                                qc_s(row->state) != NULL ? qc_s(row->state) : "without a state",
                                (long long)row->seq);
        } else if (sw.n > 0 && e->seq < sw.first_seq) {
            before_switch++;
            if (judge_switch(h, &sw, e, job, out))
                lost_at_switch++;
        }
    }
    if (out->opportunities == 0)
        snprintf(out->summary, sizeof out->summary, "no complete acknowledged with rows > 0");
    else if (sw.n == 0)
        snprintf(out->summary, sizeof out->summary,
                 "%ld completes acknowledged with rows > 0 (or committed by the witness), %ld "
                 "not done in the final snapshot",
                 out->opportunities, bad);
    else if (lost_at_switch == 0)
        snprintf(out->summary, sizeof out->summary,
                 "%ld completes acknowledged with rows > 0 (or committed by the witness), %ld "
                 "not done in the final snapshot; %ld acknowledged before the %s, none lost: "
                 "every one was done on the replica that was promoted",
                 out->opportunities, bad, before_switch, sw.kind ? sw.kind : "switch");
    else
        snprintf(out->summary, sizeof out->summary,
                 "%ld completes acknowledged with rows > 0 (or committed by the witness), %ld "
                 "not done in the final snapshot; %ld acknowledged before the %s, %ld of them "
                 "lost: not done on the replica that was promoted",
                 out->opportunities, bad, before_switch, sw.kind ? sw.kind : "switch",
                 lost_at_switch);
out:
    free(sw.row);
    qc__snapshot_fini(&snap);
    qc__check_finish(out);
    return 0;
}
