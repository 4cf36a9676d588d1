/*
 * driver.h - the driver interface: one struct of function pointers per
 * database client library (Redis connection.h, SQLite VFS style).  Callers
 * never know which driver runs.
 *
 * A driver only connects, runs one statement with bound parameters, controls
 * transactions, aborts and closes.  Protocol logic (steps, parameter names,
 * columns) lives in protocol.c; drivers never print and hold no global state
 * (the ODBC driver's environment handle is created once by qc_odbc_global_init
 * before any thread starts).
 *
 * Thread safety: a qc_conn belongs to one thread at a time.  Different
 * connections may be used from different threads concurrently.  The one
 * exception is cancel, which another thread may call while the owner is
 * inside exec / begin / commit / rollback (never concurrently with close or
 * abort of the same connection: the caller keeps the connection alive).
 */
#ifndef QC_DRIVER_H
#define QC_DRIVER_H

#include <stddef.h>
#include "../harness/err.h"

typedef struct qc_conn qc_conn;

/* How named parameters are rewritten for a driver. */
typedef enum {
    QC_PARAM_DOLLAR = 0, /* libpq: $1, $2 ... one number per distinct name */
    QC_PARAM_QMARK = 1   /* ODBC: ? per occurrence, names repeated in order */
} qc_param_style;

/* A statement's result, fully copied out of the client library's buffers.
 * cells is row-major, nrows * ncols; a NULL cell is SQL NULL. */
typedef struct qc_result {
    int ncols;
    int nrows;
    char **cols;   /* ncols column names (lower-cased), owned */
    char **cells;  /* nrows * ncols values as text, owned, NULL = SQL NULL */
    long affected; /* rows affected by INSERT/UPDATE/DELETE; -1 when not reported */
    void *block;   /* when not NULL: cols, cells and every string they point to are
                      in this one allocation (the libpq driver's copy, issue 16: a
                      malloc and a free per cell were a tenth of a worker's time);
                      NULL: each is its own malloc */
} qc_result;

/* Index of column name (case-insensitive) or -1. */
int qc_result_col(const qc_result *r, const char *name);
/* Cell text at (row, column name), NULL when SQL NULL, absent column or row. */
const char *qc_result_get(const qc_result *r, int row, const char *name);
/* Frees everything a result owns and zeroes it; safe on a zeroed result. */
void qc_result_clear(qc_result *r);
/* Moves src into dst (dst cleared first); src is left zeroed. */
void qc_result_move(qc_result *dst, qc_result *src);

/* The session time zone of every connection opened from now on ([faults]
 * session_time_zone, decision 1120): NULL or "" = the server's default,
 * else a UTC offset "+HH:MM" / "-HH:MM" (ISO 8601: east of UTC positive).
 * The pg driver runs SET TIME ZONE INTERVAL '+HH:MM' HOUR TO MINUTE right
 * after connecting; the odbc driver runs SET time_zone = '+HH:MM' on
 * MariaDB / MySQL (the PostgreSQL form through psqlODBC) and refuses the
 * open (QC_EINVAL) elsewhere: SQL Server has no session time zone, and the
 * runner never sets one for an engine "sqlserver" protocol.  A named zone is not taken: MariaDB knows
 * names only with its time zone tables loaded.  Call it before any thread
 * that opens connections starts (it is a plain process-wide setting, not
 * locked); returns QC_EINVAL when tz is not such an offset. */
int qc_driver_set_session_time_zone(const char *tz, qc_err *err);
/* The offset set above, or "" (the server's default).  Never NULL. */
const char *qc_driver_session_time_zone(void);
/* 1 when s is "+HH:MM" or "-HH:MM" with HH 00-14 and MM 00-59. */
int qc_valid_utc_offset(const char *s);

/* Where an open connection went, as the client library reports it (never a
 * password).  "" for what the driver cannot tell. */
typedef struct qc_conn_target {
    char host[256];   /* host name, address, or socket directory */
    char port[16];
    char dbname[128];
    char user[128];
} qc_conn_target;

typedef struct qc_driver {
    const char *name;     /* "pg" or "odbc" */
    qc_param_style style; /* placeholder style the protocol loader must emit */

    /* Connects with a libpq conninfo/URI or ODBC connection string.
     * Errors: QC_ECONN with host and port named, password never shown. */
    int (*open)(const char *conninfo, qc_conn **out, qc_err *err);

    /* Runs one statement.  stmt_id is unique per protocol statement: the
     * driver prepares sql on first use on this connection and reuses it
     * (prepare == 0 runs it unprepared, for DDL).  params are text values,
     * NULL = SQL NULL.  *out receives rows and the affected count.
     * Errors: QC_EDB (statement failed, err->sqlstate set, connection still
     * usable, the open transaction is aborted), QC_ECONN (connection lost:
     * outcome unknown). */
    int (*exec)(qc_conn *c, int stmt_id, int prepare, const char *sql, int nparams,
                const char *const *params, qc_result *out, qc_err *err);

    /* Transaction control.  begin starts an explicit transaction; commit and
     * rollback end it.  Same errors as exec. */
    int (*begin)(qc_conn *c, qc_err *err);
    int (*commit)(qc_conn *c, qc_err *err);
    int (*rollback)(qc_conn *c, qc_err *err);

    /* Drops the socket abruptly, as a crashed process would: the server sees
     * the connection vanish and rolls back any open transaction.  Frees c. */
    void (*abort)(qc_conn *c);

    /* Closes politely and frees c.  Accepts NULL. */
    void (*close)(qc_conn *c);

    /* Server product and version, e.g. "PostgreSQL 15.18", into buf. */
    void (*server_version)(qc_conn *c, char *buf, size_t n);

    /* Whether the connection is still usable (after QC_EDB it is). */
    int (*is_ok)(qc_conn *c);

    /* Sets a per-connection option.  "prepare" = "on" | "off" (off runs
     * every statement unnamed, as transaction-mode poolers such as PgBouncer
     * < 1.21 require: a named statement prepared on one server backend is
     * not there on the next).  "statement_timeout_ms" = N (0 = none): the
     * server cancels any statement running longer than N ms, which then
     * fails with QC_EDB (pg: SET statement_timeout, SQLSTATE 57014; odbc:
     * MariaDB max_statement_time, others SQL_ATTR_QUERY_TIMEOUT rounded up
     * to whole seconds).  Errors: QC_EINVAL for an unknown key or a bad
     * value, QC_EDB / QC_ECONN when the server refuses the setting. */
    int (*set_option)(qc_conn *c, const char *key, const char *value, qc_err *err);

    /* The server-side session id (PostgreSQL backend pid), 0 when unknown.
     * The nemesis uses the protocol's server_pid step instead where it has
     * one, since behind a pooler this is the pooler's view. */
    int (*backend_pid)(qc_conn *c);

    /* Asks the server to cancel the statement c is running now (pg:
     * PQcancel with the PGcancel made at open; odbc: SQLCancel on the
     * statement handle being executed).  Safe to call from any thread while
     * the owner is blocked in a call on c; does nothing when c runs no
     * statement, and a statement sent after it is not cancelled.  The
     * cancelled call returns QC_EDB (the statement failed; in a transaction
     * the transaction is aborted).  Blocks for the round trip to the server
     * (a new connection for the request).  Returns 0 when the request was
     * delivered or there was nothing to cancel, QC_ECONN when the server
     * could not be reached.  Never prints; accepts NULL. */
    int (*cancel)(qc_conn *c);

    /* Checks a connection string without connecting, so that a malformed
     * one is an input error before anything runs.  NULL when the driver has
     * no such check.  Errors: QC_EINVAL "invalid connection string: why"
     * (the string itself is not quoted: it may hold a password). */
    int (*check_conninfo)(const char *conninfo, qc_err *err);
    /* Fills *t with where c is connected: pg from PQhost / PQport / PQdb /
     * PQuser of the live connection (so what libpq took from PG*
     * variables or a service file shows); odbc from SQLGetInfo
     * SQL_DATABASE_NAME / SQL_USER_NAME and the string's Server / Port
     * (SQL_SERVER_NAME when the string names none).  Never fails: unknown
     * fields are "". */
    void (*describe)(qc_conn *c, qc_conn_target *t);
    /* Waits up to timeout_ms (>= 0; 0 = only look) for notifications on a
     * connection that ran LISTEN (PostgreSQL LISTEN/NOTIFY, issue 17): the
     * socket is poll()ed, then PQconsumeInput / PQnotifies drain everything
     * pending, so a notification already read off the socket is counted
     * too.  *count gets the notifications drained (0: the time ran out).
     * Errors: QC_ECONN when the connection is lost (the server ended the
     * session, the socket was shut down): the caller must open a new one.
     * NULL for drivers whose engines have no LISTEN (ODBC: MariaDB, SQL
     * Server).  Owner thread only; never prints. */
    int (*wait_notify)(qc_conn *c, long timeout_ms, int *count, qc_err *err);
    /* Runs one prepared statement n times (n >= 1) with n parameter sets,
     * params[i * nparams + k] the k-th value of the i-th run, in one round
     * trip: pg sends them all in libpq pipeline mode (PQenterPipelineMode,
     * PostgreSQL 14+ libpq; any server of protocol 3) followed by one
     * Sync, then reads the n answers in order.  Call it inside a
     * transaction the caller opened (begin): without one, the server runs
     * the n statements as one implicit transaction.  outs[0..n) get each
     * run's rows (cleared first; the caller clears them).  Errors as exec,
     * for the first run that failed (its index in *failed, else -1): after
     * QC_EDB the later runs were not executed and the transaction is
     * aborted (roll it back); QC_ECONN: outcome unknown.  NULL for drivers
     * without pipelining (ODBC: the caller runs exec n times); pg with
     * "prepare" off (a transaction-mode pooler) runs them one at a time
     * too, so nothing depends on the pooler's handling of pipelines.
     * Owner thread only; never prints. */
    int (*exec_batch)(qc_conn *c, int stmt_id, const char *sql, int nparams, int n,
                      const char *const *params, qc_result *outs, int *failed, qc_err *err);
} qc_driver;

extern const qc_driver qc_driver_pg;
extern const qc_driver qc_driver_odbc;

/* Creates the ODBC environment handle (ODBC 3) the odbc driver shares
 * between connections.  Call once before any thread starts (a second call
 * is a no-op); qc_driver_odbc.open fails with QC_EINVAL without it.
 * Errors: QC_ENOMEM, QC_EIO.  Not thread-safe. */
int qc_odbc_global_init(qc_err *err);
/* Frees it; call after every ODBC connection is closed and every thread
 * joined.  Not thread-safe. */
void qc_odbc_global_fini(void);

#endif
