/*
 * runner.h - one scenario run: setup -> enqueue -> chaos -> drain ->
 * snapshot -> audit (DESIGN.md "Phases of a run").
 */
#ifndef QC_RUNNER_H
#define QC_RUNNER_H

#include "scenario.h"

typedef struct qc_run_opts {
    qc_scenario sc;       /* scenario with CLI overrides applied */
    const char *dsn;      /* NULL: the PG* variables (libpq engines), else the ephemeral server */
    const char *worker_dsn; /* workers and reaper connect here (a pooler); NULL: dsn */
    char out_dir[1024];   /* created if missing */
    int keep;             /* 1: skip the protocol's teardown */
    int allow_existing;   /* 1: run although qchaos's schema holds tables it did not create */
    int progress;         /* 1: the terminal's progress line (rewritten every second) */
    double progress_s;    /* > 0: a progress line every progress_s seconds (-P), any stderr */
    int allow_inconclusive; /* junit.xml: INCONCLUSIVE as skipped, not failure */
    const char *argv_line;/* the command line, for "repeat with" */
    const char *replay;   /* --replay: the earlier run's ledger.jsonl whose order of points
                             this run imposes again (harness/sched.h), or NULL */
    const struct qc_sched_entry *replay_entries; /* with replay: the order to impose, when
                             not the ledger's own (the replay search, replay.h); NULL: the
                             ledger's; borrowed for the run */
    int replay_nentries;
    int shard_index;      /* --shard I/N: this process is shard I of N (shard.h); */
    int shard_count;      /* 0 or 1: the whole run in this process */
} qc_run_opts;

/* Runs a scenario; returns the process exit code (0 pass, 1 violation,
 * 2 input error, 3 database unreachable or setup failed, 4 inconclusive)
 * and prints the verdict table and where results are.  err gets the reason
 * when the code is 2 or 3. */
int qc_run(const qc_run_opts *o, qc_err *err);

#endif
