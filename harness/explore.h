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
    const char *prog;     /* how the user called qchaos (argv[0]), for the printed replay
                             command; NULL: "qchaos" */
    int force;            /* --force: an out_dir that holds an earlier exploration or a
                             run is written over (its run-N folders removed first) */
} qc_explore_opts;

/* Runs the exploration (each run a child of this executable).  Refuses an
 * out_dir that holds an earlier exploration (a run-N folder) or a run
 * (ledger.jsonl) unless force.  Returns 1 when a run failed (its folder,
 * schedule, the replay command and, in the last line, the checkers that
 * failed printed), 0 when every run passed, 4 when none failed but some
 * were inconclusive, 3 when a run could not be done, 2 with err set for
 * bad input or an out_dir refused. */
int qc_explore_run(const qc_explore_opts *o, qc_err *err);

#endif
