/*
 * check_retry.c - unit tests of the retry_delay checker (harness/check_retry.c,
 * shared/cases.md C04): a job given back by fail with a retry delay must not
 * be claimed again before the delay has passed.
 *
 * Hand-written ledgers (' for "): the C04 ABA (a claim held between its read
 * and its write, answered right after another worker's fail), the innocent
 * cases that must not raise an alarm (a claim that waited the delay, a
 * server clock that stepped forward, a coarse clock, a fail that made the
 * job dead, a fail that asked for no delay, a claim answered before the
 * fail was sent; decision 960: a fail step that ignores :delay_ms judged the
 * same, with and without an early claim), and ledgers without an opportunity.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/checkers.h"
#include "../harness/history.h"
#include "ledger_fixture.h"

#define HEADER                                                                                     \
    "{'type':'header','seed':7,'lease_ms':5000,'max_attempts':3,'reaper_interval_ms':500,"         \
    "'recovery_slack_ms':2000,'batch':1}\n"

/* Worker 1 sends its claim first (seq 1) and is held between the claim's
 * read and its write; worker 0 claims job 1 (seqs 2, 3), its effect fails
 * and it fails the job with a delay of 2000 ms (seqs 4, 5). */
#define C04_PREFIX(fail_now, fail_extra)                                                           \
    HEADER                                                                                         \
    "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':1,'inc':0,'req':1}\n"                    \
    "{'seq':2,'t':1,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2}\n"                    \
    "{'seq':3,'t':2,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,'job':1,"         \
    "'token':'a','attempt':1,'now':1000.25,'lease_until':6000.25}\n"                               \
    "{'seq':4,'t':10,'type':'invoke','op':'fail','worker':0,'inc':0,'req':3,'job':1,"              \
    "'token':'a'}\n"                                                                               \
    "{'seq':5,'t':11,'type':'ok','op':'fail','worker':0,'inc':0,'req':3,'job':1,'token':'a',"      \
    "'rows':1" fail_now fail_extra "}\n"

/* Worker 1's claim, answered at client t with server time now. */
#define CLAIM_W1(t, now)                                                                           \
    "{'seq':6,'t':" t ",'type':'ok','op':'claim','worker':1,'inc':0,'req':1,'rows':1,'job':1,"     \
    "'token':'b','attempt':2" now ",'lease_until':9000.25}\n"

START_TEST(test_retry_delay_aba_claim_right_after_fail_fails)
{
    qc_check c;

    run(qc_check_retry_delay,
        C04_PREFIX(",'now':1009.5", ",'delay_ms':2000,'state':'ready'")
            CLAIM_W1("15", ",'now':1013.75"),
        &c);
    ck_assert_str_eq(c.name, "retry_delay");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 1, 4, 5, 6);
    ck_assert_str_eq(c.v[0].msg,
                     "job 1: claimed by worker 1 (seq 6, attempt 2) 5.0 ms after worker 0's fail "
                     "was sent (seq 4), 4.2 ms on the server's clock, which gave it back with a "
                     "retry delay of 2000 ms (seq 5)");
    ck_assert_msg(strstr(c.summary, "1 claimed before the delay passed") != NULL, "%s",
                  c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_claim_after_the_delay_passes)
{
    qc_check c;

    /* answered 2005 ms after the fail was sent: the delay was kept */
    run(qc_check_retry_delay,
        C04_PREFIX(",'now':1009.5", ",'delay_ms':2000,'state':'ready'")
            CLAIM_W1("2015", ",'now':3011.75"),
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_server_clock_step_forward_passes)
{
    qc_check c;

    /* The client saw 5 ms, but the server's clock stepped forward by 3 s
     * between the fail and the claim: run_after passed on the server's
     * clock, the queue honoured it.  Both clocks must agree to judge. */
    run(qc_check_retry_delay,
        C04_PREFIX(",'now':1009.5", ",'delay_ms':2000,'state':'ready'")
            CLAIM_W1("15", ",'now':4013.75"),
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_without_server_times_judged_on_client_clock)
{
    qc_check c;

    run(qc_check_retry_delay, C04_PREFIX("", ",'delay_ms':2000") CLAIM_W1("15", ""), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 1, 4, 5, 6);
    ck_assert_msg(strstr(c.summary, "client clock alone") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

/* Whole-second server times make the margin 1 s: a 50 ms retry delay
 * cannot be shown broken (a claim cannot come less than -950 ms after the
 * fail): no opportunity, INCONCLUSIVE (decision 1142; it said PASS). */
START_TEST(test_retry_delay_delay_within_the_margin_not_judged)
{
    qc_check c;

    run(qc_check_retry_delay,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':1,'inc':0,'req':1}\n"
               "{'seq':2,'t':1,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2}\n"
               "{'seq':3,'t':2,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,"
               "'job':1,'token':'a','now':1000,'lease_until':6000}\n"
               "{'seq':4,'t':10,'type':'invoke','op':'fail','worker':0,'inc':0,'req':3,"
               "'job':1,'token':'a'}\n"
               "{'seq':5,'t':11,'type':'ok','op':'fail','worker':0,'inc':0,'req':3,'job':1,"
               "'rows':1,'now':1000,'delay_ms':50}\n"
               "{'seq':6,'t':12,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,"
               "'rows':1,'job':1,'token':'b','now':1000,'lease_until':6000}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_coarse_server_clock_margin_passes)
{
    qc_check c;

    /* A protocol whose times are whole seconds (it may keep run_after in
     * whole seconds too, rounded down): the server shows 1000 ms of a
     * 1500 ms delay, the client 1400 ms: within the 1 s resolution the
     * ledger shows, on both clocks, not judged a violation. */
    run(qc_check_retry_delay,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':1,'inc':0,'req':1}\n"
               "{'seq':2,'t':1,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2}\n"
               "{'seq':3,'t':2,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,"
               "'job':1,'token':'a','now':1000,'lease_until':6000}\n"
               "{'seq':4,'t':10,'type':'invoke','op':'fail','worker':0,'inc':0,'req':3,"
               "'job':1,'token':'a'}\n"
               "{'seq':5,'t':11,'type':'ok','op':'fail','worker':0,'inc':0,'req':3,'job':1,"
               "'rows':1,'now':1000,'delay_ms':1500}\n"
               "{'seq':6,'t':1410,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,"
               "'rows':1,'job':1,'token':'b','now':2000,'lease_until':7000}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_fail_to_dead_not_judged)
{
    qc_check c;

    /* the fail made the job dead: no retry, no delay to keep (a claim of a
     * dead job is another rule's business) */
    run(qc_check_retry_delay,
        C04_PREFIX(",'now':1009.5", ",'delay_ms':2000,'state':'dead'")
            CLAIM_W1("15", ",'now':1013.75"),
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_fail_without_delay_not_judged)
{
    qc_check c;

    /* a scenario that asks for no retry delay (retry_delay_ms = 0): the
     * worker writes no delay_ms, and an immediate claim is fine */
    run(qc_check_retry_delay, C04_PREFIX(",'now':1009.5", "") CLAIM_W1("15", ",'now':1013.75"),
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_refused_fail_not_judged)
{
    qc_check c;

    /* rows 0: the fail did not give the job back */
    run(qc_check_retry_delay,
        HEADER "{'seq':1,'t':0,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,"
               "'job':1,'token':'a','now':1000.25,'lease_until':6000.25}\n"
               "{'seq':2,'t':10,'type':'invoke','op':'fail','worker':0,'inc':0,'req':3,"
               "'job':1,'token':'a'}\n"
               "{'seq':3,'t':11,'type':'ok','op':'fail','worker':0,'inc':0,'req':3,'job':1,"
               "'rows':0,'now':1009.5,'delay_ms':2000}\n"
               "{'seq':4,'t':15,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,'rows':1,"
               "'job':1,'token':'b','now':1013.75,'lease_until':6013.75}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_claim_answered_before_fail_sent_not_judged)
{
    qc_check c;

    /* worker 1's claim of job 1 was answered (seq 4) before worker 0 sent
     * its fail (seq 5): not the claim that followed the fail; no claim
     * follows it */
    run(qc_check_retry_delay,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':2}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':0,'inc':0,'req':2,'rows':1,"
               "'job':1,'token':'a','now':1000.25,'lease_until':6000.25}\n"
               "{'seq':3,'t':5,'type':'invoke','op':'claim','worker':1,'inc':0,'req':1}\n"
               "{'seq':4,'t':6,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,'rows':1,"
               "'job':1,'token':'b','now':1005.25,'lease_until':6005.25}\n"
               "{'seq':5,'t':10,'type':'invoke','op':'fail','worker':0,'inc':0,'req':3,"
               "'job':1,'token':'a'}\n"
               "{'seq':6,'t':11,'type':'ok','op':'fail','worker':0,'inc':0,'req':3,'job':1,"
               "'rows':1,'now':1009.5,'delay_ms':2000}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_second_retry_judged_on_its_own_fail)
{
    qc_check c;

    /* two retries of job 1: the first claim waited its 100 ms, the second
     * came 3 ms after the second fail; one violation, on the second */
    run(qc_check_retry_delay,
        HEADER "{'seq':1,'t':0,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':1,"
               "'job':1,'token':'a','now':1000.25,'lease_until':6000.25}\n"
               "{'seq':2,'t':10,'type':'invoke','op':'fail','worker':0,'inc':0,'req':2,"
               "'job':1,'token':'a'}\n"
               "{'seq':3,'t':11,'type':'ok','op':'fail','worker':0,'inc':0,'req':2,'job':1,"
               "'rows':1,'now':1009.5,'delay_ms':100,'state':'ready'}\n"
               "{'seq':4,'t':120,'type':'invoke','op':'claim','worker':1,'inc':0,'req':3}\n"
               "{'seq':5,'t':121,'type':'ok','op':'claim','worker':1,'inc':0,'req':3,'rows':1,"
               "'job':1,'token':'b','now':1120.25,'lease_until':6120.25}\n"
               "{'seq':6,'t':130,'type':'invoke','op':'fail','worker':1,'inc':0,'req':4,"
               "'job':1,'token':'b'}\n"
               "{'seq':7,'t':131,'type':'ok','op':'fail','worker':1,'inc':0,'req':4,'job':1,"
               "'rows':1,'now':1129.5,'delay_ms':100,'state':'ready'}\n"
               "{'seq':8,'t':132,'type':'invoke','op':'claim','worker':0,'inc':0,'req':5}\n"
               "{'seq':9,'t':133,'type':'ok','op':'claim','worker':0,'inc':0,'req':5,'rows':1,"
               "'job':1,'token':'c','now':1132.25,'lease_until':6132.25}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 1, 6, 7, 9);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_no_fail_inconclusive)
{
    qc_check c;

    run(qc_check_retry_delay, HEADER CLAIM_W1("15", ",'now':1013.75"), &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_msg(strstr(c.summary, "no fail with a retry delay") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

/* Decision 960: the fail step never reads :delay_ms (header
 * fail_reads_delay_ms false), the worker asked for 2000 ms all the same. */
#define IGNORING_HEADER                                                                            \
    "{'type':'header','seed':7,'lease_ms':5000,'max_attempts':3,'reaper_interval_ms':500,"         \
    "'recovery_slack_ms':2000,'batch':1,'fail_reads_delay_ms':false}\n"

START_TEST(test_retry_delay_fail_ignoring_delay_claimed_at_once_fails)
{
    qc_check c;
    /* the same events as the C04 case, under a header that says the fail
     * ignores :delay_ms: the retry at once is a violation, and says why */
    const char *ledger =
        C04_PREFIX(",'now':1009.5", ",'delay_ms':2000,'state':'ready'")
            CLAIM_W1("15", ",'now':1013.75");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s%s", IGNORING_HEADER, strchr(ledger, '\n') + 1);
    run(qc_check_retry_delay, buf, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 1, 4, 5, 6);
    ck_assert_str_eq(c.v[0].msg,
                     "job 1: claimed by worker 1 (seq 6, attempt 2) 5.0 ms after worker 0's fail "
                     "was sent (seq 4), 4.2 ms on the server's clock, which gave it back with a "
                     "retry delay of 2000 ms (seq 5); the protocol's fail never reads :delay_ms");
    ck_assert_msg(strstr(c.summary, "never reads :delay_ms") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_fail_ignoring_delay_claimed_late_passes)
{
    qc_check c;
    /* a fail that ignores :delay_ms but whose queue happened to wait longer
     * (its own backoff) kept the delay asked for: no violation */
    const char *ledger =
        C04_PREFIX(",'now':1009.5", ",'delay_ms':2000,'state':'ready'")
            CLAIM_W1("2015", ",'now':3011.75");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s%s", IGNORING_HEADER, strchr(ledger, '\n') + 1);
    run(qc_check_retry_delay, buf, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* decision 1123: a job enqueued 700 ms ahead (its transaction sent at t
 * 100), then claimed. */
#define DELAYED_ENQ(claim_t)                                                                       \
    HEADER                                                                                         \
    "{'seq':1,'t':105,'type':'ok','op':'enqueue','worker':-1,'job':7,'delay_ms':700,"            \
    "'sent_t':100}\n"                                                                              \
    "{'seq':2,'t':110,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"                  \
    "{'seq':3,'t':" claim_t ",'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':1,"      \
    "'job':7,'token':'a','attempt':1,'now':1000.25,'lease_until':6000.25}\n"

START_TEST(test_retry_delay_delayed_enqueue_claimed_early_fails)
{
    qc_check c;

    /* answered 40 ms after the enqueue was sent: 660 ms before it fell due */
    run(qc_check_retry_delay, DELAYED_ENQ("140"), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 7, 1, 3);
    ck_assert_str_eq(c.v[0].msg, "job 7: claimed by worker 0 (seq 3) 40.0 ms after its enqueue "
                                 "was sent (seq 1), which scheduled it 700 ms ahead: claimed "
                                 "before it fell due");
    ck_assert_msg(strstr(c.summary, "1 claimed before they fell due") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_delayed_enqueue_claimed_when_due_passes)
{
    qc_check c;

    /* answered 702 ms after the enqueue was sent: due */
    run(qc_check_retry_delay, DELAYED_ENQ("802"), &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_msg(strstr(c.summary, "none claimed before it fell due") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_retry_delay_enqueue_without_sent_time_not_judged)
{
    qc_check c;

    /* a ledger of an older qchaos: no sent_t, no bound on when it ran */
    run(qc_check_retry_delay,
        HEADER "{'seq':1,'t':105,'type':'ok','op':'enqueue','worker':-1,'job':7,'delay_ms':700}\n"
               "{'seq':2,'t':110,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
               "{'seq':3,'t':140,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':1,"
               "'job':7,'token':'a','attempt':1,'now':1000.25,'lease_until':6000.25}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("retry_delay");
    TCase *tc = tcase_create("retry_delay");
    tcase_add_test(tc, test_retry_delay_aba_claim_right_after_fail_fails);
    tcase_add_test(tc, test_retry_delay_claim_after_the_delay_passes);
    tcase_add_test(tc, test_retry_delay_server_clock_step_forward_passes);
    tcase_add_test(tc, test_retry_delay_without_server_times_judged_on_client_clock);
    tcase_add_test(tc, test_retry_delay_coarse_server_clock_margin_passes);
    tcase_add_test(tc, test_retry_delay_delay_within_the_margin_not_judged);
    tcase_add_test(tc, test_retry_delay_fail_to_dead_not_judged);
    tcase_add_test(tc, test_retry_delay_fail_without_delay_not_judged);
    tcase_add_test(tc, test_retry_delay_refused_fail_not_judged);
    tcase_add_test(tc, test_retry_delay_claim_answered_before_fail_sent_not_judged);
    tcase_add_test(tc, test_retry_delay_second_retry_judged_on_its_own_fail);
    tcase_add_test(tc, test_retry_delay_no_fail_inconclusive);
    tcase_add_test(tc, test_retry_delay_fail_ignoring_delay_claimed_at_once_fails);
    tcase_add_test(tc, test_retry_delay_fail_ignoring_delay_claimed_late_passes);
    tcase_add_test(tc, test_retry_delay_delayed_enqueue_claimed_early_fails);
    tcase_add_test(tc, test_retry_delay_delayed_enqueue_claimed_when_due_passes);
    tcase_add_test(tc, test_retry_delay_enqueue_without_sent_time_not_judged);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
