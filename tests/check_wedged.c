/*
 * check_wedged.c - worker_progress (harness/check_wedged.c, issue 17, C20)
 * on hand-written ledgers: each rule on a ledger that violates it and on
 * ones that do not, including the innocent explanations written next to
 * the rules (planned faults, statement timeouts, the transaction model's
 * claim held through the work, a request in flight, another session's id).
 */
#include <stdio.h>

#include "ledger_fixture.h"

#define HEADER "{'type':'header','model':'lease','lease_ms':1000,'max_wedged_ms':4000}\n"
#define HEADER_TXN "{'type':'header','model':'transaction','lease_ms':1000,'max_wedged_ms':4000}\n"

/* worker 0 incarnation 0: an OK claim, then failing claims every 1.5 s for
 * 6 s (the C20 mutant: 25P02 after the first error). */
#define STREAK                                                                                     \
    "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"                    \
    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':0}\n"              \
    "{'seq':3,'t':100,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2}\n"                  \
    "{'seq':4,'t':101,'type':'fail','op':'claim','worker':0,'inc':0,'req':2,"                     \
    "'error':'claim: 55P03 could not obtain lock'}\n"                                              \
    "{'seq':5,'t':1600,'type':'invoke','op':'claim','worker':0,'inc':0,'req':3}\n"                 \
    "{'seq':6,'t':1601,'type':'fail','op':'claim','worker':0,'inc':0,'req':3,"                    \
    "'error':'claim: 25P02 current transaction is aborted'}\n"                                     \
    "{'seq':7,'t':3100,'type':'invoke','op':'claim','worker':0,'inc':0,'req':4}\n"                 \
    "{'seq':8,'t':3101,'type':'fail','op':'claim','worker':0,'inc':0,'req':4,"                    \
    "'error':'claim: 25P02 current transaction is aborted'}\n"                                     \
    "{'seq':9,'t':4600,'type':'invoke','op':'claim','worker':0,'inc':0,'req':5}\n"                 \
    "{'seq':10,'t':4601,'type':'fail','op':'claim','worker':0,'inc':0,'req':5,"                   \
    "'error':'claim: 25P02 current transaction is aborted'}\n"

START_TEST(test_worker_progress_failing_streak_fail)
{
    qc_check c;

    run(qc_check_worker_progress, HEADER STREAK, &c);
    ck_assert_str_eq(c.name, "worker_progress");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, QC_NO_JOB, 3, 4, 10);
    ck_assert_ptr_nonnull(strstr(c.v[0].msg, "worker 0 (incarnation 0): every request failed "
                                             "for 4501 ms (4 in a row, bound 4000 ms)"));
    free(c.v);
}
END_TEST

/* The same failures with an OK answer among them: no streak is long. */
START_TEST(test_worker_progress_streak_broken_by_ok_passes)
{
    qc_check c;

    run(qc_check_worker_progress,
        HEADER STREAK
        "{'seq':11,'t':4700,'type':'invoke','op':'claim','worker':0,'inc':0,'req':6}\n"
        "{'seq':12,'t':4701,'type':'ok','op':'claim','worker':0,'inc':0,'req':6,'rows':0}\n",
        &c);
    /* still FAIL: the streak before the OK lasted 4501 ms */
    ck_assert_int_eq(c.verdict, QC_FAIL);
    free(c.v);
    run(qc_check_worker_progress,
        HEADER
        "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
        "{'seq':2,'t':1,'type':'fail','op':'claim','worker':0,'inc':0,'req':1,'error':'x'}\n"
        "{'seq':3,'t':2000,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2}\n"
        "{'seq':4,'t':2001,'type':'fail','op':'claim','worker':0,'inc':0,'req':2,'error':'x'}\n"
        "{'seq':5,'t':3000,'type':'invoke','op':'claim','worker':0,'inc':0,'req':3}\n"
        "{'seq':6,'t':3001,'type':'ok','op':'claim','worker':0,'inc':0,'req':3,'rows':0}\n"
        "{'seq':7,'t':4000,'type':'invoke','op':'claim','worker':0,'inc':0,'req':4}\n"
        "{'seq':8,'t':4001,'type':'fail','op':'claim','worker':0,'inc':0,'req':4,'error':'x'}\n"
        "{'seq':9,'t':6000,'type':'invoke','op':'claim','worker':0,'inc':0,'req':5}\n"
        "{'seq':10,'t':6001,'type':'fail','op':'claim','worker':0,'inc':0,'req':5,'error':'x'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* A server pause (a planned fault with a window) overlapping the streak:
 * only failures sent after the window plus the bound count. */
START_TEST(test_worker_progress_streak_in_fault_window_passes)
{
    qc_check c;

    run(qc_check_worker_progress,
        HEADER "{'seq':0,'t':50,'type':'fault','fault':'server_pause','worker':-1,"
               "'until_t':2500}\n" STREAK,
        &c);
    /* the window plus the bound (50 .. 6500 ms) covers all but 50 ms of
     * the incarnation (0 .. 4601): no streak could outlast the bound
     * there, so no opportunity (decision 1142; it said PASS) */
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
    /* the same incarnation working on to 11,000 ms: 4,500 ms past the cut,
     * longer than the bound: judged, and it passes */
    run(qc_check_worker_progress,
        HEADER "{'seq':0,'t':50,'type':'fault','fault':'server_pause','worker':-1,"
               "'until_t':2500}\n" STREAK
               "{'seq':11,'t':10999,'type':'invoke','op':'claim','worker':0,'inc':0,'req':6}\n"
               "{'seq':12,'t':11000,'type':'ok','op':'claim','worker':0,'inc':0,'req':6,"
               "'rows':0}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* Statement timeouts (57014) are the server's doing: they end a streak. */
START_TEST(test_worker_progress_statement_timeouts_pass)
{
    qc_check c;
    char *text = strdup(HEADER STREAK);

    ck_assert_ptr_nonnull(text);
    for (char *p = text; (p = strstr(p, "25P02 current transaction is aborted")) != NULL;)
        memcpy(p, "57014 canceling statement due to s", 34);
    run(qc_check_worker_progress, text, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
    free(text);
}
END_TEST

/* Incarnations shorter than the bound, and no session sample: no
 * opportunity. */
START_TEST(test_worker_progress_no_opportunity_inconclusive)
{
    qc_check c;

    run(qc_check_worker_progress,
        HEADER
        "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
        "{'seq':2,'t':1,'type':'fail','op':'claim','worker':0,'inc':0,'req':1,'error':'x'}\n"
        "{'seq':3,'t':10,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2}\n"
        "{'seq':4,'t':11,'type':'fail','op':'claim','worker':0,'inc':0,'req':2,'error':'x'}\n"
        "{'seq':5,'t':20,'type':'invoke','op':'claim','worker':0,'inc':0,'req':3}\n"
        "{'seq':6,'t':21,'type':'fail','op':'claim','worker':0,'inc':0,'req':3,'error':'x'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

/* worker 1's session 77: its claims are answered, and the monitor sees it
 * "idle in transaction (aborted)" between them for 5 s (PostgreSQL shows
 * no xact_start for an aborted transaction). */
#define ABORTED                                                                                    \
    "{'seq':1,'t':0,'type':'note','note':'session','worker':1,'inc':0,'pid':77}\n"                \
    "{'seq':2,'t':100,'type':'invoke','op':'claim','worker':1,'inc':0,'req':1}\n"                  \
    "{'seq':3,'t':101,'type':'fail','op':'claim','worker':1,'inc':0,'req':1,'error':'e'}\n"       \
    "{'seq':4,'t':201,'type':'session','worker':1,'pid':77,'sent_t':200,"                          \
    "'state':'idle in transaction (aborted)','state_ms':99}\n"                                     \
    "{'seq':5,'t':3000,'type':'invoke','op':'claim','worker':1,'inc':0,'req':2}\n"                 \
    "{'seq':6,'t':3001,'type':'fail','op':'claim','worker':1,'inc':0,'req':2,'error':'e'}\n"      \
    "{'seq':7,'t':5401,'type':'session','worker':1,'pid':77,'sent_t':5400,"                        \
    "'state':'idle in transaction (aborted)','state_ms':2399}\n"

START_TEST(test_worker_progress_aborted_session_between_requests_fail)
{
    qc_check c;

    run(qc_check_worker_progress, HEADER ABORTED, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    /* two samples; the incarnation's requests are short; the first was
     * sent 200 ms after the connect, too early to show a transaction
     * older than the bound: one opportunity */
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, QC_NO_JOB, 1, 4, 5, 6, 7);
    ck_assert_ptr_nonnull(strstr(c.v[0].msg, "session 77 was 'idle in transaction (aborted)' "
                                             "between its requests at every sample for 5199 ms"));
    free(c.v);
}
END_TEST

/* An OK answer between the samples: the transaction may have ended. */
START_TEST(test_worker_progress_ok_between_samples_passes)
{
    qc_check c;
    char *text = strdup(HEADER ABORTED);

    ck_assert_ptr_nonnull(text);
    char *p = strstr(text, "'type':'fail','op':'claim','worker':1,'inc':0,'req':2");
    ck_assert_ptr_nonnull(p);
    memcpy(p, "'type':'ok',  ", 14); /* same length: 'type':'fail', */
    run(qc_check_worker_progress, text, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    free(c.v);
    free(text);
}
END_TEST

/* A run shorter than the bound (decision 1141): the C20 mutant's wedged
 * session, sampled "idle in transaction (aborted)" 200 and 3,400 ms after
 * its connect, bound 4,000 ms.  No sample could show a transaction older
 * than the bound and no incarnation's requests span it: INCONCLUSIVE,
 * never PASS.  The same samples past the bound FAIL (above). */
START_TEST(test_worker_progress_run_shorter_than_bound_inconclusive)
{
    qc_check c;
    char *text = strdup(HEADER ABORTED);

    ck_assert_ptr_nonnull(text);
    char *p = strstr(text, "'t':5401,'type':'session','worker':1,'pid':77,'sent_t':5400");
    ck_assert_ptr_nonnull(p);
    memcpy(p, "'t':3401,'type':'session','worker':1,'pid':77,'sent_t':3400", 59);
    run(qc_check_worker_progress, text, &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
    free(text);
}
END_TEST

/* An open (not aborted) transaction older than the bound that began
 * before the worker's latest request was sent: a step left it open. */
#define OPEN_TXN                                                                                   \
    "{'seq':1,'t':0,'type':'note','note':'session','worker':2,'inc':1,'pid':88}\n"                \
    "{'seq':2,'t':1000,'type':'invoke','op':'complete','worker':2,'inc':1,'req':9,'job':5,"       \
    "'token':'a'}\n"                                                                               \
    "{'seq':3,'t':1002,'type':'ok','op':'complete','worker':2,'inc':1,'req':9,'job':5,"           \
    "'rows':1}\n"                                                                                  \
    "{'seq':4,'t':5601,'type':'session','worker':2,'pid':88,'sent_t':5600,"                        \
    "'state':'idle in transaction','xact_ms':5000,'state_ms':4598}\n"

START_TEST(test_worker_progress_open_transaction_fail)
{
    qc_check c;

    run(qc_check_worker_progress, HEADER OPEN_TXN, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, QC_NO_JOB, 1, 2, 3, 4);
    ck_assert_ptr_nonnull(strstr(c.v[0].msg, "worker 2 (incarnation 1): its session 88 sat "
                                             "'idle in transaction' in a transaction open 5000 "
                                             "ms"));
    free(c.v);
}
END_TEST

/* The sample was sent 3,990 ms after the connect and answered at 4,030:
 * its transaction, open since 10 ms, was 4,020 ms old when it was read,
 * past the 4,000 ms bound.  The opportunity rule of decision 1141 looks
 * at the answer, not the send (sent: the sample was skipped, the leak
 * missed). */
START_TEST(test_worker_progress_sample_answered_past_the_bound_judged)
{
    qc_check c;

    run(qc_check_worker_progress,
        HEADER
        "{'seq':1,'t':0,'type':'note','note':'session','worker':2,'inc':1,'pid':88}\n"
        "{'seq':2,'t':20,'type':'invoke','op':'complete','worker':2,'inc':1,'req':9,'job':5,"
        "'token':'a'}\n"
        "{'seq':3,'t':21,'type':'ok','op':'complete','worker':2,'inc':1,'req':9,'job':5,"
        "'rows':1}\n"
        "{'seq':4,'t':4030,'type':'session','worker':2,'pid':88,'sent_t':3990,"
        "'state':'idle in transaction','xact_ms':4020,'state_ms':4000}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    free(c.v);
}
END_TEST

/* The transaction began after the latest request was sent (5601 - 4000 >
 * 1000): not proven to be a step's leftover (the transaction model opens
 * one just before its claim is logged). */
START_TEST(test_worker_progress_transaction_after_request_passes)
{
    qc_check c;
    char *text = strdup(HEADER OPEN_TXN);

    ck_assert_ptr_nonnull(text);
    char *p = strstr(text, "'xact_ms':5000");
    ck_assert_ptr_nonnull(p);
    memcpy(p, "'xact_ms':4500", 14);
    run(qc_check_worker_progress, text, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    free(c.v);
    free(text);
}
END_TEST

/* A request in flight (invoke without an answer before the sample): a step
 * of several statements, a hold, a starved client mid-step. */
START_TEST(test_worker_progress_request_in_flight_not_judged)
{
    qc_check c;

    run(qc_check_worker_progress,
        HEADER
        "{'seq':1,'t':0,'type':'note','note':'session','worker':2,'inc':0,'pid':88}\n"
        "{'seq':2,'t':10,'type':'invoke','op':'claim','worker':2,'inc':0,'req':1}\n"
        "{'seq':3,'t':9000,'type':'session','worker':2,'pid':88,'sent_t':8999,"
        "'state':'idle in transaction','xact_ms':8980}\n"
        "{'seq':4,'t':9001,'type':'ok','op':'claim','worker':2,'inc':0,'req':1,'rows':0}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS); /* the incarnation spans 8991 ms: 1 opportunity */
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* The transaction model holds the claim's transaction through the work
 * (and a stall in it), and begins / rolls back around its claims
 * unlogged: no sample is judged there. */
START_TEST(test_worker_progress_txn_model_claim_held_not_judged)
{
    qc_check c;
    const char *body =
        "{'seq':1,'t':0,'type':'note','note':'session','worker':3,'inc':0,'pid':99}\n"
        "{'seq':2,'t':10,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
        "{'seq':3,'t':11,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':4,"
        "'token':'t','now':5.5}\n"
        "{'seq':4,'t':12,'type':'fault','fault':'stall_in_work','worker':3,'inc':0,'job':4,"
        "'until_t':8000}\n"
        "{'seq':5,'t':7001,'type':'session','worker':3,'pid':99,'sent_t':7000,"
        "'state':'idle in transaction','xact_ms':6995}\n";
    char text[4096];

    snprintf(text, sizeof text, "%s%s", HEADER_TXN, body);
    run(qc_check_worker_progress, text, &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
    /* the lease model has no such excuse: the claim step was answered */
    snprintf(text, sizeof text, "%s%s", HEADER, body);
    run(qc_check_worker_progress, text, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    free(c.v);
    /* an empty claim answered, its rollback not yet sent (a starved
     * thread): in a transaction between logged requests, innocent */
    run(qc_check_worker_progress,
        HEADER_TXN
        "{'seq':1,'t':0,'type':'note','note':'session','worker':3,'inc':0,'pid':99}\n"
        "{'seq':2,'t':10,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
        "{'seq':3,'t':11,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':0}\n"
        "{'seq':4,'t':7001,'type':'session','worker':3,'pid':99,'sent_t':7000,"
        "'state':'idle in transaction','xact_ms':6995}\n"
        "{'seq':5,'t':9001,'type':'session','worker':3,'pid':99,'sent_t':9000,"
        "'state':'idle in transaction','xact_ms':8995}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* A stalled worker (lease model) between requests: its session is idle,
 * no transaction: judged, and innocent. */
START_TEST(test_worker_progress_stalled_idle_session_passes)
{
    qc_check c;

    run(qc_check_worker_progress,
        HEADER
        "{'seq':1,'t':0,'type':'note','note':'session','worker':3,'inc':0,'pid':99}\n"
        "{'seq':2,'t':10,'type':'invoke','op':'renew','worker':3,'inc':0,'req':1,'job':4}\n"
        "{'seq':3,'t':11,'type':'ok','op':'renew','worker':3,'inc':0,'req':1,'job':4,'rows':1}\n"
        "{'seq':4,'t':12,'type':'fault','fault':'stall_in_work','worker':3,'inc':0,'job':4,"
        "'until_t':8000}\n"
        "{'seq':5,'t':7001,'type':'session','worker':3,'pid':99,'sent_t':7000,"
        "'state':'idle','state_ms':6989}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    free(c.v);
}
END_TEST

/* A sample whose session id is not the one the worker's latest note names
 * (it reconnected): not this incarnation's session, not judged. */
START_TEST(test_worker_progress_other_session_not_judged)
{
    qc_check c;
    char *text = strdup(HEADER OPEN_TXN);

    ck_assert_ptr_nonnull(text);
    char *p = strstr(text, "'pid':88}");
    ck_assert_ptr_nonnull(p);
    memcpy(p, "'pid':87}", 9);
    run(qc_check_worker_progress, text, &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
    free(text);
}
END_TEST

/* The header's bound: without max_wedged_ms, max(5000, 3 x lease). */
START_TEST(test_worker_progress_bound_from_lease)
{
    qc_check c;

    run(qc_check_worker_progress,
        "{'type':'header','model':'lease','lease_ms':2000}\n" STREAK, &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE); /* 4501 ms < 6000 ms */
    ck_assert_ptr_nonnull(strstr(c.summary, "bound 6000 ms"));
    free(c.v);
}
END_TEST

static Suite *wedged_suite(void)
{
    Suite *s = suite_create("wedged");
    TCase *tc = tcase_create("failing_streak");

    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_worker_progress_failing_streak_fail);
    tcase_add_test(tc, test_worker_progress_streak_broken_by_ok_passes);
    tcase_add_test(tc, test_worker_progress_streak_in_fault_window_passes);
    tcase_add_test(tc, test_worker_progress_statement_timeouts_pass);
    tcase_add_test(tc, test_worker_progress_no_opportunity_inconclusive);
    tcase_add_test(tc, test_worker_progress_bound_from_lease);
    suite_add_tcase(s, tc);
    tc = tcase_create("open_transaction");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_worker_progress_aborted_session_between_requests_fail);
    tcase_add_test(tc, test_worker_progress_ok_between_samples_passes);
    tcase_add_test(tc, test_worker_progress_run_shorter_than_bound_inconclusive);
    tcase_add_test(tc, test_worker_progress_sample_answered_past_the_bound_judged);
    tcase_add_test(tc, test_worker_progress_open_transaction_fail);
    tcase_add_test(tc, test_worker_progress_transaction_after_request_passes);
    tcase_add_test(tc, test_worker_progress_request_in_flight_not_judged);
    tcase_add_test(tc, test_worker_progress_txn_model_claim_held_not_judged);
    tcase_add_test(tc, test_worker_progress_stalled_idle_session_passes);
    tcase_add_test(tc, test_worker_progress_other_session_not_judged);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(wedged_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
