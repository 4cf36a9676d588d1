/*
 * protocol.h - loads a protocol (backend) file and runs its steps.
 *
 * File format (yesql / sqlc convention), see README "Protocol files":
 *
 *   -- qchaos protocol            (free comment lines are allowed anywhere)
 *   -- engine: postgres           header keys before the first "-- name:":
 *   -- model: lease                 engine (postgres|mariadb|sqlserver|spanner),
 *                                   model (lease|transaction), description,
 *                                   expect, scenario (mutants: the checkers that
 *                                   must catch it and the scenario exposing it),
 *                                   base (see Overlay), tested (where it
 *                                   was run: copied into results.json)
 *   -- name: claim                starts a step; the known step names are the
 *   -- autocommit: yes            QC_STEP_* below.  "-- key: value" lines right
 *   WITH picked AS (...) ...;     after "-- name:" are step options
 *                                   (autocommit: yes|no; split: yes|no, where
 *                                   no keeps the step one batch: sqlserver only).
 *
 * Overlay: a header line "-- base: FILE" (relative to this file's folder)
 * makes the file a variation of FILE: its steps replace FILE's steps of the
 * same name, every other step comes from FILE (so a mutant holds only the
 * steps it breaks).  engine and model must be FILE's; a base may itself have
 * a base (at most 4 deep).  Required steps are checked after the merge.
 *
 * A step holds one or more SQL statements separated by ';' (quotes, "ident",
 * $tag$ dollar quotes $tag$, -- and block comments respected).  Named
 * parameters :name are rewritten to $n (QC_PARAM_DOLLAR) or ? (QC_PARAM_QMARK);
 * "::type" casts are left alone, as are ':' inside quotes and comments.
 *
 * Only the documented keys are keys: any other "-- word: text" line is a
 * comment ("-- note: ...", "-- Author: ..."), except a lowercase word at most
 * one edit (keys of up to 4 letters) or two edits (longer keys; a swap of two
 * neighbours is one edit) from a documented key, which is taken for a typo
 * ("-- engin: postgres": "did you mean 'engine'?").
 *
 * Load-time checks (QC_EINVAL, message "file:line: ..."): unknown step name,
 * a mistyped or misplaced header/option key, a required step missing (setup, teardown,
 * enqueue, claim, complete, snapshot), a parameter of a step's first statement
 * that is not a known parameter (QC_PARAM_NAMES), a required result column not
 * mentioned in the text of a step's last statement (claim: job_id token
 * lease_until_ms now_ms attempt op_key payload, lease_until_ms not in the
 * transaction model; enqueue: job_id; snapshot:
 * job_id state attempt token; monitor: ready inflight; dedup: run); a dedup
 * step whose protocol's claim returns no message_id (the worker would have
 * no :message_id to bind), named at the dedup step's line; a listen or notify
 * step in a protocol whose engine is not postgres (MariaDB, SQL Server and
 * Spanner have no LISTEN/NOTIFY), named at the step's line.
 */
#ifndef QC_PROTOCOL_H
#define QC_PROTOCOL_H

#include "driver.h"

typedef enum {
    QC_STEP_SETUP = 0,
    QC_STEP_TEARDOWN,
    QC_STEP_ENQUEUE,
    QC_STEP_CLAIM,
    QC_STEP_COMPLETE,
    QC_STEP_RENEW,
    QC_STEP_FAIL,
    QC_STEP_REAP,
    QC_STEP_SNAPSHOT,
    QC_STEP_MONITOR,
    QC_STEP_SERVER_PID,
    QC_STEP_KILL_SESSION,
    QC_STEP_HEARTBEAT, /* optional: extends every live lease of :worker (issue 13) */
    QC_STEP_LISTEN,    /* optional, PostgreSQL only: LISTEN on each worker incarnation's
                          own second connection; the worker then waits for a
                          notification after an empty claim (issue 17, C28) */
    QC_STEP_NOTIFY,    /* optional, PostgreSQL only: run by the enqueuer after each
                          enqueue, in its transaction (pg_notify(..., :job_id)) */
    QC_STEP_MONITOR_LIVE, /* optional: the monitor's counts of the live states only
                             (ready inflight [expired dead oldest_ready_age_ms], no
                             done), read where it costs O(live rows) (partial
                             indexes); sampled every monitor_interval_ms, the full
                             monitor spaced out (issue 16) */
    QC_STEP_DEDUP,     /* optional: the outbox check (shared/cases.md C23), run by the
                          worker between its claim and its work with :message_id bound
                          (the claim's message_id column); returns column run: true
                          runs the handler, false (or no row) skips the work and the
                          effect and completes the job, a duplicate copy suppressed */
    QC_STEP_COUNT
} qc_step_id;

/* Parameter names a step's first statement may use (space separated). Later
 * statements of a step may also use any column name of an earlier
 * statement's first row.  Every step gets every parameter whose value is
 * known when it runs (README "Parameters"): :worker is "w<worker_id>.<incarnation>"
 * ("w3.0", "w3.1" after a restart; the reaper and the enqueuer are worker -1,
 * "w-1.0"), :worker_id its stable number ("3", kept across restarts),
 * :incarnation the restart count ("0", "1", ...); :message_id the logical
 * message a job is a copy of (enqueue: the harness's id, a UUID; dedup,
 * complete, renew, fail: the claim's message_id column, when it returns
 * one: shared/cases.md C23). */
#define QC_PARAM_NAMES \
    "job_id token lease_ms worker worker_id incarnation batch payload group_key error " \
    "delay_ms max_attempts pid op_key client_now_ms message_id"

typedef struct qc_stmt {
    int id;          /* unique within the protocol: the driver's prepared name */
    int line;        /* first line of the statement in the file (1-based) */
    char *sql;       /* rewritten SQL text, no trailing ';' */
    int nparams;     /* entries in params */
    char **params;   /* parameter name of $1..$n (DOLLAR) or of each ? (QMARK) */
} qc_stmt;

typedef struct qc_step {
    int present;     /* 0 when the file has no such step */
    int line;        /* line of its "-- name:" in file */
    const char *file;/* the file the step was read from: the protocol's path,
                        or its base's for a step an overlay did not replace
                        (owned by the protocol) */
    int autocommit;  /* 1: statements run without an enclosing transaction */
    int nosplit;     /* 1 ("-- split: no"): ';' does not end a statement; the
                        step is one statement, sent as one batch (T-SQL
                        variables live for one batch) */
    int nstmts;
    int nsettings;   /* leading statements that only change session or
                        transaction settings ("SET ...", as MariaDB's SET
                        TRANSACTION ISOLATION LEVEL): no named point follows
                        them, so "claim.1" is after the first statement that
                        reads or writes whatever the engine (decision 1128);
                        at most nstmts - 1 */
    qc_stmt *stmts;
} qc_step;

typedef struct qc_protocol {
    char *path;
    char *engine;      /* "postgres" when the header does not say */
    char *model;       /* "lease" (default), "transaction", or "adapter" (a library's table:
                          setup, teardown, snapshot, monitor only; docs/adapters.md) */
    char *description; /* header "description:", may be NULL */
    char *expect;      /* mutants: "expect:" checkers that must FAIL (comma list), or NULL */
    char *scenario;    /* mutants: "scenario:" file that exposes the bug, or NULL */
    char *base;        /* "base:" protocol this file overlays (path as resolved), or NULL */
    char *tested;      /* "tested:" where the protocol was run, in words (an overlay
                          inherits its base's), or NULL: unknown */
    char *witness;     /* "witness:" the queue's table and columns for the server-side
                          witness ("table=qchaos.jobs id=id state=state token=token
                          owner=locked_by"; an overlay inherits its base's), or NULL;
                          parsed by harness/witness.c */
    int witness_line;  /* its line (in the file that said it) */
    char *missing;     /* "missing:" the state of a job the snapshot does not return
                          ("done": a completed job is deleted), or NULL: a missing job
                          is lost */
    qc_param_style style;
    qc_step steps[QC_STEP_COUNT];
} qc_protocol;

/* Step name as written in files ("claim"), for messages and the ledger. */
const char *qc_step_name(qc_step_id id);

/* Loads and checks path for a driver with placeholder style.  On success
 * *out is a new protocol the caller frees with qc_protocol_destroy.
 * Errors: QC_EINVAL "path:line: what was expected", QC_EIO, QC_ENOMEM. */
int qc_protocol_load(const char *path, qc_param_style style, qc_protocol **out, qc_err *err);

/* Same, from text in memory; path is only used in messages. */
int qc_protocol_parse(const char *path, const char *text, qc_param_style style,
                      qc_protocol **out, qc_err *err);

void qc_protocol_destroy(qc_protocol *p);

/* 1 when the last statement of step mentions column (case-insensitively, as
 * a whole word: the loader's test for required columns), 0 when it does not
 * or the step is absent.  An approximation: the text is not parsed, so a
 * word in a WHERE clause counts too.  Thread-safe (p is immutable). */
int qc_protocol_returns(const qc_protocol *p, qc_step_id step, const char *column);

/* 1 when a statement of step uses parameter :param (param without the
 * colon), 0 otherwise or when the step is absent.  Thread-safe. */
int qc_protocol_reads(const qc_protocol *p, qc_step_id step, const char *param);

/* The result columns the harness reads from step, space separated (required
 * and optional: README "Protocol files"); "" for steps without results.
 * Static storage. */
const char *qc_protocol_known_columns(qc_step_id step);

/* Writes the known columns (qc_protocol_known_columns) that step's last
 * statement mentions, comma separated without blanks ("job_id,token,state"),
 * into buf (size n; "" when none or the step is absent; names that do not
 * fit are left out).  Returns how many were written. */
size_t qc_protocol_columns(const qc_protocol *p, qc_step_id step, char *buf, size_t n);

/* An optional result column that a checker rule needs: without it the rule
 * judges less (what, in words, for the load-time note). */
typedef struct qc_column_need {
    qc_step_id step;
    const char *column;  /* "now_ms" */
    const char *checker; /* "no_early_reap" */
    int lease_only;      /* 1: only in the lease model (a transaction holds no lease_until) */
    const char *without; /* "no_early_reap judges its reap rule by ..." */
} qc_column_need;

/* The table of such needs (*n entries; static storage), in README order. */
const qc_column_need *qc_protocol_column_needs(size_t *n);

/* Named parameter values for one step run.  Borrowed pointers. */
#define QC_MAX_PARAMS 32
typedef struct qc_params {
    int n;
    const char *name[QC_MAX_PARAMS];
    const char *value[QC_MAX_PARAMS]; /* NULL = SQL NULL */
} qc_params;

/* Sets (or replaces) name = value in p; value is borrowed. */
void qc_params_set(qc_params *p, const char *name, const char *value);

/* Runs a step on c.  Statements run in order inside one transaction (begin /
 * commit by the driver) unless the step is autocommit or has one statement.
 * Parameters come from in, then from the columns of each earlier statement's
 * first result row (later wins).  An empty result of an earlier statement
 * ends the step with that empty result (the transaction commits).  *out gets
 * the last executed statement's result; affected is that statement's count.
 * A step that is not present returns QC_EINVAL.
 * Errors: QC_EDB (rolled back, connection usable), QC_ECONN (connection lost
 * mid-step: outcome unknown), QC_ESTATE (a parameter has no value).
 * Thread safety: as the connection. */
int qc_protocol_run(const qc_driver *d, qc_conn *c, const qc_protocol *p, qc_step_id step,
                    const qc_params *in, qc_result *out, qc_err *err);

/* Same as qc_protocol_run, inside a transaction the caller opened (the
 * transaction model: the claim's transaction stays open during the work and
 * complete commits it): no begin, commit or rollback is issued; on error
 * the caller decides.  Errors as qc_protocol_run. */
int qc_protocol_run_in_txn(const qc_driver *d, qc_conn *c, const qc_protocol *p, qc_step_id step,
                           const qc_params *in, qc_result *out, qc_err *err);

/* Runs a step n times (n >= 1) with parameter sets in[0..n), inside a
 * transaction the caller opened, in as few round trips as the driver can:
 * a step of one statement on a driver with exec_batch (pg: one pipeline),
 * else one qc_protocol_run_in_txn after another.  outs[0..n) get each
 * run's result (the caller clears them).  The enqueue of a chunk of jobs
 * (issue 16).  Errors as qc_protocol_run_in_txn, for the first run that
 * failed (the caller rolls back); QC_ENOMEM.  Thread safety: as the
 * connection. */
int qc_protocol_run_batch(const qc_driver *d, qc_conn *c, const qc_protocol *p, qc_step_id step,
                          const qc_params *in, int n, qc_result *outs, qc_err *err);

/* Hooks into a step's run (the schedule's named points, harness/sched.h).
 * wire(ctx, 1) before a statement or COMMIT is sent, wire(ctx, 0) when its
 * answer came; point(ctx, name) after statement N of several answered
 * ("claim.1": N = 1) and before a step's own COMMIT is sent ("claim.commit").
 * Called on the running thread; either may be NULL. */
/* Hooks of a step run (qc_protocol_run_hooked): wire(ctx, in) before each
 * statement is sent (in = 1; 2 for one of the step's leading settings,
 * after whose answer the step goes on without a point) and after its
 * answer (in = 0); point(ctx, "claim.1") at the points between
 * statements and before a step's COMMIT ("claim.commit"). */
typedef struct qc_step_hooks {
    void (*wire)(void *ctx, int in);
    void (*point)(void *ctx, const char *name);
    void *ctx;
    /* NULL, or asked right after wire(ctx, 1) before a statement (not a
     * leading setting) or the COMMIT: 1 with an error "STATE message" in
     * msg (size n) answers that statement with it (QC_EDB, sqlstate
     * STATE) instead of sending it, and the step fails there as if the
     * server had (its transaction rolled back); 0 sends it.  A replay's
     * server-side abort (decision 1144). */
    int (*abort)(void *ctx, char *msg, size_t n);
} qc_step_hooks;

/* qc_protocol_run (manage_txn = 1) or qc_protocol_run_in_txn (0) with
 * hooks (may be NULL). */
int qc_protocol_run_hooked(const qc_driver *d, qc_conn *c, const qc_protocol *p, qc_step_id step,
                           const qc_params *in, qc_result *out, qc_err *err, int manage_txn,
                           const qc_step_hooks *h);

#endif
