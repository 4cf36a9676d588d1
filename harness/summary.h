/*
 * summary.h - many runs at once, and two runs side by side, from their
 * results.json files (docs/results.md): `qchaos summary DIR...` (also what
 * `qchaos run --repeat N` prints at its end) and `qchaos diff A B`.
 *
 * Neither re-derives a verdict: verdicts, violations, first-violation times,
 * recovery times and jobs/s are read as the audit wrote them ("figures",
 * "metrics").  Nothing here touches a database.  Not thread-safe against a
 * writer of the same files; otherwise reentrant.
 */
#ifndef QC_SUMMARY_H
#define QC_SUMMARY_H

#include <jansson.h>
#include <stdio.h>

#include "err.h"

/* Loads the results.json of a run: path is a run folder (path/results.json)
 * or the file itself.  Returns a new reference, or NULL with err set:
 * QC_EINVAL "PATH holds no results.json", "FILE:LINE:COL: <jansson's
 * message>", "FILE: not a qchaos results file (schema ...)". */
json_t *qc_results_load(const char *path, qc_err *err);

/* The runs named by paths[0..n): each a run folder (it holds results.json),
 * a results.json file, or a folder of run folders (its subfolders that hold
 * a results.json, in name order: what --repeat writes, OUT/seed-S; looked
 * into down to 4 levels: a gate's or mutation's OUT/SCENARIO/seedS, so the
 * folders of --shard jobs merge; one holding gate.json or mutation.json and
 * no run, an empty share, adds nothing and is no error).  Returns
 * a new JSON array of the results objects, each with "dir" added (the folder
 * as found), or NULL with err set (QC_EINVAL naming the path that holds no
 * run, or the file that does not parse; QC_ENOMEM). */
json_t *qc_summary_collect(const char *const *paths, int n, qc_err *err);

/* The aggregate of runs (an array as qc_summary_collect returns; borrowed),
 * a new object, schema "qchaos-summary/1":
 *   runs, verdicts {PASS, FAIL, INCONCLUSIVE}, seeds [..]
 *   checkers {NAME: {PASS, FAIL, INCONCLUSIVE, NOT_APPLICABLE, judged_runs,
 *             violations_total, failing_seeds [..],
 *             first_violation_s {n, min, median, max}}}
 *   recovery_ms {measured, p50, p95, max}   (every run's values pooled)
 *   jobs_per_s {n, min, median, max}        (each run's metrics.jobs_per_s:
 *                                            over its work interval)
 *   table [{dir, seed, scenario, protocol, verdict, exit_code, jobs_per_s,
 *           work_s, recovery_ms {p50, p95, max}, failing [names]}]
 *   exit_code  1 when a run FAILed, else 4 when one was INCONCLUSIVE, else 0
 * Absent figures (a results.json written before figures existed) count as
 * unknown, never as 0.  NULL when out of memory. */
json_t *qc_summary_aggregate(const json_t *runs);

/* Prints the aggregate as tables (one line per run, one per checker) and
 * ends with one line "qchaos: summary: N runs (...); jobs/s ...; recovery
 * ...".  Times in seconds, rates in jobs/s, recovery in ms. */
void qc_summary_print(FILE *out, const json_t *agg);

/* `qchaos summary`: collect, aggregate, print to out, and write the
 * aggregate to json_path (via json_path.tmp; NULL: none).  Returns the
 * exit code: the aggregate's exit_code, 2 with err set for bad input, 3
 * when json_path cannot be written. */
int qc_summary_run(const char *const *paths, int n, const char *json_path, FILE *out,
                   qc_err *err);

/* `qchaos diff A B`: A and B are run folders or results.json files; prints
 * per checker the verdict and violation count in A and B and whether B is
 * worse, the violations new in B and gone from A (matched by checker and
 * job; a violation about no job by its explanation), and the shifts of
 * jobs/s, claim and complete latency (p50, p95, p99) and recovery time
 * (p50, p95, max).  B is worse on a checker when the checker is judged in
 * B and its verdict is worse (PASS or NOT_APPLICABLE < INCONCLUSIVE <
 * FAIL), or it FAILs in both and B has a violation A does not.  Writes the
 * comparison as JSON to json_path (NULL: none).  Returns 1 when B is worse
 * on a judged checker, 0 when not, 2 with err set for bad input, 3 when
 * json_path cannot be written.  Throughput and latency never change the
 * code: they vary from run to run on a shared machine. */
int qc_diff_run(const char *a, const char *b, const char *json_path, FILE *out, qc_err *err);

#endif
