/*
 * check_target.c - end-to-end: which database a run tests and what it does
 * there (issue 11: "False green", "The user's database").  Runs ./qchaos
 * against the real PostgreSQL of QC_TEST_DSN (tests/run.sh starts one with
 * pg_stat_statements preloaded) and, for the plain run, against the
 * ephemeral server qchaos starts itself.  No mocks.
 */
#include <check.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "e2e_fixture.h"

#include "../backends/driver.h"

static const char *dsn;
static const char *odbc; /* QC_TEST_ODBC: a MariaDB, or NULL */

/* The variables qchaos reads as a target (harness/target.h), unset for the
 * runs that must not see them. */
static const char *const pg_vars = "-u PGHOST -u PGHOSTADDR -u PGPORT -u PGDATABASE -u PGUSER "
                                   "-u PGPASSWORD -u PGSERVICE -u PGSERVICEFILE";

/* The value of keyword in QC_TEST_DSN ("" when absent), into buf. */
static void dsn_value(const char *keyword, char *buf, size_t n)
{
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(dsn, &perr);
    ck_assert_msg(opts != NULL, "QC_TEST_DSN does not parse: %s", perr ? perr : "");
    buf[0] = 0;
    for (PQconninfoOption *o = opts; o->keyword; o++)
        if (!strcmp(o->keyword, keyword) && o->val)
            snprintf(buf, n, "%s", o->val);
    PQconninfoFree(opts);
}

static void quiet(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
}

static PGconn *connect_test_db(void)
{
    PGconn *c = PQconnectdb(dsn);
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "cannot connect: %s", PQerrorMessage(c));
    PQsetNoticeProcessor(c, quiet, NULL);
    return c;
}

/* Runs sql on c; returns the first cell of the first row ("" for none) in
 * buf. */
static void sql1(PGconn *c, const char *sql, char *buf, size_t n)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    ck_assert_msg(st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK, "%s: %s", sql,
                  PQresultErrorMessage(r));
    buf[0] = 0;
    if (st == PGRES_TUPLES_OK && PQntuples(r) > 0 && PQnfields(r) > 0)
        snprintf(buf, n, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
}

/* PGHOST, PGPORT, PGUSER, PGDATABASE of the test server exported and no
 * --dsn: the run tests that server (as psql would), not a throwaway one. */
START_TEST(test_target_pg_environment_without_dsn_tests_that_server)
{
    char host[256], port[32], user[128], db[128], cmd[3000];
    char *err = NULL;
    dsn_value("host", host, sizeof host);
    dsn_value("port", port, sizeof port);
    dsn_value("user", user, sizeof user);
    dsn_value("dbname", db, sizeof db);
    ck_assert_msg(port[0], "QC_TEST_DSN names no port: %s", dsn);
    snprintf(cmd, sizeof cmd,
             "env %s PGHOST='%s' PGPORT='%s' PGUSER='%s' PGDATABASE='%s' ./qchaos run "
             "scenarios/default.ini --jobs 200 --seed 4 --out %s/env --no-progress",
             pg_vars, host, port, user, db, outdir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 0, "exit %d: %s", code, err);
    ck_assert_msg(!strstr(err, "starting an ephemeral"), "an ephemeral server was started: %s",
                  err);
    ck_assert_msg(strstr(err, "qchaos: target host=") && strstr(err, "(from PGHOST"),
                  "no target line: %s", err);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/env", outdir);
    json_t *r = load_results(dir);
    json_t *t = json_object_get(r, "target");
    ck_assert_msg(json_is_object(t), "results.json has no target");
    ck_assert_str_eq(json_string_value(json_object_get(t, "port")), port);
    ck_assert_str_eq(json_string_value(json_object_get(t, "dbname")), db);
    ck_assert_str_eq(json_string_value(json_object_get(t, "user")), user);
    ck_assert_str_eq(json_string_value(json_object_get(t, "how")), "environment");
    ck_assert_msg(!strncmp(json_string_value(json_object_get(t, "server")), "PostgreSQL ", 11),
                  "server: %s", json_string_value(json_object_get(t, "server")));
    json_decref(r);
    /* the ledger header and junit.xml say it too */
    snprintf(cmd, sizeof cmd,
             "head -n1 %s/env/ledger.jsonl | grep -q '\"how\":\"environment\"' && "
             "grep -q 'name=\"target_port\" value=\"%s\"' %s/env/junit.xml && "
             "grep -q 'target host' %s/env/report.md",
             outdir, port, outdir, outdir);
    ck_assert_int_eq(run(cmd, NULL), 0);
    free(err);
}
END_TEST

/* No --dsn and no PG* variable that selects a server: the ephemeral
 * server, recorded as such; the user's other PG* settings (PGSSLMODE) are
 * not applied to it. */
START_TEST(test_target_plain_run_records_ephemeral)
{
    char cmd[2048];
    char *err = NULL;
    snprintf(cmd, sizeof cmd,
             "env %s PGSSLMODE=require PGCONNECT_TIMEOUT=5 ./qchaos run scenarios/default.ini "
             "--jobs 200 --workers 4 --seed 6 --out %s/plain --no-progress",
             pg_vars, outdir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 0, "exit %d: %s", code, err);
    ck_assert_msg(strstr(err, "starting an ephemeral"), "stderr: %s", err);
    ck_assert_msg(strstr(err, "(ephemeral)"), "no target line: %s", err);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/plain", outdir);
    json_t *r = load_results(dir);
    json_t *t = json_object_get(r, "target");
    ck_assert_str_eq(json_string_value(json_object_get(t, "how")), "ephemeral");
    ck_assert_msg(json_string_length(json_object_get(t, "port")) > 0, "no port");
    json_decref(r);
    free(err);
}
END_TEST

/* Number of schemas named qchaos (0 or 1). */
static int schema_count(PGconn *c)
{
    char v[32];
    sql1(c, "SELECT count(*) FROM pg_namespace WHERE nspname = 'qchaos'", v, sizeof v);
    return atoi(v);
}

/* A user's table qchaos.jobs with 300 rows: the run refuses before any
 * teardown (exit 2, naming it) and the rows are still there; with
 * --allow-existing it runs. */
START_TEST(test_owner_user_table_in_schema_refused_with_exit_2)
{
    char cmd[2048], v[64];
    char *err = NULL;
    PGconn *c = connect_test_db();
    sql1(c, "DROP SCHEMA IF EXISTS qchaos CASCADE", v, sizeof v);
    sql1(c, "CREATE SCHEMA qchaos", v, sizeof v);
    sql1(c, "CREATE TABLE qchaos.jobs AS SELECT g AS id, 'mine' AS payload FROM "
            "generate_series(1, 300) g",
         v, sizeof v);
    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/default.ini --jobs 200 --workers 4 --seed 2 --dsn '%s' "
             "--out %s/own-refused --no-progress",
             dsn, outdir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 2, "exit %d: %s", code, err);
    ck_assert_msg(strstr(err, "qchaos.jobs") && strstr(err, "--allow-existing"), "stderr: %s",
                  err);
    free(err);
    sql1(c, "SELECT count(*) FROM qchaos.jobs WHERE payload = 'mine'", v, sizeof v);
    ck_assert_str_eq(v, "300");

    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/default.ini --jobs 200 --workers 4 --seed 2 --dsn '%s' "
             "--out %s/own-allowed --no-progress --allow-existing",
             dsn, outdir);
    code = run(cmd, &err);
    ck_assert_msg(code == 0, "--allow-existing: exit %d: %s", code, err);
    free(err);
    /* the schema was the user's: it stays */
    ck_assert_int_eq(schema_count(c), 1);
    sql1(c, "DROP SCHEMA qchaos CASCADE", v, sizeof v);
    PQfinish(c);
}
END_TEST

/* After a normal --dsn run the schema qchaos created is gone. */
START_TEST(test_owner_schema_created_by_qchaos_dropped_after_run)
{
    char cmd[2048], v[64];
    char *err = NULL;
    PGconn *c = connect_test_db();
    sql1(c, "DROP SCHEMA IF EXISTS qchaos CASCADE", v, sizeof v);
    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/default.ini --jobs 200 --workers 4 --seed 3 --dsn '%s' "
             "--out %s/own-drop --no-progress",
             dsn, outdir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 0, "exit %d: %s", code, err);
    free(err);
    ck_assert_int_eq(schema_count(c), 0);
    PQfinish(c);
}
END_TEST

/* A run killed (SIGKILL) after setup leaves marked tables; the next run
 * knows them as qchaos's, runs, and removes everything. */
START_TEST(test_owner_run_after_killed_run_works)
{
    char cmd[2048], v[256];
    char *err = NULL;
    PGconn *c = connect_test_db();
    sql1(c, "DROP SCHEMA IF EXISTS qchaos CASCADE", v, sizeof v);
    char logpath[400];
    snprintf(logpath, sizeof logpath, "%s/killed.log", outdir);
    snprintf(cmd, sizeof cmd,
             "exec ./qchaos run scenarios/default.ini --jobs 200000 --workers 4 --seed 7 "
             "--dsn '%s' --out %s/own-killed --no-progress >%s 2>&1",
             dsn, outdir, logpath);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    /* wait (with a deadline) until setup has marked the table */
    int marked = 0;
    for (int i = 0; i < 1200 && !marked; i++) {
        sql1(c, "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'qchaos' AND c.relname = 'jobs' AND "
                "obj_description(c.oid, 'pg_class') LIKE 'qchaos: created by qchaos%'",
             v, sizeof v);
        marked = atoi(v) == 1;
        if (!marked)
            usleep(100 * 1000);
    }
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    ck_assert_msg(marked, "the table was never marked");
    ck_assert_int_eq(schema_count(c), 1);
    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/default.ini --jobs 200 --workers 4 --seed 8 --dsn '%s' "
             "--out %s/own-after-kill --no-progress",
             dsn, outdir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 0, "exit %d: %s", code, err);
    free(err);
    ck_assert_int_eq(schema_count(c), 0);
    PQfinish(c);
}
END_TEST

/* qchaos counts its claims from pg_stat_statements deltas: another
 * statement's statistics (and the rest of the server's) are left alone. */
START_TEST(test_server_count_leaves_other_statements_alone)
{
    char cmd[2048], before[64], after[64], v[64];
    char *err = NULL;
    PGconn *c = connect_test_db();
    sql1(c, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements", v, sizeof v);
    /* The test's own server: after hundreds of runs the extension's query
     * texts may have been garbage-collected; start from a clean slate (the
     * point is what qchaos itself does to the statistics). */
    sql1(c, "SELECT pg_stat_statements_reset()::text", v, sizeof v);
    for (int i = 0; i < 5; i++)
        sql1(c, "SELECT 42 AS qchaos_test_marker", v, sizeof v);
    static const char *const q = "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE "
                                 "query LIKE '%qchaos_test_marker%'";
    sql1(c, q, before, sizeof before);
    ck_assert_msg(atol(before) >= 5, "pg_stat_statements did not count: %s", before);
    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/default.ini --jobs 300 --workers 4 --seed 11 --dsn '%s' "
             "--out %s/pgss --no-progress",
             dsn, outdir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 0, "exit %d: %s", code, err);
    free(err);
    sql1(c, q, after, sizeof after);
    ck_assert_str_eq(after, before);
    /* ...and qchaos still has its own count */
    snprintf(cmd, sizeof cmd,
             "grep -q '\"note\":\"server_count\",\"op\":\"claim\"' %s/pgss/ledger.jsonl", outdir);
    ck_assert_int_eq(run(cmd, NULL), 0);
    PQfinish(c);
}
END_TEST

/* A claim that sends its own BEGIN (claim_no_rollback, C20) is counted
 * by its first statement that is not transaction control: counted by its
 * BEGIN, the server's count was 8 for 616 answered claims, a false
 * "server counted" violation of bounded_idle_polling (decision 1141). */
START_TEST(test_server_count_skips_transaction_control)
{
    char cmd[3000], v[64];
    char *err = NULL;
    PGconn *c = connect_test_db();
    sql1(c, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements", v, sizeof v);
    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/cases/c20_wedged.ini --protocol "
             "backends/postgres/mutants/claim_no_rollback.sql --jobs 200 --seed 1 --dsn '%s' "
             "--out %s/pgss-begin --no-progress",
             dsn, outdir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 1, "exit %d: %s", code, err); /* the mutant fails worker_progress */
    free(err);
    snprintf(cmd, sizeof cmd,
             "jq -e '[.checkers[] | select(.name == \"bounded_idle_polling\") | "
             ".violations[]? | select(.explanation | test(\"server counted\"))] | length == 0' "
             "%s/pgss-begin/results.json >/dev/null && "
             "jq -r '.checkers[] | select(.name == \"bounded_idle_polling\") | .summary' "
             "%s/pgss-begin/results.json | grep -Eq '\\(([0-9]+) answered\\), server [0-9]+$'",
             outdir, outdir);
    ck_assert_int_eq(run(cmd, NULL), 0);
    PQfinish(c);
}
END_TEST

/* MariaDB: a user's qchaos_jobs table is refused the same way. */
START_TEST(test_owner_mariadb_user_table_refused_with_exit_2)
{
    char cmd[3000];
    char *err = NULL;
    qc_err e = {0};
    qc_conn *c = NULL;
    qc_result r = {0};
    ck_assert_int_eq(qc_odbc_global_init(&e), 0);
    ck_assert_msg(qc_driver_odbc.open(odbc, &c, &e) == 0, "%s", e.msg);
    static const char *const setup[] = {
        "DROP TABLE IF EXISTS qchaos_jobs", "CREATE TABLE qchaos_jobs (id int, payload text)",
        "INSERT INTO qchaos_jobs VALUES (1, 'mine'), (2, 'mine'), (3, 'mine')"};
    for (size_t i = 0; i < sizeof setup / sizeof *setup; i++) {
        ck_assert_msg(qc_driver_odbc.exec(c, -1, 0, setup[i], 0, NULL, &r, &e) == 0, "%s: %s",
                      setup[i], e.msg);
        qc_result_clear(&r);
    }
    snprintf(cmd, sizeof cmd,
             "./qchaos run scenarios/default.ini --protocol backends/mariadb/skip_locked.sql "
             "--jobs 100 --workers 2 --seed 2 --dsn '%s' --out %s/own-mdb --no-progress",
             odbc, outdir);
    int code = run(cmd, &err);
    ck_assert_msg(code == 2, "exit %d: %s", code, err);
    ck_assert_msg(strstr(err, "qchaos_jobs"), "stderr: %s", err);
    free(err);
    ck_assert(qc_driver_odbc.exec(c, -1, 0, "SELECT count(*) AS n FROM qchaos_jobs", 0, NULL, &r,
                                  &e) == 0);
    ck_assert_str_eq(qc_result_get(&r, 0, "n"), "3");
    qc_result_clear(&r);
    ck_assert(qc_driver_odbc.exec(c, -1, 0, "DROP TABLE qchaos_jobs", 0, NULL, &r, &e) == 0);
    qc_result_clear(&r);
    qc_driver_odbc.close(c);
    qc_odbc_global_fini();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("target");
    TCase *eph = tcase_create("ephemeral");
    tcase_set_timeout(eph, 180);
    tcase_add_test(eph, test_target_plain_run_records_ephemeral);
    suite_add_tcase(s, eph);
    if (dsn) {
        TCase *env = tcase_create("environment");
        tcase_set_timeout(env, 300);
        tcase_add_test(env, test_target_pg_environment_without_dsn_tests_that_server);
        suite_add_tcase(s, env);
        TCase *own = tcase_create("owner");
        tcase_set_timeout(own, 600);
        tcase_add_test(own, test_owner_user_table_in_schema_refused_with_exit_2);
        tcase_add_test(own, test_owner_schema_created_by_qchaos_dropped_after_run);
        tcase_add_test(own, test_owner_run_after_killed_run_works);
        suite_add_tcase(s, own);
        TCase *pgss = tcase_create("server_count");
        tcase_set_timeout(pgss, 300);
        tcase_add_test(pgss, test_server_count_leaves_other_statements_alone);
        tcase_add_test(pgss, test_server_count_skips_transaction_control);
        suite_add_tcase(s, pgss);
    }
    if (odbc) {
        TCase *mdb = tcase_create("owner_mariadb");
        tcase_set_timeout(mdb, 300);
        tcase_add_test(mdb, test_owner_mariadb_user_table_refused_with_exit_2);
        suite_add_tcase(s, mdb);
    }
    return s;
}

int main(void)
{
    dsn = getenv("QC_TEST_DSN");
    if (!dsn || !*dsn) {
        fprintf(stderr, "check_target: QC_TEST_DSN unset: skipping the live PostgreSQL runs\n");
        dsn = NULL;
    }
    odbc = getenv("QC_TEST_ODBC");
    if (!odbc || !*odbc)
        odbc = NULL;
    snprintf(outdir, sizeof outdir, "/tmp/qc_target.%d", (int)getpid());
    char cmd[300];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", outdir);
    if (system(cmd) != 0)
        return EXIT_FAILURE;
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
