/*
 * check_groups.c - unit tests of the group checkers (harness/check_groups.c):
 * group_exclusive (no two live leases on different jobs of one group) and
 * group_order (a group's jobs are completed in enqueue order), and of the
 * ledger's "group" field.
 *
 * Each checker is fed hand-written ledgers: ones that violate its rule, ones
 * that do not (the tricky cases that must not raise a false alarm), and one
 * without grouped jobs.  The tests assert the verdict, the counts, and the
 * job ids and ledger seqs of the evidence.
 *
 * Ledgers are written with ' for " so that they read as JSON Lines; load()
 * turns them back into JSON.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/checkers.h"
#include "../harness/history.h"
#include "ledger_fixture.h"


#define HEADER "{'type':'header','seed':7,'lease_ms':5000,'max_attempts':3}\n"
#define HEADER_TX "{'type':'header','seed':7,'lease_ms':5000,'model':'transaction'}\n"

/* ---- the "group" field ------------------------------------------------- */

START_TEST(test_history_group_field_parsed_absent_null)
{
    qc_history h;

    memset(&h, 0, sizeof h);
    load(&h, HEADER "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'job':1,'group':'g1'}\n"
                    "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'job':2}\n"
                    "{'seq':3,'type':'ok','op':'claim','worker':3,'rows':1,'job':1,"
                    "'token':'a','now':1000.5,'lease_until':6000.5,'group':'g1'}\n"
                    "{'seq':4,'type':'ok','op':'claim','worker':3,'rows':1,'job':2,"
                    "'token':'b','now':1000.5,'lease_until':6000.5,'group':null}\n");
    ck_assert_uint_eq(h.n, 4);
    ck_assert_str_eq(qc_s(h.ev[0].group), "g1");
    ck_assert_ptr_null(qc_s(h.ev[1].group));
    ck_assert_str_eq(qc_s(h.ev[2].group), "g1");
    ck_assert_ptr_null(qc_s(h.ev[3].group));
    qc_history_fini(&h);
}
END_TEST

/* Like the other strings: an integer key reads as its text, anything else
 * is a bad line. */
START_TEST(test_history_group_integer_read_as_text)
{
    qc_history h;

    memset(&h, 0, sizeof h);
    load(&h, "{'seq':1,'type':'ok','op':'enqueue','job':1,'group':7}\n");
    ck_assert_str_eq(qc_s(h.ev[0].group), "7");
    qc_history_fini(&h);
}
END_TEST

START_TEST(test_history_group_not_string_rejected)
{
    qc_history h;
    qc_err err;

    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(
        qc_history_parse(&h, "{\"seq\":1,\"type\":\"ok\",\"op\":\"enqueue\",\"group\":true}\n",
                         &err),
        QC_EINVAL);
    ck_assert_str_eq(err.msg, "(text):1: field \"group\" is not a string");
    qc_history_fini(&h);
}
END_TEST

/* ---- group_exclusive --------------------------------------------------- */

/* Jobs 17 and 18 share group g1; job 19 is in g2.  Worker 9 claims job 18
 * while worker 3's lease on job 17 is live. */
#define GE_OVERLAP_BODY                                                                            \
    "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'job':17,'group':'g1'}\n"                     \
    "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'job':18,'group':'g1'}\n"                     \
    "{'seq':3,'type':'ok','op':'enqueue','worker':-1,'job':19,'group':'g2'}\n"                     \
    "{'seq':4,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"                    \
    "{'seq':5,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"        \
    "'token':'a','now':1000.5,'lease_until':6000.5,'group':'g1'}\n"                                    \
    "{'seq':6,'t':100,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"                  \
    "{'seq':7,'t':101,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':1,'job':18,"      \
    "'token':'b','now':2000.5,'lease_until':7000.5,'group':'g1'}\n"                                    \
    "{'seq':8,'t':200,'type':'ok','op':'claim','worker':4,'inc':0,'req':3,'rows':1,'job':19,"      \
    "'token':'c','now':2100.5,'lease_until':7100.5,'group':'g2'}\n"

START_TEST(test_group_exclusive_two_jobs_leased_at_once_fail)
{
    qc_check c;

    run(qc_check_group_exclusive, HEADER GE_OVERLAP_BODY, &c);
    ck_assert_str_eq(c.name, "group_exclusive");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 3);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 18, 5, 7);
    ck_assert_str_eq(c.v[0].msg, "group 'g1': job 17 claimed by worker 3 (seq 5, lease until "
                                 "+5000 ms) and job 18 by worker 9 (seq 7, at +1000 ms) while "
                                 "the first lease was live");
    ck_assert_ptr_nonnull(strstr(c.summary, "3 claims with a server time on 3 grouped jobs in "
                                            "2 groups, 1 overlapping lease pairs"));
    free(c.v);
}
END_TEST

/* The group of a job known only from its claims still counts. */
START_TEST(test_group_exclusive_group_from_claims_only_fail)
{
    qc_check c;

    run(qc_check_group_exclusive,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a',"
               "'now':1000.5,'lease_until':6000.5,'group':'g1'}\n"
               "{'seq':2,'type':'ok','op':'claim','worker':9,'rows':1,'job':18,'token':'b',"
               "'now':5999.5,'lease_until':10999.5,'group':'g1'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 18, 1, 2);
    free(c.v);
}
END_TEST

/* Job 17's lease is ended by its acknowledged complete (with "now"); job 18
 * of the same group is claimed at that very moment (half-open) and later. */
#define GE_COMPLETE_PREFIX                                                                         \
    HEADER                                                                                         \
    "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'job':17,'group':'g1'}\n"                     \
    "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'job':18,'group':'g1'}\n"                     \
    "{'seq':3,'t':1,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,"                \
    "'token':'a','now':1000.5,'lease_until':6000.5,'group':'g1'}\n"                                    \
    "{'seq':4,'t':10,'type':'invoke','op':'complete','worker':3,'req':2,'job':17,"                 \
    "'token':'a'}\n"                                                                               \
    "{'seq':5,'t':11,'type':'ok','op':'complete','worker':3,'req':2,'job':17,'token':'a',"         \
    "'rows':1,'now':2000.5}\n"

START_TEST(test_group_exclusive_claim_after_acked_complete_passes)
{
    qc_check c;

    run(qc_check_group_exclusive,
        GE_COMPLETE_PREFIX "{'seq':6,'t':12,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,"
                           "'job':18,'token':'b','now':2000.5,'lease_until':7000.5,'group':'g1'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_group_exclusive_claim_before_acked_complete_fail)
{
    qc_check c;

    run(qc_check_group_exclusive,
        GE_COMPLETE_PREFIX "{'seq':6,'t':12,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,"
                           "'job':18,'token':'b','now':1999.5,'lease_until':6999.5,'group':'g1'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 18, 3, 5, 6);
    ck_assert_ptr_nonnull(strstr(c.v[0].msg, "released by complete seq 5 at +1000 ms"));
    free(c.v);
}
END_TEST

/* A complete whose answer was lost may have ended the lease from its
 * invoke on: 1000 + (510 - 10) = 1500 <= 1600. */
START_TEST(test_group_exclusive_claim_after_info_complete_passes)
{
    qc_check c;

    run(qc_check_group_exclusive,
        HEADER "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'job':17,'group':'g1'}\n"
               "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'job':18,'group':'g1'}\n"
               "{'seq':3,'t':0,'type':'invoke','op':'claim','worker':3,'req':1}\n"
               "{'seq':4,'t':10,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,"
               "'token':'a','now':1000.5,'lease_until':6000.5,'group':'g1'}\n"
               "{'seq':5,'t':510,'type':'invoke','op':'complete','worker':3,'req':2,'job':17,"
               "'token':'a'}\n"
               "{'seq':6,'t':2000,'type':'info','op':'complete','worker':3,'req':2,'job':17,"
               "'token':'a','error':'connection lost'}\n"
               "{'seq':7,'t':2100,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,'job':18,"
               "'token':'b','now':1600.5,'lease_until':6600.5,'group':'g1'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    free(c.v);
}
END_TEST

START_TEST(test_group_exclusive_claim_after_expiry_passes)
{
    qc_check c;

    run(qc_check_group_exclusive,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a',"
               "'now':1000.5,'lease_until':6000.5,'group':'g1'}\n"
               "{'seq':2,'type':'ok','op':'claim','worker':9,'rows':1,'job':18,'token':'b',"
               "'now':6000.5,'lease_until':11000.5,'group':'g1'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    free(c.v);
}
END_TEST

/* g1 and g2 are worked on at once; within each group one job at a time. */
START_TEST(test_group_exclusive_two_groups_interleaved_passes)
{
    qc_check c;

    run(qc_check_group_exclusive,
        HEADER "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'job':1,'group':'g1'}\n"
               "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'job':2,'group':'g2'}\n"
               "{'seq':3,'type':'ok','op':'enqueue','worker':-1,'job':3,'group':'g1'}\n"
               "{'seq':4,'type':'ok','op':'enqueue','worker':-1,'job':4,'group':'g2'}\n"
               "{'seq':5,'type':'ok','op':'claim','worker':3,'rows':1,'job':1,'token':'a',"
               "'now':1000.5,'lease_until':6000.5,'group':'g1'}\n"
               "{'seq':6,'type':'ok','op':'claim','worker':4,'rows':1,'job':2,'token':'b',"
               "'now':1100.5,'lease_until':6100.5,'group':'g2'}\n"
               "{'seq':7,'type':'ok','op':'complete','worker':3,'job':1,'token':'a','rows':1,"
               "'now':2000.5}\n"
               "{'seq':8,'type':'ok','op':'claim','worker':3,'rows':1,'job':3,'token':'c',"
               "'now':2050.5,'lease_until':7050.5,'group':'g1'}\n"
               "{'seq':9,'type':'ok','op':'complete','worker':4,'job':2,'token':'b','rows':1,"
               "'now':2100.5}\n"
               "{'seq':10,'type':'ok','op':'claim','worker':4,'rows':1,'job':4,'token':'d',"
               "'now':2150.5,'lease_until':7150.5,'group':'g2'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 4);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* Job 17's lease (until 6000) is renewed at 4000 until 9000: job 18's
 * claim at 8000 falls inside the renewed lease. */
START_TEST(test_group_exclusive_renew_extends_over_next_claim_fail)
{
    qc_check c;

    run(qc_check_group_exclusive,
        HEADER "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'job':17,'group':'g1'}\n"
               "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'job':18,'group':'g1'}\n"
               "{'seq':3,'t':1,'type':'ok','op':'claim','worker':3,'req':1,'rows':1,'job':17,"
               "'token':'a','now':1000.5,'lease_until':6000.5,'group':'g1'}\n"
               "{'seq':4,'t':3000,'type':'invoke','op':'renew','worker':3,'req':2,'job':17,"
               "'token':'a'}\n"
               "{'seq':5,'t':3001,'type':'ok','op':'renew','worker':3,'req':2,'job':17,"
               "'token':'a','rows':1,'now':4000.5,'lease_until':9000.5}\n"
               "{'seq':6,'type':'ok','op':'claim','worker':9,'req':3,'rows':1,'job':18,"
               "'token':'b','now':8000.5,'lease_until':13000.5,'group':'g1'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 18, 3, 5, 6);
    ck_assert_str_eq(c.v[0].msg, "group 'g1': job 17 claimed by worker 3 (seq 3, renewed at seq 5 "
                                 "until +8000 ms) and job 18 by worker 9 (seq 6, at +7000 ms) "
                                 "while the first lease was live");
    free(c.v);
}
END_TEST

/* Two leases of one job overlap: exclusive_claim's violation, not a group's. */
START_TEST(test_group_exclusive_same_job_overlap_passes)
{
    qc_check c;

    run(qc_check_group_exclusive,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a',"
               "'now':1000.5,'lease_until':6000.5,'group':'g1'}\n"
               "{'seq':2,'type':'ok','op':'claim','worker':9,'rows':1,'job':17,'token':'b',"
               "'now':2000.5,'lease_until':7000.5,'group':'g1'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* Three jobs of one group leased at once: every pair once. */
START_TEST(test_group_exclusive_three_overlapping_jobs_each_pair_once_fail)
{
    qc_check c;

    run(qc_check_group_exclusive,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':1,'rows':1,'job':1,'token':'a',"
               "'now':1000.5,'lease_until':6000.5,'group':'g'}\n"
               "{'seq':2,'type':'ok','op':'claim','worker':2,'rows':1,'job':2,'token':'b',"
               "'now':1100.5,'lease_until':6100.5,'group':'g'}\n"
               /* renewed after a lapse: a second segment of the same lease */
               "{'seq':3,'type':'ok','op':'claim','worker':3,'rows':1,'job':3,'token':'c',"
               "'now':1200.5,'lease_until':1300.5,'group':'g'}\n"
               "{'seq':4,'type':'ok','op':'renew','worker':3,'job':3,'token':'c','rows':1,"
               "'now':1400.5,'lease_until':6400.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 3);
    ck_assert_int_eq(c.nviolations, 3);
    ASSERT_VIOLATION(&c, 0, 2, 1, 2);
    ASSERT_VIOLATION(&c, 1, 3, 1, 3);
    ASSERT_VIOLATION(&c, 2, 3, 2, 3);
    free(c.v);
}
END_TEST

START_TEST(test_group_exclusive_no_grouped_jobs_inconclusive)
{
    qc_check c;

    run(qc_check_group_exclusive,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a',"
               "'now':1000.5,'lease_until':6000.5}\n"
               "{'seq':2,'type':'ok','op':'claim','worker':9,'rows':1,'job':18,'token':'b',"
               "'now':2000.5,'lease_until':7000.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_group_exclusive_claims_without_server_time_inconclusive)
{
    qc_check c;

    run(qc_check_group_exclusive,
        HEADER "{'seq':1,'type':'ok','op':'claim','worker':3,'rows':1,'job':17,'token':'a',"
               "'group':'g1'}\n"
               "{'seq':2,'type':'ok','op':'claim','worker':9,'rows':1,'job':18,'token':'b',"
               "'group':'g1'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_ptr_nonnull(strstr(c.summary, "2 claims without a server time not checked"));
    free(c.v);
}
END_TEST

/* ---- group_order ------------------------------------------------------- */

#define GO_ENQUEUE_12                                                                              \
    "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'job':1,'group':'g1'}\n"                      \
    "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'job':2,'group':'g1'}\n"

/* Job 2 (enqueued second) completes at server time 3000, job 1 at 3500. */
#define GO_INVERTED_BODY                                                                           \
    GO_ENQUEUE_12                                                                                  \
    "{'seq':3,'type':'ok','op':'claim','worker':3,'rows':1,'job':1,'token':'a','now':1000.5,"        \
    "'lease_until':6000.5,'group':'g1'}\n"                                                           \
    "{'seq':4,'type':'ok','op':'claim','worker':4,'rows':1,'job':2,'token':'b','now':1100.5,"        \
    "'lease_until':6100.5,'group':'g1'}\n"                                                           \
    "{'seq':5,'type':'ok','op':'complete','worker':4,'job':2,'token':'b','rows':1,'now':3000.5}\n"   \
    "{'seq':6,'type':'ok','op':'complete','worker':3,'job':1,'token':'a','rows':1,'now':3500.5}\n"   \
    "{'seq':7,'type':'snapshot','job':1,'state':'done'}\n"                                         \
    "{'seq':8,'type':'snapshot','job':2,'state':'done'}\n"

START_TEST(test_group_order_later_job_completed_first_fail)
{
    qc_check c;

    run(qc_check_group_order, HEADER GO_INVERTED_BODY, &c);
    ck_assert_str_eq(c.name, "group_order");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 2, 1, 2, 5, 6);
    ck_assert_str_eq(c.v[0].msg, "group 'g1': job 2 (enqueued seq 2) completed at seq 5, server "
                                 "time 3000 before job 1 (enqueued seq 1), which completed later "
                                 "(seq 6, server time 3500)");
    free(c.v);
}
END_TEST

START_TEST(test_group_order_in_enqueue_order_passes)
{
    qc_check c;

    run(qc_check_group_order,
        HEADER GO_ENQUEUE_12
        "{'seq':3,'type':'ok','op':'enqueue','worker':-1,'job':3,'group':'g1'}\n"
        "{'seq':4,'type':'ok','op':'complete','worker':4,'job':1,'token':'a','rows':1,'now':3000.5}\n"
        "{'seq':5,'type':'ok','op':'complete','worker':3,'job':2,'token':'b','rows':1,'now':3500.5}\n"
        "{'seq':6,'type':'ok','op':'complete','worker':3,'job':3,'token':'c','rows':1,'now':4000.5}"
        "\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* No server times: job 1's only complete was sent after job 2's complete
 * was answered. */
START_TEST(test_group_order_complete_sent_after_later_job_done_fail)
{
    qc_check c;

    run(qc_check_group_order,
        HEADER GO_ENQUEUE_12
        "{'seq':3,'type':'ok','op':'claim','worker':3,'rows':1,'job':1,'token':'a','group':'g1'}\n"
        "{'seq':4,'type':'invoke','op':'complete','worker':4,'req':1,'job':2,'token':'b'}\n"
        "{'seq':5,'type':'ok','op':'complete','worker':4,'req':1,'job':2,'token':'b','rows':1}\n"
        "{'seq':6,'type':'invoke','op':'complete','worker':3,'req':2,'job':1,'token':'a'}\n"
        "{'seq':7,'type':'ok','op':'complete','worker':3,'req':2,'job':1,'token':'a','rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 2, 1, 2, 5, 6, 7);
    ck_assert_ptr_nonnull(
        strstr(c.v[0].msg, "whose completes were all sent after that (first at seq 6)"));
    free(c.v);
}
END_TEST

/* No server times: job 1's complete was sent before job 2's was answered,
 * so it may have committed first, though it was answered later. */
START_TEST(test_group_order_complete_sent_before_answered_after_passes)
{
    qc_check c;

    run(qc_check_group_order,
        HEADER GO_ENQUEUE_12
        "{'seq':3,'type':'invoke','op':'complete','worker':3,'req':1,'job':1,'token':'a'}\n"
        "{'seq':4,'type':'invoke','op':'complete','worker':4,'req':2,'job':2,'token':'b'}\n"
        "{'seq':5,'type':'ok','op':'complete','worker':4,'req':2,'job':2,'token':'b','rows':1}\n"
        "{'seq':6,'type':'ok','op':'complete','worker':3,'req':1,'job':1,'token':'a','rows':1}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* lost_ack: job 1's first complete committed unanswered before job 2 was
 * completed; the retry's later "now" proves nothing. */
START_TEST(test_group_order_lost_ack_earlier_job_passes)
{
    qc_check c;

    run(qc_check_group_order,
        HEADER GO_ENQUEUE_12
        "{'seq':3,'t':10,'type':'invoke','op':'complete','worker':3,'req':1,'job':1,"
        "'token':'a'}\n"
        "{'seq':4,'t':20,'type':'info','op':'complete','worker':3,'req':1,'job':1,'token':'a',"
        "'error':'connection lost'}\n"
        "{'seq':5,'type':'ok','op':'complete','worker':4,'job':2,'token':'b','rows':1,"
        "'now':3000.5}\n"
        "{'seq':6,'t':30,'type':'invoke','op':'complete','worker':3,'req':2,'job':1,"
        "'token':'a'}\n"
        "{'seq':7,'t':31,'type':'ok','op':'complete','worker':3,'req':2,'job':1,'token':'a',"
        "'rows':1,'now':3500.5}\n"
        "{'seq':8,'type':'snapshot','job':1,'state':'done'}\n"
        "{'seq':9,'type':'snapshot','job':2,'state':'done'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_group_order_earlier_job_never_completed_fail)
{
    qc_check c;

    run(qc_check_group_order,
        HEADER GO_ENQUEUE_12
        "{'seq':3,'type':'ok','op':'complete','worker':4,'job':2,'token':'b','rows':1,"
        "'now':3000.5}\n"
        "{'seq':4,'type':'snapshot','job':1,'state':'ready'}\n"
        "{'seq':5,'type':'snapshot','job':2,'state':'done'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 2, 1, 2, 3, 4);
    ck_assert_str_eq(c.v[0].msg, "group 'g1': job 2 (enqueued seq 2) completed at seq 3, server "
                                 "time 3000 before job 1 (enqueued seq 1), which was never "
                                 "completed (ready in the final snapshot, seq 4)");
    free(c.v);
}
END_TEST

/* Job 1 ended dead: it is not judged, and job 3 is judged against job 2. */
START_TEST(test_group_order_earlier_job_dead_passes)
{
    qc_check c;

    run(qc_check_group_order,
        HEADER GO_ENQUEUE_12
        "{'seq':3,'type':'ok','op':'enqueue','worker':-1,'job':3,'group':'g1'}\n"
        "{'seq':4,'type':'ok','op':'fail','worker':3,'job':1,'token':'a','rows':1}\n"
        "{'seq':5,'type':'ok','op':'complete','worker':4,'job':2,'token':'b','rows':1,"
        "'now':3000.5}\n"
        "{'seq':6,'type':'ok','op':'complete','worker':4,'job':3,'token':'c','rows':1,"
        "'now':4000.5}\n"
        "{'seq':7,'type':'snapshot','job':1,'state':'dead'}\n"
        "{'seq':8,'type':'snapshot','job':2,'state':'done'}\n"
        "{'seq':9,'type':'snapshot','job':3,'state':'done'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* g1 = {1, 3}, g2 = {2, 4}: completed 2, 1, 4, 3, in order within each. */
START_TEST(test_group_order_two_groups_interleaved_passes)
{
    qc_check c;

    run(qc_check_group_order,
        HEADER "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'job':1,'group':'g1'}\n"
               "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'job':2,'group':'g2'}\n"
               "{'seq':3,'type':'ok','op':'enqueue','worker':-1,'job':3,'group':'g1'}\n"
               "{'seq':4,'type':'ok','op':'enqueue','worker':-1,'job':4,'group':'g2'}\n"
               "{'seq':5,'type':'ok','op':'complete','worker':1,'job':2,'rows':1,'now':1000.5}\n"
               "{'seq':6,'type':'ok','op':'complete','worker':2,'job':1,'rows':1,'now':2000.5}\n"
               "{'seq':7,'type':'ok','op':'complete','worker':1,'job':4,'rows':1,'now':3000.5}\n"
               "{'seq':8,'type':'ok','op':'complete','worker':2,'job':3,'rows':1,'now':4000.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_PASS);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_ptr_nonnull(strstr(c.summary, "4 grouped jobs in 2 groups"));
    free(c.v);
}
END_TEST

/* Job 2's completion cannot be placed against job 1's, but job 3's can:
 * job 1 (server time 5000) completed after job 3 (3000). */
START_TEST(test_group_order_overtaken_by_non_adjacent_job_fail)
{
    qc_check c;

    run(qc_check_group_order,
        HEADER GO_ENQUEUE_12
        "{'seq':3,'type':'ok','op':'enqueue','worker':-1,'job':3,'group':'g1'}\n"
        "{'seq':4,'type':'invoke','op':'complete','worker':3,'req':1,'job':1}\n"
        "{'seq':5,'type':'ok','op':'complete','worker':3,'req':1,'job':1,'rows':1,'now':5000.5}\n"
        "{'seq':6,'type':'ok','op':'complete','worker':4,'job':2,'rows':1}\n"
        "{'seq':7,'type':'ok','op':'complete','worker':5,'job':3,'rows':1,'now':3000.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 2);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 3, 1, 3, 5, 7);
    free(c.v);
}
END_TEST

/* Both enqueues were in flight at once: the queue may order them either
 * way, so nothing can be judged. */
START_TEST(test_group_order_concurrent_enqueues_not_judged_inconclusive)
{
    qc_check c;

    run(qc_check_group_order,
        HEADER "{'seq':1,'type':'invoke','op':'enqueue','worker':0,'req':1}\n"
               "{'seq':2,'type':'invoke','op':'enqueue','worker':1,'req':1}\n"
               "{'seq':3,'type':'ok','op':'enqueue','worker':0,'req':1,'job':1,'group':'g1'}\n"
               "{'seq':4,'type':'ok','op':'enqueue','worker':1,'req':1,'job':2,'group':'g1'}\n"
               "{'seq':5,'type':'ok','op':'complete','worker':4,'job':2,'rows':1,'now':3000.5}\n"
               "{'seq':6,'type':'ok','op':'complete','worker':3,'job':1,'rows':1,'now':3500.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_group_order_no_grouped_jobs_inconclusive)
{
    qc_check c;

    run(qc_check_group_order,
        HEADER "{'seq':1,'type':'ok','op':'enqueue','worker':-1,'job':1}\n"
               "{'seq':2,'type':'ok','op':'enqueue','worker':-1,'job':2}\n"
               "{'seq':3,'type':'ok','op':'complete','worker':4,'job':2,'rows':1,'now':3000.5}\n"
               "{'seq':4,'type':'ok','op':'complete','worker':3,'job':1,'rows':1,'now':3500.5}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* ---- both, whatever the model ------------------------------------------ */

START_TEST(test_group_checkers_transaction_model_fail)
{
    qc_check c;

    run(qc_check_group_exclusive, HEADER_TX GE_OVERLAP_BODY, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ASSERT_VIOLATION(&c, 0, 18, 5, 7);
    free(c.v);
    run(qc_check_group_order, HEADER_TX GO_INVERTED_BODY, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ASSERT_VIOLATION(&c, 0, 2, 1, 2, 5, 6);
    free(c.v);
}
END_TEST

START_TEST(test_check_all_runs_group_checkers_last)
{
    qc_history h;
    qc_check *c = NULL;
    size_t n = 0;

    memset(&h, 0, sizeof h);
    load(&h, HEADER GO_INVERTED_BODY);
    ck_assert_int_eq(qc_check_all(&h, &c, &n), 0);
    ck_assert_uint_ge(n, 2);
    ck_assert_str_eq(c[n - 2].name, "group_exclusive");
    ck_assert_int_eq(c[n - 2].verdict, QC_FAIL);
    ck_assert_str_eq(c[n - 1].name, "group_order");
    ck_assert_int_eq(c[n - 1].verdict, QC_FAIL);
    qc_checks_free(c, n);
    qc_history_fini(&h);
}
END_TEST

static Suite *groups_suite(void)
{
    Suite *s = suite_create("groups");
    TCase *tc;

    tc = tcase_create("group_field");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_history_group_field_parsed_absent_null);
    tcase_add_test(tc, test_history_group_integer_read_as_text);
    tcase_add_test(tc, test_history_group_not_string_rejected);
    suite_add_tcase(s, tc);

    tc = tcase_create("group_exclusive");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_group_exclusive_two_jobs_leased_at_once_fail);
    tcase_add_test(tc, test_group_exclusive_group_from_claims_only_fail);
    tcase_add_test(tc, test_group_exclusive_claim_after_acked_complete_passes);
    tcase_add_test(tc, test_group_exclusive_claim_before_acked_complete_fail);
    tcase_add_test(tc, test_group_exclusive_claim_after_info_complete_passes);
    tcase_add_test(tc, test_group_exclusive_claim_after_expiry_passes);
    tcase_add_test(tc, test_group_exclusive_two_groups_interleaved_passes);
    tcase_add_test(tc, test_group_exclusive_renew_extends_over_next_claim_fail);
    tcase_add_test(tc, test_group_exclusive_same_job_overlap_passes);
    tcase_add_test(tc, test_group_exclusive_three_overlapping_jobs_each_pair_once_fail);
    tcase_add_test(tc, test_group_exclusive_no_grouped_jobs_inconclusive);
    tcase_add_test(tc, test_group_exclusive_claims_without_server_time_inconclusive);
    suite_add_tcase(s, tc);

    tc = tcase_create("group_order");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_group_order_later_job_completed_first_fail);
    tcase_add_test(tc, test_group_order_in_enqueue_order_passes);
    tcase_add_test(tc, test_group_order_complete_sent_after_later_job_done_fail);
    tcase_add_test(tc, test_group_order_complete_sent_before_answered_after_passes);
    tcase_add_test(tc, test_group_order_lost_ack_earlier_job_passes);
    tcase_add_test(tc, test_group_order_earlier_job_never_completed_fail);
    tcase_add_test(tc, test_group_order_earlier_job_dead_passes);
    tcase_add_test(tc, test_group_order_two_groups_interleaved_passes);
    tcase_add_test(tc, test_group_order_overtaken_by_non_adjacent_job_fail);
    tcase_add_test(tc, test_group_order_concurrent_enqueues_not_judged_inconclusive);
    tcase_add_test(tc, test_group_order_no_grouped_jobs_inconclusive);
    suite_add_tcase(s, tc);

    tc = tcase_create("common");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_group_checkers_transaction_model_fail);
    tcase_add_test(tc, test_check_all_runs_group_checkers_last);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(groups_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
