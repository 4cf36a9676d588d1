/*
 * check_runs.c - the exclusive_run checker (issue 18): the runs of one job
 * never overlap across actors, nor the runs of different jobs of one group
 * where the workload has groups (group_fifo's promise).  A lease rule can
 * hold while the work does not: a protocol that rightly refuses a late
 * heartbeat, and a worker that carries on all the same, both run the job
 * while a new owner runs it too.  No checker of leases sees that; this one
 * looks at the runs themselves.
 *
 * A run is what one actor (a worker incarnation) did with one claim: from
 * its OK claim of the job (the claim's answer) to its effect (the effect
 * event).  A claim whose worker never delivered an effect made no run.
 * Two runs R1 (claimed first) and R2 of one job, by different actors,
 * overlap when R2's claim was answered (seq) before R1's effect was
 * delivered: at that moment both workers held the job and R1's worker was
 * still working on it.  For grouped jobs the same holds between runs of
 * different jobs of one group.
 *
 * Innocent explanations, and how each is told apart:
 *   - the earlier lease ran out before the later claim ran (the queue
 *     rightly gave the job away) and its worker was never told (no renew
 *     of that claim answered with rows 0 before its effect): a starved
 *     thread, or a plan that outlasts the lease (shared/cases.md C09's
 *     rescue scenario works longer than its lease on purpose; C07's worker
 *     that stops renewing shows up in effects_once with a plain sink).
 *     qc__lapse_excused decides, without its plan test;
 *   - a reordered ledger: only seqs of one ledger are compared;
 *   - coarse clocks: the margin of qc__clock_resolution.
 * Never excused: a run that went on after its worker's renew was refused
 * (the worker knew: the policy mutant on_renew_refused = continue), a run
 * whose job was handed out while its lease was provably live
 * (exclusive_claim's violation too), and any overlap in the transaction
 * model (the claim lived only in a transaction: C27).
 *
 * Opportunities: runs that followed another run of their job (or group).
 * Cost: one sort of the claims and effects by job, O(n log n); per job or
 * group, pairs of its runs.
 */
#include "checkers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct run {
    size_t claim;   /* index in h->ev of the run's OK claim */
    size_t effect;  /* index of its effect */
    int knew;       /* a renew of this claim was answered with rows 0 before the effect */
    const char *group;
} run;

static int cmp_run_claim(const void *pa, const void *pb)
{
    const run *a = pa, *b = pb;

    return a->claim < b->claim ? -1 : a->claim > b->claim;
}

static int cmp_run_group(const void *pa, const void *pb)
{
    const run *a = pa, *b = pb;
    int c = strcmp(a->group, b->group);

    if (c != 0)
        return c;
    return a->claim < b->claim ? -1 : a->claim > b->claim;
}

/* Is the overlap of r1 and r2 innocent?  See qc__lapse_excused. */
static int excused(const qc_history *h, const run *r1, const run *r2, double res, int renews)
{
    return qc__lapse_excused(h, &h->ev[r1->claim], &h->ev[r2->claim], r1->knew,
                             h->ev[r1->effect].work_ms, r2->knew, h->ev[r2->effect].work_ms,
                             renews, res, 0);
}

static void report(qc_check *c, const qc_history *h, const run *r1, const run *r2, int grouped)
{
    const qc_event *c1 = &h->ev[r1->claim], *c2 = &h->ev[r2->claim];
    const qc_event *e1 = &h->ev[r1->effect], *e2 = &h->ev[r2->effect];
    int64_t seqs[] = {c1->seq, c2->seq, e1->seq, e2->seq};
    char what[96];

    if (grouped)
        snprintf(what, sizeof what, "group '%.40s': job %lld", r2->group, (long long)c2->job);
    else
        snprintf(what, sizeof what, "job %lld", (long long)c2->job);
    qc__check_violation(c, c2->job, seqs, 4,
                        "%s claimed by worker %d (seq %lld) while worker %d was still running "
                        "job %lld (claimed seq %lld, its effect only at seq %lld%s)",
                        what, c2->worker, (long long)c2->seq, c1->worker, (long long)c1->job,
                        (long long)c1->seq, (long long)e1->seq,
                        r1->knew ? ", after its renew had been refused" : "");
}

/* Judges the runs r[0..n) (claim order) of one job or one group. */
static void judge(qc_check *c, const qc_history *h, const run *r, size_t n, int grouped,
                  double res, int renews, long *followed)
{
    for (size_t j = 1; j < n; j++) {
        const qc_event *c2 = &h->ev[r[j].claim];
        (*followed)++;
        for (size_t i = 0; i < j; i++) {
            const qc_event *c1 = &h->ev[r[i].claim];
            if (c1->file != c2->file || (c1->worker == c2->worker && c1->inc == c2->inc))
                continue;
            if (grouped && c1->job == c2->job)
                continue; /* the job's own runs are judged per job */
            if (!(c2->seq < h->ev[r[i].effect].seq))
                continue; /* the first run was over before the second began */
            if (excused(h, &r[i], &r[j], res, renews))
                continue;
            report(c, h, &r[i], &r[j], grouped);
            break;
        }
    }
}

int qc_check_exclusive_run(const qc_history *h, qc_check *out)
{
    qc__jobref *r = NULL;
    run *runs = NULL;
    size_t n = 0, nr = 0, capr = 0;
    long followed = 0;
    int renews = 0, rc = 0;
    double res = qc__clock_resolution(h);

    memset(out, 0, sizeof *out);
    out->name = "exclusive_run";
    if ((r = malloc((h->n + 1) * sizeof *r)) == NULL)
        return QC_ENOMEM;
    for (size_t i = 0; i < h->n; i++) {
        const qc_event *e = &h->ev[i];
        renews |= e->type == QC_EV_INVOKE && e->op == QC_OP_RENEW;
        if (qc__is_claim(e) || (e->type == QC_EV_EFFECT && e->job != QC_NO_JOB))
            r[n++] = (qc__jobref){e->job, i};
        else if (e->type == QC_EV_OK && e->op == QC_OP_RENEW && e->rows == 0 &&
                 qc__event_job(h, e) != QC_NO_JOB)
            r[n++] = (qc__jobref){qc__event_job(h, e), i};
    }
    qc__jobrefs_sort(r, n);
    for (size_t a = 0, b; a < n; a = b) {
        size_t first = nr;
        for (b = a; b < n && r[b].job == r[a].job; b++) {
            const qc_event *e = &h->ev[r[b].ev];
            if (e->type != QC_EV_EFFECT)
                continue;
            /* the claim that gave the effect's worker the job */
            long cl = -1;
            int knew = 0;
            for (size_t k = a; k < b; k++) {
                const qc_event *x = &h->ev[r[k].ev];
                if (x->seq >= e->seq)
                    break;
                if (x->file != e->file || x->worker != e->worker || x->inc != e->inc)
                    continue;
                if (qc__is_claim(x)) {
                    cl = (long)r[k].ev;
                    knew = 0;
                } else if (x->op == QC_OP_RENEW && cl >= 0) {
                    knew = 1;
                }
            }
            if (cl < 0)
                continue;
            if (qc__grow((void **)&runs, &capr, nr + 1, sizeof *runs) != 0) {
                rc = QC_ENOMEM;
                goto out;
            }
            runs[nr++] = (run){(size_t)cl, r[b].ev, knew, h->ev[cl].group};
        }
        if (nr - first > 1) {
            qsort(runs + first, nr - first, sizeof *runs, cmp_run_claim);
            judge(out, h, runs + first, nr - first, 0, res, renews, &followed);
        }
    }
    /* groups: the runs of grouped jobs, sorted by group, then claim */
    size_t ng = 0;
    for (size_t k = 0; k < nr; k++)
        if (runs[k].group != NULL)
            runs[ng++] = runs[k];
    if (ng > 1)
        qsort(runs, ng, sizeof *runs, cmp_run_group);
    for (size_t a = 0, b; a < ng; a = b) {
        for (b = a + 1; b < ng && strcmp(runs[b].group, runs[a].group) == 0; b++)
            ;
        long ignore = 0;
        judge(out, h, runs + a, b - a, 1, res, renews, &ignore);
    }
    out->opportunities = followed;
    snprintf(out->summary, sizeof out->summary,
             "%zu runs (claim to effect), %ld followed another run of their job; %ld overlapping "
             "runs of one job or group",
             nr, followed, out->nviolations);
    qc__check_finish(out);
out:
    free(r);
    free(runs);
    return rc;
}
