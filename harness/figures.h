/*
 * figures.h - the numbers of a run for dashboards and comparisons, computed
 * from its history (the ledger read back): the interval work was done in
 * and the throughput over it, request latencies, faults per kind, recovery
 * times, and per-interval samples in the manner of pgbench's
 * --aggregate-interval log.  results.json carries them under "figures" (and
 * "metrics" work_s / jobs_per_s), samples.csv the samples; `qchaos summary`
 * and `qchaos diff` read them back.
 *
 * Every time here is the client's CLOCK_MONOTONIC as the ledger's "t"
 * (milliseconds since the run started) unless a name says otherwise; a
 * latency is a request's invoke to its answer (ok, fail or info), as the
 * latency plot's.  Floats are rounded to what they mean (qc_round): ms to
 * 0.01, seconds to 0.001, rates to 0.1.  Nothing here prints, and every
 * function is thread-safe on a history nobody writes.
 */
#ifndef QC_FIGURES_H
#define QC_FIGURES_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"
#include "history.h"

/* x rounded to a multiple of step (0.01 for ms); x itself when step <= 0
 * or x is not finite. */
double qc_round(double x, double step);

/* The interval in which work was done: from the first claim sent (invoke)
 * to the answer of the last acknowledged complete (ok, rows > 0); jobs/s is
 * completes / (to - from).  Counting from the first claim leaves out setup,
 * enqueue and the workers' connecting (pgbench's start barrier); stopping
 * at the last complete leaves out the drain's and the idle tail's empty
 * polls.  completes counts acknowledged completes with rows > 0 (a retried
 * complete of one job counts each time the queue said it completed). */
typedef struct qc_work {
    double from_ms, to_ms; /* ledger t; both -1 when no claim or no complete */
    long completes;
    double jobs_per_s;     /* 0 when the interval is empty */
} qc_work;

void qc_figures_work(const qc_history *h, qc_work *w);

/* One aggregate interval [t_s, t_s + interval), the first beginning at the
 * first claim sent: requests by the interval
 * their answer arrived in, faults by their event, the queue depth from the
 * last monitor sample in the interval (-1 when none). */
typedef struct qc_sample {
    double t_s;              /* interval start, s on the ledger clock */
    long claims;             /* jobs claimed (ok claim rows) */
    long empty_claims;       /* ok claims that returned no job */
    long completes;          /* acknowledged completes, rows > 0 */
    long fail_info;          /* answers fail or info (any op) */
    long faults;             /* fault events (planned faults that fired, server faults) */
    double jobs_per_s;       /* completes / interval */
    double complete_ms_p50, complete_ms_p95, complete_ms_max; /* -1 when none */
    long ready, inflight, expired, dead; /* -1 when no monitor sample */
} qc_sample;

/* The samples of h at interval_ms (> 0; 1000 is pgbench's unit), from the
 * first claim to the last event; *out is malloc'd
 * (free it), *n its length (0 and NULL when the ledger holds no claim).
 * Errors: QC_ENOMEM, QC_EINVAL (interval_ms <= 0). */
int qc_figures_samples(const qc_history *h, double interval_ms, qc_sample **out, size_t *n,
                       qc_err *err);

/* Writes samples as CSV (a header line, then one line per interval; -1
 * means "none", as in the struct) to path, via path.tmp and a rename.
 * Errors: QC_EIO naming the file. */
int qc_figures_write_csv(const char *path, const qc_sample *s, size_t n, double interval_ms,
                         qc_err *err);

/* The "figures" object of results.json (new reference; NULL when out of
 * memory):
 *   work      {from_s, to_s, s, completes, jobs_per_s, interval: "first claim sent to last
 *             acknowledged complete (client clock)"}
 *   latency_ms {claim: {n, p50, p95, p99, max}, complete: {...}}   (invoke to answer)
 *   faults    {KIND: {planned, fired}} for every kind planned or fired
 *   recovery_ms {faults, measured, p50, p95, max, values: [first 10000]} (the recovery
 *             checker's own measurements; p50... null when none measured)
 *   samples   {interval_s, rows: [qc_sample as objects]}  (also samples.csv)
 * samples may be NULL (n 0): "samples" is then left out. */
json_t *qc_figures_json(const qc_history *h, const qc_sample *samples, size_t n,
                        double interval_ms);

#endif
