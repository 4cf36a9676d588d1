/*
 * lint.h - load-time remarks on a scenario and protocol pair (issue 18):
 * what the run will be blind to, said before it starts.
 *
 *   - an unused scenario value: the scenario file sets a key whose value
 *     reaches the protocol only as a parameter the protocol never reads
 *     ("max_attempts = 10 is set but x.sql never reads :max_attempts");
 *     a warning on stderr and a ledger note, never an error (see
 *     docs/decisions.md);
 *   - a missing optional column: a step's last statement does not return a
 *     column that a judged checker's rule needs (qc_protocol_column_needs);
 *     an informational note on stderr, and the header's "columns".
 *
 * Pure functions of the loaded scenario and protocol; nothing connects.
 */
#ifndef QC_LINT_H
#define QC_LINT_H

#include <jansson.h>
#include <stdio.h>

#include "../backends/protocol.h"
#include "ledger.h"
#include "scenario.h"

/* A scenario value the protocol never reads. */
typedef struct qc_unused {
    const char *section; /* "lease" (static storage) */
    const char *key;     /* "max_attempts" */
    const char *param;   /* "max_attempts": the parameter it feeds, without ':' */
    const char *steps;   /* the steps meant to read it, in words: "enqueue",
                            "claim and renew" */
    int line;            /* line of the scenario file that set it */
    long value;
} qc_unused;

/* Fills out (at most max entries) with the values s's file set that p never
 * reads, in a fixed order (max_attempts, lease_ms, retry_delay_ms, batch,
 * groups, payload_bytes); returns how many.  Only keys the file set count
 * (qc_scenario_set_line); lease_ms and batch are not asked of a
 * transaction-model protocol (its lease is the open transaction, its batch
 * always 1), groups = 0 is not asked at all. */
int qc_lint_unused(const qc_scenario *s, const qc_protocol *p, qc_unused *out, int max);

/* Writes one warning line per unused value to f:
 *   qchaos: warning: FILE:LINE: KEY = VALUE is set but PROTO never reads
 *   :PARAM (its STEPS ignores it)
 * and one note per missing optional column a judged checker needs:
 *   qchaos: note: PROTO: STEP returns no COLUMN: WHAT
 * (s->checkers names the judged checkers; "" = all).  Returns the number of
 * lines written. */
int qc_lint_print(FILE *f, const qc_scenario *s, const qc_protocol *p);

/* Appends a ledger note per unused value: {"type":"note","note":"unused
 * scenario value","key":KEY,"section":SECTION,"value":N,"parameter":PARAM,
 * "steps":STEPS,"scenario_file":FILE,"line":N,"protocol":PROTO}.
 * Called by the thread owning lb. */
void qc_lint_ledger(qc_lbuf *lb, const qc_scenario *s, const qc_protocol *p);

/* The header's "columns": for each present step with results (enqueue,
 * claim, complete, renew, fail, reap, snapshot, monitor), the array of
 * known columns its last statement mentions (qc_protocol_columns).  A new
 * reference; NULL on out of memory. */
json_t *qc_lint_columns_json(const qc_protocol *p);

#endif
