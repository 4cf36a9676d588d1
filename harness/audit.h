/*
 * audit.h - checkers over saved ledgers, verdict table, results.json.
 * Used by `qchaos run` (on the ledger it has just written, read back from
 * disk, so the run and `qchaos audit` always agree) and `qchaos audit`.
 */
#ifndef QC_AUDIT_H
#define QC_AUDIT_H

#include <jansson.h>
#include <stdio.h>
#include "checkers.h"

/* Loads ledgers, runs every checker, prints the verdict table to out, and
 * writes results.json into out_dir when it is not NULL (run metrics taken
 * from metrics, borrowed, may be NULL).  Returns the exit code (0/1/4) or
 * 2 / 3 with err set when the ledgers cannot be read. */
int qc_audit(const char *const *ledgers, int n, const char *out_dir, json_t *metrics, FILE *out,
             qc_err *err);

/* qc_audit that copies the verdict line (see qc_audit_verdict_line) into
 * verdict (size verdict_size) instead of printing it, so a caller that
 * prints more after the table ends with it; verdict NULL: printed after the
 * table, as qc_audit does. */
int qc_audit_ex(const char *const *ledgers, int n, const char *out_dir, json_t *metrics,
                FILE *out, char *verdict, size_t verdict_size, qc_err *err);

/* The one line that ends every run and audit, as Jepsen's last line:
 * "qchaos: verdict: PASS: ...", "... FAIL: exclusive_claim (3 violations),
 * ..." or "... INCONCLUSIVE: ... (the checkers without an opportunity and
 * why)".  interrupted: the run was stopped before its drain.  Writes into
 * buf (size bytes, always terminated).  Thread-safe. */
void qc_audit_verdict_line(const qc_check *c, size_t n, const char *judged, int interrupted,
                           char *buf, size_t size);

/* Exit code for a set of checks: 1 if any FAIL (judged or not: a proven
 * violation is never ignored), else 4 if a JUDGED checker is INCONCLUSIVE,
 * else 0.  judged: comma-separated names the scenario judges (ledger header
 * "checkers"); NULL or "" judges every checker. */
int qc_audit_exit_code(const qc_check *c, size_t n, const char *judged);

/* 1 when name is in the comma-separated list judged (or the list is empty). */
int qc_audit_is_judged(const char *judged, const char *name);

/* mkdir -p path (mode 0755).  Errors: QC_EIO naming the folder. */
int qc_mkdirs(const char *path, qc_err *err);

/* 1 when name is prefix followed by one or more digits and nothing else
 * ("run-12" for prefix "run-"): the numbered folders explore and the
 * replay search write. */
int qc_numbered_name(const char *name, const char *prefix);

/* rm -r path (symbolic links removed, not followed).  0, or -1 with errno
 * set by the entry that could not be removed. */
int qc_remove_tree(const char *path);

#endif
