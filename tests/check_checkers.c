/*
 * check_checkers.c - unit tests of the checkers (harness/checkers.h).
 *
 * Every checker is fed hand-written ledgers: one that violates its rule,
 * one that does not (including the tricky cases that must not raise a
 * false alarm), and one without opportunities.  The tests assert the
 * verdict, the counts, and the job ids and ledger seqs of the evidence.
 *
 * Ledgers are written with ' for " so that they read as JSON Lines; load()
 * turns them back into JSON.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../harness/audit.h"
#include "../harness/checkers.h"
#include "../harness/history.h"
#include "ledger_fixture.h"

/* Sanitizers slow allocation-heavy code by an order of magnitude: time
 * bounds are for ordinary builds. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define QC_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define QC_SANITIZED 1
#endif


#define HEADER "{'type':'header','seed':7,'lease_ms':5000,'max_attempts':3}\n"

/* ---- exclusive_claim -------------------------------------------------- */

static const char *const ec_overlap =
    HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
           "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"
           "'token':'a','now':1000.5,'lease_until':6000.5}\n"
           "{'seq':3,'t':100,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"
           "{'seq':4,'t':101,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':1,'job':17,"
           "'token':'b','now':2000.5,'lease_until':7000.5}\n"
           "{'seq':5,'t':200,'type':'invoke','op':'claim','worker':4,'inc':0,'req':3}\n"
           "{'seq':6,'t':201,'type':'ok','op':'claim','worker':4,'inc':0,'req':3,'rows':1,'job':18,"
           "'token':'c','now':2100.5,'lease_until':7100.5}\n";

START_TEST(test_exclusive_claim_overlapping_leases_fail)
{
    qc_check c;

    run(qc_check_exclusive_claim, ec_overlap, &c);
    ck_assert_str_eq(c.name, "exclusive_claim");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 3);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 4);
    ck_assert_str_eq(c.v[0].msg, "job 17 claimed by worker 3 (seq 2, lease until +5000 ms) and "
                                 "by worker 9 (seq 4, at +1000 ms) while the first lease was live");
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_claim_reclaim_after_expiry_passes)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a',"
               "'now':1000.5,'lease_until':6000.5}\n"
               /* exactly at lease_until: the first lease is over (half-open) */
               "{'seq':2,'type':'ok','op':'claim','worker':9,'rows':1,'job':17,'token':'b',"
               "'now':6000.5,'lease_until':11000.5}\n"
               "{'seq':3,'type':'ok','op':'claim','worker':4,'rows':1,'job':17,'token':'c',"
               "'now':12000.5,'lease_until':17000.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 3);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_claim_fail_then_reclaim_passes)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER
        "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'req':1}\n"
        "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,"
        "'token':'a','now':1000.5,'lease_until':6000.5}\n"
        "{'seq':3,'t':10,'type':'invoke','op':'fail','worker':3,'req':2,'job':17,'token':'a'}\n"
        "{'seq':4,'t':12,'type':'ok','op':'fail','worker':3,'req':2,'job':17,'token':'a',"
        "'rows':1,'now':1010.5}\n"
        "{'seq':5,'t':13,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,'job':17,"
        "'token':'b','now':1020.5,'lease_until':6020.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* A release (fail, rows 1: the job is ready again) without "now": invoked
 * 500 ms (client) after the claim's answer, so the server ran it at
 * 1000 + 500 = 1500 or later.  (A complete would make the job done, and
 * any later claim of it a violation of its own.) */
#define RELEASE_NO_NOW_PREFIX                                                                     \
    HEADER                                                                                         \
    "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'req':1}\n"                            \
    "{'seq':2,'t':10,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,"               \
    "'token':'a','now':1000.5,'lease_until':6000.5}\n"                                                 \
    "{'seq':3,'t':510,'type':'invoke','op':'fail','worker':3,'req':2,'job':17,"                \
    "'token':'a'}\n"

START_TEST(test_exclusive_claim_reclaim_after_complete_lower_bound_passes)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        RELEASE_NO_NOW_PREFIX
        "{'seq':4,'t':515,'type':'ok','op':'fail','worker':3,'req':2,'job':17,'token':'a',"
        "'rows':1}\n"
        "{'seq':5,'t':520,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,'job':17,"
        "'token':'b','now':1600.5,'lease_until':6600.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_claim_reclaim_before_complete_lower_bound_fails)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        RELEASE_NO_NOW_PREFIX
        "{'seq':4,'t':511,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,'job':17,"
        "'token':'b','now':1400.5,'lease_until':6400.5}\n"
        "{'seq':5,'t':515,'type':'ok','op':'fail','worker':3,'req':2,'job':17,'token':'a',"
        "'rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 4, 5);
    ck_assert_ptr_nonnull(strstr(c.v[0].msg, "released by fail seq 5 no earlier than +500 ms"));
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_claim_info_complete_then_reclaim_passes)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        RELEASE_NO_NOW_PREFIX
        "{'seq':4,'t':2000,'type':'info','op':'complete','worker':3,'req':2,'job':17,"
        "'token':'a','error':'connection lost'}\n"
        "{'seq':5,'t':2100,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,'job':17,"
        "'token':'b','now':1600.5,'lease_until':6600.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_claim_unanswered_complete_then_reclaim_passes)
{
    qc_check c;

    /* The worker died with its complete in flight: it may have committed. */
    run(qc_check_exclusive_claim,
        RELEASE_NO_NOW_PREFIX
        "{'seq':4,'t':2100,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,'job':17,"
        "'token':'b','now':1600.5,'lease_until':6600.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_claim_zero_row_release_keeps_lease_fails)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        RELEASE_NO_NOW_PREFIX
        "{'seq':4,'t':515,'type':'ok','op':'fail','worker':3,'req':2,'job':17,'token':'a',"
        "'rows':0,'now':1500.5}\n"
        "{'seq':5,'t':520,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,'job':17,"
        "'token':'b','now':1600.5,'lease_until':6600.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ASSERT_VIOLATION(&c, 0, 17, 2, 5);
    free(c.v);
}
END_TEST

#define RENEW_PREFIX                                                                               \
    HEADER                                                                                         \
    "{'seq':1,'t':1,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,"                \
    "'token':'a','now':1000.5,'lease_until':6000.5}\n"                                                 \
    "{'seq':2,'t':3000,'type':'invoke','op':'renew','worker':3,'req':2,'job':17,"                  \
    "'token':'a'}\n"                                                                               \
    "{'seq':3,'t':3001,'type':'ok','op':'renew','worker':3,'req':2,'job':17,'token':'a',"          \
    "'rows':1,'now':4000.5,'lease_until':9000.5}\n"

START_TEST(test_exclusive_claim_reclaim_within_renewed_lease_fails)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        RENEW_PREFIX "{'seq':4,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,'job':17,"
                     "'token':'b','now':8000.5,'lease_until':13000.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 1, 3, 4);
    ck_assert_ptr_nonnull(strstr(c.v[0].msg, "renewed at seq 3 until +8000 ms"));
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_claim_reclaim_after_renewed_lease_passes)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        RENEW_PREFIX "{'seq':4,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,'job':17,"
                     "'token':'b','now':9500.5,'lease_until':14500.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_claim_rotated_token_fail_ends_lease_passes)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a',"
               "'now':1000.5,'lease_until':6000.5}\n"
               "{'seq':2,'type':'ok','op':'renew','worker':3,'job':17,'token':'a','new_token':'b',"
               "'rows':1,'now':2000.5,'lease_until':7000.5}\n"
               "{'seq':3,'type':'ok','op':'fail','worker':3,'job':17,'token':'b','rows':1,"
               "'now':3000.5}\n"
               "{'seq':4,'type':'ok','op':'claim','worker':9,'rows':1,'job':17,'token':'c',"
               "'now':3500.5,'lease_until':8500.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    free(c.v);
}
END_TEST

/* The fail (release) with the rotated token must end worker 3's lease only:
 * worker 9's lease stays live, so worker 4's claim overlaps it. */
START_TEST(test_exclusive_claim_rotated_token_ends_only_its_lease_fails)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER
        "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'req':1}\n"
        "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,"
        "'token':'a','now':1000.5,'lease_until':6000.5}\n"
        "{'seq':3,'t':99,'type':'invoke','op':'claim','worker':9,'req':2}\n"
        "{'seq':4,'t':100,'type':'ok','op':'claim','worker':9,'req':2,'rows':1,'job':17,"
        "'token':'c','now':2000.5,'lease_until':7000.5}\n"
        "{'seq':5,'t':150,'type':'ok','op':'renew','worker':3,'req':3,'job':17,'token':'a',"
        "'new_token':'b','rows':1,'now':2500.5,'lease_until':7500.5}\n"
        "{'seq':6,'t':200,'type':'invoke','op':'fail','worker':3,'req':4,'job':17,"
        "'token':'b'}\n"
        "{'seq':7,'t':201,'type':'ok','op':'fail','worker':3,'req':4,'job':17,'token':'b',"
        "'rows':1,'now':3000.5}\n"
        "{'seq':8,'t':300,'type':'ok','op':'claim','worker':4,'req':5,'rows':1,'job':17,"
        "'token':'d','now':3500.5,'lease_until':8500.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 3);
    ck_assert_int_eq(c.nviolations, 2);
    ASSERT_VIOLATION(&c, 0, 17, 2, 4, 7);
    ASSERT_VIOLATION(&c, 1, 17, 4, 8);
    ck_assert_ptr_nonnull(strstr(c.v[0].msg, "released by fail seq 7 at +2000 ms"));
    free(c.v);
}
END_TEST

/* A fail (release) whose token names no lease (here: a protocol without
 * tokens) is assumed to have ended every lease of its job. */
START_TEST(test_exclusive_claim_tokenless_fail_then_reclaim_passes)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'now':1000.5,"
               "'lease_until':6000.5}\n"
               "{'seq':2,'type':'ok','op':'fail','worker':3,'job':17,'rows':1,'now':2000.5}\n"
               "{'seq':3,'type':'ok','op':'claim','worker':9,'rows':1,'job':17,'now':2500.5,"
               "'lease_until':7500.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_claim_reap_of_live_lease_then_reclaim_fails)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a',"
               "'now':1000.5,'lease_until':6000.5}\n"
               "{'seq':2,'type':'ok','op':'reap','worker':-1,'rows':1,'job':17,'now':1500.5}\n"
               "{'seq':3,'type':'ok','op':'claim','worker':9,'rows':1,'job':17,'token':'b',"
               "'now':2000.5,'lease_until':7000.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 1, 3);
    free(c.v);
}
END_TEST

/* A renew accepted after the lease lapsed makes it live again only from the
 * renew on: no overlap with a lease that had ended before. */
START_TEST(test_exclusive_claim_renew_after_lapse_passes)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a',"
               "'now':1000.5,'lease_until':2000.5}\n"
               "{'seq':2,'type':'ok','op':'claim','worker':9,'rows':1,'job':17,'token':'b',"
               "'now':3000.5,'lease_until':8000.5}\n"
               "{'seq':3,'type':'ok','op':'complete','worker':9,'job':17,'token':'b','rows':1,"
               "'now':3500.5}\n"
               "{'seq':4,'type':'ok','op':'renew','worker':3,'job':17,'token':'a','rows':1,"
               "'now':4000.5,'lease_until':9000.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_claim_renew_after_lapse_into_live_lease_fails)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a',"
               "'now':1000.5,'lease_until':2000.5}\n"
               "{'seq':2,'type':'ok','op':'claim','worker':9,'rows':1,'job':17,'token':'b',"
               "'now':3000.5,'lease_until':8000.5}\n"
               "{'seq':3,'type':'ok','op':'renew','worker':3,'job':17,'token':'a','rows':1,"
               "'now':4000.5,'lease_until':9000.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 1, 2, 3);
    ck_assert_str_eq(c.v[0].msg, "job 17 claimed by worker 9 (seq 2, lease until +5000 ms) and "
                                 "by worker 3 (seq 1, renewed at seq 3, +1000 ms) while the first "
                                 "lease was live");
    free(c.v);
}
END_TEST

/* Coarse clock (issue 11): the claims report whole seconds (now truncated)
 * while lease_until is exact.  Worker 9's claim ran at server 6000.8,
 * after the first lease's end at 6000.3, but reports 6000: within the
 * clock's resolution, so no overlap is proven. */
START_TEST(test_exclusive_claim_whole_second_claim_clock_passes)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'req':1}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,"
               "'token':'a','now':1000,'lease_until':6000.3}\n"
               "{'seq':3,'t':5100,'type':'invoke','op':'claim','worker':9,'req':2}\n"
               "{'seq':4,'t':5101,'type':'ok','op':'claim','worker':9,'req':2,'rows':1,'job':17,"
               "'token':'b','now':6000,'lease_until':11000.8}\n",
        &c);
    ck_assert_msg(c.verdict == QC_PASS, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    free(c.v);
}
END_TEST

/* now() as the claim's time (issue 11 review): the second claim's step
 * sleeps 250 ms before its UPDATE and reports its transaction's start
 * (1850.5), 150 ms before the first lease's end; it really took the row
 * only after the reap.  Its request took 250 ms (invoke t 900, answer
 * t 1150), so an overlap of less than that proves nothing. */
START_TEST(test_exclusive_claim_transaction_start_now_passes)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'req':1}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,"
               "'token':'a','now':1000.5,'lease_until':2000.5}\n"
               "{'seq':3,'t':900,'type':'invoke','op':'claim','worker':9,'req':2}\n"
               "{'seq':4,'t':1150,'type':'ok','op':'claim','worker':9,'req':2,'rows':1,'job':17,"
               "'token':'b','now':1850.5,'lease_until':2850.5}\n",
        &c);
    ck_assert_msg(c.verdict == QC_PASS, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    free(c.v);
    /* the same overlap from a claim that took 2 ms is proven */
    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'req':1}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,"
               "'token':'a','now':1000.5,'lease_until':2000.5}\n"
               "{'seq':3,'t':1148,'type':'invoke','op':'claim','worker':9,'req':2}\n"
               "{'seq':4,'t':1150,'type':'ok','op':'claim','worker':9,'req':2,'rows':1,'job':17,"
               "'token':'b','now':1850.5,'lease_until':2850.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_claim_no_claims_inconclusive)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'type':'invoke','op':'claim','worker':3,'req':1}\n"
               "{'seq':2,'type':'ok','op':'claim','worker':3,'req':1,'rows':0}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_claim_claims_without_server_time_inconclusive)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a'}\n"
               "{'seq':2,'type':'ok','op':'claim','worker':9,'rows':1,'job':17,'token':'b'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_ptr_nonnull(strstr(c.summary, "2 claims without a server time not checked"));
    free(c.v);
}
END_TEST

/* ---- double_complete -------------------------------------------------- */

START_TEST(test_double_complete_two_acked_completes_fail)
{
    qc_check c;

    run(qc_check_double_complete,
        HEADER
        "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'aaaaaaaaaaaa',"
        "'now':1000.5,'lease_until':6000.5}\n"
        "{'seq':2,'type':'invoke','op':'complete','worker':3,'req':2,'job':17,"
        "'token':'aaaaaaaaaaaa'}\n"
        "{'seq':3,'type':'ok','op':'complete','worker':3,'req':2,'job':17,"
        "'token':'aaaaaaaaaaaa','rows':1,'now':2000.5}\n"
        "{'seq':4,'type':'ok','op':'claim','worker':9,'rows':1,'job':17,'token':'b',"
        "'now':7000.5,'lease_until':12000.5}\n"
        "{'seq':5,'type':'invoke','op':'complete','worker':9,'req':5,'job':17,'token':'b'}\n"
        /* no job or token on the answer: both come from its invoke */
        "{'seq':6,'type':'ok','op':'complete','worker':9,'req':5,'rows':1,'now':7500.5}\n"
        "{'seq':7,'type':'ok','op':'complete','worker':4,'req':9,'job':18,'token':'c',"
        "'rows':1,'now':7600.5}\n",
        &c);
    ck_assert_str_eq(c.name, "double_complete");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 3);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 3, 6);
    ck_assert_str_eq(c.v[0].msg, "job 17 completed 2 times with rows > 0: seq 3 (worker 3, token "
                                 "aaaaaaaa..), seq 6 (worker 9, token b)");
    free(c.v);
}
END_TEST

START_TEST(test_double_complete_zero_row_complete_passes)
{
    qc_check c;

    run(qc_check_double_complete,
        HEADER "{'seq':1,'type':'ok','op':'complete','worker':3,'job':17,'token':'a','rows':1}\n"
               "{'seq':2,'type':'ok','op':'complete','worker':9,'job':17,'token':'b','rows':0}\n"
               "{'seq':3,'type':'info','op':'complete','worker':4,'job':17,'token':'c'}\n"
               "{'seq':4,'type':'fail','op':'complete','worker':5,'job':17,'token':'d',"
               "'error':'40001 could not serialize'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* Decision 1101: a client-side lost ack whose thrown-away answer said
 * rows > 0 had committed; a retry with the same token that changes the
 * row again completed the job twice (a complete that does not check
 * state = 'inflight').  A retry answered rows 0, or a lost answer that
 * said rows 0, is no second completion. */
START_TEST(test_double_complete_lost_ack_committed_then_retry)
{
    qc_check c;
#define LOST_ACK_PREFIX                                                                            \
    HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a',"           \
           "'now':1000.5,'lease_until':6000.5}\n"                                                  \
           "{'seq':2,'type':'invoke','op':'complete','worker':3,'req':2,'job':17,'token':'a'}\n"
    run(qc_check_double_complete,
        LOST_ACK_PREFIX
        "{'seq':3,'type':'info','op':'complete','worker':3,'req':2,'job':17,'token':'a',"
        "'discarded_rows':1,'error':'lost_ack: answer thrown away'}\n"
        "{'seq':4,'type':'invoke','op':'complete','worker':3,'req':3,'job':17,'token':'a'}\n"
        "{'seq':5,'type':'ok','op':'complete','worker':3,'req':3,'job':17,'token':'a','rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 3, 5);
    ck_assert_str_eq(c.v[0].msg, "job 17 completed 2 times with rows > 0: seq 3 (worker 3, token "
                                 "a, answer lost after it said rows > 0), seq 5 (worker 3, "
                                 "token a)");
    free(c.v);
    /* the correct protocol: the retry finds the job done */
    run(qc_check_double_complete,
        LOST_ACK_PREFIX
        "{'seq':3,'type':'info','op':'complete','worker':3,'req':2,'job':17,'token':'a',"
        "'discarded_rows':1,'error':'lost_ack: answer thrown away'}\n"
        "{'seq':4,'type':'invoke','op':'complete','worker':3,'req':3,'job':17,'token':'a'}\n"
        "{'seq':5,'type':'ok','op':'complete','worker':3,'req':3,'job':17,'token':'a','rows':0}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    free(c.v);
    /* the lost answer said rows 0 (the lease was gone): it changed nothing */
    run(qc_check_double_complete,
        LOST_ACK_PREFIX
        "{'seq':3,'type':'info','op':'complete','worker':3,'req':2,'job':17,'token':'a',"
        "'discarded_rows':0,'error':'lost_ack: answer thrown away'}\n"
        "{'seq':4,'type':'ok','op':'complete','worker':8,'req':4,'job':17,'token':'b','rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    free(c.v);
#undef LOST_ACK_PREFIX
}
END_TEST

START_TEST(test_double_complete_no_completes_inconclusive)
{
    qc_check c;

    run(qc_check_double_complete,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a',"
               "'now':1000.5,'lease_until':6000.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

/* ---- no_lost_jobs ----------------------------------------------------- */

START_TEST(test_no_lost_jobs_unfinished_missing_and_unknown_jobs_fail)
{
    qc_check c;

    run(qc_check_no_lost_jobs,
        HEADER "{'seq':1,'type':'invoke','op':'enqueue','worker':0,'req':1}\n"
               "{'seq':2,'type':'ok','op':'enqueue','worker':0,'req':1,'rows':1,'job':1}\n"
               "{'seq':3,'type':'ok','op':'enqueue','worker':0,'req':2,'rows':1,'job':2}\n"
               "{'seq':4,'type':'ok','op':'enqueue','worker':0,'req':3,'rows':1,'job':3}\n"
               "{'seq':5,'type':'ok','op':'enqueue','worker':0,'req':4,'rows':1,'job':4}\n"
               "{'seq':6,'type':'ok','op':'claim','worker':3,'rows':1,'job':2,'token':'a',"
               "'now':1000.5,'lease_until':6000.5}\n"
               "{'seq':7,'type':'ok','op':'claim','worker':3,'rows':1,'job':3,'token':'b',"
               "'now':1000.5,'lease_until':6000.5}\n"
               "{'seq':8,'type':'fault','fault':'kill_after_claim','job':3,'worker':3,'inc':0}\n"
               "{'seq':9,'type':'snapshot','job':1,'state':'done','attempt':1}\n"
               "{'seq':10,'type':'snapshot','job':2,'state':'inflight','attempt':1,'token':'a'}\n"
               "{'seq':11,'type':'snapshot','job':4,'state':'dead','attempt':3}\n"
               "{'seq':12,'type':'snapshot','job':99,'state':'done','attempt':1}\n"
               "{'seq':13,'type':'end','drained':false}\n"
               "{'seq':14,'type':'ok','op':'complete','worker':3,'rows':1,'job':1,'token':'z'}\n",
        &c);
    ck_assert_str_eq(c.name, "no_lost_jobs");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 4);
    ck_assert_int_eq(c.nviolations, 3);
    ASSERT_VIOLATION(&c, 0, 2, 3, 6, 10);
    ck_assert_ptr_nonnull(strstr(c.v[0].msg, "job 2 is inflight in the final snapshot (seq 10)"));
    ASSERT_VIOLATION(&c, 1, 3, 4, 8);
    ck_assert_str_eq(c.v[1].msg, "job 3 was enqueued (seq 4) but is missing from the final "
                                 "snapshot; its last ledger event is seq 8 (fault "
                                 "kill_after_claim)");
    ASSERT_VIOLATION(&c, 2, 99, 12);
    ck_assert_str_eq(c.v[2].msg,
                     "job 99 appears in the final snapshot (seq 12, state done) but was never "
                     "enqueued");
    free(c.v);
}
END_TEST

START_TEST(test_no_lost_jobs_all_done_or_dead_passes)
{
    qc_check c;

    run(qc_check_no_lost_jobs,
        HEADER "{'seq':1,'type':'ok','op':'enqueue','worker':0,'rows':1,'job':1}\n"
               "{'seq':2,'type':'ok','op':'enqueue','worker':0,'rows':1,'job':2}\n"
               "{'seq':3,'type':'snapshot','job':1,'state':'done'}\n"
               "{'seq':4,'type':'snapshot','job':2,'state':'dead','error':'poison'}\n"
               "{'seq':5,'type':'ok','op':'complete','worker':0,'rows':1,'job':1,'token':'a'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

#define UNKNOWN_ENQUEUE_PREFIX                                                                     \
    HEADER "{'seq':1,'type':'ok','op':'enqueue','worker':0,'req':1,'rows':1,'job':1}\n"            \
           "{'seq':2,'type':'invoke','op':'enqueue','worker':0,'req':2}\n"                         \
           "{'seq':3,'type':'info','op':'enqueue','worker':0,'req':2,'error':'timeout'}\n"         \
           "{'seq':4,'type':'snapshot','job':1,'state':'done'}\n"                                  \
           "{'seq':5,'type':'snapshot','job':2,'state':'done'}\n"                                  \
           "{'seq':7,'type':'ok','op':'complete','worker':0,'rows':1,'job':1,'token':'a'}\n"

START_TEST(test_no_lost_jobs_info_enqueue_accounts_for_one_job_passes)
{
    qc_check c;

    run(qc_check_no_lost_jobs, UNKNOWN_ENQUEUE_PREFIX, &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_no_lost_jobs_info_enqueue_accounts_for_one_job_only_fails)
{
    qc_check c;

    run(qc_check_no_lost_jobs,
        UNKNOWN_ENQUEUE_PREFIX "{'seq':6,'type':'snapshot','job':3,'state':'done'}\n", &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 3, 6);
    ck_assert_ptr_nonnull(strstr(c.v[0].msg, "2 such jobs, 1 enqueues with an unknown outcome"));
    free(c.v);
}
END_TEST

/* A final state must be earned: done needs a complete that may have taken
 * effect, dead before max_attempts needs a fail (escapes found in review:
 * a reaper writing done, a reaper dead-lettering on the first expiry, an
 * enqueue writing done). */
START_TEST(test_no_lost_jobs_unearned_done_and_early_dead_fail)
{
    qc_check c;

    run(qc_check_no_lost_jobs,
        "{'type':'header','seed':1,'max_attempts':3}\n"
        "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'job':1}\n"
        "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'job':2}\n"
        "{'seq':3,'type':'ok','op':'enqueue','worker':-1,'job':3}\n"
        "{'seq':4,'type':'ok','op':'enqueue','worker':-1,'job':4}\n"
        "{'seq':5,'type':'ok','op':'claim','worker':0,'rows':1,'job':1,'token':'a'}\n"
        "{'seq':6,'type':'fault','fault':'kill_after_claim','job':1,'worker':0}\n"
        "{'seq':7,'type':'ok','op':'claim','worker':0,'rows':1,'job':2,'token':'b'}\n"
        "{'seq':8,'type':'ok','op':'claim','worker':0,'rows':1,'job':3,'token':'c'}\n"
        "{'seq':9,'type':'invoke','op':'fail','worker':0,'job':3,'token':'c','req':9}\n"
        "{'seq':10,'type':'ok','op':'fail','worker':0,'job':3,'token':'c','req':9,'rows':1}\n"
        "{'seq':11,'type':'invoke','op':'complete','worker':0,'job':4,'token':'d','req':11}\n"
        "{'seq':12,'type':'snapshot','job':1,'state':'done','attempt':1}\n"
        "{'seq':13,'type':'snapshot','job':2,'state':'dead','attempt':1}\n"
        "{'seq':14,'type':'snapshot','job':3,'state':'dead','attempt':1,'error':'bad input'}\n"
        "{'seq':15,'type':'snapshot','job':4,'state':'done','attempt':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 2); /* job 3 was failed; job 4's complete may have run */
    ASSERT_VIOLATION(&c, 0, 1, 1, 5, 12);
    ck_assert_ptr_nonnull(strstr(c.v[0].msg, "job 1 is done in the final snapshot (seq 12) but no "
                                             "complete was ever sent for it (1 claims)"));
    ASSERT_VIOLATION(&c, 1, 2, 2, 7, 13);
    ck_assert_ptr_nonnull(strstr(c.v[1].msg, "job 2 is dead in the final snapshot (seq 13) after 1 "
                                             "claims (attempt 1) of max_attempts 3"));
    free(c.v);
}
END_TEST

/* A run stopped by SIGINT/SIGTERM before its drain leaves jobs unfinished:
 * that is not a lost job, and not a pass either. */
START_TEST(test_no_lost_jobs_interrupted_run_inconclusive)
{
    qc_check c;

    run(qc_check_no_lost_jobs,
        HEADER "{'seq':1,'type':'ok','op':'enqueue','worker':0,'rows':1,'job':1}\n"
               "{'seq':2,'type':'ok','op':'enqueue','worker':0,'rows':1,'job':2}\n"
               "{'seq':3,'type':'ok','op':'complete','worker':0,'rows':1,'job':1,'token':'a'}\n"
               "{'seq':4,'type':'snapshot','job':1,'state':'done'}\n"
               "{'seq':5,'type':'snapshot','job':2,'state':'ready'}\n"
               "{'seq':6,'type':'end','drained':false,'interrupted':true}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_ptr_nonnull(strstr(c.summary, "interrupted"));
    free(c.v);
}
END_TEST

START_TEST(test_no_lost_jobs_no_snapshot_inconclusive)
{
    qc_check c;

    run(qc_check_no_lost_jobs,
        HEADER "{'seq':1,'type':'ok','op':'enqueue','worker':0,'rows':1,'job':1}\n", &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_str_eq(c.summary, "no final snapshot in the ledger");
    free(c.v);
}
END_TEST

/* ---- acked_durable ---------------------------------------------------- */

START_TEST(test_acked_durable_acked_job_not_done_fails)
{
    qc_check c;

    run(qc_check_acked_durable,
        HEADER "{'seq':1,'type':'ok','op':'complete','worker':3,'job':17,'token':'a','rows':1,"
               "'now':2000.5}\n"
               "{'seq':2,'type':'ok','op':'complete','worker':4,'job':18,'token':'b','rows':1,"
               "'now':2100.5}\n"
               "{'seq':3,'type':'ok','op':'complete','worker':5,'job':19,'token':'c','rows':1,"
               "'now':2200.5}\n"
               "{'seq':4,'type':'snapshot','job':17,'state':'ready'}\n"
               "{'seq':5,'type':'snapshot','job':18,'state':'done'}\n",
        &c);
    ck_assert_str_eq(c.name, "acked_durable");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 3);
    ck_assert_int_eq(c.nviolations, 2);
    ASSERT_VIOLATION(&c, 0, 17, 1, 4);
    ck_assert_str_eq(c.v[0].msg, "job 17: complete acknowledged with rows 1 (seq 1, worker 3) but "
                                 "the job is ready in the final snapshot (seq 4)");
    ASSERT_VIOLATION(&c, 1, 19, 3);
    ck_assert_ptr_nonnull(strstr(c.v[1].msg, "missing from the final snapshot"));
    free(c.v);
}
END_TEST

START_TEST(test_acked_durable_acked_job_done_passes)
{
    qc_check c;

    run(qc_check_acked_durable,
        HEADER "{'seq':1,'type':'ok','op':'complete','worker':3,'job':17,'token':'a','rows':1}\n"
               "{'seq':2,'type':'ok','op':'complete','worker':4,'job':18,'token':'b','rows':0}\n"
               "{'seq':3,'type':'snapshot','job':17,'state':'done'}\n"
               "{'seq':4,'type':'snapshot','job':18,'state':'ready'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_acked_durable_no_snapshot_inconclusive)
{
    qc_check c;

    run(qc_check_acked_durable,
        HEADER "{'seq':1,'type':'ok','op':'complete','worker':3,'job':17,'token':'a','rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_str_eq(c.summary, "no final snapshot in the ledger");
    free(c.v);
}
END_TEST

START_TEST(test_acked_durable_no_acked_complete_inconclusive)
{
    qc_check c;

    run(qc_check_acked_durable,
        HEADER "{'seq':1,'type':'ok','op':'complete','worker':3,'job':17,'token':'a','rows':0}\n"
               "{'seq':2,'type':'snapshot','job':17,'state':'ready'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* A failover: job 17's complete was acknowledged (seq 1) before the
 * replica's switch snapshot (seq 3..5) and the replica had it inflight: the
 * new primary lacks it, though the job was redone and is done in the final
 * snapshot.  Job 19's complete came after the switch: judged against the
 * final snapshot only. */
START_TEST(test_acked_durable_lost_at_switch_fails)
{
    qc_check c;

    run(qc_check_acked_durable,
        HEADER "{'seq':1,'type':'ok','op':'complete','worker':3,'job':17,'token':'a','rows':1}\n"
               "{'seq':2,'type':'ok','op':'complete','worker':4,'job':18,'token':'b','rows':1}\n"
               "{'seq':3,'type':'switch_snapshot','fault':'failover','job':17,'state':'inflight'}\n"
               "{'seq':4,'type':'switch_snapshot','fault':'failover','job':18,'state':'done'}\n"
               "{'seq':5,'type':'switch_snapshot','fault':'failover','job':19,'state':'ready'}\n"
               "{'seq':6,'type':'ok','op':'complete','worker':5,'job':19,'token':'c','rows':1}\n"
               "{'seq':7,'type':'ok','op':'complete','worker':5,'job':17,'token':'d','rows':1}\n"
               "{'seq':8,'type':'snapshot','job':17,'state':'done'}\n"
               "{'seq':9,'type':'snapshot','job':18,'state':'done'}\n"
               "{'seq':10,'type':'snapshot','job':19,'state':'done'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 4);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 1, 3);
    ck_assert_str_eq(c.v[0].msg, "job 17: complete acknowledged with rows 1 (seq 1, worker 3) "
                                 "before the failover, but the replica that was promoted had the "
                                 "job inflight (seq 3): the new primary lacks the acknowledged "
                                 "complete");
    ck_assert_ptr_nonnull(strstr(c.summary, "2 acknowledged before the failover, 1 of them lost"));
    free(c.v);
}
END_TEST

/* An answer that arrives while the switch snapshot's read runs (after its
 * marker, seq 2) may be of a commit the read does not see: not judged
 * against it (job 18); job 17, acknowledged before the marker, is. */
START_TEST(test_acked_durable_answer_during_switch_read_not_judged)
{
    qc_check c;

    run(qc_check_acked_durable,
        HEADER "{'seq':1,'type':'ok','op':'complete','worker':3,'job':17,'token':'a','rows':1}\n"
               "{'seq':2,'type':'switch_snapshot','fault':'unfenced_primary'}\n"
               "{'seq':3,'type':'ok','op':'complete','worker':4,'job':18,'token':'b','rows':1}\n"
               "{'seq':4,'type':'switch_snapshot','fault':'unfenced_primary','job':17,'state':'ready'}\n"
               "{'seq':5,'type':'switch_snapshot','fault':'unfenced_primary','job':18,'state':'inflight'}\n"
               "{'seq':6,'type':'snapshot','job':17,'state':'done'}\n"
               "{'seq':7,'type':'snapshot','job':18,'state':'done'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 1, 4);
    ck_assert_ptr_nonnull(strstr(c.v[0].msg, "before the unfenced_primary"));
    ck_assert_ptr_nonnull(strstr(c.summary, "1 acknowledged before the unfenced_primary, 1 of them lost"));
    free(c.v);
}
END_TEST

START_TEST(test_acked_durable_none_lost_at_switch_passes)
{
    qc_check c;

    run(qc_check_acked_durable,
        HEADER "{'seq':1,'type':'ok','op':'complete','worker':3,'job':17,'token':'a','rows':1}\n"
               "{'seq':2,'type':'switch_snapshot','fault':'failover','job':17,'state':'done'}\n"
               "{'seq':3,'type':'switch_snapshot','fault':'failover','job':18,'state':'inflight'}\n"
               "{'seq':4,'type':'ok','op':'complete','worker':4,'job':18,'token':'b','rows':1}\n"
               "{'seq':5,'type':'snapshot','job':17,'state':'done'}\n"
               "{'seq':6,'type':'snapshot','job':18,'state':'done'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_ptr_nonnull(strstr(c.summary, "1 acknowledged before the failover, none lost"));
    free(c.v);
}
END_TEST

/* ---- shared machinery ------------------------------------------------- */

START_TEST(test_check_violation_beyond_cap_counts_all)
{
    qc_check c;

    memset(&c, 0, sizeof c);
    for (int i = 0; i < QC_MAX_STORED_VIOLATIONS + 50; i++) {
        int64_t seq = i;
        qc__check_violation(&c, i, &seq, 1, "violation %d", i);
    }
    ck_assert_int_eq(c.nviolations, QC_MAX_STORED_VIOLATIONS + 50);
    ck_assert_uint_eq(c.nstored, QC_MAX_STORED_VIOLATIONS);
    ck_assert_str_eq(c.v[QC_MAX_STORED_VIOLATIONS - 1].msg, "violation 99");
    qc__check_finish(&c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    free(c.v);
}
END_TEST

START_TEST(test_check_violation_evidence_sorted_distinct_capped)
{
    qc_check c;
    const int64_t seqs[] = {90, 30, 30, 10, 120, 50, 60, 70, 80, 100, 110, 20};

    memset(&c, 0, sizeof c);
    qc__check_violation(&c, 5, seqs, (int)(sizeof seqs / sizeof seqs[0]), "line\nbreak");
    ASSERT_VIOLATION(&c, 0, 5, 10, 20, 30, 50, 60, 70, 80, 90);
    ck_assert_str_eq(c.v[0].msg, "line break");
    free(c.v);
}
END_TEST

START_TEST(test_check_finish_zero_opportunities_inconclusive)
{
    qc_check c;

    memset(&c, 0, sizeof c);
    qc__check_finish(&c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    c.opportunities = 1;
    qc__check_finish(&c);
    ck_assert_int_eq(c.verdict, QC_PASS);
}
END_TEST

START_TEST(test_verdict_name_each_verdict_named)
{
    ck_assert_str_eq(qc_verdict_name(QC_PASS), "PASS");
    ck_assert_str_eq(qc_verdict_name(QC_FAIL), "FAIL");
    ck_assert_str_eq(qc_verdict_name(QC_INCONCLUSIVE), "INCONCLUSIVE");
    ck_assert_str_eq(qc_verdict_name(QC_NOT_APPLICABLE), "NOT_APPLICABLE");
}
END_TEST

START_TEST(test_check_all_overlap_ledger_every_verdict)
{
    static const char *const later[] = {
        "stale_token_rejected", "no_false_success", "effects_once", "exclusive_run", "recovery",
        "bounded_failure",      "no_early_reap",    "batch_bound", "retry_delay", "bounded_idle_polling",
        "witness_agrees",       "witness_owner",    "worker_progress", "own_lease",
        "message_once",         "group_exclusive",  "group_order"};
    qc_history h;
    qc_check *c = NULL;
    size_t n = 0;

    memset(&h, 0, sizeof h);
    load(&h, ec_overlap);
    ck_assert_int_eq(qc_check_all(&h, &c, &n), 0);
    ck_assert_uint_eq(n, 4 + sizeof later / sizeof later[0]);
    ck_assert_str_eq(c[0].name, "exclusive_claim");
    ck_assert_int_eq(c[0].verdict, QC_FAIL);
    ck_assert_str_eq(c[1].name, "double_complete");
    ck_assert_int_eq(c[1].verdict, QC_INCONCLUSIVE);
    ck_assert_str_eq(c[2].name, "no_lost_jobs");
    ck_assert_int_eq(c[2].verdict, QC_INCONCLUSIVE);
    ck_assert_str_eq(c[3].name, "acked_durable");
    ck_assert_int_eq(c[3].verdict, QC_INCONCLUSIVE);
    /* The fault checkers follow, in a fixed order; this ledger (three
     * claims, no request, fault, reap, effect or batch) gives them nothing
     * to judge. */
    for (size_t i = 0; i < sizeof later / sizeof later[0]; i++) {
        ck_assert_str_eq(c[4 + i].name, later[i]);
        /* no witness in this ledger, and no copies of a message: their
         * checkers do not apply */
        ck_assert_msg(c[4 + i].verdict == (strncmp(later[i], "witness_", 8) == 0 ||
                                                   strcmp(later[i], "message_once") == 0
                                               ? QC_NOT_APPLICABLE
                                               : QC_INCONCLUSIVE),
                      "%s: %s", c[4 + i].name, qc_verdict_name(c[4 + i].verdict));
    }
    qc_checks_free(c, n);
    qc_history_fini(&h);
}
END_TEST

static int cmp_ref_test(const void *pa, const void *pb)
{
    const qc__jobref *a = pa, *b = pb;

    if (a->job != b->job)
        return a->job < b->job ? -1 : 1;
    return a->ev < b->ev ? -1 : a->ev > b->ev;
}

/* qc__actor_sort orders refs collected in ev order as qsort by (file,
 * worker, inc, ev) does: few and many actors, negative workers, one actor,
 * already sorted, and a buffer of elements bigger than the actor. */
typedef struct actor_ref_test {
    int file, worker, inc;
    size_t ev;
    char pad[9];
} actor_ref_test;

static int cmp_actor_ref_test(const void *pa, const void *pb)
{
    const actor_ref_test *a = pa, *b = pb;
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    if (a->worker != b->worker)
        return a->worker < b->worker ? -1 : 1;
    if (a->inc != b->inc)
        return a->inc < b->inc ? -1 : 1;
    return (a->ev > b->ev) - (a->ev < b->ev);
}

START_TEST(test_actor_sort_as_qsort)
{
    enum { N = 5000 };
    static actor_ref_test a[N], b[N];
    uint64_t x = 2463534242ull;
    const int nworkers[] = {1, 2, 16, 300, 4000};

    for (int round = 0; round < 30; round++) {
        size_t n = round % 6 == 0 ? (size_t)round : N - (size_t)round * 11;
        int nw = nworkers[round % 5];
        memset(a, 0, sizeof a);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            a[i].file = round % 4 == 1 ? (int)(x % 3) : 0;
            a[i].worker = (int)((x >> 8) % (uint64_t)nw) - 3; /* -3 .. nw - 4 */
            a[i].inc = round % 3 == 0 ? (int)((x >> 20) % 4) : 0;
            if (round % 7 == 5) { /* already sorted */
                a[i].file = 0;
                a[i].worker = (int)(i * (size_t)nw / n);
                a[i].inc = 0;
            }
            a[i].ev = i * 2 + 1; /* collected in ev order */
            memset(a[i].pad, (int)(x >> 32) & 0x7f, sizeof a[i].pad);
        }
        memcpy(b, a, n * sizeof *a);
        qsort(b, n, sizeof *b, cmp_actor_ref_test);
        ck_assert_int_eq(qc__actor_sort(a, n, sizeof *a), 0);
        ck_assert_msg(memcmp(a, b, n * sizeof *a) == 0, "round %d (n %zu, %d workers) differs from qsort",
                      round, n, nw);
    }
}
END_TEST

/* qc__jobrefs_sort (a radix sort where it can) orders refs as qsort by
 * (job, ev) does: random jobs over small, large, negative and full 64-bit
 * ranges (QC_NO_JOB among them), sorted and reversed input, refs in
 * ascending ev (the radix path) and in random ev order (qsort's). */
START_TEST(test_jobrefs_sort_as_qsort)
{
    enum { N = 6000 };
    static qc__jobref a[N], b[N];
    uint64_t x = 88172645463325252ull;
    const int64_t spans[] = {1, 3, 1000, 5000000, INT64_MAX};

    for (int round = 0; round < 40; round++) {
        size_t n = round % 4 == 0 ? 1 + (size_t)round * 7 : N - (size_t)round * 13;
        int64_t span = spans[round % 5];
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            int64_t job = span == INT64_MAX ? (int64_t)x : (int64_t)(x % (uint64_t)span) - span / 2;
            if (round % 7 == 3 && i % 10 == 0)
                job = QC_NO_JOB;
            if (round % 9 == 4)
                job = (int64_t)i; /* already sorted */
            if (round % 9 == 5)
                job = (int64_t)(n - i); /* reversed */
            a[i].job = job;
            a[i].ev = round % 3 == 2 ? (size_t)(x >> 40) : i * 3 + 1;
        }
        memcpy(b, a, n * sizeof *a);
        qsort(b, n, sizeof *b, cmp_ref_test);
        qc__jobrefs_sort(a, n);
        ck_assert_msg(memcmp(a, b, n * sizeof *a) == 0, "round %d (n %zu) differs from qsort",
                      round, n);
    }
}
END_TEST

/* qc_check_all on threads gives the results of one thread (issue 16): a
 * ledger of 30,000 jobs where every 50th is claimed a second time during
 * its lease by another worker and completed twice (exclusive_claim,
 * double_complete and exclusive_run fail, others pass), checked with
 * QC_AUDIT_THREADS=1 and =3; every field of every result but the time is
 * the same, violations byte for byte. */
START_TEST(test_check_all_threads_same_results)
{
    enum { JOBS = 30000 };
    size_t cap = (size_t)JOBS * 8 * 200, len = 0;
    char *text = malloc(cap);
    qc_history h;
    qc_err err;
    qc_check *one = NULL, *three = NULL;
    size_t n1 = 0, n3 = 0;
    int64_t seq = 0;
    long failing = 0, passing = 0;

    ck_assert_ptr_nonnull(text);
    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    len += (size_t)snprintf(text + len, cap - len,
                            "{\"type\":\"header\",\"seed\":1,\"batch\":1,\"lease_ms\":5000}\n");
    for (int j = 1; j <= JOBS; j++) {
        double now = 1e12 + j * 10.0, t = j * 10.0;
        int w = j % 16;
        len += (size_t)snprintf(
            text + len, cap - len,
            "{\"seq\":%lld,\"type\":\"ok\",\"op\":\"enqueue\",\"worker\":-1,\"rows\":1,\"job\":%d}\n"
            "{\"seq\":%lld,\"t\":%.3f,\"type\":\"invoke\",\"op\":\"claim\",\"worker\":%d,"
            "\"req\":%d}\n"
            "{\"seq\":%lld,\"t\":%.3f,\"type\":\"ok\",\"op\":\"claim\",\"worker\":%d,\"req\":%d,"
            "\"rows\":1,\"job\":%d,\"token\":\"t%d\",\"now\":%.1f,\"lease_until\":%.1f}\n"
            "{\"seq\":%lld,\"t\":%.3f,\"type\":\"effect\",\"worker\":%d,\"job\":%d,"
            "\"token\":\"t%d\",\"op_key\":\"%d\",\"applied\":true}\n",
            (long long)seq + 1, j, (long long)seq + 2, t, w, 2 * j, (long long)seq + 3, t + 1, w,
            2 * j, j, j, now, now + 5000, (long long)seq + 4, t + 1.5, w, j, j, j);
        seq += 4;
        if (j % 50 == 0) { /* another worker claims it while the lease is live */
            len += (size_t)snprintf(
                text + len, cap - len,
                "{\"seq\":%lld,\"t\":%.3f,\"type\":\"invoke\",\"op\":\"claim\",\"worker\":%d,"
                "\"req\":%d}\n"
                "{\"seq\":%lld,\"t\":%.3f,\"type\":\"ok\",\"op\":\"claim\",\"worker\":%d,"
                "\"req\":%d,\"rows\":1,\"job\":%d,\"token\":\"u%d\",\"now\":%.1f,"
                "\"lease_until\":%.1f}\n"
                "{\"seq\":%lld,\"t\":%.3f,\"type\":\"invoke\",\"op\":\"complete\",\"worker\":%d,"
                "\"req\":%d,\"job\":%d,\"token\":\"u%d\"}\n"
                "{\"seq\":%lld,\"t\":%.3f,\"type\":\"ok\",\"op\":\"complete\",\"worker\":%d,"
                "\"req\":%d,\"job\":%d,\"token\":\"u%d\",\"rows\":1,\"now\":%.1f}\n",
                (long long)seq + 1, t + 1.2, w + 16, 2 * j, (long long)seq + 2, t + 1.3, w + 16,
                2 * j, j, j, now + 1, now + 5001, (long long)seq + 3, t + 1.4, w + 16, 2 * j + 1,
                j, j, (long long)seq + 4, t + 1.45, w + 16, 2 * j + 1, j, j, now + 2);
            seq += 4;
        }
        len += (size_t)snprintf(
            text + len, cap - len,
            "{\"seq\":%lld,\"t\":%.3f,\"type\":\"invoke\",\"op\":\"complete\",\"worker\":%d,"
            "\"req\":%d,\"job\":%d,\"token\":\"t%d\"}\n"
            "{\"seq\":%lld,\"t\":%.3f,\"type\":\"ok\",\"op\":\"complete\",\"worker\":%d,"
            "\"req\":%d,\"job\":%d,\"token\":\"t%d\",\"rows\":1,\"now\":%.1f}\n",
            (long long)seq + 1, t + 2, w, 2 * j + 1, j, j, (long long)seq + 2, t + 3, w,
            2 * j + 1, j, j, now + 3);
        seq += 2;
    }
    for (int j = 1; j <= JOBS; j++)
        len +=
            (size_t)snprintf(text + len, cap - len,
                             "{\"seq\":%lld,\"type\":\"snapshot\",\"job\":%d,\"state\":\"done\"}\n",
                             (long long)++seq, j);
    ck_assert_uint_lt(len, cap);
    ck_assert_int_eq(qc_history_parse(&h, text, &err), 0);
    free(text);
    setenv("QC_AUDIT_THREADS", "1", 1);
    ck_assert_int_eq(qc_check_threads(h.n), 1);
    ck_assert_int_eq(qc_check_all(&h, &one, &n1), 0);
    setenv("QC_AUDIT_THREADS", "3", 1);
    ck_assert_int_eq(qc_check_threads(h.n), 3);
    ck_assert_int_eq(qc_check_all(&h, &three, &n3), 0);
    unsetenv("QC_AUDIT_THREADS");
    ck_assert_uint_eq(n1, n3);
    for (size_t i = 0; i < n1; i++) {
        ck_assert_str_eq(one[i].name, three[i].name);
        ck_assert_int_eq(one[i].verdict, three[i].verdict);
        ck_assert_int_eq(one[i].opportunities, three[i].opportunities);
        ck_assert_int_eq(one[i].nviolations, three[i].nviolations);
        ck_assert_uint_eq(one[i].nstored, three[i].nstored);
        ck_assert_str_eq(one[i].summary, three[i].summary);
        for (size_t k = 0; k < one[i].nstored; k++)
            ck_assert_msg(memcmp(&one[i].v[k], &three[i].v[k], sizeof one[i].v[k]) == 0,
                          "%s: violation %zu differs: %s / %s", one[i].name, k, one[i].v[k].msg,
                          three[i].v[k].msg);
        failing += one[i].verdict == QC_FAIL;
        passing += one[i].verdict == QC_PASS;
    }
    /* not a comparison of empty results */
    ck_assert_str_eq(one[0].name, "exclusive_claim");
    ck_assert_int_eq(one[0].verdict, QC_FAIL);
    ck_assert_int_eq(one[0].nviolations, JOBS / 50);
    ck_assert_str_eq(one[1].name, "double_complete");
    ck_assert_int_eq(one[1].nviolations, JOBS / 50);
    ck_assert_int_ge(failing, 2);
    ck_assert_int_ge(passing, 2);
    qc_checks_free(one, n1);
    qc_checks_free(three, n3);
    qc_history_fini(&h);
}
END_TEST

/* A correct run of 40,000 jobs (240,000 lines): every checker passes (the
 * fault checkers with nothing to judge say INCONCLUSIVE, never FAIL), in
 * well under a second of checking. */
START_TEST(test_check_all_large_correct_ledger_passes)
{
    enum { JOBS = 40000 };
    size_t cap = (size_t)JOBS * 6 * 200, len = 0;
    char *text = malloc(cap);
    qc_history h;
    qc_err err;
    qc_check *c = NULL;
    size_t n = 0;
    int64_t seq = 0;
    struct timespec t0, t1;

    ck_assert_ptr_nonnull(text);
    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    len +=
        (size_t)snprintf(text + len, cap - len, "{\"type\":\"header\",\"seed\":1,\"batch\":1}\n");
    for (int j = 1; j <= JOBS; j++) {
        double now = 1e12 + j * 10.0, t = j * 10.0;
        int w = j % 16;
        len += (size_t)snprintf(
            text + len, cap - len,
            "{\"seq\":%lld,\"type\":\"ok\",\"op\":\"enqueue\",\"worker\":0,\"rows\":1,\"job\":%d}\n"
            "{\"seq\":%lld,\"t\":%.3f,\"type\":\"invoke\",\"op\":\"claim\",\"worker\":%d,"
            "\"req\":%d}\n"
            "{\"seq\":%lld,\"t\":%.3f,\"type\":\"ok\",\"op\":\"claim\",\"worker\":%d,\"req\":%d,"
            "\"rows\":1,\"job\":%d,\"token\":\"t%d\",\"now\":%.1f,\"lease_until\":%.1f}\n"
            "{\"seq\":%lld,\"t\":%.3f,\"type\":\"invoke\",\"op\":\"complete\",\"worker\":%d,"
            "\"req\":%d,\"job\":%d,\"token\":\"t%d\"}\n"
            "{\"seq\":%lld,\"t\":%.3f,\"type\":\"ok\",\"op\":\"complete\",\"worker\":%d,"
            "\"req\":%d,\"job\":%d,\"token\":\"t%d\",\"rows\":1,\"now\":%.1f}\n",
            (long long)seq + 1, j, (long long)seq + 2, t, w, 2 * j, (long long)seq + 3, t + 1, w,
            2 * j, j, j, now, now + 5000, (long long)seq + 4, t + 2, w, 2 * j + 1, j, j,
            (long long)seq + 5, t + 3, w, 2 * j + 1, j, j, now + 3);
        seq += 5;
    }
    for (int j = 1; j <= JOBS; j++)
        len +=
            (size_t)snprintf(text + len, cap - len,
                             "{\"seq\":%lld,\"type\":\"snapshot\",\"job\":%d,\"state\":\"done\"}\n",
                             (long long)++seq, j);
    ck_assert_uint_lt(len, cap);
    ck_assert_int_eq(qc_history_parse(&h, text, &err), 0);
    free(text);
    ck_assert_uint_eq(h.n, (size_t)JOBS * 6);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_int_eq(qc_check_all(&h, &c, &n), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (size_t i = 0; i < n; i++) {
        int judged = strcmp(c[i].name, "stale_token_rejected") != 0 &&
                     strcmp(c[i].name, "no_false_success") != 0 &&
                     strcmp(c[i].name, "effects_once") != 0 && strcmp(c[i].name, "recovery") != 0 &&
                     strcmp(c[i].name, "exclusive_run") != 0 &&
                     strcmp(c[i].name, "own_lease") != 0 &&
                     strcmp(c[i].name, "bounded_failure") != 0 &&
                     strcmp(c[i].name, "bounded_idle_polling") != 0 &&
                     strcmp(c[i].name, "retry_delay") != 0 &&
                     strcmp(c[i].name, "group_exclusive") != 0 &&
                     strcmp(c[i].name, "group_order") != 0;
        /* this ledger has no witness and no copies of a message */
        int witness = strncmp(c[i].name, "witness_", 8) == 0 ||
                      strcmp(c[i].name, "message_once") == 0;
        ck_assert_msg(c[i].verdict == (witness  ? QC_NOT_APPLICABLE
                                       : judged ? QC_PASS
                                                : QC_INCONCLUSIVE),
                      "%s: %s %s", c[i].name, qc_verdict_name(c[i].verdict), c[i].summary);
    }
    /* a lease per job, and every completed job but the last has a claim
     * sent after its acknowledgement */
    ck_assert_int_eq(c[0].opportunities, JOBS + JOBS - 1);
    ck_assert_int_eq(c[2].opportunities, JOBS);
    ck_assert_str_eq(c[10].name, "no_early_reap");
    ck_assert_int_eq(c[10].opportunities, JOBS);
    ck_assert_str_eq(c[11].name, "batch_bound");
    ck_assert_int_eq(c[11].opportunities, JOBS);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    fprintf(stderr, "check_checkers: checking 240,000 lines took %.0f ms\n", ms);
    qc_checks_free(c, n);
    qc_history_fini(&h);
}
END_TEST

/* Claimed again after done (C01): worker 3 claims job 17 and completes it,
 * the complete acknowledged with rows 1 at seq 4; worker 9 then sends a
 * claim (seq 5) that returns job 17 (seq 6).  The first lease ended at the
 * complete, so no two leases overlap: only the done rule sees it. */
#define EC_DONE_BODY                                                                               \
    "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"                    \
    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"        \
    "'token':'a','now':1000.5,'lease_until':6000.5}\n"                                                 \
    "{'seq':3,'t':5,'type':'invoke','op':'complete','worker':3,'inc':0,'req':2,'job':17,"          \
    "'token':'a'}\n"                                                                               \
    "{'seq':4,'t':6,'type':'ok','op':'complete','worker':3,'inc':0,'req':2,'job':17,"              \
    "'token':'a','rows':1,'now':1005.5}\n"                                                           \
    "{'seq':5,'t':10,'type':'invoke','op':'claim','worker':9,'inc':0,'req':3}\n"                   \
    "{'seq':6,'t':11,'type':'ok','op':'claim','worker':9,'inc':0,'req':3,'rows':1,'job':17,"       \
    "'token':'b','now':1010.5,'lease_until':6010.5}\n"

START_TEST(test_exclusive_claim_claimed_again_after_done_fails)
{
    qc_check c;

    run(qc_check_exclusive_claim, HEADER EC_DONE_BODY, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_int_eq(c.opportunities, 3); /* 2 leases + 1 completed job watched */
    ASSERT_VIOLATION(&c, 0, 17, 2, 3, 4, 5, 6);
    ck_assert_str_eq(c.v[0].msg, "job 17 claimed again by worker 9 (req 3, sent at seq 5) after "
                                 "its complete by worker 3 was acknowledged with rows 1 at seq 4");
    free(c.v);
}
END_TEST

/* Worker 9's claim was sent before the complete's acknowledgement but
 * answered after the complete was sent: the snapshot-claim race of C01
 * (the claim request starts first).  No server time is needed: the claim
 * carries none here. */
START_TEST(test_exclusive_claim_claim_answered_while_completing_fails)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
               "'job':17,'token':'a','now':1000.5,'lease_until':6000.5}\n"
               "{'seq':3,'t':4,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"
               "{'seq':4,'t':5,'type':'invoke','op':'complete','worker':3,'inc':0,'req':3,"
               "'job':17,'token':'a'}\n"
               "{'seq':5,'t':6,'type':'ok','op':'complete','worker':3,'inc':0,'req':3,'job':17,"
               "'token':'a','rows':1,'now':1005.5}\n"
               "{'seq':6,'t':60,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':1,"
               "'job':17,'token':'b'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 3, 4, 5, 6);
    ck_assert_str_eq(c.v[0].msg, "job 17 claimed by worker 9 (sent at seq 3, after worker 3's claim "
                                 "seq 2 was answered; answered at seq 6) while worker 3's complete "
                                 "was in flight (sent at seq 4, acknowledged with rows 1 at seq 5)");
    free(c.v);
}
END_TEST

/* A stale complete accepted after the job was reaped and claimed again:
 * the new claim (answered after the complete was sent) ran while the old
 * owner's complete was honoured. */
START_TEST(test_exclusive_claim_stale_complete_after_reclaim_fails)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
               "'job':17,'token':'a','now':1000.5,'lease_until':1100.5}\n"
               "{'seq':3,'t':200,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"
               "{'seq':4,'t':201,'type':'invoke','op':'complete','worker':3,'inc':0,'req':3,"
               "'job':17,'token':'a'}\n"
               "{'seq':5,'t':202,'type':'ok','op':'complete','worker':3,'inc':0,'req':3,'job':17,"
               "'token':'a','rows':1,'now':1200.5}\n"
               "{'seq':6,'t':203,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':1,"
               "'job':17,'token':'b','now':1150.5,'lease_until':6150.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 3, 4, 5, 6);
    free(c.v);
}
END_TEST

/* Coarse or early clocks raise no alarm: the complete's "now" is the
 * transaction start or whole seconds, earlier than the claim's, and the
 * claim that led to it was answered before it was sent. */
START_TEST(test_exclusive_claim_complete_time_earlier_than_claim_passes)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
               "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
               "'job':17,'token':'a','now':1000.7,'lease_until':6000.5}\n"
               "{'seq':3,'t':5,'type':'invoke','op':'complete','worker':3,'inc':0,'req':2,"
               "'job':17,'token':'a'}\n"
               "{'seq':4,'t':6,'type':'ok','op':'complete','worker':3,'inc':0,'req':2,'job':17,"
               "'token':'a','rows':1,'now':1000.5}\n"
               "{'seq':5,'t':7,'type':'invoke','op':'claim','worker':3,'inc':0,'req':3}\n"
               "{'seq':6,'t':8,'type':'ok','op':'claim','worker':3,'inc':0,'req':3,'rows':1,"
               "'job':18,'token':'b','now':1001.5,'lease_until':6001.5}\n",
        &c);
    ck_assert_msg(c.verdict == QC_PASS, "%s", c.nviolations > 0 ? c.v[0].msg : c.summary);
    free(c.v);
}
END_TEST

/* Issue 11, job 15770: a starved client.  Worker 45's claim ran on the
 * server at 683269.6 (lease until 688269.5) but its answer reached the
 * ledger 5.9 s later (seq 40); meanwhile the lease expired, the reaper took
 * the job back (688333.6), worker 33 claimed and completed it, and worker
 * 45's stale complete was refused.  The server times prove there was no
 * double lease: no checker may call it a violation. */
#define STARVED_CLAIM_LEDGER                                                                       \
    "{'type':'header','seed':13,'lease_ms':5000,'max_attempts':3,'reaper_interval_ms':500,"       \
    "'recovery_slack_ms':2000,'batch':1}\n"                                                        \
    "{'seq':1,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':15770}\n"                         \
    "{'seq':10,'t':100,'type':'invoke','op':'claim','worker':45,'inc':0,'req':1}\n"                \
    "{'seq':20,'t':5200,'type':'invoke','op':'reap','worker':-1,'inc':0,'req':2}\n"                \
    "{'seq':21,'t':5210,'type':'ok','op':'reap','worker':-1,'inc':0,'req':2,'rows':1,"             \
    "'job':15770,'state':'ready','now':688333.6}\n"                                                \
    "{'seq':22,'t':5300,'type':'invoke','op':'claim','worker':33,'inc':0,'req':3}\n"               \
    "{'seq':23,'t':5310,'type':'ok','op':'claim','worker':33,'inc':0,'req':3,'rows':1,"            \
    "'job':15770,'token':'b','now':688400.1,'lease_until':693400.1,'attempt':2,'op_key':'15770'}\n" \
    "{'seq':24,'t':5311,'type':'effect','worker':33,'inc':0,'job':15770,'token':'b',"              \
    "'op_key':'15770','applied':true}\n"                                                           \
    "{'seq':30,'t':5320,'type':'invoke','op':'complete','worker':33,'inc':0,'req':4,"              \
    "'job':15770,'token':'b'}\n"                                                                   \
    "{'seq':31,'t':5330,'type':'ok','op':'complete','worker':33,'inc':0,'req':4,'job':15770,"      \
    "'token':'b','rows':1,'now':688420.5,'counted':true}\n"                                        \
    "{'seq':40,'t':6000,'type':'ok','op':'claim','worker':45,'inc':0,'req':1,'rows':1,"            \
    "'job':15770,'token':'a','now':683269.6,'lease_until':688269.5,'attempt':1,'op_key':'15770'}\n" \
    "{'seq':41,'t':6001,'type':'effect','worker':45,'inc':0,'job':15770,'token':'a',"              \
    "'op_key':'15770','applied':false}\n"                                                          \
    "{'seq':42,'t':6002,'type':'invoke','op':'complete','worker':45,'inc':0,'req':5,"              \
    "'job':15770,'token':'a'}\n"                                                                   \
    "{'seq':43,'t':6010,'type':'ok','op':'complete','worker':45,'inc':0,'req':5,'job':15770,"      \
    "'token':'a','rows':0,'counted':false}\n"                                                      \
    "{'seq':50,'t':7000,'type':'snapshot','job':15770,'state':'done','attempt':2}\n"               \
    "{'seq':51,'t':7001,'type':'end','drained':true}\n"

START_TEST(test_all_checkers_starved_claim_answer_no_violation)
{
    qc_history h;
    qc_check *c = NULL;
    size_t n = 0;

    memset(&h, 0, sizeof h);
    load(&h, STARVED_CLAIM_LEDGER);
    ck_assert_int_eq(qc_check_all(&h, &c, &n), 0);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(c[i].nviolations == 0, "%s: %s", c[i].name,
                      c[i].nstored > 0 ? c[i].v[0].msg : c[i].summary);
    ck_assert_str_eq(c[0].name, "exclusive_claim");
    ck_assert_int_eq(c[0].verdict, QC_PASS);
    qc_checks_free(c, n);
    qc_history_fini(&h);
}
END_TEST

/* The same in the transaction model (no lease_until anywhere): the rule
 * needs no lease, and the checker is judged, not NOT_APPLICABLE. */
START_TEST(test_exclusive_claim_txn_model_claimed_again_after_done_fails)
{
    qc_history h;
    qc_check *c = NULL;
    size_t n = 0;

    memset(&h, 0, sizeof h);
    load(&h, "{'type':'header','seed':7,'lease_ms':5000,'model':'transaction'}\n" EC_DONE_BODY);
    ck_assert_int_eq(qc_check_all(&h, &c, &n), 0);
    ck_assert_str_eq(c[0].name, "exclusive_claim");
    ck_assert_int_eq(c[0].verdict, QC_FAIL);
    ck_assert_int_eq(c[0].opportunities, 2); /* job 17 watched + worker 3's claim held */
    ASSERT_VIOLATION(&c[0], 0, 17, 2, 3, 4, 5, 6);
    qc_checks_free(c, n);
    qc_history_fini(&h);
}
END_TEST

/* Issue 18: two open claims in the transaction model.  Worker 9's claim of
 * job 17 was sent (seq 3) after worker 3's claim was answered (seq 2) and
 * answered (seq 4) before worker 3's commit was sent (seq 5): both held the
 * job in open transactions.  Worker 3's commit went through (OK), so its
 * transaction was alive all along. */
START_TEST(test_exclusive_claim_txn_model_two_open_claims_fails)
{
    qc_history h;
    qc_check *c = NULL;
    size_t n = 0;

    memset(&h, 0, sizeof h);
    load(&h, "{'type':'header','seed':7,'lease_ms':5000,'model':'transaction'}\n"
             "{'seq':1,'type':'invoke','op':'claim','worker':3,'req':1}\n"
             "{'seq':2,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,'token':'a'}\n"
             "{'seq':3,'type':'invoke','op':'claim','worker':9,'req':2}\n"
             "{'seq':4,'type':'ok','op':'claim','worker':9,'req':2,'rows':1,'job':17,'token':'b'}\n"
             "{'seq':5,'type':'invoke','op':'complete','worker':3,'req':3,'job':17,'token':'a'}\n"
             "{'seq':6,'type':'ok','op':'complete','worker':3,'req':3,'job':17,'rows':1}\n"
             "{'seq':7,'type':'invoke','op':'complete','worker':9,'req':4,'job':17,'token':'b'}\n"
             "{'seq':8,'type':'ok','op':'complete','worker':9,'req':4,'job':17,'rows':0}\n");
    ck_assert_int_eq(qc_check_all(&h, &c, &n), 0);
    ck_assert_int_eq(c[0].verdict, QC_FAIL);
    ck_assert_int_eq(c[0].nviolations, 1);
    ASSERT_VIOLATION(&c[0], 0, 17, 2, 3, 4, 5, 6);
    qc_checks_free(c, n);
    qc_history_fini(&h);
}
END_TEST

/* Issue 11: every run ends with one verdict line saying why.  A ledger
 * without "checkers" in its header (a run without a scenario file) judges
 * every checker, so an INCONCLUSIVE one makes exit 4, and the line must say
 * which checkers had no opportunity and that no scenario named the judged
 * ones. */
START_TEST(test_audit_verdict_line_says_why)
{
    qc_history h;
    qc_check *c = NULL;
    size_t n = 0;
    char line[1024];

    memset(&h, 0, sizeof h);
    load(&h, HEADER EC_DONE_BODY);
    ck_assert_int_eq(qc_check_all(&h, &c, &n), 0);
    qc_audit_verdict_line(c, n, h.info.checkers, 0, line, sizeof line);
    ck_assert_msg(strncmp(line, "qchaos: verdict: FAIL: exclusive_claim (1 violation)", 51) == 0,
                  "%s", line);
    qc_checks_free(c, n);
    qc_history_fini(&h);

    memset(&h, 0, sizeof h);
    load(&h, HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
                    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':0}\n");
    ck_assert_int_eq(qc_check_all(&h, &c, &n), 0);
    qc_audit_verdict_line(c, n, h.info.checkers, 0, line, sizeof line);
    ck_assert_msg(strstr(line, "qchaos: verdict: INCONCLUSIVE: no violation, but ") == line, "%s",
                  line);
    ck_assert_msg(strstr(line, "stale_token_rejected") != NULL, "%s", line);
    ck_assert_msg(strstr(line, "no scenario named the checkers it judges") != NULL, "%s", line);
    qc_checks_free(c, n);
    qc_history_fini(&h);

    memset(&h, 0, sizeof h);
    load(&h, HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
                    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
                    "'job':17,'token':'a','now':1000.5,'lease_until':6000.5}\n");
    ck_assert_int_eq(qc_check_all(&h, &c, &n), 0);
    qc_audit_verdict_line(c, n, "exclusive_claim", 0, line, sizeof line);
    ck_assert_msg(strstr(line, "qchaos: verdict: PASS: 1 judged checker passed") == line, "%s",
                  line);
    qc_checks_free(c, n);
    qc_history_fini(&h);
}
END_TEST

/* Issue 11: a drain that timed out while the queue was still finishing
 * jobs (done rose over the last 5 s of monitor samples) leaves job 2
 * unfinished because the harness or the server was slow, not because the
 * queue lost it: not judged.  The same drain with no progress is judged. */
#define DRAIN_BODY(d1, d2)                                                                         \
    "{'seq':1,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':1}\n"                             \
    "{'seq':2,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':2}\n"                             \
    "{'seq':3,'t':1000,'type':'monitor','ready':1,'inflight':1,'done':0,'dead':0}\n"               \
    "{'seq':30,'t':8000,'type':'invoke','op':'complete','worker':1,'inc':0,'req':9,'job':1,"      \
    "'token':'a'}\n"                                                                              \
    "{'seq':31,'t':8001,'type':'ok','op':'complete','worker':1,'inc':0,'req':9,'job':1,"          \
    "'token':'a','rows':1}\n"                                                                     \
    "{'seq':40,'t':9000,'type':'monitor','ready':0,'inflight':1,'done':" d1 ",'dead':0}\n"         \
    "{'seq':50,'t':12000,'type':'monitor','ready':0,'inflight':1,'done':" d2 ",'dead':0}\n"        \
    "{'seq':60,'t':12100,'type':'snapshot','job':1,'state':'done','attempt':1}\n"                  \
    "{'seq':61,'t':12101,'type':'snapshot','job':2,'state':'inflight','attempt':1}\n"              \
    "{'seq':62,'t':12102,'type':'end','drained':false,'timed_out':true}\n"

START_TEST(test_no_lost_jobs_drain_timed_out_while_progressing_not_judged)
{
    qc_check c;

    run(qc_check_no_lost_jobs, HEADER DRAIN_BODY("0", "1"), &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_msg(strstr(c.summary, "still finishing") != NULL, "%s", c.summary);
    free(c.v);
    /* job 1 done long before the end, nothing finished in the last 5 s */
    run(qc_check_no_lost_jobs, HEADER DRAIN_BODY("1", "1"), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1); /* job 2 left in flight */
    free(c.v);
}
END_TEST

/* Issue 16: the same drains sampled by monitor_live (no done column): the
 * progress is read from ready + inflight shrinking.  Job 1's complete in
 * the last 5 s took inflight from 2 to 1: not judged; the same samples
 * without that change (job 1 finished before them): job 2 judged lost.  A
 * closing full sample (with done) after live ones compares with them by
 * the live counts too. */
#define DRAIN_LIVE_BODY(i1, closing)                                                               \
    "{'seq':1,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':1}\n"                             \
    "{'seq':2,'t':0,'type':'ok','op':'enqueue','worker':-1,'job':2}\n"                             \
    "{'seq':3,'t':1000,'type':'monitor','ready':1,'inflight':1,'done':0,'dead':0}\n"               \
    "{'seq':30,'t':8000,'type':'invoke','op':'complete','worker':1,'inc':0,'req':9,'job':1,"      \
    "'token':'a'}\n"                                                                              \
    "{'seq':31,'t':8001,'type':'ok','op':'complete','worker':1,'inc':0,'req':9,'job':1,"          \
    "'token':'a','rows':1}\n"                                                                     \
    "{'seq':40,'t':9000,'type':'monitor','sample':'live','ready':0,'inflight':" i1 ",'dead':0}\n" \
    "{'seq':50,'t':12000,'type':'monitor','sample':'live','ready':0,'inflight':1,'dead':0}\n"     \
    closing                                                                                        \
    "{'seq':60,'t':12100,'type':'snapshot','job':1,'state':'done','attempt':1}\n"                  \
    "{'seq':61,'t':12101,'type':'snapshot','job':2,'state':'inflight','attempt':1}\n"              \
    "{'seq':62,'t':12102,'type':'end','drained':false,'timed_out':true}\n"
#define CLOSING "{'seq':55,'t':12050,'type':'monitor','ready':0,'inflight':1,'done':1,'dead':0}\n"

START_TEST(test_no_lost_jobs_drain_live_samples_progress_read_from_live_counts)
{
    qc_check c;

    run(qc_check_no_lost_jobs, HEADER DRAIN_LIVE_BODY("2", ""), &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_msg(strstr(c.summary, "still finishing") != NULL, "%s", c.summary);
    free(c.v);
    run(qc_check_no_lost_jobs, HEADER DRAIN_LIVE_BODY("2", CLOSING), &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    free(c.v);
    /* nothing left ready + inflight in the last 5 s: job 2 is lost */
    run(qc_check_no_lost_jobs, HEADER DRAIN_LIVE_BODY("1", ""), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_int_eq(c.v[0].job, 2);
    free(c.v);
    run(qc_check_no_lost_jobs, HEADER DRAIN_LIVE_BODY("1", CLOSING), &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    free(c.v);
}
END_TEST

/* Transaction model, no job claimed twice: PASS with the completed jobs as
 * opportunities; without a later claim there is nothing to watch. */
START_TEST(test_exclusive_claim_txn_model_no_reclaim_passes)
{
    qc_history h;
    qc_check *c = NULL;
    size_t n = 0;

    memset(&h, 0, sizeof h);
    load(&h, "{'type':'header','seed':7,'lease_ms':5000,'model':'transaction'}\n"
             "{'seq':1,'type':'invoke','op':'claim','worker':3,'req':1}\n"
             "{'seq':2,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,'token':'a'}\n"
             "{'seq':3,'type':'invoke','op':'complete','worker':3,'req':2,'job':17,'token':'a'}\n"
             "{'seq':4,'type':'ok','op':'complete','worker':3,'req':2,'job':17,'rows':1}\n"
             "{'seq':5,'type':'invoke','op':'claim','worker':3,'req':3}\n"
             "{'seq':6,'type':'ok','op':'claim','worker':3,'req':3,'rows':1,'job':18,'token':'b'}\n"
             "{'seq':7,'type':'invoke','op':'complete','worker':3,'req':4,'job':18,'token':'b'}\n"
             "{'seq':8,'type':'ok','op':'complete','worker':3,'req':4,'job':18,'rows':1}\n");
    ck_assert_int_eq(qc_check_all(&h, &c, &n), 0);
    ck_assert_int_eq(c[0].verdict, QC_PASS);
    /* job 17 watched (nothing was claimed after 18), and the two claims
     * held to their commit (the transaction model's open-claims rule) */
    ck_assert_int_eq(c[0].opportunities, 3);
    qc_checks_free(c, n);
    qc_history_fini(&h);
}
END_TEST

/* Not a violation: a 0-row complete does not make the job done (18); a
 * complete whose answer was lost (info) is not an acknowledgement (19). */
START_TEST(test_exclusive_claim_reclaim_not_after_ack_passes)
{
    qc_check c;

    run(qc_check_exclusive_claim,
        HEADER
               /* job 18: 0-row complete, then claimed again */
               "{'seq':7,'t':300,'type':'invoke','op':'claim','worker':4,'inc':0,'req':4}\n"
               "{'seq':8,'t':301,'type':'ok','op':'claim','worker':4,'inc':0,'req':4,'rows':1,"
               "'job':18,'token':'c','now':1300.5,'lease_until':1400.5}\n"
               "{'seq':9,'t':500,'type':'invoke','op':'complete','worker':4,'inc':0,'req':5,"
               "'job':18,'token':'c'}\n"
               "{'seq':10,'t':501,'type':'ok','op':'complete','worker':4,'inc':0,'req':5,'job':18,"
               "'token':'c','rows':0,'now':1500.5}\n"
               "{'seq':11,'t':502,'type':'invoke','op':'claim','worker':5,'inc':0,'req':6}\n"
               "{'seq':12,'t':503,'type':'ok','op':'claim','worker':5,'inc':0,'req':6,'rows':1,"
               "'job':18,'token':'d','now':1600.5,'lease_until':6600.5}\n"
               /* job 19: complete answer lost, then claimed again */
               "{'seq':13,'t':600,'type':'invoke','op':'claim','worker':6,'inc':0,'req':7}\n"
               "{'seq':14,'t':601,'type':'ok','op':'claim','worker':6,'inc':0,'req':7,'rows':1,"
               "'job':19,'token':'e','now':1700.5,'lease_until':1800.5}\n"
               "{'seq':15,'t':700,'type':'invoke','op':'complete','worker':6,'inc':0,'req':8,"
               "'job':19,'token':'e'}\n"
               "{'seq':16,'t':701,'type':'info','op':'complete','worker':6,'inc':0,'req':8,"
               "'job':19,'token':'e','error':'lost'}\n"
               "{'seq':17,'t':9000,'type':'invoke','op':'claim','worker':7,'inc':0,'req':9}\n"
               "{'seq':18,'t':9001,'type':'ok','op':'claim','worker':7,'inc':0,'req':9,'rows':1,"
               "'job':19,'token':'f','now':12000.5,'lease_until':17000.5}\n",
        &c);
    ck_assert_msg(c.verdict == QC_PASS, "%s", c.nviolations > 0 ? c.v[0].msg : c.summary);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

static Suite *checkers_suite(void)
{
    Suite *s = suite_create("checkers");
    TCase *tc;

    tc = tcase_create("exclusive_claim");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_exclusive_claim_overlapping_leases_fail);
    tcase_add_test(tc, test_exclusive_claim_reclaim_after_expiry_passes);
    tcase_add_test(tc, test_exclusive_claim_fail_then_reclaim_passes);
    tcase_add_test(tc, test_exclusive_claim_reclaim_after_complete_lower_bound_passes);
    tcase_add_test(tc, test_exclusive_claim_reclaim_before_complete_lower_bound_fails);
    tcase_add_test(tc, test_exclusive_claim_info_complete_then_reclaim_passes);
    tcase_add_test(tc, test_exclusive_claim_unanswered_complete_then_reclaim_passes);
    tcase_add_test(tc, test_exclusive_claim_zero_row_release_keeps_lease_fails);
    tcase_add_test(tc, test_exclusive_claim_reclaim_within_renewed_lease_fails);
    tcase_add_test(tc, test_exclusive_claim_reclaim_after_renewed_lease_passes);
    tcase_add_test(tc, test_exclusive_claim_rotated_token_fail_ends_lease_passes);
    tcase_add_test(tc, test_exclusive_claim_rotated_token_ends_only_its_lease_fails);
    tcase_add_test(tc, test_exclusive_claim_tokenless_fail_then_reclaim_passes);
    tcase_add_test(tc, test_exclusive_claim_reap_of_live_lease_then_reclaim_fails);
    tcase_add_test(tc, test_exclusive_claim_renew_after_lapse_passes);
    tcase_add_test(tc, test_exclusive_claim_renew_after_lapse_into_live_lease_fails);
    tcase_add_test(tc, test_exclusive_claim_no_claims_inconclusive);
    tcase_add_test(tc, test_exclusive_claim_claims_without_server_time_inconclusive);
    tcase_add_test(tc, test_exclusive_claim_claimed_again_after_done_fails);
    tcase_add_test(tc, test_exclusive_claim_claim_answered_while_completing_fails);
    tcase_add_test(tc, test_exclusive_claim_stale_complete_after_reclaim_fails);
    tcase_add_test(tc, test_exclusive_claim_complete_time_earlier_than_claim_passes);
    tcase_add_test(tc, test_exclusive_claim_txn_model_claimed_again_after_done_fails);
    tcase_add_test(tc, test_all_checkers_starved_claim_answer_no_violation);
    tcase_add_test(tc, test_exclusive_claim_txn_model_two_open_claims_fails);
    tcase_add_test(tc, test_audit_verdict_line_says_why);
    tcase_add_test(tc, test_no_lost_jobs_drain_timed_out_while_progressing_not_judged);
    tcase_add_test(tc, test_no_lost_jobs_drain_live_samples_progress_read_from_live_counts);
    tcase_add_test(tc, test_exclusive_claim_whole_second_claim_clock_passes);
    tcase_add_test(tc, test_exclusive_claim_transaction_start_now_passes);
    tcase_add_test(tc, test_exclusive_claim_txn_model_no_reclaim_passes);
    tcase_add_test(tc, test_exclusive_claim_reclaim_not_after_ack_passes);
    suite_add_tcase(s, tc);

    tc = tcase_create("double_complete");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_double_complete_two_acked_completes_fail);
    tcase_add_test(tc, test_double_complete_zero_row_complete_passes);
    tcase_add_test(tc, test_double_complete_no_completes_inconclusive);
    tcase_add_test(tc, test_double_complete_lost_ack_committed_then_retry);
    suite_add_tcase(s, tc);

    tc = tcase_create("no_lost_jobs");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_no_lost_jobs_unfinished_missing_and_unknown_jobs_fail);
    tcase_add_test(tc, test_no_lost_jobs_all_done_or_dead_passes);
    tcase_add_test(tc, test_no_lost_jobs_info_enqueue_accounts_for_one_job_passes);
    tcase_add_test(tc, test_no_lost_jobs_info_enqueue_accounts_for_one_job_only_fails);
    tcase_add_test(tc, test_no_lost_jobs_unearned_done_and_early_dead_fail);
    tcase_add_test(tc, test_no_lost_jobs_interrupted_run_inconclusive);
    tcase_add_test(tc, test_no_lost_jobs_no_snapshot_inconclusive);
    suite_add_tcase(s, tc);

    tc = tcase_create("acked_durable");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_acked_durable_acked_job_not_done_fails);
    tcase_add_test(tc, test_acked_durable_acked_job_done_passes);
    tcase_add_test(tc, test_acked_durable_no_snapshot_inconclusive);
    tcase_add_test(tc, test_acked_durable_no_acked_complete_inconclusive);
    tcase_add_test(tc, test_acked_durable_lost_at_switch_fails);
    tcase_add_test(tc, test_acked_durable_none_lost_at_switch_passes);
    tcase_add_test(tc, test_acked_durable_answer_during_switch_read_not_judged);
    suite_add_tcase(s, tc);

    tc = tcase_create("common");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_check_violation_beyond_cap_counts_all);
    tcase_add_test(tc, test_check_violation_evidence_sorted_distinct_capped);
    tcase_add_test(tc, test_check_finish_zero_opportunities_inconclusive);
    tcase_add_test(tc, test_verdict_name_each_verdict_named);
    tcase_add_test(tc, test_check_all_overlap_ledger_every_verdict);
    tcase_add_test(tc, test_check_all_large_correct_ledger_passes);
    tcase_add_test(tc, test_check_all_threads_same_results);
    tcase_add_test(tc, test_jobrefs_sort_as_qsort);
    tcase_add_test(tc, test_actor_sort_as_qsort);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(checkers_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
