/*
 * check_proxy.c - the built-in loopback proxy (harness/proxy.h) against the
 * real PostgreSQL of QC_TEST_DSN (tests/run.sh starts one): bytes forwarded
 * intact both ways, latency added, an RST seen by the client, a half-open
 * connection seen as a timeout (and as silence without one), the PG-aware
 * lost ack after COMMIT and after an autocommit statement (the server has
 * the row, the client never got the answer), a partition refusing
 * connections for its window; and the [network] keys' errors.  No mocks:
 * libpq talks to the server through the proxy.
 */
#include <check.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/clock.h"
#include "../harness/proxy.h"
#include "../harness/scenario.h"

static const char *dsn;

static void quiet(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
}

static PGconn *connect_to(const char *conninfo)
{
    PGconn *c = PQconnectdb(conninfo);
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "cannot connect: %s", PQerrorMessage(c));
    PQsetNoticeProcessor(c, quiet, NULL);
    return c;
}

static void exec_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    ck_assert_msg(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK, "%s: %s", sql,
                  PQresultErrorMessage(r));
    PQclear(r);
}

/* First cell of sql's result, into buf (malloc'd by the caller). */
static char *value_of(PGconn *c, const char *sql, int np, const char *const *params)
{
    PGresult *r = PQexecParams(c, sql, np, NULL, params, NULL, NULL, 0);
    ck_assert_msg(PQresultStatus(r) == PGRES_TUPLES_OK, "%s: %s", sql, PQresultErrorMessage(r));
    char *v = strdup(PQgetvalue(r, 0, 0));
    PQclear(r);
    return v;
}

static qc_proxy *start(const qc_network *cfg, int workers)
{
    qc_proxy *p = NULL;
    qc_err err = {0};
    int rc = qc_proxy_create(cfg, dsn, workers, 1, NULL, qc_clock_ms(), NULL, &p, &err);
    ck_assert_msg(rc == 0, "qc_proxy_create: %s", err.msg);
    return p;
}

START_TEST(test_proxy_forwarding_bytes_arrive_intact)
{
    qc_network cfg = {.proxy = 1};
    qc_proxy *p = start(&cfg, 2);
    PGconn *direct = connect_to(dsn), *via = connect_to(qc_proxy_dsn(p, 1));
    /* 1 MB up: the server's md5 of what it received */
    size_t n = 1 << 20;
    char *big = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('a' + (i * 7919) % 26);
    big[n] = 0;
    const char *params[1] = {big};
    char *a = value_of(direct, "SELECT md5($1)", 1, params);
    char *b = value_of(via, "SELECT md5($1)", 1, params);
    ck_assert_str_eq(a, b);
    /* ~1 MB down */
    const char *q =
        "SELECT string_agg(md5(i::text), '' ORDER BY i) FROM generate_series(1, 32768) i";
    char *c = value_of(direct, q, 0, NULL), *d = value_of(via, q, 0, NULL);
    ck_assert_uint_eq(strlen(d), 32768u * 32u);
    ck_assert_int_eq(strcmp(c, d), 0);
    qc_proxy_stats st;
    /* the proxy thread counts a chunk after its send() returned, so the
     * client can hold the last bytes before they are counted (CI of
     * f2bdec2: 1,013,248 of 1,048,576): wait for the counters, at most 2 s */
    for (int tries = 0; tries < 200; tries++) {
        qc_proxy_get_stats(p, &st);
        if (st.bytes_up >= (long long)n && st.bytes_down >= 32768LL * 32)
            break;
        usleep(10000);
    }
    ck_assert_int_ge(st.bytes_up, (long long)n);
    ck_assert_int_ge(st.bytes_down, 32768LL * 32);
    ck_assert_int_eq(st.connections, 1);
    free(a), free(b), free(c), free(d), free(big);
    PQfinish(via);
    PQfinish(direct);
    qc_proxy_destroy(p);
}
END_TEST

START_TEST(test_proxy_latency_round_trip_at_least_twice_latency)
{
    qc_network cfg = {.proxy = 1, .latency_ms = 100};
    qc_proxy *p = start(&cfg, 1);
    PGconn *via = connect_to(qc_proxy_dsn(p, 0));
    for (int i = 0; i < 3; i++) {
        double t0 = qc_clock_ms();
        exec_ok(via, "SELECT 1");
        double ms = qc_clock_ms() - t0;
        /* a lower bound only: each way holds every chunk 100 ms */
        ck_assert_msg(ms >= 199.0, "round trip %.1f ms with 100 ms each way", ms);
    }
    PQfinish(via);
    qc_proxy_destroy(p);
}
END_TEST

START_TEST(test_proxy_reset_client_sees_reset_server_never_gets_request)
{
    qc_network cfg = {.proxy = 1};
    qc_proxy *p = start(&cfg, 1);
    PGconn *direct = connect_to(dsn), *via = connect_to(qc_proxy_dsn(p, 0));
    exec_ok(direct, "DROP TABLE IF EXISTS qc_proxy_reset; CREATE TABLE qc_proxy_reset (x int)");
    qc_proxy_arm(p, 0, QC_PROXY_ARM_RESET);
    PGresult *r = PQexec(via, "INSERT INTO qc_proxy_reset VALUES (1)");
    ck_assert_int_eq(PQresultStatus(r), PGRES_FATAL_ERROR);
    PQclear(r);
    ck_assert_int_eq(PQstatus(via), CONNECTION_BAD);
    char tag[32];
    ck_assert_int_eq(qc_proxy_take_fired(p, 0, tag, sizeof tag), 1);
    ck_assert_str_eq(tag, "reset");
    char *cnt = value_of(direct, "SELECT count(*) FROM qc_proxy_reset", 0, NULL);
    ck_assert_str_eq(cnt, "0");
    free(cnt);
    /* the next connection works */
    PQfinish(via);
    via = connect_to(qc_proxy_dsn(p, 0));
    exec_ok(via, "SELECT 1");
    exec_ok(direct, "DROP TABLE qc_proxy_reset");
    PQfinish(via);
    PQfinish(direct);
    qc_proxy_destroy(p);
}
END_TEST

START_TEST(test_proxy_half_open_with_tcp_user_timeout_fails_after_timeout)
{
    qc_network cfg = {.proxy = 1, .tcp_user_timeout_ms = 300};
    qc_proxy *p = start(&cfg, 1);
    PGconn *via = connect_to(qc_proxy_dsn(p, 0));
    qc_proxy_arm(p, 0, QC_PROXY_ARM_HALF_OPEN);
    double t0 = qc_clock_ms();
    PGresult *r = PQexec(via, "SELECT 1");
    double ms = qc_clock_ms() - t0;
    ck_assert_int_eq(PQresultStatus(r), PGRES_FATAL_ERROR);
    PQclear(r);
    ck_assert_int_eq(PQstatus(via), CONNECTION_BAD);
    ck_assert_msg(ms >= 299.0, "the half-open connection failed after %.1f ms, before 300", ms);
    PQfinish(via);
    qc_proxy_destroy(p);
}
END_TEST

START_TEST(test_proxy_half_open_without_timeout_stays_silent_and_open)
{
    qc_network cfg = {.proxy = 1};
    qc_proxy *p = start(&cfg, 1);
    PGconn *via = connect_to(qc_proxy_dsn(p, 0));
    qc_proxy_arm(p, 0, QC_PROXY_ARM_HALF_OPEN);
    ck_assert_int_eq(PQsendQuery(via, "SELECT 1"), 1);
    ck_assert_int_eq(PQflush(via), 0);
    struct pollfd pf = {.fd = PQsocket(via), .events = POLLIN};
    /* nothing comes back, not even an EOF: the socket stays open and silent */
    ck_assert_int_eq(poll(&pf, 1, 700), 0);
    ck_assert_int_eq(qc_proxy_take_fired(p, 0, NULL, 0), 1);
    /* destroying the proxy resets it: now the client learns */
    qc_proxy_destroy(p);
    ck_assert_int_eq(poll(&pf, 1, 5000), 1);
    PGresult *r = PQgetResult(via);
    ck_assert(r == NULL || PQresultStatus(r) == PGRES_FATAL_ERROR);
    PQclear(r);
    PQfinish(via);
}
END_TEST

START_TEST(test_proxy_lost_ack_after_commit_server_has_row_client_no_answer)
{
    qc_network cfg = {.proxy = 1};
    qc_proxy *p = start(&cfg, 1);
    PGconn *direct = connect_to(dsn), *via = connect_to(qc_proxy_dsn(p, 0));
    exec_ok(direct, "DROP TABLE IF EXISTS qc_proxy_la; CREATE TABLE qc_proxy_la (x int)");
    /* an explicit transaction: BEGIN and INSERT answer ReadyForQuery 'T' and
     * pass; the COMMIT's answer is dropped */
    exec_ok(via, "BEGIN");
    qc_proxy_arm(p, 0, QC_PROXY_ARM_LOST_ACK);
    exec_ok(via, "INSERT INTO qc_proxy_la VALUES (1)");
    PGresult *r = PQexec(via, "COMMIT");
    ck_assert_int_eq(PQresultStatus(r), PGRES_FATAL_ERROR);
    PQclear(r);
    ck_assert_int_eq(PQstatus(via), CONNECTION_BAD);
    char tag[32];
    ck_assert_int_eq(qc_proxy_take_fired(p, 0, tag, sizeof tag), 1);
    ck_assert_str_eq(tag, "COMMIT");
    char *cnt = value_of(direct, "SELECT count(*) FROM qc_proxy_la", 0, NULL);
    ck_assert_str_eq(cnt, "1");
    free(cnt);
    PQfinish(via);
    /* an autocommit statement (extended protocol, prepared first as pg.c
     * does): the answer that ends it is dropped */
    via = connect_to(qc_proxy_dsn(p, 0));
    PGresult *pr = PQprepare(via, "ins", "INSERT INTO qc_proxy_la VALUES ($1::int)", 0, NULL);
    ck_assert_int_eq(PQresultStatus(pr), PGRES_COMMAND_OK);
    PQclear(pr);
    qc_proxy_arm(p, 0, QC_PROXY_ARM_LOST_ACK);
    const char *v[1] = {"2"};
    r = PQexecPrepared(via, "ins", 1, v, NULL, NULL, 0);
    ck_assert_int_eq(PQresultStatus(r), PGRES_FATAL_ERROR);
    PQclear(r);
    ck_assert_int_eq(qc_proxy_take_fired(p, 0, tag, sizeof tag), 1);
    ck_assert_str_eq(tag, "INSERT 0 1");
    cnt = value_of(direct, "SELECT count(*) FROM qc_proxy_la WHERE x = 2", 0, NULL);
    ck_assert_str_eq(cnt, "1");
    free(cnt);
    PQfinish(via);
    /* a statement that fails: its error is an answer, passed on; no fault */
    via = connect_to(qc_proxy_dsn(p, 0));
    qc_proxy_arm(p, 0, QC_PROXY_ARM_LOST_ACK);
    r = PQexec(via, "SELECT 1 / 0");
    ck_assert_int_eq(PQresultStatus(r), PGRES_FATAL_ERROR);
    ck_assert_str_eq(PQresultErrorField(r, PG_DIAG_SQLSTATE), "22012");
    PQclear(r);
    ck_assert_int_eq(PQstatus(via), CONNECTION_OK);
    ck_assert_int_eq(qc_proxy_take_fired(p, 0, NULL, 0), 0);
    exec_ok(via, "SELECT 1"); /* disarmed: answers pass */
    exec_ok(direct, "DROP TABLE qc_proxy_la");
    PQfinish(via);
    PQfinish(direct);
    qc_proxy_destroy(p);
}
END_TEST

START_TEST(test_proxy_partition_refuse_refuses_only_in_window_and_target)
{
    qc_network cfg = {
        .proxy = 1, .partition_at_ms = 0, .partition_ms = 1500, .partition_refuse = 1};
    snprintf(cfg.partition, sizeof cfg.partition, "w1");
    qc_proxy *p = start(&cfg, 2);
    double t0 = qc_clock_ms();
    qc_clock_sleep_ms(50);                       /* the window opens at the proxy's first loop */
    PGconn *w0 = connect_to(qc_proxy_dsn(p, 0)); /* not partitioned */
    exec_ok(w0, "SELECT 1");
    PGconn *w1 = PQconnectdb(qc_proxy_dsn(p, 1));
    int refused = PQstatus(w1) != CONNECTION_OK;
    double at = qc_clock_ms() - t0;
    PQfinish(w1);
    if (at < 1400) /* a loaded machine may have passed the window already */
        ck_assert_msg(refused, "w1 connected %.0f ms into its 1500 ms partition", at);
    /* after the window: wait for the condition, with a deadline */
    int ok = 0;
    while (!ok && qc_clock_ms() - t0 < 10000) {
        w1 = PQconnectdb(qc_proxy_dsn(p, 1));
        ok = PQstatus(w1) == CONNECTION_OK;
        PQfinish(w1);
        if (!ok)
            qc_clock_sleep_ms(100);
    }
    ck_assert_msg(ok, "w1 could not connect after its partition");
    ck_assert_msg(qc_clock_ms() - t0 >= 1500 || !refused, "connected inside the window");
    PQfinish(w0);
    qc_proxy_destroy(p);
}
END_TEST

/* ---- [network] keys (no server needed) ---- */

static int load_text(const char *text, qc_err *err)
{
    char path[] = "/tmp/qc_proxy_scn.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    qc_scenario s;
    qc_scenario_defaults(&s);
    int rc = qc_scenario_load(&s, path, err);
    if (rc == 0)
        rc = qc_scenario_validate(&s, err);
    unlink(path);
    return rc;
}

START_TEST(test_network_bad_value_names_line_and_expected)
{
    qc_err err = {0};
    ck_assert_int_eq(load_text("[workload]\nworkers = 2\n[network]\nproxy = maybe\n", &err),
                     QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":4") && strstr(err.msg, "proxy must be on or off"), "%s",
                  err.msg);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(load_text("[network]\nproxy = on\nlatency_ms = -3\n", &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "latency_ms must be a whole number"), "%s", err.msg);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(load_text("[network]\nproxy = on\nlatncy_ms = 3\n", &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "unknown key 'latncy_ms' in [network]"), "%s", err.msg);
}
END_TEST

START_TEST(test_network_fault_without_proxy_refused)
{
    qc_err err = {0};
    ck_assert_int_eq(load_text("[faults]\nhalf_open = 3\n", &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "need [network] proxy = on"), "%s", err.msg);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(load_text("[workload]\nworkers = 2\n[network]\nproxy = on\npartition = w2\n"
                               "partition_ms = 100\n",
                               &err),
                     QC_EINVAL);
    ck_assert_msg(strstr(err.msg, "worker 'w2' does not exist"), "%s", err.msg);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(load_text("[workload]\nworkers = 2\n[network]\nproxy = on\nlatency_ms = 5\n"
                               "[faults]\nreset = 2\nhalf_open = 1%\n",
                               &err),
                     0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("proxy");
    TCase *cfg = tcase_create("network_keys");
    tcase_set_timeout(cfg, 30);
    tcase_add_test(cfg, test_network_bad_value_names_line_and_expected);
    tcase_add_test(cfg, test_network_fault_without_proxy_refused);
    suite_add_tcase(s, cfg);
    if (dsn) {
        TCase *live = tcase_create("proxy_pg");
        tcase_set_timeout(live, 60);
        tcase_add_test(live, test_proxy_forwarding_bytes_arrive_intact);
        tcase_add_test(live, test_proxy_latency_round_trip_at_least_twice_latency);
        tcase_add_test(live, test_proxy_reset_client_sees_reset_server_never_gets_request);
        tcase_add_test(live, test_proxy_half_open_with_tcp_user_timeout_fails_after_timeout);
        tcase_add_test(live, test_proxy_half_open_without_timeout_stays_silent_and_open);
        tcase_add_test(live, test_proxy_lost_ack_after_commit_server_has_row_client_no_answer);
        tcase_add_test(live, test_proxy_partition_refuse_refuses_only_in_window_and_target);
        suite_add_tcase(s, live);
    }
    return s;
}

int main(void)
{
    dsn = getenv("QC_TEST_DSN");
    if (!dsn || !*dsn) {
        fprintf(stderr, "check_proxy: QC_TEST_DSN unset: skipping the live PostgreSQL tests\n");
        dsn = NULL;
    }
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
