/*
 * checkers.h - audit rules over a history (DESIGN.md "Checkers").
 *
 * Each checker yields PASS, FAIL or INCONCLUSIVE (zero opportunities), or
 * NOT_APPLICABLE (the rule does not apply to the protocol's model), its
 * opportunity count, and violations, each with the job id and the ledger
 * sequence numbers that prove it.  Checkers are pure functions of the
 * history: the same ledger always gives the same verdict.
 */
#ifndef QC_CHECKERS_H
#define QC_CHECKERS_H

#include "history.h"

typedef enum {
    QC_PASS = 0,
    QC_FAIL = 1,
    QC_INCONCLUSIVE = 2,
    QC_NOT_APPLICABLE = 3
} qc_verdict;

#define QC_MAX_EVIDENCE 8

typedef struct qc_violation {
    int64_t job;                    /* QC_NO_JOB when not about one job */
    int nseq;
    int64_t seq[QC_MAX_EVIDENCE];   /* ledger seq numbers, ascending */
    char msg[256];                  /* one line in plain words */
} qc_violation;

typedef struct qc_check {
    const char *name;       /* static: "exclusive_claim" ... */
    qc_verdict verdict;
    long opportunities;
    long nviolations;       /* total found (may exceed stored) */
    size_t nstored;         /* violations kept in v (capped) */
    qc_violation *v;        /* owned */
    char summary[256];      /* e.g. "20000 claims, 0 overlapping leases" */
} qc_check;

/* Maximum violations a checker keeps (the count is exact regardless). */
#define QC_MAX_STORED_VIOLATIONS 100

const char *qc_verdict_name(qc_verdict v);

/* Individual checkers: fill *out (caller-allocated, zeroed); return 0 or
 * QC_ENOMEM.  Thread-safe (read-only on h). */
int qc_check_exclusive_claim(const qc_history *h, qc_check *out);
int qc_check_double_complete(const qc_history *h, qc_check *out);
int qc_check_no_lost_jobs(const qc_history *h, qc_check *out);
int qc_check_acked_durable(const qc_history *h, qc_check *out);

/* Runs every checker; *out is a new array of *n checks freed with
 * qc_checks_free. */
int qc_check_all(const qc_history *h, qc_check **out, size_t *n);
void qc_checks_free(qc_check *c, size_t n);

/* Records a violation in c (counts it; stores it while under the cap).
 * seqs need not be sorted.  Used by checker implementations. */
void qc__check_violation(qc_check *c, int64_t job, const int64_t *seqs, int nseq,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Sets c->verdict from violations and opportunities. */
void qc__check_finish(qc_check *c);

/* ---- shared by the checker files only (not for other modules) ---- */

/* The job an event is about: its own "job", else (a completion whose line
 * lacks it) its invoke's; QC_NO_JOB when neither has one. */
int64_t qc__event_job(const qc_history *h, const qc_event *e);

/* The token an event carried: its own "token", else its invoke's; NULL when
 * neither has one. */
const char *qc__event_token(const qc_history *h, const qc_event *e);

/* Flags, one per event of h: 1 for an invoke that some completion (ok,
 * fail or info) answers.  An invoke left unanswered (the harness stopped, or
 * the worker died mid-request) has an unknown outcome, like info.  Returns
 * a new array (free it) or NULL when out of memory. */
unsigned char *qc__answered_invokes(const qc_history *h);

/* An event of h (index ev) about job; sorted by job, then ev (= seq order). */
typedef struct qc__jobref {
    int64_t job;
    size_t ev;
} qc__jobref;

void qc__jobrefs_sort(qc__jobref *r, size_t n);

/* The final snapshot: the last snapshot row (by seq) of each job. */
typedef struct qc__snapshot {
    qc__jobref *row;  /* sorted by job, one per job */
    size_t n;
    size_t nevents;   /* snapshot events in the ledger; 0 means no snapshot */
} qc__snapshot;

/* Builds s (caller-allocated) from h.  Returns 0 or QC_ENOMEM. */
int qc__snapshot_build(const qc_history *h, qc__snapshot *s);
/* The job's final snapshot row, or NULL when the job is not in it. */
const qc_event *qc__snapshot_find(const qc_history *h, const qc__snapshot *s, int64_t job);
void qc__snapshot_fini(qc__snapshot *s);

#endif
