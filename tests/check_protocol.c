/*
 * check_protocol.c - unit tests for the error helpers (err.c), results
 * (result.c), the protocol loader and step runner (protocol.c) and the
 * libpq driver (pg.c).
 *
 * TCases: err, redact, result, split (statement splitter and parameter
 * rewriting), load_errors (every QC_EINVAL path with its "path:line:"),
 * run (qc_protocol_run against a scripted in-process driver, to see the
 * exact sequence of begin / exec / commit / rollback calls), pg_offline
 * (driver errors that need no server) and pg_live (the pg driver against
 * the PostgreSQL named by QC_TEST_DSN).  pg_live is only added when
 * QC_TEST_DSN is set; otherwise the binary says on stderr that it skipped
 * it, so a green run without a database is visibly partial.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../backends/driver.h"
#include "../backends/protocol.h"
#include "../harness/err.h"

/* ---- fixtures --------------------------------------------------------- */

/* A valid protocol: 19 lines; tests append steps after it (line 20 on). */
#define VALID_HEADER                                                                               \
    "-- qchaos test protocol\n"                                                                    \
    "-- engine: postgres\n"                                                                        \
    "-- model: lease\n"                                                                            \
    "-- description: unit test fixture\n"
#define VALID_STEPS                                                                                \
    "\n"                                                                                           \
    "-- name: setup\n"                                                                             \
    "CREATE TABLE IF NOT EXISTS qc_t (id bigserial PRIMARY KEY, state text);\n"                    \
    "-- name: teardown\n"                                                                          \
    "DROP TABLE IF EXISTS qc_t;\n"                                                                 \
    "-- name: enqueue\n"                                                                           \
    "INSERT INTO qc_t (state) VALUES ('ready') RETURNING id AS job_id;\n"                          \
    "-- name: claim\n"                                                                             \
    "UPDATE qc_t SET state = 'inflight' WHERE id = :job_id\n"                                      \
    "RETURNING id AS job_id, 't' AS token, 0 AS lease_until_ms, 0 AS now_ms,\n"                    \
    "          1 AS attempt, id::text AS op_key, '' AS payload;\n"                                 \
    "-- name: complete\n"                                                                          \
    "UPDATE qc_t SET state = 'done' WHERE id = :job_id AND :token = 't';\n"                        \
    "-- name: snapshot\n"                                                                          \
    "SELECT id AS job_id, state, 1 AS attempt, NULL AS token FROM qc_t;\n"
#define VALID VALID_HEADER VALID_STEPS
#define VALID_LINES 19

static qc_protocol *parse_ok(const char *text, qc_param_style style)
{
    qc_protocol *p = NULL;
    qc_err err = {0};
    int rc = qc_protocol_parse("fixture.sql", text, style, &p, &err);

    ck_assert_msg(rc == 0, "parse failed (%d): %s", rc, err.msg);
    ck_assert_ptr_nonnull(p);
    return p;
}

/* Parses text expecting QC_EINVAL whose message is exactly
 * "fixture.sql:LINE: " followed by what (or starts so, when prefix_only). */
static void expect_error(const char *text, int line, const char *what, int prefix_only)
{
    qc_protocol *p = (qc_protocol *)&p; /* must be reset to NULL */
    qc_err err = {0};
    char want[768];
    int rc = qc_protocol_parse("fixture.sql", text, QC_PARAM_DOLLAR, &p, &err);

    ck_assert_int_eq(rc, QC_EINVAL);
    ck_assert_int_eq(err.code, QC_EINVAL);
    ck_assert_ptr_null(p);
    snprintf(want, sizeof want, "fixture.sql:%d: %s", line, what);
    if (prefix_only)
        ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "got '%s', want prefix '%s'",
                      err.msg, want);
    else
        ck_assert_str_eq(err.msg, want);
}

static const qc_stmt *stmt(const qc_protocol *p, qc_step_id s, int i)
{
    ck_assert_int_eq(p->steps[s].present, 1);
    ck_assert_int_gt(p->steps[s].nstmts, i);
    return &p->steps[s].stmts[i];
}

/* ---- err -------------------------------------------------------------- */

START_TEST(test_err_set_formats_and_returns_code)
{
    qc_err err = {0};

    ck_assert_int_eq(qc_err_set(&err, QC_EDB, "claim (worker %d): %s", 7, "boom"), QC_EDB);
    ck_assert_int_eq(err.code, QC_EDB);
    ck_assert_str_eq(err.msg, "claim (worker 7): boom");
    ck_assert_int_eq(qc_err_set(NULL, QC_ECONN, "ignored"), QC_ECONN);
}
END_TEST

START_TEST(test_err_prefix_prepends_context_keeps_sqlstate)
{
    qc_err err = {0};

    qc_err_set(&err, QC_EDB, "40P01 deadlock detected");
    strcpy(err.sqlstate, "40P01");
    qc_err_prefix(&err, "claim (worker %d)", 7);
    ck_assert_str_eq(err.msg, "claim (worker 7): 40P01 deadlock detected");
    ck_assert_str_eq(err.sqlstate, "40P01");
    qc_err_prefix(NULL, "nothing");
}
END_TEST

START_TEST(test_err_prefix_long_message_stays_terminated)
{
    qc_err err = {0};

    memset(err.msg, 'x', sizeof err.msg - 1);
    err.msg[sizeof err.msg - 1] = '\0';
    qc_err_prefix(&err, "step");
    ck_assert_uint_eq(strlen(err.msg), sizeof err.msg - 1);
    ck_assert(strncmp(err.msg, "step: xxx", 9) == 0);
}
END_TEST

START_TEST(test_err_exit_code_maps_documented_values)
{
    ck_assert_int_eq(qc_err_exit_code(0), 0);
    ck_assert_int_eq(qc_err_exit_code(QC_EINVAL), 2);
    ck_assert_int_eq(qc_err_exit_code(QC_ECONN), 3);
    ck_assert_int_eq(qc_err_exit_code(QC_EDB), 3);
    ck_assert_int_eq(qc_err_exit_code(QC_EIO), 3);
}
END_TEST

/* ---- redact ----------------------------------------------------------- */

/* Redacts in and checks that none of the secrets survive and keep does. */
static void redact_case(const char *in, const char *const *secrets, const char *keep)
{
    char out[512];

    qc_redact_conninfo(in, out, sizeof out);
    for (; *secrets; secrets++)
        ck_assert_msg(strstr(out, *secrets) == NULL, "'%s' leaked in '%s'", *secrets, out);
    ck_assert_msg(strstr(out, "***") != NULL, "no *** in '%s'", out);
    ck_assert_msg(strstr(out, keep) != NULL, "'%s' missing from '%s'", keep, out);
}

START_TEST(test_redact_keyvalue_password_hidden)
{
    static const char *const s[] = {"sekrit123", NULL};
    redact_case("host=db port=5432 password=sekrit123 user=u", s, "host=db port=5432");
    redact_case("host=db password=sekrit123 user=u", s, "user=u");
    redact_case("PASSWORD=sekrit123 host=db", s, "host=db");
}
END_TEST

START_TEST(test_redact_quoted_value_hidden)
{
    static const char *const s[] = {"se cr", "et'", "sekrit", NULL};
    redact_case("host=db password = 'se cr\\'et' dbname=x", s, "dbname=x");
    redact_case("password='sekrit with spaces", s, "password=");
}
END_TEST

START_TEST(test_redact_uri_userinfo_and_query_hidden)
{
    static const char *const s[] = {"sekrit123", "sekrit456", NULL};
    redact_case("postgres://u:sekrit123@h:5432/db?sslmode=disable&password=sekrit456", s,
                "u:***@h:5432/db?sslmode=disable&password=***");
    redact_case("postgresql://u:sekrit123@h1:5432,h2:5433/db", s, "@h1:5432,h2:5433/db");
}
END_TEST

START_TEST(test_redact_uri_without_password_unchanged)
{
    char out[128];

    qc_redact_conninfo("postgresql://u@h/db?sslmode=require", out, sizeof out);
    ck_assert_str_eq(out, "postgresql://u@h/db?sslmode=require");
    qc_redact_conninfo("host=h port=5 user=u", out, sizeof out);
    ck_assert_str_eq(out, "host=h port=5 user=u");
}
END_TEST

START_TEST(test_redact_odbc_pwd_forms_hidden)
{
    static const char *const s[] = {"sekrit123", NULL};
    static const char *const b[] = {"se;cr", "cr}", "}et", "sekrit", NULL};
    redact_case("Driver={MariaDB Unicode};Server=127.0.0.1;Uid=u;PWD=sekrit123;Database=d;", s,
                "Server=127.0.0.1;Uid=u;");
    redact_case("DSN=x;Pwd=sekrit123", s, "DSN=x;");
    redact_case("Driver=FreeTDS;Server=h;Password=sekrit123;Database=d", s, "Database=d");
    redact_case("Driver=FreeTDS;Server=h;pAsSwOrD = sekrit123 with space;Database=d", s,
                "Database=d");
    redact_case("Driver={X};PWD={se;cr}}et};Uid=u", b, "Uid=u");
    redact_case("Driver={X};PWD={se;cr}}et sekrit", b, "Driver={X}");
}
END_TEST

START_TEST(test_redact_small_buffer_terminated_no_leak)
{
    char out[12];

    memset(out, 'Z', sizeof out);
    qc_redact_conninfo("password=sekrit123 host=x", out, sizeof out);
    ck_assert_uint_lt(strlen(out), sizeof out);
    ck_assert(strstr(out, "sek") == NULL);
    qc_redact_conninfo("password=sekrit123", out, 0); /* writes nothing */
    qc_redact_conninfo(NULL, out, sizeof out);
    ck_assert_str_eq(out, "");
}
END_TEST

/* ---- result ----------------------------------------------------------- */

static void make_result(qc_result *r)
{
    memset(r, 0, sizeof *r);
    r->ncols = 2;
    r->nrows = 2;
    r->cols = calloc(2, sizeof *r->cols);
    r->cells = calloc(4, sizeof *r->cells);
    r->cols[0] = strdup("job_id");
    r->cols[1] = strdup("token");
    r->cells[0] = strdup("1");
    r->cells[1] = NULL;
    r->cells[2] = strdup("2");
    r->cells[3] = strdup("t2");
    r->affected = 2;
}

START_TEST(test_result_get_by_name_case_insensitive)
{
    qc_result r;

    make_result(&r);
    ck_assert_int_eq(qc_result_col(&r, "TOKEN"), 1);
    ck_assert_int_eq(qc_result_col(&r, "nope"), -1);
    ck_assert_str_eq(qc_result_get(&r, 1, "Token"), "t2");
    ck_assert_ptr_null(qc_result_get(&r, 0, "token")); /* SQL NULL */
    ck_assert_ptr_null(qc_result_get(&r, 2, "job_id"));
    ck_assert_ptr_null(qc_result_get(&r, -1, "job_id"));
    ck_assert_ptr_null(qc_result_get(&r, 0, "nope"));
    qc_result_clear(&r);
}
END_TEST

START_TEST(test_result_move_and_clear_zero)
{
    qc_result a, b = {0};

    make_result(&a);
    make_result(&b);
    qc_result_move(&b, &a); /* frees b's old contents first */
    ck_assert_int_eq(a.ncols, 0);
    ck_assert_ptr_null(a.cells);
    ck_assert_str_eq(qc_result_get(&b, 0, "job_id"), "1");
    qc_result_clear(&b);
    ck_assert_int_eq(b.nrows, 0);
    ck_assert_ptr_null(b.cols);
    qc_result_clear(&b); /* twice is fine */
}
END_TEST

/* ---- split ------------------------------------------------------------ */

START_TEST(test_split_quotes_comments_semicolons_kept)
{
    qc_protocol *p =
        parse_ok(VALID "-- name: renew\n"
                       "SELECT 'a;b' AS x, \"c;d\" AS y; SELECT $tag$ e;f :nope $tag$,\n"
                       "  $$ g; $$;\n"
                       "/* h; :nope */ SELECT 3 -- i; :nope\n"
                       ";\n",
                 QC_PARAM_DOLLAR);

    ck_assert_int_eq(p->steps[QC_STEP_RENEW].nstmts, 3);
    ck_assert_str_eq(stmt(p, QC_STEP_RENEW, 0)->sql, "SELECT 'a;b' AS x, \"c;d\" AS y");
    ck_assert_str_eq(stmt(p, QC_STEP_RENEW, 1)->sql, "SELECT $tag$ e;f :nope $tag$,\n  $$ g; $$");
    ck_assert_str_eq(stmt(p, QC_STEP_RENEW, 2)->sql, "SELECT 3 -- i; :nope");
    ck_assert_int_eq(stmt(p, QC_STEP_RENEW, 0)->line, VALID_LINES + 2);
    ck_assert_int_eq(stmt(p, QC_STEP_RENEW, 1)->line, VALID_LINES + 2);
    ck_assert_int_eq(stmt(p, QC_STEP_RENEW, 2)->line, VALID_LINES + 4);
    ck_assert_int_eq(stmt(p, QC_STEP_RENEW, 2)->nparams, 0);
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_split_casts_and_quoted_colons_untouched)
{
    qc_protocol *p =
        parse_ok(VALID "-- name: renew\n"
                       "SELECT :job_id::bigint, '::x :token'::text, a::int, ':token',\n"
                       "       \":token\" FROM t WHERE b = :token AND c = E'\\':x'\n",
                 QC_PARAM_DOLLAR);
    const qc_stmt *s = stmt(p, QC_STEP_RENEW, 0);

    ck_assert_str_eq(s->sql, "SELECT $1::bigint, '::x :token'::text, a::int, ':token',\n"
                             "       \":token\" FROM t WHERE b = $2 AND c = E'\\':x'");
    ck_assert_int_eq(s->nparams, 2);
    ck_assert_str_eq(s->params[0], "job_id");
    ck_assert_str_eq(s->params[1], "token");
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_split_dollar_style_numbers_distinct_names)
{
    qc_protocol *p = parse_ok(VALID "-- name: renew\n"
                                    "UPDATE t SET a = :token WHERE id = :job_id AND b = :token;\n",
                              QC_PARAM_DOLLAR);
    const qc_stmt *s = stmt(p, QC_STEP_RENEW, 0);

    ck_assert_str_eq(s->sql, "UPDATE t SET a = $1 WHERE id = $2 AND b = $1");
    ck_assert_int_eq(s->nparams, 2);
    ck_assert_str_eq(s->params[0], "token");
    ck_assert_str_eq(s->params[1], "job_id");
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_split_qmark_style_repeats_names)
{
    qc_protocol *p = parse_ok(VALID "-- name: renew\n"
                                    "UPDATE t SET a = :token WHERE id = :job_id AND b = :token;\n",
                              QC_PARAM_QMARK);
    const qc_stmt *s = stmt(p, QC_STEP_RENEW, 0);

    ck_assert_int_eq(p->style, QC_PARAM_QMARK);
    ck_assert_str_eq(s->sql, "UPDATE t SET a = ? WHERE id = ? AND b = ?");
    ck_assert_int_eq(s->nparams, 3);
    ck_assert_str_eq(s->params[0], "token");
    ck_assert_str_eq(s->params[1], "job_id");
    ck_assert_str_eq(s->params[2], "token");
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_split_empty_statements_dropped)
{
    qc_protocol *p = parse_ok(VALID "-- name: renew\n"
                                    ";;  -- only a comment\n"
                                    " ; /* block */ ;\n"
                                    "\n"
                                    "-- leading comment\n"
                                    "SELECT 1;\n"
                                    "-- trailing comment\n",
                              QC_PARAM_DOLLAR);

    ck_assert_int_eq(p->steps[QC_STEP_RENEW].nstmts, 1);
    ck_assert_str_eq(stmt(p, QC_STEP_RENEW, 0)->sql, "SELECT 1");
    ck_assert_int_eq(stmt(p, QC_STEP_RENEW, 0)->line, VALID_LINES + 6);
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_split_postgres_block_comments_nest)
{
    qc_protocol *p = parse_ok(VALID "-- name: renew\n"
                                    "/* outer /* inner; */ still comment; */ SELECT 1;\n",
                              QC_PARAM_DOLLAR);

    ck_assert_int_eq(p->steps[QC_STEP_RENEW].nstmts, 1);
    ck_assert_str_eq(stmt(p, QC_STEP_RENEW, 0)->sql, "SELECT 1");
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_split_name_inside_dollar_quote_is_text)
{
    qc_protocol *p = parse_ok(VALID "-- name: reap\n"
                                    "DO $body$\n"
                                    "-- name: claim\n"
                                    "BEGIN PERFORM 1; END $body$;\n",
                              QC_PARAM_DOLLAR);

    ck_assert_int_eq(p->steps[QC_STEP_REAP].nstmts, 1);
    ck_assert_int_eq(p->steps[QC_STEP_CLAIM].line, 12);
    ck_assert_ptr_nonnull(strstr(stmt(p, QC_STEP_REAP, 0)->sql, "-- name: claim"));
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_split_mariadb_backslash_strings)
{
    qc_protocol *p =
        parse_ok("-- engine: mariadb\n"
                 "-- name: setup\nCREATE TABLE t (s TEXT);\n"
                 "-- name: teardown\nDROP TABLE t;\n"
                 "-- name: enqueue\nINSERT INTO t VALUES ('it\\'s; :x') ;\n"
                 "SELECT LAST_INSERT_ID() AS job_id;\n"
                 "-- name: claim\nSELECT 1 AS job_id, 2 AS token, 3 AS lease_until_ms,\n"
                 "4 AS now_ms, 5 AS attempt, 6 AS op_key, 7 AS payload;\n"
                 "-- name: complete\nUPDATE t SET s = :token WHERE `a:b` = :job_id;\n"
                 "-- name: snapshot\nSELECT 1 AS job_id, 2 AS state, 3 AS attempt, "
                 "4 AS token;\n"
                 "-- name: renew\n/* MariaDB comments do not /* nest */ SELECT 1;\n",
                 QC_PARAM_QMARK);

    ck_assert_str_eq(p->engine, "mariadb");
    ck_assert_int_eq(p->steps[QC_STEP_ENQUEUE].nstmts, 2);
    ck_assert_int_eq(stmt(p, QC_STEP_ENQUEUE, 0)->nparams, 0);
    ck_assert_str_eq(stmt(p, QC_STEP_COMPLETE, 0)->sql, "UPDATE t SET s = ? WHERE `a:b` = ?");
    ck_assert_int_eq(p->steps[QC_STEP_RENEW].nstmts, 1);
    ck_assert_str_eq(stmt(p, QC_STEP_RENEW, 0)->sql, "SELECT 1");
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_split_header_and_options_parsed)
{
    qc_protocol *p = parse_ok(VALID "-- name: renew\n"
                                    "-- not an option, a free comment\n"
                                    "-- autocommit: yes\n"
                                    "SELECT 1;\n"
                                    "-- name:fail\n"
                                    "-- autocommit: FALSE\n"
                                    "SELECT 1;\n",
                              QC_PARAM_DOLLAR);

    ck_assert_str_eq(p->engine, "postgres");
    ck_assert_str_eq(p->model, "lease");
    ck_assert_str_eq(p->description, "unit test fixture");
    ck_assert_str_eq(p->path, "fixture.sql");
    ck_assert_int_eq(p->steps[QC_STEP_RENEW].autocommit, 1);
    ck_assert_int_eq(p->steps[QC_STEP_FAIL].autocommit, 0);
    ck_assert_int_eq(p->steps[QC_STEP_CLAIM].autocommit, 0);
    ck_assert_int_eq(p->steps[QC_STEP_MONITOR].present, 0);
    ck_assert_int_eq(p->steps[QC_STEP_CLAIM].line, 12);
    qc_protocol_destroy(p);

    p = parse_ok(VALID_STEPS, QC_PARAM_DOLLAR);
    ck_assert_str_eq(p->engine, "postgres");
    ck_assert_str_eq(p->model, "lease");
    ck_assert_ptr_null(p->description);
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_split_statement_ids_unique_positive)
{
    qc_protocol *p = parse_ok(VALID "-- name: renew\nSELECT 1; SELECT 2;\n", QC_PARAM_DOLLAR);
    int seen[64] = {0}, s, i, n = 0;

    for (s = 0; s < QC_STEP_COUNT; s++) {
        for (i = 0; i < p->steps[s].nstmts; i++) {
            int id = p->steps[s].stmts[i].id;
            ck_assert_int_gt(id, 0);
            ck_assert_int_lt(id, 64);
            ck_assert_int_eq(seen[id], 0);
            seen[id] = 1;
            n++;
        }
    }
    ck_assert_int_eq(n, 8);
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_split_later_statement_uses_earlier_column)
{
    qc_protocol *p = parse_ok(VALID "-- name: fail\n"
                                    "SELECT id AS base FROM t WHERE id = :job_id;\n"
                                    "UPDATE t SET x = :base WHERE id = :job_id;\n",
                              QC_PARAM_DOLLAR);

    ck_assert_str_eq(stmt(p, QC_STEP_FAIL, 1)->sql, "UPDATE t SET x = $1 WHERE id = $2");
    ck_assert_str_eq(stmt(p, QC_STEP_FAIL, 1)->params[0], "base");
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_load_file_reads_and_missing_is_eio)
{
    char path[] = "/tmp/check_protocol.XXXXXX";
    int fd = mkstemp(path);
    qc_protocol *p = NULL;
    qc_err err = {0};
    FILE *f;

    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fputs(VALID, f);
    fclose(f);
    ck_assert_int_eq(qc_protocol_load(path, QC_PARAM_DOLLAR, &p, &err), 0);
    ck_assert_str_eq(p->path, path);
    ck_assert_int_eq(p->steps[QC_STEP_SNAPSHOT].present, 1);
    qc_protocol_destroy(p);
    unlink(path);
    ck_assert_int_eq(qc_protocol_load(path, QC_PARAM_DOLLAR, &p, &err), QC_EIO);
    ck_assert_ptr_null(p);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
}
END_TEST

START_TEST(test_step_name_known_and_out_of_range)
{
    ck_assert_str_eq(qc_step_name(QC_STEP_CLAIM), "claim");
    ck_assert_str_eq(qc_step_name(QC_STEP_KILL_SESSION), "kill_session");
    ck_assert_str_eq(qc_step_name(QC_STEP_COUNT), "unknown");
}
END_TEST

/* Issue 18: the loader says which of the columns the harness reads each
 * step's last statement returns, so a missing optional column is known. */
START_TEST(test_columns_detected_per_step)
{
    char buf[256];
    qc_protocol *p = parse_ok(VALID "-- name: reap\n"
                                    "UPDATE qc_t SET state = 'ready' WHERE state = 'inflight'\n"
                                    "RETURNING id AS job_id, 't' AS token;\n"
                                    "-- name: renew\n"
                                    "SELECT 1 AS now_ms;\n"
                                    "SELECT 2 AS rows, 3 AS lease_until_ms;\n",
                              QC_PARAM_DOLLAR);

    ck_assert_int_eq(qc_protocol_returns(p, QC_STEP_REAP, "token"), 1);
    ck_assert_int_eq(qc_protocol_returns(p, QC_STEP_REAP, "now_ms"), 0);
    ck_assert_int_eq(qc_protocol_returns(p, QC_STEP_REAP, "state"), 1); /* "SET state": text */
    ck_assert_int_eq(qc_protocol_returns(p, QC_STEP_SNAPSHOT, "error"), 0);
    ck_assert_int_eq(qc_protocol_returns(p, QC_STEP_FAIL, "now_ms"), 0); /* absent step */
    ck_assert_uint_eq(qc_protocol_columns(p, QC_STEP_REAP, buf, sizeof buf), 3);
    ck_assert_str_eq(buf, "job_id,token,state");
    ck_assert_uint_eq(qc_protocol_columns(p, QC_STEP_SNAPSHOT, buf, sizeof buf), 4);
    ck_assert_str_eq(buf, "job_id,state,attempt,token");
    ck_assert_uint_eq(qc_protocol_columns(p, QC_STEP_CLAIM, buf, sizeof buf), 7);
    ck_assert_str_eq(buf, "job_id,token,lease_until_ms,now_ms,attempt,op_key,payload");
    /* the last statement only: renew's now_ms is in its first */
    ck_assert_uint_eq(qc_protocol_columns(p, QC_STEP_RENEW, buf, sizeof buf), 2);
    ck_assert_str_eq(buf, "rows,lease_until_ms");
    ck_assert_uint_eq(qc_protocol_columns(p, QC_STEP_FAIL, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "");
    ck_assert_uint_eq(qc_protocol_columns(p, QC_STEP_REAP, buf, 10), 1); /* what fits */
    ck_assert_str_eq(buf, "job_id");
    qc_protocol_destroy(p);

    /* the reference protocol returns every column a rule needs */
    ck_assert_int_eq(qc_protocol_load("backends/postgres/skip_locked.sql", QC_PARAM_DOLLAR, &p,
                                      NULL),
                     0);
    size_t n, k;
    const qc_column_need *need = qc_protocol_column_needs(&n);
    ck_assert_uint_gt(n, 5);
    for (k = 0; k < n; k++)
        ck_assert_msg(qc_protocol_returns(p, need[k].step, need[k].column), "%s %s",
                      qc_step_name(need[k].step), need[k].column);
    ck_assert_uint_eq(qc_protocol_columns(p, QC_STEP_REAP, buf, sizeof buf), 4);
    ck_assert_str_eq(buf, "job_id,token,state,now_ms");
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_reads_names_parameters_of_any_statement)
{
    qc_protocol *p = parse_ok(VALID "-- name: renew\n"
                                    "SELECT 1 AS x;\n"
                                    "UPDATE qc_t SET state = 'inflight' WHERE id = :job_id AND "
                                    ":lease_ms > 0;\n",
                              QC_PARAM_DOLLAR);

    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_RENEW, "lease_ms"), 1);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_RENEW, "job_id"), 1);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_RENEW, "token"), 0);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_ENQUEUE, "max_attempts"), 0);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_REAP, "lease_ms"), 0); /* absent step */
    qc_protocol_destroy(p);
}
END_TEST

/* Issue 18: :worker, :worker_id, :incarnation are parameters of every
 * step; an overlay whose complete, renew and fail fence on the lease holder
 * loads (it used to be refused for :worker_id, and stopped with exit 2 at
 * its first complete for :worker). */
START_TEST(test_overlay_fencing_on_worker_loads)
{
    qc_protocol *p = NULL;
    qc_err err = {0};

    ck_assert_msg(qc_protocol_load("tests/protocols/fence_on_worker.sql", QC_PARAM_DOLLAR, &p,
                                   &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_COMPLETE, "worker"), 1);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_FAIL, "worker"), 1);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_RENEW, "worker_id"), 1);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_RENEW, "incarnation"), 1);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_REAP, "lease_ms"), 1);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_CLAIM, "worker"), 1); /* the base's */
    ck_assert_ptr_nonnull(strstr(p->steps[QC_STEP_CLAIM].file, "skip_locked.sql"));
    qc_protocol_destroy(p);
    ck_assert_ptr_nonnull(strstr(QC_PARAM_NAMES, " worker_id incarnation "));
}
END_TEST

/* ---- load_errors ------------------------------------------------------ */

START_TEST(test_load_unknown_step_einval)
{
    expect_error(VALID "\n-- name: bogus\nSELECT 1;\n", VALID_LINES + 2,
                 "unknown step 'bogus' (expected setup, teardown, enqueue, claim, complete, "
                 "renew, fail, reap, snapshot, monitor, monitor_live, server_pid, kill_session, "
                 "heartbeat, listen, notify, dedup)",
                 0);
}
END_TEST

START_TEST(test_load_duplicate_step_einval)
{
    expect_error(VALID "-- name: claim\nSELECT 1;\n", VALID_LINES + 1,
                 "duplicate step 'claim' (first at line 12)", 0);
}
END_TEST

/* Issue 18: "-- word: text" in a header is a comment unless word is a
 * documented key; a lowercase word one or two letters from a key is a
 * typo and still an error. */
START_TEST(test_load_header_comment_word_colon_is_comment)
{
    qc_protocol *p = parse_ok("-- qchaos protocol\n-- see http://example.com\n"
                              "-- flavour: vanilla\n-- note: this protocol ignores groups\n"
                              "-- Author: Jane Doe\n-- TODO: fix the reaper\n"
                              "-- Engine: postgres\n" VALID,
                              QC_PARAM_DOLLAR);

    ck_assert_str_eq(p->engine, "postgres");
    ck_assert_str_eq(p->description, "unit test fixture");
    ck_assert_int_eq(p->steps[QC_STEP_SETUP].present, 1);
    qc_protocol_destroy(p);
    /* right after "-- name:" too: prose is a comment, not an option */
    p = parse_ok(VALID "-- name: renew\n-- note: token-checked\n-- autocommit: yes\nSELECT 1;\n",
                 QC_PARAM_DOLLAR);
    ck_assert_int_eq(p->steps[QC_STEP_RENEW].autocommit, 1);
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_load_header_key_typo_einval_did_you_mean)
{
    expect_error("-- qchaos protocol\n-- engin: postgres\n" VALID, 2,
                 "unknown header key 'engin' (did you mean 'engine'?)", 0);
    expect_error("-- modle: lease\n" VALID, 1,
                 "unknown header key 'modle' (did you mean 'model'?)", 0);
    expect_error("-- descripton: x\n" VALID, 1,
                 "unknown header key 'descripton' (did you mean 'description'?)", 0);
    expect_error("-- bsae: ../x.sql\n" VALID, 1,
                 "unknown header key 'bsae' (did you mean 'base'?)", 0);
    expect_error("-- nmae: claim\n" VALID, 1,
                 "unknown header key 'nmae' (did you mean 'name'?)", 0);
    /* a documented key where it does not belong stays an error */
    expect_error("-- autocommit: yes\n" VALID, 1,
                 "unknown header key 'autocommit' (expected engine, model, description, expect, "
                 "scenario, base, tested, witness, missing)",
                 0);
}
END_TEST

START_TEST(test_load_bad_engine_and_model_einval)
{
    expect_error("-- engine: oracle\n" VALID, 1,
                 "unknown engine 'oracle' (expected postgres, mariadb, sqlserver, spanner)", 0);
    expect_error("\n-- model: maybe\n" VALID, 2,
                 "unknown model 'maybe' (expected lease, transaction, adapter)", 0);
}
END_TEST

START_TEST(test_load_missing_required_step_einval)
{
    /* VALID without its snapshot step (last two lines): 17 lines. */
    static const char text[] = VALID;
    char buf[sizeof text];
    char *cut;

    strcpy(buf, text);
    cut = strstr(buf, "-- name: snapshot");
    *cut = '\0';
    expect_error(buf, VALID_LINES - 2,
                 "missing required statement 'snapshot' (expected -- name: snapshot)", 0);
    strcat(buf, "\n\n-- trailing comment"); /* no final newline: last line 20 */
    expect_error(buf, VALID_LINES + 1,
                 "missing required statement 'snapshot' (expected -- name: snapshot)", 0);
    expect_error("", 1, "missing required statement 'setup' (expected -- name: setup)", 0);
}
END_TEST

START_TEST(test_load_missing_required_column_einval)
{
    expect_error("-- name: claim\n"
                 "WITH c AS (SELECT 1 AS op_key)\n"
                 "SELECT 1;\n"
                 "SELECT 1 AS job_id, 2 AS token,\n"
                 "  3 AS lease_until_ms, 4 AS now_ms, 5 AS attempt, 6 AS payload;\n",
                 4, "statement 'claim' must return column 'op_key'", 0);
    expect_error("-- name: monitor\nSELECT 1 AS ready, 2 AS inflight_count;\n", 2,
                 "statement 'monitor' must return column 'inflight'", 0);
}
END_TEST

/* The outbox check (C23): dedup must return run, and is keyed by the
 * message id the claim returns; the shipped outbox protocol and its
 * check-then-act mutant load, with :message_id read where it must be. */
START_TEST(test_load_dedup_step_checked)
{
    expect_error(VALID "-- name: dedup\nSELECT true AS go;\n", VALID_LINES + 2,
                 "statement 'dedup' must return column 'run'", 0);
    expect_error(VALID "-- name: dedup\nSELECT :message_id IS NOT NULL AS run;\n",
                 VALID_LINES + 1,
                 "step 'dedup' needs :message_id, but statement 'claim' (fixture.sql:12) returns "
                 "no column 'message_id'",
                 0);
    qc_protocol *p = NULL;
    qc_err err = {0};
    ck_assert_int_eq(qc_protocol_load("backends/postgres/outbox.sql", QC_PARAM_DOLLAR, &p, &err),
                     0);
    ck_assert_int_eq(p->steps[QC_STEP_DEDUP].present, 1);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_ENQUEUE, "message_id"), 1);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_DEDUP, "message_id"), 1);
    ck_assert_int_eq(qc_protocol_returns(p, QC_STEP_CLAIM, "message_id"), 1);
    ck_assert_str_eq(qc_step_name(QC_STEP_DEDUP), "dedup");
    qc_protocol_destroy(p);
    p = NULL;
    ck_assert_int_eq(qc_protocol_load("backends/postgres/mutants/outbox_check_then_act.sql",
                                      QC_PARAM_DOLLAR, &p, &err),
                     0);
    ck_assert_str_eq(p->expect, "message_once");
    ck_assert_int_eq(p->steps[QC_STEP_COMPLETE].nstmts, 2);
    ck_assert_int_eq(qc_protocol_reads(p, QC_STEP_COMPLETE, "message_id"), 1);
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_load_unknown_parameter_einval)
{
    expect_error("-- name: complete\n"
                 "UPDATE t SET s = 'done'\n"
                 " WHERE id = :job_id AND token = :tokn;\n",
                 3,
                 "unknown parameter :tokn in step 'complete' (expected one of job_id, token, "
                 "lease_ms, worker, worker_id, incarnation, batch, payload, group_key, error, "
                 "delay_ms, max_attempts, pid, op_key, client_now_ms, message_id)",
                 0);
    expect_error("-- name: fail\n"
                 "SELECT id AS base FROM t;\n"
                 "UPDATE t SET x = :base\n"
                 "  , y = :other;\n",
                 4, "unknown parameter :other in step 'fail' statement 2", 1);
}
END_TEST

START_TEST(test_load_setup_with_parameter_einval)
{
    expect_error("-- name: setup\nCREATE TABLE t (a int);\nINSERT INTO t VALUES (:job_id);\n", 3,
                 "step 'setup' may not use parameters (found :job_id)", 1);
    expect_error("-- name: teardown\nDROP TABLE :worker;\n", 2,
                 "step 'teardown' may not use parameters (found :worker)", 1);
}
END_TEST

/* "-- split: no" keeps a T-SQL step one batch: its ';' stay in the text,
 * parameters of every statement are bound in order, and the required
 * columns are looked for in the whole batch. */
START_TEST(test_split_no_keeps_sqlserver_step_one_batch)
{
    qc_protocol *p =
        parse_ok("-- engine: sqlserver\n"
                 "-- name: setup\nCREATE TABLE t (s int);\n"
                 "-- name: teardown\nDROP TABLE t;\n"
                 "-- name: enqueue\nINSERT INTO t OUTPUT inserted.s AS job_id VALUES (1);\n"
                 "-- name: claim\n"
                 "-- split: no\n"
                 "DECLARE @h uniqueidentifier;\n"
                 "SET @h = NEWID(); -- a comment; not a split\n"
                 "SELECT :worker AS job_id, @h AS token, 3 AS lease_until_ms, 4 AS now_ms,\n"
                 "       5 AS attempt, 6 AS op_key, :batch AS payload;\n"
                 "-- name: complete\nUPDATE t SET s = :token WHERE s = :job_id;\n"
                 "-- name: snapshot\nSELECT 1 AS job_id, 2 AS state, 3 AS attempt, "
                 "4 AS token;\n",
                 QC_PARAM_QMARK);

    ck_assert_int_eq(p->steps[QC_STEP_CLAIM].nosplit, 1);
    ck_assert_int_eq(p->steps[QC_STEP_CLAIM].nstmts, 1);
    ck_assert_int_eq(p->steps[QC_STEP_COMPLETE].nosplit, 0);
    const qc_stmt *st = stmt(p, QC_STEP_CLAIM, 0);
    ck_assert_int_eq(st->nparams, 2);
    ck_assert_str_eq(st->params[0], "worker");
    ck_assert_str_eq(st->params[1], "batch");
    ck_assert_ptr_nonnull(strstr(st->sql, "DECLARE @h uniqueidentifier;"));
    ck_assert_ptr_nonnull(strstr(st->sql, "SET @h = NEWID();"));
    ck_assert_ptr_nonnull(strstr(st->sql, "SELECT ? AS job_id"));
    qc_protocol_destroy(p);
}
END_TEST

/* Only SQL Server runs a batch of statements as one request. */
/* issue 17: LISTEN/NOTIFY are PostgreSQL's; another engine's protocol
 * with a listen or notify step is refused at the step's line. */
START_TEST(test_load_listen_refused_outside_postgres_einval)
{
    expect_error("-- engine: mariadb\n" VALID_STEPS "-- name: listen\nLISTEN x;\n", 17,
                 "step 'listen' needs LISTEN/NOTIFY, which engine mariadb does not have (only "
                 "postgres: workers of other engines poll)",
                 0);
    expect_error("-- engine: sqlserver\n" VALID_STEPS
                 "-- name: notify\nSELECT 1 WHERE :job_id = 1;\n",
                 17, "step 'notify' needs LISTEN/NOTIFY, which engine sqlserver", 1);
    qc_protocol *p = parse_ok(VALID "-- name: listen\nLISTEN qchaos_jobs;\n-- name: notify\n"
                                    "SELECT pg_notify('qchaos_jobs', :job_id::text);\n",
                              QC_PARAM_DOLLAR);
    ck_assert_int_eq(p->steps[QC_STEP_LISTEN].present, 1);
    ck_assert_str_eq(stmt(p, QC_STEP_NOTIFY, 0)->sql, "SELECT pg_notify('qchaos_jobs', $1::text)");
    qc_protocol_destroy(p);
}
END_TEST

START_TEST(test_split_no_refused_outside_sqlserver_einval)
{
    expect_error(VALID "-- name: renew\n-- split: no\nSELECT 1; SELECT 2;\n", VALID_LINES + 2,
                 "'split: no' needs an engine that runs a batch of statements (sqlserver), "
                 "not postgres",
                 0);
    expect_error(VALID "-- name: renew\n-- split: perhaps\nSELECT 1;\n", VALID_LINES + 2,
                 "bad split value 'perhaps' (expected yes, no, true, false, 1, 0)", 0);
}
END_TEST

START_TEST(test_load_unterminated_quote_einval)
{
    expect_error("-- name: renew\nSELECT 1;\nSELECT 'abc;\n\n-- name: fail\nSELECT 2;\n", 3,
                 "unterminated quoted string", 0);
    expect_error("-- name: renew\nSELECT \"abc;\n", 2, "unterminated quoted identifier", 0);
    expect_error("-- name: renew\n\nSELECT $fn$ abc $fn;\n$$\n", 3,
                 "unterminated dollar-quoted string $fn$", 0);
    expect_error("-- name: renew\nSELECT 1 /* a /* nested */ still open\n;\n", 2,
                 "unterminated block comment", 0);
}
END_TEST

START_TEST(test_load_bad_autocommit_value_einval)
{
    expect_error(VALID "-- name: renew\n-- autocommit: maybe\nSELECT 1;\n", VALID_LINES + 2,
                 "bad autocommit value 'maybe' (expected yes, no, true, false, 1, 0)", 0);
}
END_TEST

START_TEST(test_load_unknown_option_einval)
{
    expect_error(VALID "-- name: renew\n-- autocomit: yes\nSELECT 1;\n", VALID_LINES + 2,
                 "unknown option 'autocomit' for step 'renew' (did you mean 'autocommit'?)", 0);
    expect_error(VALID "-- name: renew\n-- engine: postgres\nSELECT 1;\n", VALID_LINES + 2,
                 "unknown option 'engine' for step 'renew' (expected autocommit, split)", 0);
    expect_error(VALID "-- name: renew\nSELECT 1;\n-- autocommit: yes\nSELECT 2;\n",
                 VALID_LINES + 3, "option 'autocommit' must come right after '-- name: renew'", 0);
}
END_TEST

START_TEST(test_load_sql_outside_step_einval)
{
    expect_error("-- engine: postgres\n\nSELECT 1;\n" VALID, 3,
                 "SQL outside a step (expected -- name: before it)", 0);
}
END_TEST

START_TEST(test_load_empty_step_einval)
{
    expect_error(VALID "-- name: renew\n-- nothing here\n;\n-- name: fail\nSELECT 1;\n",
                 VALID_LINES + 1, "step 'renew' has no statement", 0);
}
END_TEST

/* ---- run (scripted driver) -------------------------------------------- */

/* A scripted in-process driver: logs calls as letters (B begin, E exec,
 * C commit, R rollback), fails or returns no rows at a chosen exec, and
 * otherwise returns one row (job_id = 100 + exec number, base = "b<n>"). */
typedef struct fake {
    char log[64];
    int nexec;
    int fail_at, fail_code, empty_at;
    int prepare[8];
    char bound[8][4][16];
} fake;

static void fake_log(fake *f, char c)
{
    size_t n = strlen(f->log);
    if (n + 1 < sizeof f->log)
        f->log[n] = c;
}

static int fake_exec(qc_conn *c, int stmt_id, int prepare, const char *sql, int nparams,
                     const char *const *params, qc_result *out, qc_err *err)
{
    fake *f = (fake *)(void *)c;
    int n = ++f->nexec, i;
    char v[16];

    (void)sql;
    ck_assert_int_gt(stmt_id, 0);
    fake_log(f, 'E');
    f->prepare[n % 8] = prepare;
    for (i = 0; i < nparams && i < 4; i++)
        snprintf(f->bound[n % 8][i], sizeof f->bound[0][0], "%s", params[i] ? params[i] : "NULL");
    if (n == f->fail_at) {
        qc_err_set(err, f->fail_code, "40P01 deadlock detected");
        strcpy(err->sqlstate, "40P01");
        return f->fail_code;
    }
    qc_result_clear(out);
    out->ncols = 2;
    out->cols = calloc(2, sizeof *out->cols);
    out->cols[0] = strdup("job_id");
    out->cols[1] = strdup("base");
    out->affected = n == f->empty_at ? 0 : 1;
    if (n != f->empty_at) {
        out->nrows = 1;
        out->cells = calloc(2, sizeof *out->cells);
        snprintf(v, sizeof v, "%d", 100 + n);
        out->cells[0] = strdup(v);
        snprintf(v, sizeof v, "b%d", n);
        out->cells[1] = strdup(v);
    }
    return 0;
}

static int fake_begin(qc_conn *c, qc_err *err)
{
    (void)err;
    fake_log((fake *)(void *)c, 'B');
    return 0;
}

static int fake_commit(qc_conn *c, qc_err *err)
{
    (void)err;
    fake_log((fake *)(void *)c, 'C');
    return 0;
}

static int fake_rollback(qc_conn *c, qc_err *err)
{
    fake_log((fake *)(void *)c, 'R');
    return qc_err_set(err, QC_EDB, "rollback error that must be ignored");
}

static const qc_driver fake_driver = {.name = "fake",
                                      .style = QC_PARAM_DOLLAR,
                                      .exec = fake_exec,
                                      .begin = fake_begin,
                                      .commit = fake_commit,
                                      .rollback = fake_rollback};

#define RUN_TEXT                                                                                   \
    VALID "-- name: fail\n"                                                                        \
          "SELECT id AS job_id, 'x' AS base FROM t WHERE id = :job_id;\n"                          \
          "UPDATE t SET a = :base, b = :job_id, c = :error WHERE id = :job_id;\n"                  \
          "-- name: renew\n"                                                                       \
          "-- autocommit: yes\n"                                                                   \
          "SELECT 1 AS job_id;\n"                                                                  \
          "SELECT :job_id AS job_id;\n"                                                            \
          "-- name: reap\n"                                                                        \
          "SELECT 1 AS nothere WHERE false;\n"                                                     \
          "SELECT :nothere;\n"                                                                     \
          "-- name: kill_session\n"                                                                \
          "SELECT 1 AS job_id;\n"                                                                  \
          "SELECT 2 AS job_id, 0 AS base;\n"                                                       \
          "SELECT :job_id, :base;\n"

static int run_step(fake *f, qc_step_id step, const qc_params *in, qc_result *out, qc_err *err)
{
    qc_protocol *p = parse_ok(RUN_TEXT, QC_PARAM_DOLLAR);
    int rc = qc_protocol_run(&fake_driver, (qc_conn *)(void *)f, p, step, in, out, err);

    qc_protocol_destroy(p);
    return rc;
}

START_TEST(test_run_single_statement_no_transaction)
{
    fake f = {0};
    qc_params in = {0};
    qc_result out = {0};
    qc_err err = {0};

    qc_params_set(&in, "job_id", "7");
    qc_params_set(&in, "token", "tok");
    ck_assert_int_eq(run_step(&f, QC_STEP_COMPLETE, &in, &out, &err), 0);
    ck_assert_str_eq(f.log, "E");
    ck_assert_int_eq(f.prepare[1], 1);
    ck_assert_str_eq(f.bound[1][0], "7");
    ck_assert_str_eq(f.bound[1][1], "tok");
    ck_assert_str_eq(qc_result_get(&out, 0, "job_id"), "101");
    qc_result_clear(&out);
}
END_TEST

START_TEST(test_run_multi_statement_columns_override_input)
{
    fake f = {0};
    qc_params in = {0};
    qc_result out = {0};
    qc_err err = {0};

    qc_params_set(&in, "job_id", "7");
    qc_params_set(&in, "error", NULL);
    ck_assert_int_eq(run_step(&f, QC_STEP_FAIL, &in, &out, &err), 0);
    ck_assert_str_eq(f.log, "BEEC");
    ck_assert_str_eq(f.bound[1][0], "7");   /* statement 1: job_id from in */
    ck_assert_str_eq(f.bound[2][0], "b1");  /* :base from statement 1 */
    ck_assert_str_eq(f.bound[2][1], "101"); /* :job_id from statement 1 wins over in */
    ck_assert_str_eq(f.bound[2][2], "NULL");
    ck_assert_str_eq(qc_result_get(&out, 0, "job_id"), "102");
    qc_result_clear(&out);
}
END_TEST

START_TEST(test_run_latest_statement_column_wins)
{
    fake f = {0};
    qc_params in = {0};
    qc_result out = {0};
    qc_err err = {0};

    qc_params_set(&in, "job_id", "7");
    ck_assert_int_eq(run_step(&f, QC_STEP_KILL_SESSION, &in, &out, &err), 0);
    ck_assert_str_eq(f.log, "BEEEC");
    ck_assert_str_eq(f.bound[3][0], "102");
    ck_assert_str_eq(f.bound[3][1], "b2");
    qc_result_clear(&out);
}
END_TEST

START_TEST(test_run_autocommit_step_no_begin)
{
    fake f = {0};
    qc_result out = {0};
    qc_err err = {0};

    ck_assert_int_eq(run_step(&f, QC_STEP_RENEW, NULL, &out, &err), 0);
    ck_assert_str_eq(f.log, "EE");
    ck_assert_str_eq(f.bound[2][0], "101");
    qc_result_clear(&out);
}
END_TEST

START_TEST(test_run_db_error_rolls_back_prefixed)
{
    fake f = {0};
    qc_params in = {0};
    qc_result out = {0};
    qc_err err = {0};

    f.fail_at = 2;
    f.fail_code = QC_EDB;
    qc_params_set(&in, "job_id", "7");
    qc_params_set(&in, "error", "e");
    ck_assert_int_eq(run_step(&f, QC_STEP_FAIL, &in, &out, &err), QC_EDB);
    ck_assert_str_eq(f.log, "BEER");
    ck_assert_int_eq(err.code, QC_EDB);
    ck_assert_str_eq(err.msg, "fail: 40P01 deadlock detected");
    ck_assert_str_eq(err.sqlstate, "40P01");
    ck_assert_int_eq(out.nrows, 0);
}
END_TEST

START_TEST(test_run_conn_lost_no_further_calls)
{
    fake f = {0};
    qc_params in = {0};
    qc_result out = {0};
    qc_err err = {0};

    f.fail_at = 2;
    f.fail_code = QC_ECONN;
    qc_params_set(&in, "job_id", "7");
    qc_params_set(&in, "error", "e");
    ck_assert_int_eq(run_step(&f, QC_STEP_FAIL, &in, &out, &err), QC_ECONN);
    ck_assert_str_eq(f.log, "BEE");
    ck_assert_str_eq(err.msg, "fail: 40P01 deadlock detected");
}
END_TEST

START_TEST(test_run_empty_first_result_commits_and_stops)
{
    fake f = {0};
    qc_params in = {0};
    qc_result out = {0};
    qc_err err = {0};

    f.empty_at = 1;
    qc_params_set(&in, "job_id", "7");
    ck_assert_int_eq(run_step(&f, QC_STEP_FAIL, &in, &out, &err), 0);
    ck_assert_str_eq(f.log, "BEC");
    ck_assert_int_eq(out.ncols, 2);
    ck_assert_int_eq(out.nrows, 0);
    ck_assert_int_eq(out.affected, 0);
    qc_result_clear(&out);
}
END_TEST

START_TEST(test_run_missing_value_estate)
{
    fake f = {0};
    qc_result out = {0};
    qc_err err = {0};
    char want[128];

    ck_assert_int_eq(run_step(&f, QC_STEP_REAP, NULL, &out, &err), QC_ESTATE);
    ck_assert_str_eq(f.log, "BER"); /* nothere is not a column of the fake's row */
    snprintf(want, sizeof want,
             "step 'reap' statement 2 (line %d): no value for parameter :nothere",
             VALID_LINES + 10);
    ck_assert_str_eq(err.msg, want);

    memset(&f, 0, sizeof f);
    ck_assert_int_eq(run_step(&f, QC_STEP_COMPLETE, NULL, &out, &err), QC_ESTATE);
    ck_assert_str_eq(f.log, "");
    ck_assert_str_eq(err.msg, "step 'complete' statement 1 (line 17): no value for parameter "
                              ":job_id");
}
END_TEST

START_TEST(test_run_setup_unprepared_others_prepared)
{
    fake f = {0};
    qc_result out = {0};
    qc_err err = {0};

    ck_assert_int_eq(run_step(&f, QC_STEP_SETUP, NULL, &out, &err), 0);
    ck_assert_int_eq(f.prepare[1], 0);
    ck_assert_int_eq(run_step(&f, QC_STEP_ENQUEUE, NULL, &out, &err), 0);
    ck_assert_int_eq(f.prepare[2], 1);
    qc_result_clear(&out);
}
END_TEST

START_TEST(test_run_absent_step_einval)
{
    fake f = {0};
    qc_result out = {0};
    qc_err err = {0};

    ck_assert_int_eq(run_step(&f, QC_STEP_MONITOR, NULL, &out, &err), QC_EINVAL);
    ck_assert_str_eq(f.log, "");
    ck_assert_ptr_nonnull(strstr(err.msg, "monitor"));
}
END_TEST

START_TEST(test_params_set_replaces_and_bounds)
{
    qc_params in = {0};
    char names[QC_MAX_PARAMS + 1][8];
    int i;

    qc_params_set(&in, "job_id", "1");
    qc_params_set(&in, "job_id", "2");
    ck_assert_int_eq(in.n, 1);
    ck_assert_str_eq(in.value[0], "2");
    for (i = 0; i <= QC_MAX_PARAMS; i++) {
        snprintf(names[i], sizeof names[i], "p%d", i);
        qc_params_set(&in, names[i], "v");
    }
    ck_assert_int_eq(in.n, QC_MAX_PARAMS);
}
END_TEST

/* ---- pg_offline ------------------------------------------------------- */

START_TEST(test_pg_open_unreachable_port_econn_no_password)
{
    qc_conn *c = NULL;
    qc_err err = {0};
    int rc =
        qc_driver_pg.open("host=127.0.0.1 port=1 password=sekrit123 connect_timeout=2", &c, &err);

    ck_assert_int_eq(rc, QC_ECONN);
    ck_assert_int_eq(err.code, QC_ECONN);
    ck_assert_ptr_null(c);
    ck_assert_msg(strncmp(err.msg, "cannot connect to 127.0.0.1:1: ", 31) == 0, "got '%s'",
                  err.msg);
    ck_assert(strstr(err.msg, "sekrit123") == NULL);
}
END_TEST

START_TEST(test_pg_open_password_echoed_by_libpq_scrubbed)
{
    qc_conn *c = NULL;
    qc_err err = {0};
    /* Contrived: the password equals the host, which libpq's message names. */
    int rc =
        qc_driver_pg.open("host=127.0.0.1 port=1 password=127.0.0.1 connect_timeout=2", &c, &err);

    ck_assert_int_eq(rc, QC_ECONN);
    ck_assert_msg(strstr(err.msg, "127.0.0.1") == NULL, "leaked: %s", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "***"));
}
END_TEST

START_TEST(test_pg_open_malformed_conninfo_einval_no_password)
{
    qc_conn *c = NULL;
    qc_err err = {0};
    int rc = qc_driver_pg.open("host=127.0.0.1 password='sekrit123", &c, &err);

    ck_assert_int_eq(rc, QC_EINVAL);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(err.msg, "sekrit123") == NULL, "leaked: %s", err.msg);
    /* the string itself is not echoed (a mistyped key would carry its
     * secret past the redaction), only libpq's reason */
    ck_assert_msg(strncmp(err.msg, "invalid connection string: ", 27) == 0, "%s", err.msg);
}
END_TEST

START_TEST(test_pg_open_mistyped_password_key_not_echoed)
{
    qc_conn *c = NULL;
    qc_err err = {0};
    int rc = qc_driver_pg.open("host=127.0.0.1 passwrd=Sekrit42", &c, &err);

    ck_assert_int_eq(rc, QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "Sekrit42") == NULL, "leaked: %s", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "passwrd"));
}
END_TEST

/* ---- pg_live ---------------------------------------------------------- */

static qc_conn *live_open(void)
{
    qc_conn *c = NULL;
    qc_err err = {0};
    int rc = qc_driver_pg.open(getenv("QC_TEST_DSN"), &c, &err);

    ck_assert_msg(rc == 0, "open: %s", err.msg);
    ck_assert(qc_driver_pg.is_ok(c));
    return c;
}

/* Runs sql unprepared (nparams 0) and asserts success. */
static void live_ddl(qc_conn *c, const char *sql)
{
    qc_result r = {0};
    qc_err err = {0};
    int rc = qc_driver_pg.exec(c, 0, 0, sql, 0, NULL, &r, &err);

    ck_assert_msg(rc == 0, "%s: %s", sql, err.msg);
    qc_result_clear(&r);
}

/* Runs a one-parameter query prepared as id and returns cell (0, col). */
static char *live_value(qc_conn *c, int id, const char *sql, const char *param, const char *col)
{
    const char *params[1] = {param};
    qc_result r = {0};
    qc_err err = {0};
    char *v;
    int rc = qc_driver_pg.exec(c, id, 1, sql, param ? 1 : 0, params, &r, &err);

    ck_assert_msg(rc == 0, "%s: %s", sql, err.msg);
    ck_assert_int_eq(r.nrows, 1);
    v = strdup(qc_result_get(&r, 0, col) ? qc_result_get(&r, 0, col) : "NULL");
    qc_result_clear(&r);
    return v;
}

#define LIVE_TEXT                                                                                  \
    "-- engine: postgres\n"                                                                        \
    "-- name: setup\n"                                                                             \
    "CREATE TEMP TABLE qc_live (id int PRIMARY KEY, note text);\n"                                 \
    "-- name: teardown\n"                                                                          \
    "DROP TABLE IF EXISTS qc_live;\n"                                                              \
    "-- name: enqueue\n"                                                                           \
    "INSERT INTO qc_live (id, note) VALUES (:job_id::int, :payload) RETURNING id AS job_id;\n"     \
    "-- name: claim\n"                                                                             \
    "SELECT id AS job_id, 't' AS token, 0 AS lease_until_ms, 0 AS now_ms, 1 AS attempt,\n"         \
    "       id::text AS op_key, note AS payload FROM qc_live WHERE id = :job_id::int;\n"           \
    "-- name: complete\n"                                                                          \
    "UPDATE qc_live SET note = 'done' WHERE id = :job_id::int;\n"                                  \
    "-- name: snapshot\n"                                                                          \
    "SELECT id AS job_id, note AS state, 1 AS attempt, NULL AS token FROM qc_live;\n"              \
    "-- name: renew\n"                                                                             \
    "SELECT 41 AS job_id;\n"                                                                       \
    "SELECT :job_id::int + 1 AS answer;\n"                                                         \
    "-- name: fail\n"                                                                              \
    "SELECT id AS job_id FROM qc_live WHERE id = -1;\n"                                            \
    "INSERT INTO qc_live (id, note) VALUES (:job_id::int, 'must not happen');\n"                   \
    "-- name: reap\n"                                                                              \
    "INSERT INTO qc_live (id, note) VALUES (99, 'rolled back');\n"                                 \
    "SELECT * FROM qc_missing_table;\n"

static qc_protocol *live_protocol(qc_conn *c)
{
    qc_protocol *p = parse_ok(LIVE_TEXT, qc_driver_pg.style);
    qc_result r = {0};
    qc_err err = {0};

    ck_assert_msg(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_SETUP, NULL, &r, &err) == 0,
                  "setup: %s", err.msg);
    qc_result_clear(&r);
    return p;
}

START_TEST(test_pg_open_server_version_names_postgresql)
{
    qc_conn *c = live_open();
    char v[64];

    qc_driver_pg.server_version(c, v, sizeof v);
    ck_assert_msg(strncmp(v, "PostgreSQL ", 11) == 0 && v[11] >= '1' && v[11] <= '9', "got %s", v);
    ck_assert_ptr_null(strchr(v, '('));
    qc_driver_pg.close(c);
    qc_driver_pg.close(NULL);
}
END_TEST

START_TEST(test_pg_exec_prepared_insert_binds_quote_and_null)
{
    qc_conn *c = live_open();
    const char *params[4] = {"1", "it's; -- not sql", "2", NULL};
    qc_result r = {0};
    qc_err err = {0};

    live_ddl(c, "CREATE TEMP TABLE t (id int, s text)");
    ck_assert_int_eq(qc_driver_pg.exec(c, 1, 1,
                                       "INSERT INTO t VALUES ($1, $2), ($3, $4) "
                                       "RETURNING id AS \"Job_ID\", s",
                                       4, params, &r, &err),
                     0);
    ck_assert_int_eq(r.nrows, 2);
    ck_assert_int_eq(r.ncols, 2);
    ck_assert_int_eq(r.affected, 2);
    ck_assert_str_eq(r.cols[0], "job_id");
    ck_assert_str_eq(qc_result_get(&r, 0, "s"), "it's; -- not sql");
    ck_assert_ptr_null(qc_result_get(&r, 1, "s"));
    ck_assert_str_eq(qc_result_get(&r, 1, "job_id"), "2");
    /* Same id again: the prepared statement is reused. */
    params[0] = "3";
    ck_assert_int_eq(qc_driver_pg.exec(c, 1, 1,
                                       "INSERT INTO t VALUES ($1, $2), ($3, $4) "
                                       "RETURNING id AS \"Job_ID\", s",
                                       4, params, &r, &err),
                     0);
    ck_assert_str_eq(qc_result_get(&r, 0, "job_id"), "3");
    qc_result_clear(&r);
    qc_driver_pg.close(c);
}
END_TEST

START_TEST(test_pg_exec_update_reports_affected)
{
    qc_conn *c = live_open();
    qc_result r = {0};
    qc_err err = {0};
    const char *p[1] = {"x"};

    live_ddl(c,
             "CREATE TEMP TABLE t AS SELECT g AS id, 'a'::text AS s FROM generate_series(1, 3) g");
    ck_assert_int_eq(
        qc_driver_pg.exec(c, 2, 1, "UPDATE t SET s = $1 WHERE id <= 2", 1, p, &r, &err), 0);
    ck_assert_int_eq(r.affected, 2);
    ck_assert_int_eq(r.ncols, 0);
    ck_assert_int_eq(r.nrows, 0);
    ck_assert_int_eq(qc_driver_pg.exec(c, 3, 1, "UPDATE t SET s = $1 WHERE false", 1, p, &r, &err),
                     0);
    ck_assert_int_eq(r.affected, 0);
    ck_assert_int_eq(qc_driver_pg.exec(c, 4, 1, "SELECT s FROM t WHERE id = 9", 0, NULL, &r, &err),
                     0);
    ck_assert_int_eq(r.ncols, 1);
    ck_assert_int_eq(r.nrows, 0);
    qc_result_clear(&r);
    qc_driver_pg.close(c);
}
END_TEST

START_TEST(test_pg_exec_missing_table_edb_conn_usable)
{
    qc_conn *c = live_open();
    qc_result r = {0};
    qc_err err = {0};
    char *v;

    ck_assert_int_eq(
        qc_driver_pg.exec(c, 5, 1, "SELECT * FROM qc_no_such_table", 0, NULL, &r, &err), QC_EDB);
    ck_assert_int_eq(err.code, QC_EDB);
    ck_assert_str_eq(err.sqlstate, "42P01");
    ck_assert_msg(strncmp(err.msg, "42P01 ", 6) == 0 && strstr(err.msg, "qc_no_such_table"),
                  "got '%s'", err.msg);
    ck_assert(qc_driver_pg.is_ok(c));
    ck_assert_int_eq(qc_driver_pg.exec(c, 0, 0, "SELEC 1", 0, NULL, &r, &err), QC_EDB);
    ck_assert_str_eq(err.sqlstate, "42601");
    v = live_value(c, 6, "SELECT 1 + 1 AS two", NULL, "two");
    ck_assert_str_eq(v, "2");
    free(v);
    qc_driver_pg.close(c);
}
END_TEST

START_TEST(test_pg_exec_deallocated_statement_reprepared)
{
    qc_conn *c = live_open();
    char *v;

    v = live_value(c, 7, "SELECT $1::int * 2 AS x", "21", "x");
    ck_assert_str_eq(v, "42");
    free(v);
    live_ddl(c, "DEALLOCATE ALL"); /* what a pooler swapping backends looks like */
    v = live_value(c, 7, "SELECT $1::int * 2 AS x", "5", "x");
    ck_assert_str_eq(v, "10");
    free(v);
    /* The same id with different text (another protocol) is not confused. */
    v = live_value(c, 7, "SELECT $1::int * 3 AS x", "5", "x");
    ck_assert_str_eq(v, "15");
    free(v);
    qc_driver_pg.close(c);
}
END_TEST

START_TEST(test_pg_run_later_statement_uses_earlier_column)
{
    qc_conn *c = live_open();
    qc_protocol *p = live_protocol(c);
    qc_params in = {0};
    qc_result r = {0};
    qc_err err = {0};

    qc_params_set(&in, "job_id", "7"); /* overridden by statement 1's column */
    ck_assert_msg(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_RENEW, &in, &r, &err) == 0, "%s",
                  err.msg);
    ck_assert_str_eq(qc_result_get(&r, 0, "answer"), "42");
    qc_params_set(&in, "payload", "O'Reilly");
    ck_assert_int_eq(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_ENQUEUE, &in, &r, &err), 0);
    ck_assert_str_eq(qc_result_get(&r, 0, "job_id"), "7");
    ck_assert_int_eq(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_CLAIM, &in, &r, &err), 0);
    ck_assert_str_eq(qc_result_get(&r, 0, "payload"), "O'Reilly");
    ck_assert_int_eq(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_COMPLETE, &in, &r, &err), 0);
    ck_assert_int_eq(r.affected, 1);
    ck_assert_int_eq(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_TEARDOWN, NULL, &r, &err), 0);
    qc_result_clear(&r);
    qc_protocol_destroy(p);
    qc_driver_pg.close(c);
}
END_TEST

START_TEST(test_pg_run_empty_first_result_ends_step)
{
    qc_conn *c = live_open();
    qc_protocol *p = live_protocol(c);
    qc_params in = {0};
    qc_result r = {0};
    qc_err err = {0};
    char *v;

    qc_params_set(&in, "job_id", "5");
    ck_assert_msg(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_FAIL, &in, &r, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(r.ncols, 1);
    ck_assert_int_eq(r.nrows, 0);
    v = live_value(c, 100, "SELECT count(*) AS n FROM qc_live", NULL, "n");
    ck_assert_str_eq(v, "0");
    free(v);
    /* The step committed: no transaction is left open, so SAVEPOINT is
     * refused (25P01 no_active_sql_transaction). */
    ck_assert_int_eq(qc_driver_pg.exec(c, 0, 0, "SAVEPOINT s", 0, NULL, &r, &err), QC_EDB);
    ck_assert_str_eq(err.sqlstate, "25P01");
    qc_result_clear(&r);
    qc_protocol_destroy(p);
    qc_driver_pg.close(c);
}
END_TEST

START_TEST(test_pg_run_error_rolls_back_transaction)
{
    qc_conn *c = live_open();
    qc_protocol *p = live_protocol(c);
    qc_result r = {0};
    qc_err err = {0};
    char *v;

    ck_assert_int_eq(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_REAP, NULL, &r, &err), QC_EDB);
    ck_assert_str_eq(err.sqlstate, "42P01");
    ck_assert_msg(strncmp(err.msg, "reap: 42P01 ", 12) == 0, "got '%s'", err.msg);
    ck_assert(qc_driver_pg.is_ok(c));
    /* Rolled back, not left aborted: 25P01 (no transaction), not 25P02. */
    ck_assert_int_eq(qc_driver_pg.exec(c, 0, 0, "SAVEPOINT s", 0, NULL, &r, &err), QC_EDB);
    ck_assert_str_eq(err.sqlstate, "25P01");
    v = live_value(c, 102, "SELECT count(*) AS n FROM qc_live WHERE id = 99", NULL, "n");
    ck_assert_str_eq(v, "0");
    free(v);
    qc_protocol_destroy(p);
    qc_driver_pg.close(c);
}
END_TEST

/* Issue 16 on a real server: skip_locked.sql's enqueue of 5 jobs in one
 * pipeline returns each job's id in order, as one-at-a-time enqueues do;
 * a pipeline whose third run fails (a max_attempts that is no integer)
 * reports QC_EDB for run 3, and after the rollback none of its rows is
 * there; monitor_live agrees with monitor on every live count after a
 * claim, a complete and a fail into dead, and has no done column. */
START_TEST(test_pg_run_batch_pipeline_ids_in_order_error_stops)
{
    qc_conn *c = live_open();
    qc_protocol *p = NULL;
    qc_params in[5];
    qc_result rs[5], r = {0}, live = {0};
    qc_err err = {0};
    const char *cols[] = {"ready", "inflight", "expired", "dead", "oldest_ready_age_ms"};
    char *v;

    memset(in, 0, sizeof in);
    memset(rs, 0, sizeof rs);
    ck_assert_int_eq(qc_protocol_load("backends/postgres/skip_locked.sql", QC_PARAM_DOLLAR, &p,
                                      &err),
                     0);
    ck_assert_msg(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_SETUP, NULL, &r, &err) == 0, "%s",
                  err.msg);
    for (int i = 0; i < 5; i++) {
        qc_params_set(&in[i], "payload", "p");
        qc_params_set(&in[i], "group_key", NULL);
        qc_params_set(&in[i], "max_attempts", "1");
        qc_params_set(&in[i], "delay_ms", "0");
    }
    ck_assert_int_eq(qc_driver_pg.begin(c, &err), 0);
    ck_assert_msg(qc_protocol_run_batch(&qc_driver_pg, c, p, QC_STEP_ENQUEUE, in, 5, rs, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(qc_driver_pg.commit(c, &err), 0);
    for (int i = 0; i < 5; i++) {
        char want[8];
        snprintf(want, sizeof want, "%d", i + 1);
        ck_assert_str_eq(qc_result_get(&rs[i], 0, "job_id"), want);
        qc_result_clear(&rs[i]);
    }
    /* one at a time after the pipeline: the next id */
    ck_assert_int_eq(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_ENQUEUE, &in[0], &r, &err), 0);
    ck_assert_str_eq(qc_result_get(&r, 0, "job_id"), "6");
    qc_params_set(&in[2], "max_attempts", "three");
    ck_assert_int_eq(qc_driver_pg.begin(c, &err), 0);
    ck_assert_int_eq(qc_protocol_run_batch(&qc_driver_pg, c, p, QC_STEP_ENQUEUE, in, 5, rs, &err),
                     QC_EDB);
    ck_assert_str_eq(err.sqlstate, "22P02");
    ck_assert_msg(strncmp(err.msg, "enqueue: 22P02 ", 15) == 0, "%s", err.msg);
    ck_assert_int_eq(qc_driver_pg.rollback(c, &err), 0);
    for (int i = 0; i < 5; i++)
        qc_result_clear(&rs[i]);
    ck_assert(qc_driver_pg.is_ok(c));
    v = live_value(c, 900, "SELECT count(*)::text AS n FROM qchaos.jobs", NULL, "n");
    ck_assert_str_eq(v, "6");
    free(v);
    /* one claimed and done, one claimed and failed into dead (max 1) */
    qc_params_set(&in[0], "batch", "1");
    qc_params_set(&in[0], "lease_ms", "60000");
    qc_params_set(&in[0], "worker", "w1.0");
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_CLAIM, &in[0], &r, &err), 0);
        qc_params_set(&in[1], "job_id", qc_result_get(&r, 0, "job_id"));
        qc_params_set(&in[1], "token", qc_result_get(&r, 0, "token"));
        qc_params_set(&in[1], "error", "e");
        qc_result live_claim = {0};
        qc_result_move(&live_claim, &r);
        ck_assert_int_eq(qc_protocol_run(&qc_driver_pg, c, p,
                                         k == 0 ? QC_STEP_COMPLETE : QC_STEP_FAIL, &in[1], &r,
                                         &err),
                         0);
        qc_result_clear(&live_claim);
    }
    ck_assert_int_eq(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_CLAIM, &in[0], &r, &err), 0);
    ck_assert_int_eq(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_MONITOR, NULL, &r, &err), 0);
    ck_assert_int_eq(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_MONITOR_LIVE, NULL, &live, &err),
                     0);
    ck_assert_str_eq(qc_result_get(&r, 0, "ready"), "3");
    ck_assert_str_eq(qc_result_get(&r, 0, "inflight"), "1");
    ck_assert_str_eq(qc_result_get(&r, 0, "dead"), "1");
    ck_assert_str_eq(qc_result_get(&r, 0, "done"), "1");
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        long a = strtol(qc_result_get(&r, 0, cols[i]), NULL, 10);
        long b = strtol(qc_result_get(&live, 0, cols[i]), NULL, 10);
        if (i == 4) /* the oldest ready job's age: read a moment later */
            ck_assert_msg(b >= a && b < a + 5000, "%s: %ld then %ld", cols[i], a, b);
        else
            ck_assert_msg(a == b, "%s: monitor %ld, monitor_live %ld", cols[i], a, b);
    }
    ck_assert_int_lt(qc_result_col(&live, "done"), 0);
    ck_assert_int_eq(qc_protocol_run(&qc_driver_pg, c, p, QC_STEP_TEARDOWN, NULL, &r, &err), 0);
    qc_result_clear(&r);
    /* the schema the setup made goes too, as a run's does (a later test on
     * this server checks that a run leaves none: check_witness) */
    ck_assert_int_eq(qc_driver_pg.exec(c, 901, 0, "DROP SCHEMA IF EXISTS qchaos", 0, NULL, &r, &err),
                     0);
    qc_result_clear(&r);
    qc_result_clear(&live);
    qc_protocol_destroy(p);
    qc_driver_pg.close(c);
}
END_TEST

START_TEST(test_pg_exec_notice_not_printed)
{
    qc_conn *c = live_open();
    char path[] = "/tmp/check_protocol_stderr.XXXXXX", buf[256];
    int fd = mkstemp(path), saved = dup(2);
    ssize_t n;

    ck_assert_int_ge(fd, 0);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_ge(dup2(fd, 2), 0);
    /* Raises NOTICE "table ... does not exist, skipping". */
    live_ddl(c, "DROP TABLE IF EXISTS qc_never_existed");
    qc_driver_pg.close(c);
    dup2(saved, 2);
    close(saved);
    n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    ck_assert_msg(n == 0, "driver printed: %.*s", (int)(n > 0 ? n : 0), buf);
}
END_TEST

/* Polls sql (one parameter, one row, column "v") on c until it yields want
 * or deadline_ms passes; returns whether it did. */
static int poll_until(qc_conn *c, int id, const char *sql, const char *param, const char *want,
                      int deadline_ms)
{
    struct timespec start, now, pause = {0, 20 * 1000 * 1000};
    int ok = 0;

    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        char *v = live_value(c, id, sql, param, "v");
        ok = strcmp(v, want) == 0;
        free(v);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (ok || (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >
                      deadline_ms)
            return ok;
        nanosleep(&pause, NULL);
    }
}

START_TEST(test_pg_exec_terminated_backend_econn)
{
    qc_conn *a = live_open(), *b = live_open();
    qc_result r = {0};
    qc_err err = {0};
    char *pid = live_value(a, 1, "SELECT pg_backend_pid()::text AS pid", NULL, "pid"), *v;

    v = live_value(b, 2, "SELECT pg_terminate_backend($1::int)::text AS v", pid, "v");
    ck_assert_str_eq(v, "true");
    free(v);
    ck_assert(poll_until(b, 3,
                         "SELECT count(*)::text AS v FROM pg_stat_activity WHERE pid = $1::int",
                         pid, "0", 10000));
    ck_assert_int_eq(qc_driver_pg.exec(a, 4, 1, "SELECT 1 AS one", 0, NULL, &r, &err), QC_ECONN);
    ck_assert_int_eq(err.code, QC_ECONN);
    ck_assert_msg(strncmp(err.msg, "connection lost: ", 17) == 0, "got '%s'", err.msg);
    ck_assert(!qc_driver_pg.is_ok(a));
    qc_driver_pg.abort(a); /* on a dead connection: must not crash */
    free(pid);
    qc_driver_pg.close(b);
}
END_TEST

/* issue 17: a notification committed on another session wakes the
 * listener; a terminated listen session is QC_ECONN, not a wake-up. */
START_TEST(test_pg_wait_notify_wakes_then_econn_when_terminated)
{
    qc_conn *a = live_open(), *b = live_open();
    qc_result r = {0};
    qc_err err = {0};
    int count = -1;
    char *pid = live_value(a, 1, "SELECT pg_backend_pid()::text AS pid", NULL, "pid"), *v;

    ck_assert_int_eq(qc_driver_pg.exec(a, 2, 0, "LISTEN qc_unit_chan", 0, NULL, &r, &err), 0);
    qc_result_clear(&r);
    ck_assert_int_eq(qc_driver_pg.wait_notify(a, 50, &count, &err), 0);
    ck_assert_int_eq(count, 0); /* nothing sent yet: the time ran out */
    v = live_value(b, 3, "SELECT pg_notify('qc_unit_chan', '7')::text AS v", NULL, "v");
    free(v);
    for (int i = 0; i < 100 && count == 0; i++)
        ck_assert_int_eq(qc_driver_pg.wait_notify(a, 100, &count, &err), 0);
    ck_assert_int_eq(count, 1);
    v = live_value(b, 4, "SELECT pg_terminate_backend($1::int)::text AS v", pid, "v");
    ck_assert_str_eq(v, "true");
    free(v);
    int rc = 0;
    for (int i = 0; i < 100 && rc == 0; i++)
        rc = qc_driver_pg.wait_notify(a, 100, &count, &err);
    ck_assert_int_eq(rc, QC_ECONN);
    ck_assert_msg(strstr(err.msg, "listen connection lost") != NULL, "got '%s'", err.msg);
    qc_driver_pg.abort(a);
    free(pid);
    qc_driver_pg.close(b);
}
END_TEST

START_TEST(test_pg_abort_drops_connection_rolls_back)
{
    qc_conn *a = live_open(), *b = live_open();
    char table[64], sql[160], *pid, *abandoned;
    qc_result r = {0};
    qc_err err = {0};

    snprintf(table, sizeof table, "qc_abort_%ld", (long)getpid());
    snprintf(sql, sizeof sql, "CREATE TABLE %s (id int)", table);
    live_ddl(b, sql);
    pid = live_value(a, 1, "SELECT pg_backend_pid()::text AS pid", NULL, "pid");
    ck_assert_int_eq(qc_driver_pg.begin(a, &err), 0);
    snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (1)", table);
    ck_assert_int_eq(qc_driver_pg.exec(a, 2, 1, sql, 0, NULL, &r, &err), 0);
    ck_assert_int_eq(r.affected, 1);
    ck_assert(poll_until(b, 3, "SELECT state AS v FROM pg_stat_activity WHERE pid = $1::int", pid,
                         "idle in transaction", 10000));
    /* PostgreSQL counts a session that ends without a Terminate message as
     * abandoned (pg_stat_database.sessions_abandoned, PostgreSQL 14+). */
    abandoned = live_value(b, 6,
                           "SELECT sessions_abandoned::text AS v FROM pg_stat_database "
                           "WHERE datname = current_database() AND $1::text IS NOT NULL",
                           "x", "v");
    qc_driver_pg.abort(a);
    ck_assert_msg(poll_until(b, 4,
                             "SELECT count(*)::text AS v FROM pg_stat_activity WHERE pid = $1::int",
                             pid, "0", 10000),
                  "backend %s still present after abort", pid);
    ck_assert_msg(poll_until(b, 7,
                             "SELECT (sessions_abandoned > $1::bigint)::text AS v "
                             "FROM pg_stat_database WHERE datname = current_database()",
                             abandoned, "true", 10000),
                  "abort() ended the session politely (sessions_abandoned stayed %s)", abandoned);
    free(abandoned);
    snprintf(sql, sizeof sql, "SELECT count(*)::text AS v FROM %s WHERE $1::text IS NOT NULL",
             table);
    ck_assert(poll_until(b, 5, sql, "x", "0", 1000));
    snprintf(sql, sizeof sql, "DROP TABLE %s", table);
    live_ddl(b, sql);
    free(pid);
    qc_result_clear(&r);
    qc_driver_pg.close(b);
}
END_TEST

/* ---- overlays (-- base:) ---------------------------------------------- */

static char ov_dir[64];

/* Writes text to ov_dir/name. */
static void ov_write(const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", ov_dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void ov_setup(void)
{
    snprintf(ov_dir, sizeof ov_dir, "/tmp/check_protocol_ov.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(ov_dir));
    char sub[96];
    snprintf(sub, sizeof sub, "%s/mutants", ov_dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    ov_write("base.sql", "-- tested: the unit tests\n" VALID
                         "-- name: renew\nUPDATE qc_t SET state = state WHERE id = :job_id;\n");
}

static void ov_teardown(void)
{
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", ov_dir);
    ck_assert_int_eq(system(cmd), 0);
}

static qc_protocol *ov_load(const char *name, int want_rc, qc_err *err)
{
    char path[128];
    qc_protocol *p = NULL;
    snprintf(path, sizeof path, "%s/%s", ov_dir, name);
    int rc = qc_protocol_load(path, QC_PARAM_DOLLAR, &p, err);
    ck_assert_msg(rc == want_rc, "load %s: rc %d (want %d): %s", name, rc, want_rc, err->msg);
    return p;
}

/* A FIFO named by "-- base:" (or given as the protocol) is refused at
 * once, naming the line that asked for it, instead of blocking in open. */
START_TEST(test_overlay_base_fifo_refused_without_blocking)
{
    qc_err err = {0};
    char fifo[128];
    snprintf(fifo, sizeof fifo, "%s/pipe.sql", ov_dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ov_write("mutants/m.sql", "-- engine: postgres\n-- base: ../pipe.sql\n");
    ov_load("mutants/m.sql", QC_EINVAL, &err);
    ck_assert_msg(strstr(err.msg, "m.sql:2: base: protocol '") != NULL, "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "is not a regular file (a FIFO)") != NULL, "%s", err.msg);
    memset(&err, 0, sizeof err);
    ov_load("pipe.sql", QC_EINVAL, &err);
    ck_assert_msg(strstr(err.msg, "protocol '") != NULL && strstr(err.msg, "a FIFO") != NULL,
                  "%s", err.msg);
    memset(&err, 0, sizeof err);
    qc_protocol *p = NULL;
    ck_assert_int_eq(qc_protocol_load("/dev/zero", QC_PARAM_DOLLAR, &p, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "a device") != NULL, "%s", err.msg);
}
END_TEST

/* A mutant holds only the step it breaks; every other step, and its file
 * and line for messages, comes from the base (relative to the mutant's
 * folder); statement ids stay unique across the merge. */
START_TEST(test_overlay_replaces_named_steps_keeps_the_rest)
{
    qc_err err = {0};
    ov_write("mutants/m.sql", "-- qchaos MUTANT\n"
                              "-- engine: postgres\n"
                              "-- expect: stale_token_rejected\n"
                              "-- base: ../base.sql\n"
                              "\n"
                              "-- name: complete\n"
                              "UPDATE qc_t SET state = 'done' WHERE id = :job_id;\n");
    qc_protocol *p = ov_load("mutants/m.sql", 0, &err);
    char want[160];
    snprintf(want, sizeof want, "%s/mutants/../base.sql", ov_dir);
    ck_assert_str_eq(p->base, want);
    ck_assert_str_eq(p->expect, "stale_token_rejected");
    ck_assert_str_eq(stmt(p, QC_STEP_COMPLETE, 0)->sql,
                     "UPDATE qc_t SET state = 'done' WHERE id = $1");
    ck_assert_int_eq(p->steps[QC_STEP_COMPLETE].line, 6);
    ck_assert_str_eq(p->steps[QC_STEP_COMPLETE].file, p->path);
    ck_assert_str_eq(stmt(p, QC_STEP_RENEW, 0)->sql,
                     "UPDATE qc_t SET state = state WHERE id = $1");
    ck_assert_str_eq(p->steps[QC_STEP_RENEW].file, want);
    ck_assert_int_eq(p->steps[QC_STEP_RENEW].line, VALID_LINES + 2);
    ck_assert_str_eq(p->tested, "as its base base.sql: the unit tests"); /* from the base */
    ck_assert_int_eq(p->steps[QC_STEP_CLAIM].present, 1);
    int seen[64] = {0};
    for (int s = 0; s < QC_STEP_COUNT; s++)
        for (int i = 0; i < p->steps[s].nstmts; i++) {
            int id = p->steps[s].stmts[i].id;
            ck_assert_int_gt(id, 0);
            ck_assert_int_lt(id, 64);
            ck_assert_msg(!seen[id], "statement id %d twice", id);
            seen[id] = 1;
        }
    qc_protocol_destroy(p);
}
END_TEST

/* The overlay's own errors name its file and line; a base that is
 * missing, of another engine or model, or an overlay cycle, are refused. */
START_TEST(test_overlay_errors_name_the_line)
{
    qc_err err = {0};
    char want[256];

    ov_write("mutants/nobase.sql", "-- engine: postgres\n-- base: ../nope.sql\n");
    ck_assert_ptr_null(ov_load("mutants/nobase.sql", QC_EINVAL, &err));
    snprintf(want, sizeof want, "%s/mutants/nobase.sql:2: base: cannot open protocol", ov_dir);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "got '%s'", err.msg);

    ov_write("mutants/maria.sql", "-- engine: mariadb\n-- base: ../base.sql\n");
    ck_assert_ptr_null(ov_load("mutants/maria.sql", QC_EINVAL, &err));
    ck_assert_msg(strstr(err.msg, "maria.sql:2: engine mariadb, model lease differ from base") !=
                      NULL,
                  "got '%s'", err.msg);

    ov_write("mutants/txn.sql", "-- model: transaction\n-- base: ../base.sql\n");
    ck_assert_ptr_null(ov_load("mutants/txn.sql", QC_EINVAL, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "model transaction differ from base"));

    ov_write("a.sql", "-- base: b.sql\n");
    ov_write("b.sql", "-- base: a.sql\n");
    ck_assert_ptr_null(ov_load("a.sql", QC_EINVAL, &err));
    ck_assert_msg(strstr(err.msg, "more than 4 overlays deep") != NULL, "got '%s'", err.msg);

    ov_write("mutants/twice.sql", "-- base: ../base.sql\n-- base: ../bad.sql\n");
    ck_assert_ptr_null(ov_load("mutants/twice.sql", QC_EINVAL, &err));
    ck_assert_msg(strstr(err.msg, "twice.sql:2: a second '-- base:' (first at line 1)") != NULL,
                  "got '%s'", err.msg);
    ov_write("mutants/empty.sql", "-- base:\n");
    ck_assert_ptr_null(ov_load("mutants/empty.sql", QC_EINVAL, &err));
    ck_assert_msg(strstr(err.msg, "empty.sql:1: '-- base:' needs a protocol file") != NULL,
                  "got '%s'", err.msg);
    /* a value cut to a buffer would name another file: refused */
    char longline[5000];
    int ll = snprintf(longline, sizeof longline, "-- base: ");
    memset(longline + ll, 'x', 4200);
    snprintf(longline + ll + 4200, sizeof longline - (size_t)ll - 4200, ".sql\n");
    ov_write("mutants/long.sql", longline);
    ck_assert_ptr_null(ov_load("mutants/long.sql", QC_EINVAL, &err));
    ck_assert_msg(strstr(err.msg, "long.sql:1: value of 'base' too long") != NULL, "got '%s'",
                  err.msg);

    ov_write("mutants/latin1.sql", "-- tested: caf\xe9\n-- base: ../base.sql\n");
    ck_assert_ptr_null(ov_load("mutants/latin1.sql", QC_EINVAL, &err));
    ck_assert_msg(strstr(err.msg, "latin1.sql:1: value of 'tested' is not UTF-8") != NULL,
                  "got '%s'", err.msg);

    /* an error inside the base names the base's file and line */
    ov_write("bad.sql", VALID "-- name: renew\nSELECT :nonsense;\n");
    ov_write("mutants/onbad.sql", "-- base: ../bad.sql\n");
    ck_assert_ptr_null(ov_load("mutants/onbad.sql", QC_EINVAL, &err));
    snprintf(want, sizeof want, "%s/mutants/../bad.sql:%d:", ov_dir, VALID_LINES + 2);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "got '%s'", err.msg);
}
END_TEST

/* Server messages that echo the password lose it, every occurrence, and
 * the buffer stays terminated even when "***" is longer than the secret. */
START_TEST(test_scrub_secret_every_occurrence_bounded)
{
    char buf[64];
    snprintf(buf, sizeof buf, "auth failed for s3cret (s3cret)");
    qc_scrub_secret(buf, sizeof buf, "s3cret");
    ck_assert_str_eq(buf, "auth failed for *** (***)");
    snprintf(buf, sizeof buf, "no secret here");
    qc_scrub_secret(buf, sizeof buf, "");
    qc_scrub_secret(buf, sizeof buf, NULL);
    ck_assert_str_eq(buf, "no secret here");
    char tight[8];
    snprintf(tight, sizeof tight, "ab:xyz");
    qc_scrub_secret(tight, sizeof tight, "b");
    ck_assert_str_eq(tight, "a***:xy");
}
END_TEST

/* ---- suite ------------------------------------------------------------ */

static TCase *tcase(Suite *s, const char *name, int timeout)
{
    TCase *tc = tcase_create(name);

    tcase_set_timeout(tc, timeout);
    suite_add_tcase(s, tc);
    return tc;
}

static Suite *protocol_suite(int live)
{
    Suite *s = suite_create("protocol");
    TCase *tc;

    tc = tcase(s, "err", 5);
    tcase_add_test(tc, test_err_set_formats_and_returns_code);
    tcase_add_test(tc, test_err_prefix_prepends_context_keeps_sqlstate);
    tcase_add_test(tc, test_err_prefix_long_message_stays_terminated);
    tcase_add_test(tc, test_err_exit_code_maps_documented_values);

    tc = tcase(s, "redact", 5);
    tcase_add_test(tc, test_redact_keyvalue_password_hidden);
    tcase_add_test(tc, test_redact_quoted_value_hidden);
    tcase_add_test(tc, test_redact_uri_userinfo_and_query_hidden);
    tcase_add_test(tc, test_redact_uri_without_password_unchanged);
    tcase_add_test(tc, test_redact_odbc_pwd_forms_hidden);
    tcase_add_test(tc, test_redact_small_buffer_terminated_no_leak);
    tcase_add_test(tc, test_scrub_secret_every_occurrence_bounded);

    tc = tcase(s, "result", 5);
    tcase_add_test(tc, test_result_get_by_name_case_insensitive);
    tcase_add_test(tc, test_result_move_and_clear_zero);

    tc = tcase(s, "split", 5);
    tcase_add_test(tc, test_split_quotes_comments_semicolons_kept);
    tcase_add_test(tc, test_split_casts_and_quoted_colons_untouched);
    tcase_add_test(tc, test_split_dollar_style_numbers_distinct_names);
    tcase_add_test(tc, test_split_qmark_style_repeats_names);
    tcase_add_test(tc, test_split_empty_statements_dropped);
    tcase_add_test(tc, test_split_postgres_block_comments_nest);
    tcase_add_test(tc, test_split_name_inside_dollar_quote_is_text);
    tcase_add_test(tc, test_split_mariadb_backslash_strings);
    tcase_add_test(tc, test_split_header_and_options_parsed);
    tcase_add_test(tc, test_split_statement_ids_unique_positive);
    tcase_add_test(tc, test_split_later_statement_uses_earlier_column);
    tcase_add_test(tc, test_load_file_reads_and_missing_is_eio);
    tcase_add_test(tc, test_step_name_known_and_out_of_range);
    tcase_add_test(tc, test_columns_detected_per_step);
    tcase_add_test(tc, test_reads_names_parameters_of_any_statement);
    tcase_add_test(tc, test_overlay_fencing_on_worker_loads);

    tc = tcase(s, "load_errors", 5);
    tcase_add_test(tc, test_load_unknown_step_einval);
    tcase_add_test(tc, test_load_duplicate_step_einval);
    tcase_add_test(tc, test_load_header_comment_word_colon_is_comment);
    tcase_add_test(tc, test_load_header_key_typo_einval_did_you_mean);
    tcase_add_test(tc, test_load_bad_engine_and_model_einval);
    tcase_add_test(tc, test_load_missing_required_step_einval);
    tcase_add_test(tc, test_load_missing_required_column_einval);
    tcase_add_test(tc, test_load_dedup_step_checked);
    tcase_add_test(tc, test_load_unknown_parameter_einval);
    tcase_add_test(tc, test_load_setup_with_parameter_einval);
    tcase_add_test(tc, test_split_no_keeps_sqlserver_step_one_batch);
    tcase_add_test(tc, test_split_no_refused_outside_sqlserver_einval);
    tcase_add_test(tc, test_load_listen_refused_outside_postgres_einval);
    tcase_add_test(tc, test_load_unterminated_quote_einval);
    tcase_add_test(tc, test_load_bad_autocommit_value_einval);
    tcase_add_test(tc, test_load_unknown_option_einval);
    tcase_add_test(tc, test_load_sql_outside_step_einval);
    tcase_add_test(tc, test_load_empty_step_einval);

    tc = tcase(s, "overlay", 5);
    tcase_add_checked_fixture(tc, ov_setup, ov_teardown);
    tcase_add_test(tc, test_overlay_replaces_named_steps_keeps_the_rest);
    tcase_add_test(tc, test_overlay_errors_name_the_line);
    tcase_add_test(tc, test_overlay_base_fifo_refused_without_blocking);

    tc = tcase(s, "run", 5);
    tcase_add_test(tc, test_run_single_statement_no_transaction);
    tcase_add_test(tc, test_run_multi_statement_columns_override_input);
    tcase_add_test(tc, test_run_latest_statement_column_wins);
    tcase_add_test(tc, test_run_autocommit_step_no_begin);
    tcase_add_test(tc, test_run_db_error_rolls_back_prefixed);
    tcase_add_test(tc, test_run_conn_lost_no_further_calls);
    tcase_add_test(tc, test_run_empty_first_result_commits_and_stops);
    tcase_add_test(tc, test_run_missing_value_estate);
    tcase_add_test(tc, test_run_setup_unprepared_others_prepared);
    tcase_add_test(tc, test_run_absent_step_einval);
    tcase_add_test(tc, test_params_set_replaces_and_bounds);

    tc = tcase(s, "pg_offline", 15);
    tcase_add_test(tc, test_pg_open_unreachable_port_econn_no_password);
    tcase_add_test(tc, test_pg_open_password_echoed_by_libpq_scrubbed);
    tcase_add_test(tc, test_pg_open_malformed_conninfo_einval_no_password);
    tcase_add_test(tc, test_pg_open_mistyped_password_key_not_echoed);

    if (live) {
        tc = tcase(s, "pg_live", 30);
        tcase_add_test(tc, test_pg_open_server_version_names_postgresql);
        tcase_add_test(tc, test_pg_exec_prepared_insert_binds_quote_and_null);
        tcase_add_test(tc, test_pg_exec_update_reports_affected);
        tcase_add_test(tc, test_pg_exec_missing_table_edb_conn_usable);
        tcase_add_test(tc, test_pg_exec_deallocated_statement_reprepared);
        tcase_add_test(tc, test_pg_exec_notice_not_printed);
        tcase_add_test(tc, test_pg_run_later_statement_uses_earlier_column);
        tcase_add_test(tc, test_pg_run_empty_first_result_ends_step);
        tcase_add_test(tc, test_pg_run_error_rolls_back_transaction);
        tcase_add_test(tc, test_pg_run_batch_pipeline_ids_in_order_error_stops);
        tcase_add_test(tc, test_pg_exec_terminated_backend_econn);
        tcase_add_test(tc, test_pg_abort_drops_connection_rolls_back);
        tcase_add_test(tc, test_pg_wait_notify_wakes_then_econn_when_terminated);
    }
    return s;
}

int main(void)
{
    const char *dsn = getenv("QC_TEST_DSN");
    int live = dsn != NULL && *dsn != '\0';
    SRunner *sr;
    int failed;

    if (!live)
        fprintf(stderr, "check_protocol: QC_TEST_DSN unset, skipping live PostgreSQL tests\n");
    sr = srunner_create(protocol_suite(live));
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
