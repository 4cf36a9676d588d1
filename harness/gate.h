/*
 * gate.h - `qchaos gate PROTOCOL`: the battery of scenarios that covers
 * every checker of the protocol's model, run against the protocol a user
 * gives, with one verdict, one junit.xml and one gate.json (issue 12).
 *
 * The battery is the targeted scenarios (scenarios/gate/: a stall that
 * waits until the job was claimed by another worker, then sends its stale
 * requests while the new owner is held) plus the fault scenarios and field
 * cases that expose the other bug classes; each scenario's own protocol is
 * replaced by PROTOCOL.  Scenarios that need a server of their own (a
 * pooler) start one even with --dsn.
 */
#ifndef QC_GATE_H
#define QC_GATE_H

#include "err.h"

typedef struct qc_gate_opts {
    const char *protocol; /* the protocol file to gate (path, resolved by the caller) */
    const char *prog;     /* how the user called qchaos (argv[0]), for the printed repeat
                             commands; NULL: "qchaos" */
    const char *dsn;      /* NULL: each run starts its own ephemeral server */
    const char *out_dir;  /* runs go to out_dir/SCENARIO/seedS; gate.json, junit.xml */
    int seeds;            /* seeds first_seed .. first_seed + seeds - 1 */
    int first_seed;
    int groups;           /* 1: also the grouped scenario (group-exclusive protocols) */
    int fail_fast;        /* 1: start no further run once one failed (see stop_on); the
                             runs left out are listed as not run, the exit is then 1 */
    int jobs;             /* runs at once (1..64; 0 = 1).  Without dsn each run has its
                             own ephemeral server; with a PostgreSQL keyword dsn, slot K > 0
                             uses the database qchaos_gate_K on that server, created when
                             missing (and dropped after when the gate created it); other
                             targets run one at a time */
    const char *policy;   /* NULL, or a scenario file whose [policy], [idle] and [sink]
                             sections are laid over every scenario (a worker policy) */
    const char *stop_on;  /* NULL: --fail-fast stops at any FAIL; else a comma list of
                             checkers: only their FAIL stops it (qchaos mutation) */
    const char *first;    /* NULL, or a scenario file to run first: one of the battery's,
                             or one outside it, run first in addition to the battery
                             (qchaos mutation: a mutant's own scenario) */
    const char *const *extra; /* nextra > 0: scenario files run after the battery, in
                                 addition to it (those in the battery, of any model, and
                                 duplicates are dropped; --only applies to them too):
                                 qchaos mutation runs the correct protocol on the policy
                                 mutants' baselines that are not in the battery */
    size_t nextra;
    const char *const *only; /* nonly > 0: only the battery's scenarios among these files
                                (qchaos mutation --only: the chosen mutants' own) */
    size_t nonly;
    int quiet;            /* 1: no table and no verdict line (the caller prints) */
    int timeout_s;        /* wall-clock bound of each run, s; 0: 900 */
    int shard_index;      /* --shard I/N: only the battery's scenarios k (in battery
                             order, after the model / --groups / --only filters) with */
    int shard_count;      /* k % N == I, every seed of each; 0 or 1: all.  One CI job
                             per shard; qchaos summary merges their folders */
} qc_gate_opts;

/* What a battery showed, for a caller (qchaos mutation). */
typedef struct qc_gate_result {
    int runs;                 /* runs done */
    int not_run;              /* runs --fail-fast left out */
    int stopped;              /* a stop_on checker (any, without stop_on) FAILed in a run */
    char stopped_by[128];     /* the first such run's scenario (under scenarios/) */
    double first_violation_s; /* that run's first violation of a stop_on checker, s; -1 */
} qc_gate_result;

/* Runs the battery (each run a child of this executable, see
 * qc__run_child_timed; o->jobs of them at once, one thread each), prints
 * a table (unless quiet) and the verdict line, writes gate.json and
 * junit.xml (a testcase per scenario, seed and judged checker; a run left
 * out by --fail-fast a skipped testcase) into out_dir.  res may be NULL.
 * Not reentrant (one gate per process).
 * Returns the exit code: 1 a checker failed in some run, 3 a run could not
 * be done (or timed out), 4 a judged checker had no opportunity in some
 * run, or the gate was interrupted, 0 every run passed; 2 with err set for
 * bad input (protocol not loadable, --policy file unreadable). */
int qc_gate_run(const qc_gate_opts *o, qc_gate_result *res, qc_err *err);

#endif
