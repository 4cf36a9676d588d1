/*
 * owner.h - what in the database under test is qchaos's own.
 *
 * A protocol's teardown drops its tables by name, and setup runs after
 * teardown.  On a database given by --dsn (or the PG* variables) a table of
 * the same name may be the user's.  So qchaos marks every table it
 * creates, and before the first teardown it refuses to go on when the
 * place it works in holds tables without its mark:
 *
 *   postgres   every table of the schema `qchaos`; the mark is a comment
 *              (COMMENT ON TABLE ... IS 'qchaos: created by qchaos V'); the
 *              schema gets the same comment when qchaos created it, and is
 *              dropped at the end of a run when it has that comment and is
 *              empty (DROP SCHEMA without CASCADE);
 *   mariadb    every table named qchaos_* in the connection's database;
 *              the mark is the table COMMENT; the database is never
 *              dropped (it is the user's, named in the connection string);
 *   others     (SQL Server, Spanner) no check: not testable here; a
 *              warning says so.
 *
 * Not thread-safe: the control connection's, used by the main thread only.
 */
#ifndef QC_OWNER_H
#define QC_OWNER_H

#include "../backends/driver.h"

#include <stddef.h>

/* The prefix of qchaos's mark (a table or schema comment). */
#define QC_OWNER_MARK "qchaos: created by qchaos"

typedef struct qc_owner {
    int kind;            /* 0: no check for this engine, 1: postgres, 2: mariadb */
    int schema_ours;     /* postgres: the schema is absent or has qchaos's mark */
    int schema_existed;  /* postgres: the schema was there before setup */
    char where[160];     /* "the schema 'qchaos'", "the database 'x'": for messages */
    char foreign[1024];  /* tables without the mark, "qchaos.jobs, qchaos.x" ("" none) */
    char foreign_ids[1024]; /* postgres: their oids as an array literal "{1,2}";
                               mariadb: their names, for qc_owner_mark to skip */
} qc_owner;

/* Looks, before any teardown, at what the engine's place holds (see the
 * top of this file) and fills *st.  Returns 0 when every table there is
 * qchaos's, or when allow_existing is set (st->foreign then names the
 * others, which qc_owner_mark leaves unmarked); QC_EINVAL when some are
 * not, with a message naming them; QC_EDB / QC_ECONN when the catalog
 * could not be read.  engine is the protocol's. */
int qc_owner_check(const qc_driver *d, qc_conn *c, const char *engine, int allow_existing,
                   qc_owner *st, qc_err *err);

/* After setup: marks every table there that was not listed as foreign by
 * qc_owner_check (and the schema when qchaos created it).  Errors: those
 * of the statements, QC_EDB / QC_ECONN. */
int qc_owner_mark(const qc_driver *d, qc_conn *c, qc_owner *st, qc_err *err);

/* After the protocol's teardown: drops the schema when it is qchaos's and
 * empty.  note (size n) gets a line to print when it was kept although
 * ours ("" otherwise). */
void qc_owner_finish(const qc_driver *d, qc_conn *c, const qc_owner *st, char *note, size_t n);

/* One run at a time on a database: a second qchaos run on the same
 * database would run its teardown and setup under the first one's workers
 * and make the first report violations that are not real (a newcomer's
 * gate FAILed five checkers on the correct protocol so).  Taken on the
 * control connection right after it opens, before anything is touched, and
 * held by the session until it closes:
 *
 *   postgres   pg_try_advisory_lock(QC_RUN_LOCK_CLASS, QC_RUN_LOCK_OBJ)
 *              (advisory locks are per database), the _shared form when
 *              shared != 0 (the shards of one --shard run hold it together;
 *              a plain run cannot join them, nor they it);
 *   mariadb    GET_LOCK('qchaos-run:' || DATABASE(), 0) (locks are per
 *              server, so the name carries the database); shards take no
 *              lock (MariaDB has no shared form);
 *   others     no lock (*taken = 0).
 *
 * The control connection must be a session of its own (a transaction-mode
 * pooler would keep the lock on a server connection it hands to others):
 * --worker-dsn is where a pooler goes.  Returns 0 with *taken 1 (held) or 0
 * (the engine has none); QC_ESTATE when another session holds it, err
 * naming that session (pid or connection id, application name, client,
 * since when) and saying what to do (exit 3: the target is busy); the
 * statements' errors otherwise (QC_EDB / QC_ECONN).  A lock held by
 * another session is waited for up to QC_RUN_LOCK_WAIT_MS first (the
 * server process of a run that just ended may not have exited yet).  Not
 * thread-safe (the control connection's). */
#define QC_RUN_LOCK_WAIT_MS 3000.0
#define QC_RUN_LOCK_WAIT_S 3
#define QC_RUN_LOCK_CLASS 1903326323 /* 0x71716373: "qqcs" */
#define QC_RUN_LOCK_OBJ 1
int qc_owner_lock(const qc_driver *d, qc_conn *c, const char *engine, int shared, int *taken,
                  qc_err *err);

#endif
