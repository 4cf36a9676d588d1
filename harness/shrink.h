/*
 * shrink.h - `qchaos shrink RUNDIR` (issue 12): cut a failing run down to
 * the smallest scenario that still fails the same checker.
 *
 * The run folder's ledger header says what ran (scenario file, protocol,
 * seed, workers, jobs, duration, faults as counts or rates); results.json
 * says which checkers FAILed.  The shrinker then tries smaller scenarios,
 * one dimension at a time (jobs, workers, each fault kind, the nemesis,
 * the feed, the duration), each as a child run of this executable
 * (qc__run_child_timed, as the mutation matrix and the gate), and keeps a
 * cut when the same checker FAILs in each of `tries` runs of it.  The schedule (the order in which
 * workers pass the points of the protocol) is not cut yet.
 */
#ifndef QC_SHRINK_H
#define QC_SHRINK_H

#include "err.h"

typedef struct qc_shrink_opts {
    const char *run_dir; /* the failing run's folder (ledger.jsonl, results.json) */
    const char *out_dir; /* NULL: RUN_DIR/shrink; tries in OUT/try-NN, OUT/shrunk.ini */
    const char *dsn;     /* NULL: each child run starts its own ephemeral server */
    const char *checker; /* NULL: the run's first failing judged checker */
    int max_runs;        /* child runs allowed while cutting (>= 1) */
    int timeout_s;       /* wall-clock bound of each child run, seconds (>= 1) */
    int tries;           /* runs per cut (seeds S, S+1, ...; >= 1): kept when the checker
                            failed in each of them */
    int confirm;         /* runs of the final scenario to confirm it fails (>= 0) */
    const char *prog;    /* how the user called qchaos (argv[0]: "./qchaos" in a checkout),
                            for the printed commands; NULL: "qchaos" */
} qc_shrink_opts;

/* Cuts the run in o->run_dir down and writes OUT/shrunk.ini (a scenario
 * whose leading comment names the run it came from and the checker that
 * fails), OUT/shrink.json (every try) and prints the command that runs
 * the scenario.  At most o->max_runs + o->confirm child runs, each bounded
 * by o->timeout_s; SIGINT / SIGTERM (qc_interrupted) stops the running
 * child and writes the smallest failing scenario found so far.
 * Not thread-safe (one shrink per process).
 * Returns the exit code: 0 a scenario that fails the checker was written;
 * 2 with err set for bad input (not a run folder, a run with no FAILed
 * checker, a checker that did not fail, the run's scenario or protocol
 * file gone or not a regular file); 3 child runs could not be done (three
 * in a row exited 2 or 3, or could not start); 4 interrupted, or nothing
 * written (the failure did not show again in any child run, or no cut
 * failed in each of its runs within max_runs). */
int qc_shrink_run(const qc_shrink_opts *o, qc_err *err);

#endif
