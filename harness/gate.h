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
    const char *dsn;      /* NULL: each run starts its own ephemeral server */
    const char *out_dir;  /* runs go to out_dir/SCENARIO/seedS; gate.json, junit.xml */
    int seeds;            /* seeds first_seed .. first_seed + seeds - 1 */
    int first_seed;
    int groups;           /* 1: also the grouped scenario (group-exclusive protocols) */
} qc_gate_opts;

/* Runs the battery (each run a child of this executable, see
 * qc__run_child), prints a table and the verdict line, writes gate.json
 * and junit.xml (a testcase per scenario and judged checker) into out_dir.
 * Returns the exit code: 1 a checker failed in some run, 3 a run could not
 * be done, 4 a judged checker had no opportunity in some run, 0 every run
 * passed; 2 with err set for bad input (protocol not loadable). */
int qc_gate_run(const qc_gate_opts *o, qc_err *err);

#endif
