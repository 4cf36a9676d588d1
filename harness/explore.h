/*
 * explore.h - `qchaos explore SCENARIO`: many short runs of one scenario,
 * each under a different PCT schedule (sched.h: random actor priorities
 * and depth-1 priority change points from the run's seed), stopping at the
 * first run that fails (issue 12).  The failing run's folder holds its
 * ledger, which `qchaos run --replay DIR` imposes again, and its order of
 * points is printed as [schedule] step lines.
 */
#ifndef QC_EXPLORE_H
#define QC_EXPLORE_H

#include "err.h"

typedef struct qc_explore_opts {
    const char *scenario; /* scenario file (path as found) */
    const char *protocol; /* NULL: the scenario's */
    const char *dsn;      /* NULL: each run starts its own ephemeral server */
    const char *out_dir;  /* runs go to out_dir/run-SEED */
    int runs;             /* at most this many runs */
    int first_seed;
    int depth;            /* PCT depth d (priority changes + 1) */
} qc_explore_opts;

/* Runs the exploration (each run a child of this executable).  Returns 1
 * when a run failed (its folder and schedule printed), 0 when every run
 * passed, 4 when none failed but some were inconclusive, 3 when a run
 * could not be done, 2 with err set for bad input. */
int qc_explore_run(const qc_explore_opts *o, qc_err *err);

#endif
