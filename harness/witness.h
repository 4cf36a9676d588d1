/*
 * witness.h - the server's own account of a run (issue 13): an audit
 * trigger on the queue's table records every row change with the session
 * that made it, into a side table in qchaos's place, which qchaos reads
 * into the ledger after the run.
 *
 * The trigger and the side table:
 *
 *   postgres  qchaos.witness (wid bigserial, app, pid, change, row, old/new
 *             state, token and owner, txid, stmt_ms, server_ms), filled by
 *             the plpgsql function qchaos.witness_record() from an AFTER
 *             INSERT OR UPDATE OR DELETE FOR EACH ROW trigger
 *             qchaos_witness on the table; the session is
 *             current_setting('application_name'), the transaction
 *             txid_current(), the times statement_timestamp() and
 *             clock_timestamp() in epoch ms of the server clock;
 *   mariadb   qchaos_witness (InnoDB, same columns), filled by three AFTER
 *             triggers qchaos_witness_{i,u,d} on the table; the session is
 *             the user variable @qchaos_app, the pid CONNECTION_ID(), no
 *             txid (NULL), both times UTC_TIMESTAMP(6) (the statement's
 *             start: MariaDB has no clock reading inside a statement that
 *             is not in the session's time zone).
 *
 * A witness row is written inside the transaction that changed the row, so
 * it exists exactly when that change committed: the side table is the list
 * of committed row changes.  Row changes of one row are serialised by its
 * row lock and the trigger runs after the change, so for one row "wid"
 * order is the order of its changes.
 *
 * Sessions name themselves (qc_witness_name_session) after every connect:
 * "qchaos-w<worker>.<incarnation>" for a worker (the ledger's worker and
 * inc), "qchaos-reaper", "qchaos-control" (setup, enqueue), "qchaos-feeder";
 * any other name is a session qchaos does not know.
 *
 * The table and its columns come from, in order of precedence, the
 * scenario's [witness] keys, the protocol's "-- witness:" header
 * ("table=qchaos.jobs id=id state=state token=token owner=locked_by"; a
 * bare first word is the table), and the engine's convention (qchaos.jobs
 * or qchaos_jobs with id, state, token, locked_by); with an [adapter], its
 * table, id_column, state_column, owner_column come before the convention
 * (and the token is "-").  A library file's header may add
 * "library=active>NULL,NULL>retry": the state changes the library makes on
 * its own, outside any request an adapter can report (pg-boss's expiry,
 * Minion's repair, run inside a worker's process and session); the
 * witness's checkers take such a change, when no request explains it, as
 * the library's own reap (check_witness.c).  "-" says the table has
 * no such column (token, owner).  Names are identifiers ([A-Za-z_][A-Za-z0-9_]*,
 * the table optionally schema.table); they are checked against the
 * catalog before the trigger is made.
 *
 * Not thread-safe except where a function says so; every function but
 * qc_witness_name_session runs on the control connection in the main
 * thread.  The side table carries qchaos's mark (owner.h) from its creation,
 * so that a run stopped in between leaves nothing that looks like the
 * user's.
 */
#ifndef QC_WITNESS_H
#define QC_WITNESS_H

#include <jansson.h>
#include <stddef.h>

#include "../backends/protocol.h"
#include "ledger.h"
#include "scenario.h"

typedef struct qc_witness_cfg {
    char engine[16]; /* the protocol's: "postgres" or "mariadb" */
    char table[128]; /* "qchaos.jobs", "pgboss.job" */
    char id[64];     /* the job id column */
    char state[64];  /* the state column */
    char token[64];  /* the claim token column; "" none */
    char owner[64];  /* the owner / locked_by column; "" none */
    char library[256]; /* a library's own row changes (its expiry / repair, run in
                          whichever of its sessions): "OLD>NEW,..." of the state
                          column's text ("NULL": no row, an insert / delete), from
                          the "-- witness:" header's library= word; "" none */
} qc_witness_cfg;

/* Whether the run installs the witness: [witness] on, overridden by the
 * environment variable QCHAOS_WITNESS=yes|no (so that `qchaos mutation`
 * and `qchaos gate`, whose runs are child processes, can run every
 * scenario with it).  Thread-safe (reads the environment only). */
int qc_witness_is_on(const qc_scenario *s);

/* Resolves the table and columns (see the top of this file) into *cfg.
 * Errors: QC_EINVAL when the engine has no witness (sqlserver, spanner),
 * a name is not an identifier, a "-- witness:" word is not key=value of a
 * known key, or id / state is "-"; the message names the scenario's or
 * protocol's file:line. */
int qc_witness_config(const qc_scenario *s, const qc_protocol *p, qc_witness_cfg *cfg, qc_err *err);

/* The session name of an actor: worker >= 0 "qchaos-w<worker>.<inc>",
 * -1 "qchaos-reaper"; into buf (size n).  Thread-safe. */
void qc_witness_session(int worker, int inc, char *buf, size_t n);

/* Names the session of c (postgres: set_config('application_name'),
 * mariadb: SET @qchaos_app) so that the trigger can tell who changed a row.
 * Call after every connect, before any request.  Thread-safe for distinct
 * connections.  Errors: QC_EDB / QC_ECONN (the caller drops the connection
 * and connects again: an unnamed session's changes would be taken for a
 * stranger's). */
int qc_witness_name_session(const qc_driver *d, qc_conn *c, const char *engine, const char *name,
                            qc_err *err);

/* With the witness on (qc_witness_is_on(s)), names c for the actor worker
 * (>= 0) / the reaper (-1), incarnation inc (qc_witness_session); 0 and
 * nothing sent when it is off.  Thread-safe for distinct connections.
 * Errors: those of qc_witness_name_session. */
int qc_witness_name_actor(const qc_driver *d, qc_conn *c, const qc_scenario *s, const char *engine,
                          int worker, int inc, qc_err *err);

/* Checks that the table and its columns exist, then (re)creates the side
 * table (with qchaos's mark, owner.h) and the trigger(s).  Call after the
 * protocol's setup and after qc_owner_mark, so that a refusal leaves only
 * marked tables.  Errors: QC_EINVAL (no such table or column: "witness: table
 * qchaos.jobs has no column 'owner' (from ...)"), QC_EDB / QC_ECONN. */
int qc_witness_install(const qc_driver *d, qc_conn *c, const qc_witness_cfg *cfg, qc_err *err);

/* Streams the side table into the ledger, 5000 rows per query in wid
 * order, one "witness" line per row change (schema: docs/witness.md), and
 * ends with a note {"note":"witness","rows":N,"complete":true|false}.
 * *rows gets N.  On an error the note says complete false with the error
 * and the error is returned (QC_EDB / QC_ECONN); what was read stays. */
int qc_witness_read(const qc_driver *d, qc_conn *c, const qc_witness_cfg *cfg, qc_lbuf *lb,
                    long *rows, qc_err *err);

/* Drops the trigger(s), the side table and (postgres) the function.
 * Errors are ignored (the protocol's teardown and the schema's drop
 * follow). */
void qc_witness_remove(const qc_driver *d, qc_conn *c, const qc_witness_cfg *cfg);

/* The ledger header's "witness" object: {"table":..,"id":..,"state":..,
 * "token":..|null,"owner":..|null}.  New reference. */
json_t *qc_witness_header_json(const qc_witness_cfg *cfg);

#endif
