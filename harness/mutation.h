/*
 * mutation.h - the mutation self-test (`qchaos mutation`): every mutant
 * (backends/ENGINE/mutants/NAME.sql, and policy mutants scenarios/mutants/NAME.ini)
 * runs against the scenario that exposes it for K seeds, the correct
 * protocol runs against the same scenarios, and a table says how often
 * each mutant was caught, how fast, and how many false positives the
 * correct protocol raised.
 */
#ifndef QC_MUTATION_H
#define QC_MUTATION_H

#include "err.h"

typedef struct qc_mutation_opts {
    int seeds;               /* K: seeds 1..K */
    const char *out_dir;     /* runs go to out_dir/NAME/seedS; table to out_dir/mutation.json */
    const char *dsn;         /* NULL: each run starts its own ephemeral PostgreSQL */
    const char *odbc;        /* ODBC connection string of a MariaDB server: the MariaDB
                                mutants (backends/mariadb/mutants, named "mariadb:NAME")
                                and their correct base protocols run on it; NULL: they
                                are left out of the matrix */
    const char *only;        /* run only mutants whose name contains this, or NULL */
    const char *correct;     /* the correct protocol for every baseline run; NULL: each
                                scenario's own protocol (policy mutants run on
                                backends/postgres/skip_locked.sql unless this is set) */
    int jobs;                /* runs at once in the correct protocols' batteries (see
                                qc_gate_opts.jobs); the mutants run one run at a time */
    int shard_index;         /* --shard I/N: only the mutants k (in the matrix's name order) */
    int shard_count;         /* with k % N == I, and share I of each correct protocol's
                                battery (qc_gate_opts.shard_*); 0 or 1: the whole matrix.
                                The matrix passes when every shard exits 0 */
} qc_mutation_opts;

/* Runs the matrix by starting this executable (/proc/self/exe) once per
 * run.  Returns the exit code: 0 every mutant caught in every seed and no
 * false positive; 1 otherwise; 2 bad input (a mutant without expect or
 * scenario header); 3 a run could not be done. */
int qc_mutation_run(const qc_mutation_opts *o, qc_err *err);

/* Runs `qchaos run SCENARIO [--protocol P] --seed S --out DIR --no-progress
 * --force [--dsn DSN]` as a child of this executable (/proc/self/exe), its
 * stdout and stderr into DIR/run.log (DIR is created); the DSN is left out
 * for a scenario that needs a server of its own.  Returns the child's exit
 * code, or -1 when it could not be started or died.  Used by the mutation
 * matrix and the gate (gate.c). */
int qc__run_child(const char *scenario, const char *protocol, int seed, const char *dir,
                  const char *dsn);

/* What qc__run_child_timed returns for a child stopped by its timeout. */
#define QC_CHILD_TIMEOUT 124

/* As qc__run_child, with a timeout in seconds of wall time (0: none): a
 * child still running then gets SIGTERM (it stops within seconds, as on
 * Ctrl-C), SIGKILL 20 s later, and QC_CHILD_TIMEOUT is returned.  On
 * SIGINT / SIGTERM of this process (qc_interrupted) the child gets SIGTERM
 * and its own exit code is returned (4).  Waits by polling every 50 ms, so
 * several threads may each wait for a child of their own. */
int qc__run_child_timed(const char *scenario, const char *protocol, int seed, const char *dir,
                        const char *dsn, int timeout_s);

#endif
