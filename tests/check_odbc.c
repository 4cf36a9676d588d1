/*
 * check_odbc.c - tests for the unixODBC driver (backends/odbc.c) and the
 * MariaDB protocol files (backends/mariadb/).
 *
 * TCases: odbc_offline (connection errors that need no server: the message
 * names host and port, never the password), protocol_files (the MariaDB
 * protocol and its mutant load for the ODBC placeholder style), odbc_live
 * (the driver against the MariaDB named by QC_TEST_ODBC, an ODBC connection
 * string) and mariadb_protocol (backends/mariadb/skip_locked.sql step by
 * step on that server, and the select-then-update mutant's race made
 * deterministic).  The live TCases are only added when QC_TEST_ODBC is set;
 * otherwise the binary says on stderr that it skipped them, so a green run
 * without a database is visibly partial.
 *
 * Waiting is always a poll with a deadline (poll_value), never a bare sleep.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../backends/driver.h"
#include "../backends/odbc.h"
#include "../backends/protocol.h"
#include "../harness/err.h"

#define PROTOCOL_FILE "backends/mariadb/skip_locked.sql"
#define MUTANT_FILE "backends/mariadb/mutants/select_then_update.sql"

static const qc_driver *const D = &qc_driver_odbc;

/* ---- helpers ------------------------------------------------------------ */

static double mono_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&t, NULL);
}

static qc_conn *live_open(void)
{
    qc_conn *c = NULL;
    qc_err err = {0};
    int rc = D->open(getenv("QC_TEST_ODBC"), &c, &err);

    ck_assert_msg(rc == 0, "open: %s", err.msg);
    ck_assert(D->is_ok(c));
    return c;
}

/* Runs sql unprepared without parameters and asserts success. */
static void live_ddl(qc_conn *c, const char *sql)
{
    qc_result r = {0};
    qc_err err = {0};
    int rc = D->exec(c, -1, 0, sql, 0, NULL, &r, &err);

    ck_assert_msg(rc == 0, "%s: %s", sql, err.msg);
    qc_result_clear(&r);
}

/* Runs a query prepared as id with at most one parameter and returns cell
 * (0, col) as a new string ("NULL" for SQL NULL, "<no row>" for none). */
static char *live_value(qc_conn *c, int id, const char *sql, const char *param, const char *col)
{
    const char *params[1] = {param};
    qc_result r = {0};
    qc_err err = {0};
    const char *v;
    char *copy;
    int rc = D->exec(c, id, 1, sql, param ? 1 : 0, params, &r, &err);

    ck_assert_msg(rc == 0, "%s: %s", sql, err.msg);
    v = r.nrows > 0 ? qc_result_get(&r, 0, col) : "<no row>";
    copy = strdup(v ? v : "NULL");
    qc_result_clear(&r);
    return copy;
}

/* Polls live_value(...) until it equals want or deadline_ms passes. */
static int poll_value(qc_conn *c, int id, const char *sql, const char *param, const char *col,
                      const char *want, double deadline_ms)
{
    double end = mono_ms() + deadline_ms;

    for (;;) {
        char *v = live_value(c, id, sql, param, col);
        int ok = strcmp(v, want) == 0;

        free(v);
        if (ok)
            return 1;
        if (mono_ms() > end)
            return 0;
        pause_ms(20);
    }
}

/* Polls a locking query (one parameter) until it succeeds with want in
 * column col; an error (the row is still locked: NOWAIT) counts as not yet.
 * Returns whether it did before deadline_ms. */
static int poll_lock_free(qc_conn *c, int id, const char *sql, const char *param, const char *col,
                          const char *want, double deadline_ms)
{
    const char *params[1] = {param};
    double end = mono_ms() + deadline_ms;

    for (;;) {
        qc_result r = {0};
        qc_err err = {0};
        int rc = D->exec(c, id, 1, sql, 1, params, &r, &err);
        const char *v = rc == 0 ? qc_result_get(&r, 0, col) : NULL;
        int ok = v != NULL && strcmp(v, want) == 0;

        ck_assert_msg(rc == 0 || rc == QC_EDB, "%s: %s", sql, err.msg);
        qc_result_clear(&r);
        if (ok)
            return 1;
        if (mono_ms() > end)
            return 0;
        pause_ms(20);
    }
}

static void table_name(char *buf, size_t n, const char *stem)
{
    snprintf(buf, n, "qc_odbc_%s_%ld", stem, (long)getpid());
}

static qc_protocol *load_protocol(const char *path)
{
    qc_protocol *p = NULL;
    qc_err err = {0};
    int rc = qc_protocol_load(path, D->style, &p, &err);

    ck_assert_msg(rc == 0, "load %s: %s", path, err.msg);
    return p;
}

/* Runs a protocol step and asserts success. */
static void run_ok(qc_conn *c, const qc_protocol *p, qc_step_id step, const qc_params *in,
                   qc_result *out)
{
    qc_err err = {0};
    int rc = qc_protocol_run(D, c, p, step, in, out, &err);

    ck_assert_msg(rc == 0, "%s: %s", qc_step_name(step), err.msg);
}

/* ---- odbc_offline -------------------------------------------------------- */

START_TEST(test_odbc_open_unreachable_port_econn_no_password)
{
    qc_conn *c = NULL;
    qc_err err = {0};
    int rc = D->open("Driver={MariaDB Unicode};Server=127.0.0.1;Port=1;Uid=u;Pwd=sekrit123;"
                     "Database=qchaos;",
                     &c, &err);

    ck_assert_int_eq(rc, QC_ECONN);
    ck_assert_int_eq(err.code, QC_ECONN);
    ck_assert_ptr_null(c);
    ck_assert_msg(strncmp(err.msg, "cannot connect to 127.0.0.1:1: ", 31) == 0, "got '%s'",
                  err.msg);
    ck_assert_int_eq((int)strlen(err.sqlstate), 5);
    ck_assert_msg(strstr(err.msg, err.sqlstate) != NULL, "no SQLSTATE in '%s'", err.msg);
    ck_assert_msg(strstr(err.msg, "sekrit123") == NULL, "leaked: %s", err.msg);
}
END_TEST

START_TEST(test_odbc_open_braced_values_parsed_password_hidden)
{
    qc_conn *c = NULL;
    qc_err err = {0};
    int rc = D->open("Driver={MariaDB Unicode}; SERVER = {127.0.0.1} ;PORT={1};UID=u;"
                     "PWD={se;cr}}et};DATABASE=qchaos",
                     &c, &err);

    ck_assert_int_eq(rc, QC_ECONN);
    ck_assert_msg(strncmp(err.msg, "cannot connect to 127.0.0.1:1: ", 31) == 0, "got '%s'",
                  err.msg);
    ck_assert_msg(strstr(err.msg, "se;cr") == NULL && strstr(err.msg, "cr}et") == NULL &&
                      strstr(err.msg, "cr}}et") == NULL,
                  "leaked: %s", err.msg);
}
END_TEST

START_TEST(test_odbc_open_password_echoed_by_driver_scrubbed)
{
    qc_conn *c = NULL;
    qc_err err = {0};
    /* Contrived: the password equals the host, which the message names. */
    int rc =
        D->open("Driver={MariaDB Unicode};Server=127.0.0.1;Port=1;Uid=u;Pwd=127.0.0.1;", &c, &err);

    ck_assert_int_eq(rc, QC_ECONN);
    ck_assert_msg(strstr(err.msg, "127.0.0.1") == NULL, "leaked: %s", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "***"));
}
END_TEST

START_TEST(test_odbc_open_unknown_driver_econn_names_target)
{
    qc_conn *c = NULL;
    qc_err err = {0};
    int rc = D->open("Driver={qchaos no such driver};Server=db.example;Port=4406;Pwd=sekrit123", &c,
                     &err);

    ck_assert_int_eq(rc, QC_ECONN);
    /* unixODBC says 01000 "Can't open lib" for a driver it cannot load. */
    ck_assert_msg(strncmp(err.msg, "cannot connect to db.example:4406: ", 35) == 0, "got '%s'",
                  err.msg);
    ck_assert_int_eq((int)strlen(err.sqlstate), 5);
    ck_assert_ptr_nonnull(strstr(err.msg, "qchaos no such driver"));
    ck_assert(strstr(err.msg, "sekrit123") == NULL);
    ck_assert_msg(strchr(err.msg, '[') == NULL, "vendor prefix kept: %s", err.msg);
}
END_TEST

START_TEST(test_odbc_open_dsn_without_server_names_dsn)
{
    qc_conn *c = NULL;
    qc_err err = {0};
    int rc = D->open("DSN=qchaos_no_such_dsn;Pwd=sekrit123", &c, &err);

    ck_assert_int_eq(rc, QC_ECONN);
    ck_assert_msg(strncmp(err.msg, "cannot connect to DSN qchaos_no_such_dsn: ", 42) == 0,
                  "got '%s'", err.msg);
    ck_assert(strstr(err.msg, "sekrit123") == NULL);
}
END_TEST

START_TEST(test_odbc_open_without_global_init_einval)
{
    qc_conn *c = NULL;
    qc_err err = {0};
    int rc;

    qc_odbc_global_fini();
    rc = D->open("Driver={MariaDB Unicode};Server=127.0.0.1;Port=1", &c, &err);
    ck_assert_int_eq(rc, QC_EINVAL);
    ck_assert_ptr_null(c);
    ck_assert_ptr_nonnull(strstr(err.msg, "qc_odbc_global_init"));
    ck_assert_int_eq(qc_odbc_global_init(&err), 0);
    ck_assert_int_eq(qc_odbc_global_init(&err), 0); /* idempotent */
}
END_TEST

START_TEST(test_odbc_driver_table_complete_qmark)
{
    ck_assert_str_eq(D->name, "odbc");
    ck_assert_int_eq(D->style, QC_PARAM_QMARK);
    ck_assert(D->open && D->exec && D->begin && D->commit && D->rollback && D->abort && D->close &&
              D->server_version && D->is_ok && D->set_option && D->backend_pid);
    D->close(NULL);
    ck_assert_int_eq(qc_odbc_abort_ex(NULL), QC_ODBC_ABORT_NONE);
    ck_assert(!D->is_ok(NULL));
}
END_TEST

/* ---- protocol_files ------------------------------------------------------ */

START_TEST(test_mariadb_protocol_file_loads_all_steps)
{
    qc_protocol *p = load_protocol(PROTOCOL_FILE);
    int s;

    ck_assert_str_eq(p->engine, "mariadb");
    ck_assert_str_eq(p->model, "lease");
    ck_assert_ptr_null(p->expect);
    /* every step but the per-worker heartbeat (it renews per job),
     * LISTEN/NOTIFY, which MariaDB does not have (issue 17), and the outbox
     * check of a queue with copies (C23) */
    for (s = 0; s < QC_STEP_COUNT; s++)
        ck_assert_msg(p->steps[s].present || s == QC_STEP_HEARTBEAT || s == QC_STEP_LISTEN ||
                          s == QC_STEP_NOTIFY || s == QC_STEP_DEDUP,
                      "step %s missing", qc_step_name((qc_step_id)s));
    ck_assert_int_eq(p->steps[QC_STEP_LISTEN].present, 0);
    /* SET TRANSACTION, SELECT ... SKIP LOCKED, UPDATE, SELECT. */
    ck_assert_int_eq(p->steps[QC_STEP_CLAIM].nstmts, 4);
    ck_assert_int_eq(p->steps[QC_STEP_CLAIM].autocommit, 0);
    ck_assert_ptr_nonnull(strstr(p->steps[QC_STEP_CLAIM].stmts[0].sql, "READ COMMITTED"));
    ck_assert_ptr_nonnull(strstr(p->steps[QC_STEP_CLAIM].stmts[1].sql, "SKIP LOCKED"));
    ck_assert_ptr_null(strchr(p->steps[QC_STEP_CLAIM].stmts[2].sql, ':'));
    /* complete: UPDATE then SELECT ROW_COUNT(), in autocommit. */
    ck_assert_int_eq(p->steps[QC_STEP_COMPLETE].nstmts, 2);
    ck_assert_int_eq(p->steps[QC_STEP_COMPLETE].autocommit, 1);
    ck_assert_int_eq(p->steps[QC_STEP_FAIL].autocommit, 0);
    ck_assert_int_eq(p->steps[QC_STEP_ENQUEUE].nstmts, 2);
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_mariadb_mutant_file_loads_expect_exclusive_claim)
{
    qc_protocol *p = load_protocol(MUTANT_FILE);

    ck_assert_str_eq(p->engine, "mariadb");
    ck_assert_str_eq(p->expect, "exclusive_claim");
    ck_assert_str_eq(p->scenario, "scenarios/gate/contention.ini");
    ck_assert_int_eq(p->steps[QC_STEP_CLAIM].nstmts, 3);
    ck_assert_ptr_null(strstr(p->steps[QC_STEP_CLAIM].stmts[0].sql, "FOR UPDATE"));
    ck_assert_ptr_null(strstr(p->steps[QC_STEP_CLAIM].stmts[0].sql, "LOCK"));
    qc_protocol_destroy(p);
}
END_TEST

/* ---- odbc_live ----------------------------------------------------------- */

START_TEST(test_odbc_open_server_version_and_session_id_known)
{
    qc_conn *c = live_open();
    char v[128], pid[32], *id;

    D->server_version(c, v, sizeof v);
    ck_assert_msg(strncmp(v, "MariaDB ", 8) == 0 || strncmp(v, "MySQL ", 6) == 0, "got '%s'", v);
    ck_assert_int_gt(D->backend_pid(c), 0);
    id = live_value(c, 1, "SELECT CONNECTION_ID() AS id", NULL, "id");
    snprintf(pid, sizeof pid, "%d", D->backend_pid(c));
    ck_assert_str_eq(id, pid);
    free(id);
    /* Over TCP the driver finds its own socket. */
    ck_assert_int_eq(qc_odbc_abort_path(c), QC_ODBC_ABORT_SOCKET);
    D->close(c);
}
END_TEST

START_TEST(test_odbc_exec_prepared_insert_binds_quote_and_null)
{
    qc_conn *c = live_open();
    const char *params[4] = {"1", "it's; -- not sql \\' \"", "2", NULL};
    const char *sel[1] = {"1"};
    char t[64], sql[256];
    qc_result r = {0};
    qc_err err = {0};

    table_name(t, sizeof t, "bind");
    snprintf(sql, sizeof sql, "CREATE TEMPORARY TABLE %s (id INT, s TEXT)", t);
    live_ddl(c, sql);
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (?, ?), (?, ?)", t);
    ck_assert_int_eq(D->exec(c, 1, 1, sql, 4, params, &r, &err), 0);
    ck_assert_int_eq(r.affected, 2);
    ck_assert_int_eq(r.ncols, 0);
    ck_assert_int_eq(r.nrows, 0);
    /* Same id again: the prepared handle is reused with new values. */
    params[0] = "3";
    params[2] = "4";
    ck_assert_int_eq(D->exec(c, 1, 1, sql, 4, params, &r, &err), 0);
    ck_assert_int_eq(r.affected, 2);
    snprintf(sql, sizeof sql, "SELECT id AS Job_ID, s FROM %s WHERE id >= ? ORDER BY id", t);
    ck_assert_int_eq(D->exec(c, 2, 1, sql, 1, sel, &r, &err), 0);
    ck_assert_int_eq(r.nrows, 4);
    ck_assert_int_eq(r.ncols, 2);
    ck_assert_int_eq(r.affected, -1);
    ck_assert_str_eq(r.cols[0], "job_id");
    ck_assert_str_eq(qc_result_get(&r, 0, "job_id"), "1");
    ck_assert_str_eq(qc_result_get(&r, 0, "s"), "it's; -- not sql \\' \"");
    ck_assert_ptr_null(qc_result_get(&r, 1, "s"));
    ck_assert_str_eq(qc_result_get(&r, 3, "job_id"), "4");
    qc_result_clear(&r);
    D->close(c);
}
END_TEST

START_TEST(test_odbc_exec_long_value_read_whole)
{
    qc_conn *c = live_open();
    size_t n = 300000, i;
    char *big = malloc(n + 1), t[64], sql[256];
    const char *params[1];
    qc_result r = {0};
    qc_err err = {0};
    const char *got;

    ck_assert_ptr_nonnull(big);
    for (i = 0; i < n; i++)
        big[i] = (char)('a' + (char)(i % 26));
    big[n] = '\0';
    params[0] = big;
    table_name(t, sizeof t, "long");
    snprintf(sql, sizeof sql, "CREATE TEMPORARY TABLE %s (s MEDIUMTEXT)", t);
    live_ddl(c, sql);
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (?)", t);
    ck_assert_int_eq(D->exec(c, 1, 1, sql, 1, params, &r, &err), 0);
    snprintf(sql, sizeof sql, "SELECT s, LENGTH(s) AS n FROM %s", t);
    ck_assert_int_eq(D->exec(c, 2, 1, sql, 0, NULL, &r, &err), 0);
    got = qc_result_get(&r, 0, "s");
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(strlen(got), n);
    ck_assert(memcmp(got, big, n) == 0);
    ck_assert_str_eq(qc_result_get(&r, 0, "n"), "300000");
    qc_result_clear(&r);
    free(big);
    D->close(c);
}
END_TEST

START_TEST(test_odbc_exec_update_reports_affected)
{
    qc_conn *c = live_open();
    const char *p[1] = {"x"};
    char t[64], sql[256];
    qc_result r = {0};
    qc_err err = {0};

    table_name(t, sizeof t, "upd");
    snprintf(sql, sizeof sql, "CREATE TEMPORARY TABLE %s (id INT, s TEXT)", t);
    live_ddl(c, sql);
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (1, 'a'), (2, 'a'), (3, 'a')", t);
    live_ddl(c, sql);
    snprintf(sql, sizeof sql, "UPDATE %s SET s = ? WHERE id <= 2", t);
    ck_assert_int_eq(D->exec(c, 1, 1, sql, 1, p, &r, &err), 0);
    ck_assert_int_eq(r.affected, 2);
    snprintf(sql, sizeof sql, "UPDATE %s SET s = ? WHERE id > 100", t);
    ck_assert_int_eq(D->exec(c, 2, 1, sql, 1, p, &r, &err), 0);
    ck_assert_int_eq(r.affected, 0);
    snprintf(sql, sizeof sql, "DELETE FROM %s WHERE s = ?", t);
    ck_assert_int_eq(D->exec(c, 3, 0, sql, 1, p, &r, &err), 0); /* unprepared path */
    ck_assert_int_eq(r.affected, 2);
    qc_result_clear(&r);
    D->close(c);
}
END_TEST

START_TEST(test_odbc_exec_missing_table_edb_conn_usable)
{
    qc_conn *c = live_open();
    qc_result r = {0};
    qc_err err = {0};
    char *v;

    ck_assert_int_eq(D->exec(c, 1, 1, "SELECT * FROM qc_odbc_never_existed", 0, NULL, &r, &err),
                     QC_EDB);
    ck_assert_int_eq(err.code, QC_EDB);
    ck_assert_int_eq((int)strlen(err.sqlstate), 5);
    ck_assert_str_eq(err.sqlstate, "42S02");
    ck_assert_msg(strncmp(err.msg, "42S02 ", 6) == 0, "got '%s'", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "qc_odbc_never_existed"));
    ck_assert(D->is_ok(c));
    /* A failed statement inside a transaction: rollback works, then the
     * connection goes on in autocommit. */
    ck_assert_int_eq(D->begin(c, &err), 0);
    ck_assert_int_eq(D->exec(c, 2, 1, "SELECT nope FROM DUAL", 0, NULL, &r, &err), QC_EDB);
    ck_assert_int_eq(D->rollback(c, &err), 0);
    v = live_value(c, 3, "SELECT 1 + 1 AS two, @@autocommit AS ac", NULL, "ac");
    ck_assert_str_eq(v, "1");
    free(v);
    qc_result_clear(&r);
    D->close(c);
}
END_TEST

START_TEST(test_odbc_exec_procedure_results_last_with_columns)
{
    qc_conn *c = live_open();
    char proc[64], sql[256];
    qc_result r = {0};
    qc_err err = {0};

    table_name(proc, sizeof proc, "proc");
    snprintf(sql, sizeof sql, "DROP PROCEDURE IF EXISTS %s", proc);
    live_ddl(c, sql);
    snprintf(sql, sizeof sql,
             "CREATE PROCEDURE %s() BEGIN SELECT 1 AS a; SELECT 2 AS b, 'x' AS c; END", proc);
    live_ddl(c, sql);
    snprintf(sql, sizeof sql, "CALL %s()", proc);
    ck_assert_int_eq(D->exec(c, 1, 1, sql, 0, NULL, &r, &err), 0);
    ck_assert_int_eq(r.ncols, 2);
    ck_assert_int_eq(r.nrows, 1);
    ck_assert_str_eq(qc_result_get(&r, 0, "b"), "2");
    ck_assert_int_eq(r.affected, -1);
    /* And again, on the same prepared handle. */
    ck_assert_int_eq(D->exec(c, 1, 1, sql, 0, NULL, &r, &err), 0);
    ck_assert_str_eq(qc_result_get(&r, 0, "c"), "x");
    snprintf(sql, sizeof sql, "DROP PROCEDURE %s", proc);
    live_ddl(c, sql);
    qc_result_clear(&r);
    D->close(c);
}
END_TEST

typedef struct lock_waiter {
    qc_conn *c;
    const char *sql;
    int rc;
} lock_waiter;

static void *wait_for_lock(void *arg)
{
    lock_waiter *w = arg;
    const char *two[1] = {"2"};
    qc_result r = {0};
    qc_err err = {0};

    w->rc = D->exec(w->c, 5, 1, w->sql, 1, two, &r, &err);
    qc_result_clear(&r);
    return NULL;
}

/* Regression: MariaDB Connector/ODBC hung in the next SQLExecute of a
 * prepared range SELECT ... FOR UPDATE that had failed with a deadlock. */
START_TEST(test_odbc_exec_deadlocked_range_select_reexecutes)
{
    qc_conn *a = live_open(), *b = live_open();
    char t[64], sql[256], ddl[256], pid[32];
    const char *one[1] = {"1"}, *two[1] = {"2"};
    lock_waiter w;
    pthread_t th;
    qc_result r = {0};
    qc_err err = {0}, ignored;
    int rc_b;

    table_name(t, sizeof t, "deadlock");
    snprintf(ddl, sizeof ddl, "CREATE TABLE %s (id INT PRIMARY KEY, v INT) ENGINE=InnoDB", t);
    live_ddl(b, ddl);
    snprintf(ddl, sizeof ddl, "INSERT INTO %s VALUES (1, 0), (2, 0)", t);
    live_ddl(b, ddl);
    snprintf(sql, sizeof sql, "SELECT id, v FROM %s WHERE id >= ? ORDER BY id LIMIT 1 FOR UPDATE",
             t);
    ck_assert_int_eq(D->begin(a, &err), 0);
    ck_assert_int_eq(D->begin(b, &err), 0);
    ck_assert_int_eq(D->exec(a, 5, 1, sql, 1, one, &r, &err), 0); /* a locks 1 */
    ck_assert_int_eq(D->exec(b, 5, 1, sql, 1, two, &r, &err), 0); /* b locks 2 */
    w.c = a;
    w.sql = sql;
    w.rc = 1;
    ck_assert_int_eq(pthread_create(&th, NULL, wait_for_lock, &w), 0); /* a waits for 2 */
    snprintf(pid, sizeof pid, "%d", D->backend_pid(a));
    ck_assert(poll_value(b, 6,
                         "SELECT COMMAND AS v FROM information_schema.PROCESSLIST WHERE ID = ?",
                         pid, "v", "Execute", 10000));
    rc_b = D->exec(b, 5, 1, sql, 1, one, &r, &err); /* b waits for 1: deadlock */
    if (rc_b != 0)
        D->rollback(b, &ignored);
    pthread_join(th, NULL);
    if (w.rc != 0)
        D->rollback(a, &ignored);
    ck_assert_msg((rc_b == QC_EDB && strcmp(err.sqlstate, "40001") == 0) || w.rc == QC_EDB,
                  "no deadlock: b %d (%s), a %d", rc_b, err.msg, w.rc);
    D->rollback(a, &ignored);
    D->rollback(b, &ignored);
    /* The statement that failed runs again on both connections. */
    ck_assert_int_eq(D->exec(b, 5, 1, sql, 1, one, &r, &err), 0);
    ck_assert_str_eq(qc_result_get(&r, 0, "id"), "1");
    ck_assert_int_eq(D->exec(a, 5, 1, sql, 1, two, &r, &err), 0);
    ck_assert_str_eq(qc_result_get(&r, 0, "id"), "2");
    snprintf(ddl, sizeof ddl, "DROP TABLE %s", t);
    live_ddl(b, ddl);
    qc_result_clear(&r);
    D->close(a);
    D->close(b);
}
END_TEST

START_TEST(test_odbc_transaction_commit_rollback_restore_autocommit)
{
    qc_conn *a = live_open(), *b = live_open();
    char t[64], sql[256], count[256];
    qc_result r = {0};
    qc_err err = {0};

    table_name(t, sizeof t, "txn");
    snprintf(sql, sizeof sql, "CREATE TABLE %s (id INT PRIMARY KEY) ENGINE=InnoDB", t);
    live_ddl(b, sql);
    snprintf(count, sizeof count, "SELECT COUNT(*) AS n FROM %s WHERE ? IS NOT NULL", t);
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (1)", t);
    ck_assert_int_eq(D->begin(a, &err), 0);
    ck_assert_int_eq(D->exec(a, 1, 1, sql, 0, NULL, &r, &err), 0);
    ck_assert(poll_value(b, 1, count, "x", "n", "0", 100)); /* not visible yet */
    ck_assert_int_eq(D->rollback(a, &err), 0);
    ck_assert(poll_value(b, 1, count, "x", "n", "0", 100));
    ck_assert_int_eq(D->begin(a, &err), 0);
    ck_assert_int_eq(D->exec(a, 1, 1, sql, 0, NULL, &r, &err), 0);
    ck_assert_int_eq(D->commit(a, &err), 0);
    ck_assert(poll_value(b, 1, count, "x", "n", "1", 100));
    /* Autocommit is back on: a plain INSERT is visible at once. */
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (2)", t);
    ck_assert_int_eq(D->exec(a, 2, 1, sql, 0, NULL, &r, &err), 0);
    ck_assert(poll_value(b, 1, count, "x", "n", "2", 100));
    snprintf(sql, sizeof sql, "DROP TABLE %s", t);
    live_ddl(b, sql);
    qc_result_clear(&r);
    D->close(a);
    D->close(b);
}
END_TEST

#define LIVE_TEXT                                                                                  \
    "-- engine: mariadb\n"                                                                         \
    "-- name: setup\n"                                                                             \
    "CREATE TEMPORARY TABLE qc_live (id INT PRIMARY KEY, note TEXT);\n"                            \
    "-- name: teardown\n"                                                                          \
    "DROP TEMPORARY TABLE IF EXISTS qc_live;\n"                                                    \
    "-- name: enqueue\n"                                                                           \
    "INSERT INTO qc_live (id, note) VALUES (:job_id, :payload);\n"                                 \
    "SELECT :job_id AS job_id;\n"                                                                  \
    "-- name: claim\n"                                                                             \
    "SELECT id AS job_id, 't' AS token, 0 AS lease_until_ms, 0 AS now_ms, 1 AS attempt,\n"         \
    "       id AS op_key, note AS payload FROM qc_live WHERE id = :job_id;\n"                      \
    "-- name: complete\n"                                                                          \
    "UPDATE qc_live SET note = 'done' WHERE id = :job_id;\n"                                       \
    "-- name: snapshot\n"                                                                          \
    "SELECT id AS job_id, note AS state, 1 AS attempt, NULL AS token FROM qc_live;\n"              \
    "-- name: renew\n"                                                                             \
    "SELECT 41 AS job_id, 'it''s' AS note;\n"                                                      \
    "SELECT :job_id + 1 AS answer, CONCAT(:note, '!') AS note;\n"                                  \
    "-- name: fail\n"                                                                              \
    "SELECT id AS job_id FROM qc_live WHERE id = -1;\n"                                            \
    "INSERT INTO qc_live (id, note) VALUES (:job_id, 'must not happen');\n"                        \
    "-- name: reap\n"                                                                              \
    "INSERT INTO qc_live (id, note) VALUES (99, 'rolled back');\n"                                 \
    "SELECT * FROM qc_missing_table;\n"

static qc_protocol *live_protocol(qc_conn *c)
{
    qc_protocol *p = NULL;
    qc_result r = {0};
    qc_err err = {0};

    ck_assert_msg(qc_protocol_parse("live.sql", LIVE_TEXT, D->style, &p, &err) == 0, "parse: %s",
                  err.msg);
    run_ok(c, p, QC_STEP_SETUP, NULL, &r);
    qc_result_clear(&r);
    return p;
}

START_TEST(test_odbc_run_later_statement_uses_earlier_column)
{
    qc_conn *c = live_open();
    qc_protocol *p = live_protocol(c);
    qc_params in = {0};
    qc_result r = {0};

    run_ok(c, p, QC_STEP_RENEW, &in, &r);
    ck_assert_int_eq(r.nrows, 1);
    ck_assert_str_eq(qc_result_get(&r, 0, "answer"), "42");
    ck_assert_str_eq(qc_result_get(&r, 0, "note"), "it's!");
    /* An empty first result ends the step: the INSERT never runs. */
    run_ok(c, p, QC_STEP_FAIL, &in, &r);
    ck_assert_int_eq(r.nrows, 0);
    qc_params_set(&in, "job_id", "7");
    qc_params_set(&in, "payload", "seven");
    run_ok(c, p, QC_STEP_ENQUEUE, &in, &r);
    ck_assert_str_eq(qc_result_get(&r, 0, "job_id"), "7");
    run_ok(c, p, QC_STEP_SNAPSHOT, &in, &r);
    ck_assert_int_eq(r.nrows, 1);
    ck_assert_str_eq(qc_result_get(&r, 0, "state"), "seven");
    qc_result_clear(&r);
    qc_protocol_destroy(p);
    D->close(c);
}
END_TEST

START_TEST(test_odbc_run_error_rolls_back_transaction)
{
    qc_conn *c = live_open();
    qc_protocol *p = live_protocol(c);
    qc_result r = {0};
    qc_err err = {0};
    char *v;

    ck_assert_int_eq(qc_protocol_run(D, c, p, QC_STEP_REAP, NULL, &r, &err), QC_EDB);
    ck_assert_msg(strncmp(err.msg, "reap: 42S02 ", 12) == 0, "got '%s'", err.msg);
    ck_assert_str_eq(err.sqlstate, "42S02");
    ck_assert(D->is_ok(c));
    v = live_value(c, 90, "SELECT COUNT(*) AS n FROM qc_live WHERE id = 99", NULL, "n");
    ck_assert_str_eq(v, "0");
    free(v);
    qc_result_clear(&r);
    qc_protocol_destroy(p);
    D->close(c);
}
END_TEST

START_TEST(test_odbc_set_option_prepare_off_runs_unknown_einval)
{
    qc_conn *c = live_open();
    qc_err err = {0};
    char *v;

    ck_assert_int_eq(D->set_option(c, "prepare", "off", &err), 0);
    v = live_value(c, 1, "SELECT CONCAT(?, '-x') AS v", "a'b", "v");
    ck_assert_str_eq(v, "a'b-x");
    free(v);
    ck_assert_int_eq(D->set_option(c, "prepare", "on", &err), 0);
    ck_assert_int_eq(D->set_option(c, "no_such_option", "1", &err), QC_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "no_such_option"));
    D->close(c);
}
END_TEST

/* statement_timeout_ms: the server ends a statement that runs longer
 * (MariaDB max_statement_time): QC_EDB "interrupted", the connection usable;
 * SLEEP(30) would otherwise answer 0 after 30 s. */
START_TEST(test_odbc_statement_timeout_ends_long_statement_edb)
{
    qc_conn *c = live_open();
    qc_result r = {0};
    qc_err err = {0};
    char *v;

    ck_assert_int_eq(D->set_option(c, "statement_timeout_ms", "x", &err), QC_EINVAL);
    ck_assert_int_eq(D->set_option(c, "statement_timeout_ms", "1000", &err), 0);
    ck_assert_int_eq(D->exec(c, -1, 0, "SELECT SLEEP(30) AS s", 0, NULL, &r, &err), QC_EDB);
    /* Connector/ODBC 3.1 reports the server's 70100 as HY018 */
    ck_assert_msg(strstr(err.msg, "interrupted") != NULL, "%s", err.msg);
    ck_assert(D->is_ok(c));
    v = live_value(c, 1, "SELECT CONCAT(?, '') AS v", "still", "v");
    ck_assert_str_eq(v, "still");
    free(v);
    qc_result_clear(&r);
    D->close(c);
}
END_TEST

typedef struct long_stmt {
    qc_conn *c;
    int rc;
    qc_err err;
} long_stmt;

static void *run_long_sleep(void *arg)
{
    long_stmt *ls = arg;
    qc_result r = {0};

    ls->rc = D->exec(ls->c, 7, 1, "SELECT SLEEP(120) AS qc_cancel_me", 0, NULL, &r, &ls->err);
    qc_result_clear(&r);
    return NULL;
}

/* cancel from another thread ends the statement the owner is blocked in
 * (QC_EDB, connection usable); with nothing running it is a no-op. */
START_TEST(test_odbc_cancel_from_another_thread_ends_statement)
{
    qc_conn *c = live_open(), *watch = live_open();
    long_stmt ls = {.c = c};
    pthread_t t;
    int seen;
    char *v;

    ck_assert_int_eq(D->cancel(c), 0); /* idle: nothing to cancel */
    ck_assert_int_eq(pthread_create(&t, NULL, run_long_sleep, &ls), 0);
    seen = poll_value(watch, 1,
                      "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE "
                      "CONCAT(?, '%') AND TIME >= 1",
                      "SELECT SLEEP(120) AS qc_cancel_me", "n", "1", 60000);
    if (!seen)
        D->cancel(c);
    ck_assert_msg(seen, "the statement never showed in the process list");
    ck_assert_int_eq(D->cancel(c), 0);
    pthread_join(t, NULL);
    ck_assert_msg(ls.rc == QC_EDB, "rc %d: %s", ls.rc, ls.err.msg);
    ck_assert_msg(strstr(ls.err.msg, "interrupted") != NULL, "%s", ls.err.msg);
    ck_assert(D->is_ok(c));
    v = live_value(c, 2, "SELECT CONCAT(?, '') AS v", "after", "v");
    ck_assert_str_eq(v, "after");
    free(v);
    D->close(watch);
    D->close(c);
}
END_TEST

START_TEST(test_odbc_exec_killed_session_econn)
{
    qc_conn *a = live_open(), *b = live_open();
    qc_result r = {0};
    qc_err err = {0};
    char pid[32];

    snprintf(pid, sizeof pid, "%d", D->backend_pid(a));
    /* KILL takes its id as a bound parameter (kill_session relies on it). */
    ck_assert_int_eq(D->exec(b, 1, 1, "KILL CONNECTION ?", 1, (const char *const[]){pid}, &r, &err),
                     0);
    ck_assert(poll_value(b, 2,
                         "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ?",
                         pid, "n", "0", 10000));
    ck_assert_int_eq(D->exec(a, 3, 1, "SELECT 1 AS one", 0, NULL, &r, &err), QC_ECONN);
    ck_assert_int_eq(err.code, QC_ECONN);
    ck_assert_msg(strncmp(err.msg, "connection lost: ", 17) == 0, "got '%s'", err.msg);
    ck_assert(!D->is_ok(a));
    /* Refused at once from now on, without touching the network. */
    ck_assert_int_eq(D->exec(a, 3, 1, "SELECT 1 AS one", 0, NULL, &r, &err), QC_ECONN);
    ck_assert_int_eq(D->begin(a, &err), QC_ECONN);
    D->abort(a); /* on a dead connection: must not crash */
    qc_result_clear(&r);
    D->close(b);
}
END_TEST

/* Opens a transaction on a new connection a holding an uncommitted row
 * (id 1) in a new table, aborts a with the given path forced, and checks on
 * b that the session vanished and the row was rolled back: b's locking read
 * of id 1 (FOR UPDATE NOWAIT) fails while a's transaction holds the row and
 * finds no row once it is rolled back.  (Not information_schema.INNODB_TRX:
 * InnoDB refreshes that view only when it has not been read for 100 ms, so
 * a poll every 20 ms would see it frozen.) */
static void abort_case(int force_kill)
{
    qc_conn *a = live_open(), *b = live_open();
    char t[64], sql[256], lock[256], pid[32], *before;
    const char *one[1] = {"1"};
    qc_result r = {0};
    qc_err err = {0};
    int path;

    table_name(t, sizeof t, force_kill ? "abort_kill" : "abort");
    snprintf(sql, sizeof sql, "CREATE TABLE %s (id INT PRIMARY KEY) ENGINE=InnoDB", t);
    live_ddl(b, sql);
    snprintf(lock, sizeof lock, "SELECT COUNT(*) AS n FROM %s WHERE id = ? FOR UPDATE NOWAIT", t);
    snprintf(pid, sizeof pid, "%d", D->backend_pid(a));
    ck_assert_int_eq(D->begin(a, &err), 0);
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (1)", t);
    ck_assert_int_eq(D->exec(a, 1, 1, sql, 0, NULL, &r, &err), 0);
    ck_assert_int_eq(r.affected, 1);
    ck_assert_int_eq(D->exec(b, 2, 1, lock, 1, one, &r, &err), QC_EDB); /* a holds id 1 */
    /* A client that vanishes without COM_QUIT counts as Aborted_clients. */
    before = live_value(b, 3,
                        "SELECT VARIABLE_VALUE AS v FROM information_schema.GLOBAL_STATUS "
                        "WHERE VARIABLE_NAME = ?",
                        "ABORTED_CLIENTS", "v");
    if (force_kill)
        qc__odbc_forget_socket(a);
    ck_assert_int_eq(qc_odbc_abort_path(a), force_kill ? QC_ODBC_ABORT_KILL : QC_ODBC_ABORT_SOCKET);
    path = qc_odbc_abort_ex(a);
    ck_assert_int_eq(path, force_kill ? QC_ODBC_ABORT_KILL : QC_ODBC_ABORT_SOCKET);
    ck_assert_msg(poll_value(b, 4,
                             "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST "
                             "WHERE ID = ?",
                             pid, "n", "0", 10000),
                  "session %s still present after abort", pid);
    ck_assert_msg(poll_lock_free(b, 2, lock, "1", "n", "0", 10000),
                  "the aborted transaction's row is still locked or present");
    if (!force_kill) {
        snprintf(sql, sizeof sql,
                 "SELECT (VARIABLE_VALUE > %s) AS v FROM information_schema.GLOBAL_STATUS "
                 "WHERE VARIABLE_NAME = ?",
                 before);
        ck_assert_msg(poll_value(b, 5, sql, "ABORTED_CLIENTS", "v", "1", 10000),
                      "abort() ended the session politely (Aborted_clients stayed %s)", before);
    }
    free(before);
    snprintf(sql, sizeof sql, "DROP TABLE %s", t);
    live_ddl(b, sql);
    qc_result_clear(&r);
    D->close(b);
}

START_TEST(test_odbc_abort_drops_socket_rolls_back)
{
    abort_case(0);
}
END_TEST

START_TEST(test_odbc_abort_without_socket_kills_session_rolls_back)
{
    abort_case(1);
}
END_TEST

/* ---- mariadb_protocol ---------------------------------------------------- */

typedef struct claim_row {
    char job[32];
    char token[64];
    double lease_until, now;
    int attempt;
} claim_row;

static void enqueue(qc_conn *c, const qc_protocol *p, const char *payload, const char *max_att,
                    char *job, size_t n)
{
    qc_params in = {0};
    qc_result r = {0};

    qc_params_set(&in, "payload", payload);
    qc_params_set(&in, "group_key", NULL);
    qc_params_set(&in, "max_attempts", max_att);
    qc_params_set(&in, "delay_ms", "0");
    run_ok(c, p, QC_STEP_ENQUEUE, &in, &r);
    ck_assert_int_eq(r.nrows, 1);
    ck_assert_ptr_nonnull(qc_result_get(&r, 0, "job_id"));
    snprintf(job, n, "%s", qc_result_get(&r, 0, "job_id"));
    qc_result_clear(&r);
}

/* Runs the claim step; returns the number of rows (0 or 1) and fills out. */
static int claim(qc_conn *c, const qc_protocol *p, const char *lease_ms, claim_row *out)
{
    qc_params in = {0};
    qc_result r = {0};
    int n;

    qc_params_set(&in, "batch", "1");
    qc_params_set(&in, "lease_ms", lease_ms);
    qc_params_set(&in, "worker", "w1.0");
    run_ok(c, p, QC_STEP_CLAIM, &in, &r);
    n = r.nrows;
    ck_assert_int_le(n, 1);
    if (n == 1) {
        const char *v;
        ck_assert_ptr_nonnull(v = qc_result_get(&r, 0, "job_id"));
        snprintf(out->job, sizeof out->job, "%s", v);
        ck_assert_ptr_nonnull(v = qc_result_get(&r, 0, "token"));
        ck_assert_int_eq((int)strlen(v), 36);
        snprintf(out->token, sizeof out->token, "%s", v);
        ck_assert_ptr_nonnull(v = qc_result_get(&r, 0, "lease_until_ms"));
        out->lease_until = strtod(v, NULL);
        ck_assert_ptr_nonnull(v = qc_result_get(&r, 0, "now_ms"));
        out->now = strtod(v, NULL);
        ck_assert_ptr_nonnull(v = qc_result_get(&r, 0, "attempt"));
        out->attempt = atoi(v);
        ck_assert_str_eq(qc_result_get(&r, 0, "op_key"), out->job);
        ck_assert_ptr_nonnull(qc_result_get(&r, 0, "payload"));
        ck_assert_int_ge(qc_result_col(&r, "group_key"), 0);
    }
    qc_result_clear(&r);
    return n;
}

/* Runs complete / renew / fail with job and token; returns the rows it
 * changed as the worker reads them (a "rows" column, else the affected
 * count), and copies the result to out when not NULL. */
static long update_step(qc_conn *c, const qc_protocol *p, qc_step_id step, const char *job,
                        const char *token, const char *lease_ms, qc_result *out)
{
    qc_params in = {0};
    qc_result r = {0};
    const char *rows;
    long n;

    qc_params_set(&in, "job_id", job);
    qc_params_set(&in, "token", token);
    qc_params_set(&in, "lease_ms", lease_ms);
    qc_params_set(&in, "delay_ms", "0");
    qc_params_set(&in, "error", "boom: it's broken");
    run_ok(c, p, step, &in, &r);
    rows = qc_result_get(&r, 0, "rows");
    n = rows ? strtol(rows, NULL, 10) : r.affected;
    if (out != NULL)
        qc_result_move(out, &r);
    qc_result_clear(&r);
    return n;
}

/* Snapshot state of job as a new string. */
static char *job_state(qc_conn *c, const qc_protocol *p, const char *job, const char *col)
{
    qc_result r = {0};
    char *v = NULL;
    int i;

    run_ok(c, p, QC_STEP_SNAPSHOT, NULL, &r);
    for (i = 0; i < r.nrows; i++)
        if (strcmp(qc_result_get(&r, i, "job_id"), job) == 0) {
            const char *s = qc_result_get(&r, i, col);
            v = strdup(s ? s : "NULL");
        }
    qc_result_clear(&r);
    ck_assert_msg(v != NULL, "job %s not in snapshot", job);
    return v;
}

static qc_protocol *setup_protocol(qc_conn *c, const char *path)
{
    qc_protocol *p = load_protocol(path);
    qc_result r = {0};

    run_ok(c, p, QC_STEP_SETUP, NULL, &r);
    qc_result_clear(&r);
    return p;
}

static void teardown_protocol(qc_conn *c, qc_protocol *p)
{
    qc_result r = {0};

    run_ok(c, p, QC_STEP_TEARDOWN, NULL, &r);
    qc_result_clear(&r);
    qc_protocol_destroy(p);
}

START_TEST(test_mariadb_protocol_claim_complete_renew_fail_snapshot_monitor)
{
    qc_conn *c = live_open();
    qc_protocol *p = setup_protocol(c, PROTOCOL_FILE);
    char jobs[3][32], pid[32], *s;
    claim_row a, b;
    qc_result r = {0};
    int i;

    for (i = 0; i < 3; i++) {
        char payload[32];
        snprintf(payload, sizeof payload, "job-%d 'q'", i);
        enqueue(c, p, payload, "3", jobs[i], sizeof jobs[i]);
    }
    ck_assert(strtol(jobs[0], NULL, 10) < strtol(jobs[1], NULL, 10));
    ck_assert_int_eq(claim(c, p, "5000", &a), 1);
    ck_assert_str_eq(a.job, jobs[0]); /* FIFO by run_after, id */
    ck_assert_int_eq(a.attempt, 1);
    ck_assert_msg(a.now > 1.5e12 && a.now < 1e13, "now_ms %f", a.now);
    ck_assert_msg(a.lease_until - a.now > 4000 && a.lease_until - a.now <= 5000, "lease %f now %f",
                  a.lease_until, a.now);
    /* renew with the right token: rows 1, a later lease; a wrong one: 0. */
    ck_assert_int_eq(update_step(c, p, QC_STEP_RENEW, a.job, a.token, "8000", &r), 1);
    ck_assert_str_eq(qc_result_get(&r, 0, "token"), a.token);
    ck_assert(strtod(qc_result_get(&r, 0, "lease_until_ms"), NULL) > a.lease_until);
    ck_assert_ptr_nonnull(qc_result_get(&r, 0, "now_ms"));
    ck_assert_int_eq(
        update_step(c, p, QC_STEP_RENEW, a.job, "00000000-0000-0000-0000-000000000000", "8000", &r),
        0);
    ck_assert_ptr_null(qc_result_get(&r, 0, "lease_until_ms"));
    /* complete twice with the same token: 1 row, then 0; with the server
     * time it ran at. */
    ck_assert_int_eq(update_step(c, p, QC_STEP_COMPLETE, a.job, a.token, "5000", &r), 1);
    ck_assert_ptr_nonnull(qc_result_get(&r, 0, "rows"));
    ck_assert(strtod(qc_result_get(&r, 0, "now_ms"), NULL) >= a.now);
    ck_assert_int_eq(update_step(c, p, QC_STEP_COMPLETE, a.job, a.token, "5000", NULL), 0);
    ck_assert_int_eq(update_step(c, p, QC_STEP_RENEW, a.job, a.token, "5000", NULL), 0);
    /* fail of the next job: back to ready with its error kept. */
    ck_assert_int_eq(claim(c, p, "5000", &b), 1);
    ck_assert_str_eq(b.job, jobs[1]);
    ck_assert_str_ne(b.token, a.token);
    ck_assert_int_eq(update_step(c, p, QC_STEP_COMPLETE, b.job, a.token, "5000", NULL), 0);
    ck_assert_int_eq(update_step(c, p, QC_STEP_FAIL, b.job, b.token, "5000", &r), 1);
    ck_assert(strtod(qc_result_get(&r, 0, "now_ms"), NULL) >= b.now);
    ck_assert_int_eq(update_step(c, p, QC_STEP_FAIL, b.job, b.token, "5000", NULL), 0);
    s = job_state(c, p, b.job, "state");
    ck_assert_str_eq(s, "ready");
    free(s);
    s = job_state(c, p, b.job, "error");
    ck_assert_str_eq(s, "boom: it's broken");
    free(s);
    s = job_state(c, p, a.job, "state");
    ck_assert_str_eq(s, "done");
    free(s);
    /* snapshot: every job with the documented columns. */
    run_ok(c, p, QC_STEP_SNAPSHOT, NULL, &r);
    ck_assert_int_eq(r.nrows, 3);
    ck_assert(qc_result_col(&r, "job_id") >= 0 && qc_result_col(&r, "state") >= 0 &&
              qc_result_col(&r, "attempt") >= 0 && qc_result_col(&r, "token") >= 0);
    ck_assert_str_eq(qc_result_get(&r, 0, "token"), a.token);
    ck_assert_str_eq(qc_result_get(&r, 1, "attempt"), "1");
    /* monitor: 2 ready (the failed one and the untouched one), 1 done. */
    run_ok(c, p, QC_STEP_MONITOR, NULL, &r);
    ck_assert_int_eq(r.nrows, 1);
    ck_assert_str_eq(qc_result_get(&r, 0, "ready"), "2");
    ck_assert_str_eq(qc_result_get(&r, 0, "inflight"), "0");
    ck_assert_str_eq(qc_result_get(&r, 0, "expired"), "0");
    ck_assert_str_eq(qc_result_get(&r, 0, "dead"), "0");
    ck_assert_str_eq(qc_result_get(&r, 0, "done"), "1");
    ck_assert(strtol(qc_result_get(&r, 0, "oldest_ready_age_ms"), NULL, 10) >= 0);
    /* monitor_live (issue 16): the same live counts, no done column. */
    run_ok(c, p, QC_STEP_MONITOR_LIVE, NULL, &r);
    ck_assert_int_eq(r.nrows, 1);
    ck_assert_str_eq(qc_result_get(&r, 0, "ready"), "2");
    ck_assert_str_eq(qc_result_get(&r, 0, "inflight"), "0");
    ck_assert_str_eq(qc_result_get(&r, 0, "expired"), "0");
    ck_assert_str_eq(qc_result_get(&r, 0, "dead"), "0");
    ck_assert_int_lt(qc_result_col(&r, "done"), 0);
    ck_assert(strtol(qc_result_get(&r, 0, "oldest_ready_age_ms"), NULL, 10) >= 0);
    /* server_pid is the driver's session id. */
    run_ok(c, p, QC_STEP_SERVER_PID, NULL, &r);
    snprintf(pid, sizeof pid, "%d", D->backend_pid(c));
    ck_assert_str_eq(qc_result_get(&r, 0, "pid"), pid);
    qc_result_clear(&r);
    teardown_protocol(c, p);
    D->close(c);
}
END_TEST

START_TEST(test_mariadb_protocol_reap_expired_lease_returns_job)
{
    qc_conn *c = live_open();
    qc_protocol *p = setup_protocol(c, PROTOCOL_FILE);
    char job[32], last[32], *s;
    claim_row a, b;
    qc_result r = {0};
    double end;
    int got = 0;

    enqueue(c, p, "reap me", "2", job, sizeof job);
    ck_assert_int_eq(claim(c, p, "5", &a), 1);
    end = mono_ms() + 5000;
    while (!got && mono_ms() < end) {
        run_ok(c, p, QC_STEP_REAP, NULL, &r);
        got = r.nrows;
        if (!got)
            pause_ms(10);
    }
    ck_assert_int_eq(got, 1);
    ck_assert_str_eq(qc_result_get(&r, 0, "job_id"), job);
    ck_assert_str_eq(qc_result_get(&r, 0, "token"), a.token);
    ck_assert_str_eq(qc_result_get(&r, 0, "state"), "ready");
    ck_assert(strtod(qc_result_get(&r, 0, "now_ms"), NULL) > a.lease_until);
    /* Nothing left to reap; the old token is dead. */
    run_ok(c, p, QC_STEP_REAP, NULL, &r);
    ck_assert_int_eq(r.nrows, 0);
    ck_assert_int_eq(update_step(c, p, QC_STEP_COMPLETE, job, a.token, "5000", NULL), 0);
    s = job_state(c, p, job, "token");
    ck_assert_str_eq(s, "NULL");
    free(s);
    /* Second (last) attempt expires too: the reaper buries it. */
    ck_assert_int_eq(claim(c, p, "5", &b), 1);
    ck_assert_int_eq(b.attempt, 2);
    ck_assert_str_ne(b.token, a.token);
    snprintf(last, sizeof last, "%s", b.job);
    got = 0;
    end = mono_ms() + 5000;
    while (!got && mono_ms() < end) {
        run_ok(c, p, QC_STEP_REAP, NULL, &r);
        got = r.nrows;
        if (!got)
            pause_ms(10);
    }
    ck_assert_int_eq(got, 1);
    ck_assert_str_eq(qc_result_get(&r, 0, "state"), "dead");
    s = job_state(c, p, last, "error");
    ck_assert_str_eq(s, "lease expired on attempt 2");
    free(s);
    ck_assert_int_eq(claim(c, p, "5000", &b), 0);
    qc_result_clear(&r);
    teardown_protocol(c, p);
    D->close(c);
}
END_TEST

START_TEST(test_mariadb_protocol_reap_many_carries_every_token)
{
    qc_conn *c = live_open();
    qc_protocol *p = setup_protocol(c, PROTOCOL_FILE);
    char job[32];
    claim_row rows[20];
    qc_result r = {0};
    double end;
    int i, k, got = 0;

    for (i = 0; i < 20; i++)
        enqueue(c, p, "many", "3", job, sizeof job);
    for (i = 0; i < 20; i++)
        ck_assert_int_eq(claim(c, p, "5", &rows[i]), 1);
    end = mono_ms() + 5000;
    while (got < 20 && mono_ms() < end) {
        run_ok(c, p, QC_STEP_REAP, NULL, &r);
        for (i = 0; i < r.nrows; i++) {
            for (k = 0; k < 20; k++)
                if (strcmp(rows[k].job, qc_result_get(&r, i, "job_id")) == 0)
                    break;
            ck_assert_int_lt(k, 20);
            ck_assert_str_eq(qc_result_get(&r, i, "token"), rows[k].token);
            rows[k].job[0] = '\0'; /* each job once */
            got++;
        }
        if (got < 20)
            pause_ms(10);
    }
    ck_assert_int_eq(got, 20);
    qc_result_clear(&r);
    teardown_protocol(c, p);
    D->close(c);
}
END_TEST

START_TEST(test_mariadb_protocol_kill_session_terminates_worker)
{
    qc_conn *w = live_open(), *ctl = live_open();
    qc_protocol *p = load_protocol(PROTOCOL_FILE);
    qc_params in = {0};
    qc_result r = {0};
    qc_err err = {0};
    char pid[32];

    run_ok(w, p, QC_STEP_SERVER_PID, NULL, &r);
    snprintf(pid, sizeof pid, "%s", qc_result_get(&r, 0, "pid"));
    qc_params_set(&in, "pid", pid);
    run_ok(ctl, p, QC_STEP_KILL_SESSION, &in, &r);
    ck_assert(poll_value(ctl, 900,
                         "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ?",
                         pid, "n", "0", 10000));
    ck_assert_int_eq(qc_protocol_run(D, w, p, QC_STEP_SERVER_PID, NULL, &r, &err), QC_ECONN);
    ck_assert(!D->is_ok(w));
    /* A session that is already gone: a plain statement error. */
    ck_assert_int_eq(qc_protocol_run(D, ctl, p, QC_STEP_KILL_SESSION, &in, &r, &err), QC_EDB);
    ck_assert(D->is_ok(ctl));
    qc_result_clear(&r);
    qc_protocol_destroy(p);
    D->abort(w);
    D->close(ctl);
}
END_TEST

/* Runs statement s of a claim on a with the parameters it names. */
static void exec_claim_stmt(qc_conn *a, const qc_stmt *s, const char *job, qc_result *r)
{
    const char *vals[8];
    qc_err err = {0};
    int k;

    ck_assert_int_le(s->nparams, 8);
    for (k = 0; k < s->nparams; k++) {
        if (strcmp(s->params[k], "job_id") == 0)
            vals[k] = job;
        else if (strcmp(s->params[k], "lease_ms") == 0)
            vals[k] = "5000";
        else
            vals[k] = "w0.0";
    }
    ck_assert_msg(D->exec(a, s->id, 1, s->sql, s->nparams, vals, r, &err) == 0, "%s: %s", s->sql,
                  err.msg);
}

/* Runs a's claim up to the statement that picks the job (the first that
 * returns job_id) and holds it there, runs a whole claim on b, then
 * finishes a's claim.  Returns whether both got the same job. */
static int interleaved_claims(const char *path)
{
    qc_conn *a = live_open(), *b = live_open();
    qc_protocol *p = setup_protocol(a, path);
    const qc_step *st = &p->steps[QC_STEP_CLAIM];
    char job[32], a_job[32] = "";
    claim_row rb;
    qc_result r = {0};
    qc_err err = {0};
    int i, same;

    for (i = 0; i < 3; i++)
        enqueue(a, p, "race", "3", job, sizeof job);
    ck_assert_int_eq(D->begin(a, &err), 0);
    for (i = 0; i < st->nstmts && a_job[0] == '\0'; i++) {
        exec_claim_stmt(a, &st->stmts[i], NULL, &r);
        if (qc_result_col(&r, "job_id") >= 0) {
            ck_assert_int_eq(r.nrows, 1);
            snprintf(a_job, sizeof a_job, "%s", qc_result_get(&r, 0, "job_id"));
        }
    }
    ck_assert_msg(a_job[0] != '\0' && i < st->nstmts, "no statement picked a job");
    /* Meanwhile b claims through the whole step. */
    ck_assert_int_eq(claim(b, p, "5000", &rb), 1);
    same = strcmp(rb.job, a_job) == 0;
    /* a goes on with its own UPDATE and SELECT. */
    for (; i < st->nstmts; i++)
        exec_claim_stmt(a, &st->stmts[i], a_job, &r);
    ck_assert_int_eq(r.nrows, 1);
    ck_assert_int_eq(D->commit(a, &err), 0);
    qc_result_clear(&r);
    teardown_protocol(a, p);
    D->close(a);
    D->close(b);
    return same;
}

START_TEST(test_mariadb_protocol_claim_skips_locked_row)
{
    ck_assert_msg(!interleaved_claims(PROTOCOL_FILE), "two claims got the same job");
}
END_TEST

START_TEST(test_mariadb_mutant_select_then_update_double_claims)
{
    ck_assert_msg(interleaved_claims(MUTANT_FILE), "the mutant did not double-claim");
}
END_TEST

/* ---- suite --------------------------------------------------------------- */

static TCase *tcase(Suite *s, const char *name, int timeout)
{
    TCase *tc = tcase_create(name);

    tcase_set_timeout(tc, timeout);
    suite_add_tcase(s, tc);
    return tc;
}

static Suite *odbc_suite(int live)
{
    Suite *s = suite_create("odbc");
    TCase *tc;

    tc = tcase(s, "odbc_offline", 30);
    tcase_add_test(tc, test_odbc_open_unreachable_port_econn_no_password);
    tcase_add_test(tc, test_odbc_open_braced_values_parsed_password_hidden);
    tcase_add_test(tc, test_odbc_open_password_echoed_by_driver_scrubbed);
    tcase_add_test(tc, test_odbc_open_unknown_driver_econn_names_target);
    tcase_add_test(tc, test_odbc_open_dsn_without_server_names_dsn);
    tcase_add_test(tc, test_odbc_open_without_global_init_einval);
    tcase_add_test(tc, test_odbc_driver_table_complete_qmark);

    tc = tcase(s, "protocol_files", 5);
    tcase_add_test(tc, test_mariadb_protocol_file_loads_all_steps);
    tcase_add_test(tc, test_mariadb_mutant_file_loads_expect_exclusive_claim);

    if (live) {
        tc = tcase(s, "odbc_live", 60);
        tcase_add_test(tc, test_odbc_open_server_version_and_session_id_known);
        tcase_add_test(tc, test_odbc_exec_prepared_insert_binds_quote_and_null);
        tcase_add_test(tc, test_odbc_exec_long_value_read_whole);
        tcase_add_test(tc, test_odbc_exec_update_reports_affected);
        tcase_add_test(tc, test_odbc_exec_missing_table_edb_conn_usable);
        tcase_add_test(tc, test_odbc_exec_procedure_results_last_with_columns);
        tcase_add_test(tc, test_odbc_exec_deadlocked_range_select_reexecutes);
        tcase_add_test(tc, test_odbc_transaction_commit_rollback_restore_autocommit);
        tcase_add_test(tc, test_odbc_run_later_statement_uses_earlier_column);
        tcase_add_test(tc, test_odbc_run_error_rolls_back_transaction);
        tcase_add_test(tc, test_odbc_set_option_prepare_off_runs_unknown_einval);
        tcase_add_test(tc, test_odbc_exec_killed_session_econn);
        tcase_add_test(tc, test_odbc_abort_drops_socket_rolls_back);
        tcase_add_test(tc, test_odbc_abort_without_socket_kills_session_rolls_back);

        tc = tcase(s, "mariadb_protocol", 60);
        tcase_add_test(tc, test_mariadb_protocol_claim_complete_renew_fail_snapshot_monitor);
        tcase_add_test(tc, test_mariadb_protocol_reap_expired_lease_returns_job);
        tcase_add_test(tc, test_mariadb_protocol_reap_many_carries_every_token);
        tcase_add_test(tc, test_mariadb_protocol_kill_session_terminates_worker);
        tcase_add_test(tc, test_mariadb_protocol_claim_skips_locked_row);
        tcase_add_test(tc, test_mariadb_mutant_select_then_update_double_claims);
        tcase_add_test(tc, test_odbc_statement_timeout_ends_long_statement_edb);
        tcase_add_test(tc, test_odbc_cancel_from_another_thread_ends_statement);
    }
    return s;
}

int main(void)
{
    const char *dsn = getenv("QC_TEST_ODBC");
    int live = dsn != NULL && *dsn != '\0';
    qc_err err = {0};
    SRunner *sr;
    int failed;

    if (!live)
        fprintf(stderr, "check_odbc: QC_TEST_ODBC unset, skipping live MariaDB tests\n");
    /* As the runner does: the environment exists before any test (and any
     * forked test process) starts. */
    if (qc_odbc_global_init(&err) != 0) {
        fprintf(stderr, "check_odbc: %s\n", err.msg);
        return EXIT_FAILURE;
    }
    sr = srunner_create(odbc_suite(live));
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    qc_odbc_global_fini();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
