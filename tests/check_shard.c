/*
 * check_shard.c - several ledgers merged into one history (a sharded run,
 * `qchaos audit L0 L1 ...`, issue 16): each process's seq orders only its
 * own events and each has its own client clock, so
 *   - a violation provable only across the files (by server times) is
 *     found: two leases of one job claimed in two ledgers that overlap on
 *     the server's clock; an owner's complete refused before its lease_until
 *     in one ledger while the other ledger's client clock has another
 *     origin;
 *   - an apparent violation that only a cross-file order of seqs would
 *     prove is not raised: an empty claim "after" a job fell due in one
 *     ledger while the job's claim is in another ledger (the same events
 *     in one ledger are a violation: the control);
 *   - stale_token_rejected: a claim in another ledger supersedes a token
 *     when server times prove it ran between (found), not otherwise;
 *   - one effect destination: an idempotent sink per process, the same op
 *     key applied in two ledgers counts once, another op key twice;
 *   - --shard's arithmetic: I/N parsing and the round-robin share.
 * The ledgers are real files loaded with qc_history_load, as the audit does.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../harness/checkers.h"
#include "../harness/history.h"
#include "../harness/shard.h"

/* Writes text (with ' for ") to a new temporary file named in path. */
static void write_temp(char path[64], const char *text)
{
    char *s = strdup(text);
    ck_assert_ptr_nonnull(s);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    snprintf(path, 64, "/tmp/qc_shard_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
    close(fd);
    free(s);
}

typedef int (*checker_fn)(const qc_history *, qc_check *);

/* Loads the ledgers (1 or 2 texts) as files and runs fn over the merge. */
static void run_files(checker_fn fn, const char *a, const char *b, qc_check *c)
{
    char pa[64], pb[64];
    const char *paths[2] = {pa, pb};
    qc_history h;
    qc_err err;

    write_temp(pa, a);
    if (b != NULL)
        write_temp(pb, b);
    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    memset(c, 0, sizeof *c);
    ck_assert_msg(qc_history_load(&h, paths, b != NULL ? 2 : 1, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(fn(&h, c), 0);
    qc_history_fini(&h);
    unlink(pa);
    if (b != NULL)
        unlink(pb);
}

#define HEADER "{'type':'header','seed':4,'lease_ms':5000,'max_attempts':3}\n"

/* ---- exclusive_claim: two ledgers, one job ------------------------------ */

/* Shard 0's worker 0 claims job 17 (server 1000 .. 6000); shard 1's worker
 * 1 claims it at server 3000.  Shard 1's seqs are lower than shard 0's
 * (each process counts from 1): only the server times can order them. */
static const char *const ec_a =
    HEADER "{'seq':10,'t':50,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
           "{'seq':11,'t':51,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':1,"
           "'job':17,'token':'a','now':1000.5,'lease_until':6000.5}\n";
static const char *const ec_b_overlap =
    HEADER "{'seq':1,'t':900,'type':'invoke','op':'claim','worker':1,'inc':0,'req':1}\n"
           "{'seq':2,'t':901,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,'rows':1,"
           "'job':17,'token':'b','now':3000.5,'lease_until':8000.5}\n";
static const char *const ec_b_after =
    HEADER "{'seq':1,'t':900,'type':'invoke','op':'claim','worker':1,'inc':0,'req':1}\n"
           "{'seq':2,'t':901,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,'rows':1,"
           "'job':17,'token':'b','now':6100.5,'lease_until':11100.5}\n";

START_TEST(test_shard_exclusive_claim_overlap_across_ledgers_fails)
{
    qc_check c;

    run_files(qc_check_exclusive_claim, ec_a, ec_b_overlap, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_uint_ge(c.nstored, 1);
    ck_assert_int_eq(c.v[0].job, 17);
    ck_assert_msg(strstr(c.v[0].msg, "worker 0") && strstr(c.v[0].msg, "worker 1"), "%s",
                  c.v[0].msg);
    free(c.v);
}
END_TEST

/* The second claim ran after the first lease ended (server 6100 > 6000):
 * no violation, although its seqs are lower. */
START_TEST(test_shard_exclusive_claim_later_claim_in_other_ledger_passes)
{
    qc_check c;

    run_files(qc_check_exclusive_claim, ec_a, ec_b_after, &c);
    ck_assert_msg(c.verdict == QC_PASS, "verdict %d", (int)c.verdict);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_ge(c.opportunities, 2);
    free(c.v);
}
END_TEST

/* ---- no_early_reap: one clock per ledger --------------------------------- */

/* Ledger A: worker 0 claims job 7 (server now 1000 at client t 1, lease
 * until 6000) and its complete with the token, answered at client t 101,
 * is refused (rows 0): it ran by server 1101 at the latest, well before
 * 6000.  Ledger B's client clock started 49 s later than A's relative to
 * the server (offset 49995 against A's 999): in one ledger that reads as
 * a stepped server clock and nothing is judged; per ledger, each clock is
 * consistent and A's early refusal is found. */
static const char *const ner_a =
    HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
           "{'seq':2,'t':1,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':1,"
           "'job':7,'token':'a','now':1000,'lease_until':6000}\n"
           "{'seq':3,'t':100,'type':'invoke','op':'complete','worker':0,'inc':0,'req':2,"
           "'job':7,'token':'a'}\n"
           "{'seq':4,'t':101,'type':'ok','op':'complete','worker':0,'inc':0,'req':2,'job':7,"
           "'token':'a','rows':0}\n";
static const char *const ner_b =
    HEADER "{'seq':1,'t':5,'type':'invoke','op':'claim','worker':1,'inc':0,'req':1}\n"
           "{'seq':2,'t':6,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,'rows':1,"
           "'job':8,'token':'c','now':50000,'lease_until':55000}\n"
           "{'seq':3,'t':20,'type':'invoke','op':'complete','worker':1,'inc':0,'req':2,"
           "'job':8,'token':'c'}\n"
           "{'seq':4,'t':21,'type':'ok','op':'complete','worker':1,'inc':0,'req':2,'job':8,"
           "'token':'c','rows':1}\n";

START_TEST(test_shard_no_early_reap_clock_per_ledger_finds_refusal)
{
    qc_check c;

    run_files(qc_check_no_early_reap, ner_a, ner_b, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_int_eq(c.v[0].job, 7);
    ck_assert_msg(strstr(c.v[0].msg, "by its owner worker 0") != NULL, "%s", c.v[0].msg);
    free(c.v);
}
END_TEST

/* The control: B's events written into A's own ledger, one clock for both,
 * are a stepped server clock: the refusal is not judged (as before). */
START_TEST(test_shard_no_early_reap_one_ledger_two_clocks_not_judged)
{
    char both[4096];
    qc_check c;

    snprintf(both, sizeof both, "%s%s",
             ner_a, ner_b + strlen(HEADER)); /* B's lines after A's, one header */
    /* B's seqs 1..4 again would collide with A's: renumber them 5..8 */
    for (char *p = strstr(both + strlen(ner_a), "'seq':"); p; p = strstr(p + 1, "'seq':"))
        p[6] = (char)(p[6] + 4);
    run_files(qc_check_no_early_reap, both, NULL, &c);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* ---- bounded_idle_polling: no order invented across ledgers -------------- */

#define IDLE_HEADER                                                                                \
    "{'type':'header','seed':4,'idle_base_ms':500,'idle_cap_ms':500,'idle_jitter':0,"              \
    "'max_idle_polls_per_s':2,'max_idle_pause_ms':600,'max_pickup_ms':1500}\n"

/* Ledger B: job 5 is enqueued at t 300, due at once, and worker 1's claim
 * sent at t 1500 (seq 4..5) found nothing.  Ledger A: worker 0 claimed
 * job 5 (seq 6..7).  Only a comparison of A's seq 6 with B's seq 5 would
 * say worker 0 took the job after B's empty claim: across two processes
 * that is no order (worker 0 may have held it all along), so nothing is
 * raised. */
static const char *const idle_a =
    IDLE_HEADER "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
                "{'seq':2,'t':1,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':0}\n"
                "{'seq':6,'t':1600,'type':'invoke','op':'claim','worker':0,'inc':0,'req':3,"
                "'pause_ms':180}\n"
                "{'seq':7,'t':1601,'type':'ok','op':'claim','worker':0,'inc':0,'req':3,'rows':1,"
                "'job':5,'token':'a'}\n";
static const char *const idle_b =
    IDLE_HEADER "{'seq':3,'t':300,'type':'ok','op':'enqueue','worker':-1,'job':5,'delay_ms':0}\n"
                "{'seq':4,'t':1500,'type':'invoke','op':'claim','worker':1,'inc':0,'req':2}\n"
                "{'seq':5,'t':1501,'type':'ok','op':'claim','worker':1,'inc':0,'req':2,'rows':0}\n";

START_TEST(test_shard_idle_pickup_across_ledgers_not_raised)
{
    qc_check c;

    run_files(qc_check_bounded_idle_polling, idle_a, idle_b, &c);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* The control: the same events in one ledger are the missed pickup. */
START_TEST(test_shard_idle_pickup_one_ledger_fails)
{
    char one[4096];
    qc_check c;

    snprintf(one, sizeof one, "%s%s", idle_a, idle_b + strlen(IDLE_HEADER));
    run_files(qc_check_bounded_idle_polling, one, NULL, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_int_eq(c.v[0].job, 5);
    free(c.v);
}
END_TEST

/* ---- stale_token_rejected: supersession across ledgers by server time ---- */

/* Ledger A: worker 0 claims job 9 (server now 1000, answered 5 client ms
 * after it was sent), stalls, and completes with its token 'a' at server
 * now 9000: accepted (rows 1).  Ledger B: worker 1 claimed job 9 at server
 * 7000 (token 'b', 3 ms).  B's claim ran after A's committed (7000 > 1000 +
 * 5 ms) and A's complete after B's committed (9000 > 7000 + 3 ms): A's token
 * was superseded, yet accepted.  B's seqs are all lower than A's complete:
 * no seq comparison could say so. */
static const char *const st_a_accepted =
    HEADER "{'seq':10,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
           "{'seq':11,'t':5,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':1,"
           "'job':9,'token':'a','now':1000.5,'lease_until':3000.5}\n"
           "{'seq':12,'t':7990,'type':'invoke','op':'complete','worker':0,'inc':0,'req':2,"
           "'job':9,'token':'a'}\n"
           "{'seq':13,'t':8000,'type':'ok','op':'complete','worker':0,'inc':0,'req':2,"
           "'job':9,'token':'a','rows':1,'now':9000.5}\n";
static const char *const st_b =
    HEADER "{'seq':1,'t':100,'type':'invoke','op':'claim','worker':1,'inc':0,'req':1}\n"
           "{'seq':2,'t':103,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,'rows':1,"
           "'job':9,'token':'b','now':7000.5,'lease_until':9000.5}\n";
/* Without its own "now" (a rejected complete returns no row), A's request
 * is placed by O's "now" carried on A's client clock: sent 7985 ms after
 * O's answer, it ran after server 1000 + 7977 - 1 = 8976 > B's commit bound
 * (7000 + 3 + 1): a stale request refused, an opportunity. */
static const char *const st_a_refused =
    HEADER "{'seq':10,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
           "{'seq':11,'t':5,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':1,"
           "'job':9,'token':'a','now':1000.5,'lease_until':3000.5}\n"
           "{'seq':12,'t':7990,'type':'invoke','op':'complete','worker':0,'inc':0,'req':2,"
           "'job':9,'token':'a'}\n"
           "{'seq':13,'t':8000,'type':'ok','op':'complete','worker':0,'inc':0,'req':2,"
           "'job':9,'token':'a','rows':0}\n";
/* Sent 5985 ms after O's answer (server 6978 at least) and reading the
 * server clock at 7002: it may have run before B's claim committed (7000 +
 * 3 ms + margin): not judged. */
static const char *const st_a_unproven =
    HEADER "{'seq':10,'t':0,'type':'invoke','op':'claim','worker':0,'inc':0,'req':1}\n"
           "{'seq':11,'t':5,'type':'ok','op':'claim','worker':0,'inc':0,'req':1,'rows':1,"
           "'job':9,'token':'a','now':1000.5,'lease_until':3000.5}\n"
           "{'seq':12,'t':5990,'type':'invoke','op':'complete','worker':0,'inc':0,'req':2,"
           "'job':9,'token':'a'}\n"
           "{'seq':13,'t':6000,'type':'ok','op':'complete','worker':0,'inc':0,'req':2,"
           "'job':9,'token':'a','rows':1,'now':7002.5}\n";

START_TEST(test_shard_stale_token_superseded_in_other_ledger_fails)
{
    qc_check c;

    run_files(qc_check_stale_token_rejected, st_a_accepted, st_b, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_int_eq(c.v[0].job, 9);
    ck_assert_msg(strstr(c.v[0].msg, "claim by worker 1") != NULL, "%s", c.v[0].msg);
    free(c.v);
}
END_TEST

START_TEST(test_shard_stale_token_refused_without_now_is_opportunity)
{
    qc_check c;

    run_files(qc_check_stale_token_rejected, st_a_refused, st_b, &c);
    ck_assert_msg(c.verdict == QC_PASS, "verdict %d", (int)c.verdict);
    ck_assert_int_eq(c.opportunities, 1);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

START_TEST(test_shard_stale_token_unproven_order_not_judged)
{
    qc_check c;

    run_files(qc_check_stale_token_rejected, st_a_unproven, st_b, &c);
    ck_assert_int_eq(c.opportunities, 0);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
}
END_TEST

/* ---- effects_once: one destination behind the shards' sinks -------------- */

/* Job 3's effect delivered by worker 0 (ledger A) and again by worker 1
 * (ledger B), each applied by its own process's idempotent sink.  The same
 * op key: the one destination drops the second, no violation.  Another op
 * key (an unstable one): applied twice, a violation. */
#define SINK_HEADER "{'type':'header','seed':4,'lease_ms':5000,'sink':'idempotent'}\n"
static const char *const eff_a =
    SINK_HEADER "{'seq':1,'type':'effect','job':3,'op_key':'3','token':'a','worker':0,'inc':0,"
                "'applied':true}\n";
static const char *const eff_b_same =
    SINK_HEADER "{'seq':1,'type':'effect','job':3,'op_key':'3','token':'b','worker':1,'inc':0,"
                "'applied':true}\n";
static const char *const eff_b_other =
    SINK_HEADER "{'seq':1,'type':'effect','job':3,'op_key':'3-b','token':'b','worker':1,'inc':0,"
                "'applied':true}\n";

START_TEST(test_shard_effects_once_same_op_key_in_two_ledgers_passes)
{
    qc_check c;

    run_files(qc_check_effects_once, eff_a, eff_b_same, &c);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_int_eq(c.opportunities, 1);
    free(c.v);
}
END_TEST

START_TEST(test_shard_effects_once_other_op_key_in_two_ledgers_fails)
{
    qc_check c;

    run_files(qc_check_effects_once, eff_a, eff_b_other, &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_int_eq(c.v[0].job, 3);
    free(c.v);
}
END_TEST

/* ---- a drain cut short in one ledger of several ---------------------------- */

/* Ledger A's drain timed out while its monitor saw jobs still finishing
 * (done 10 -> 14 in its last 5 s); ledger B's end (higher seq, its own
 * client clock) did not time out.  The run's drain was cut short: A's end
 * and A's samples say so, whichever end comes last in seq. */
static int cut_short_of(const char *a, const char *b)
{
    char pa[64], pb[64];
    const char *paths[2] = {pa, pb};
    qc_history h;
    qc_err err;

    write_temp(pa, a);
    write_temp(pb, b);
    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    ck_assert_msg(qc_history_load(&h, paths, 2, &err) == 0, "%s", err.msg);
    int r = qc__drain_cut_short(&h);
    qc_history_fini(&h);
    unlink(pa);
    unlink(pb);
    return r;
}

START_TEST(test_shard_drain_cut_short_in_one_ledger_counts)
{
    const char *a = HEADER "{'seq':1,'t':1000,'type':'monitor','done':10,'dead':0}\n"
                           "{'seq':2,'t':3000,'type':'monitor','done':14,'dead':0}\n"
                           "{'seq':3,'t':3100,'type':'end','timed_out':true,'drained':false}\n";
    const char *b_ok = HEADER "{'seq':1,'t':90000,'type':'monitor','done':20,'dead':0}\n"
                              "{'seq':9,'t':90100,'type':'end','timed_out':false,'drained':true}\n";
    const char *a_stuck = HEADER "{'seq':1,'t':1000,'type':'monitor','done':14,'dead':0}\n"
                                 "{'seq':2,'t':3000,'type':'monitor','done':14,'dead':0}\n"
                                 "{'seq':3,'t':3100,'type':'end','timed_out':true,'drained':false}\n";

    ck_assert_int_eq(cut_short_of(a, b_ok), 1);
    ck_assert_int_eq(cut_short_of(a_stuck, b_ok), 0); /* A's queue stopped: judged */
}
END_TEST

/* ---- the header's "shard": which shards' ledgers were loaded -------------- */

START_TEST(test_shard_header_counts_ledgers_and_refuses_bad_index)
{
    char pa[64], pb[64];
    const char *paths[2] = {pa, pb};
    qc_history h;
    qc_err err;

    write_temp(pa, "{'type':'header','seed':4,'shard':{'index':0,'count':3}}\n{'seq':1,'type':'end'}\n");
    write_temp(pb, "{'type':'header','seed':4,'shard':{'index':2,'count':3}}\n{'seq':1,'type':'end'}\n");
    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    ck_assert_msg(qc_history_load(&h, paths, 2, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(h.info.shard_count, 3);
    ck_assert_int_eq(h.info.shard_ledgers, 2); /* shard 1's is missing: the audit refuses */
    ck_assert_int_eq(h.info.shard_dup, 0);
    qc_history_fini(&h);
    unlink(pb);
    write_temp(pb, "{'type':'header','seed':4,'shard':{'index':3,'count':3}}\n{'seq':1,'type':'end'}\n");
    memset(&h, 0, sizeof h);
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(qc_history_load(&h, paths, 2, &err), QC_EINVAL);
    ck_assert_msg(strstr(err.msg, ":1: field \"shard\" is not an object") != NULL, "%s", err.msg);
    qc_history_fini(&h);
    unlink(pa);
    unlink(pb);
}
END_TEST

/* ---- --shard arithmetic --------------------------------------------------- */

START_TEST(test_shard_parse_and_share)
{
    int i = -1, n = -1;
    qc_err err;

    memset(&err, 0, sizeof err);
    ck_assert_int_eq(qc_shard_parse("2/4", &i, &n, &err), 0);
    ck_assert_int_eq(i, 2);
    ck_assert_int_eq(n, 4);
    const char *bad[] = {"4/4", "-1/4", "1", "1/0", "a/2", "1/2x", "0/1025", "/2"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        memset(&err, 0, sizeof err);
        ck_assert_msg(qc_shard_parse(bad[k], &i, &n, &err) == QC_EINVAL, "%s accepted", bad[k]);
        ck_assert_msg(strstr(err.msg, "--shard expects I/N") != NULL, "%s", err.msg);
    }
    /* 10 jobs over 4 shards: 3 3 2 2, every job once */
    long sum = 0;
    const long want[] = {3, 3, 2, 2};
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(qc_shard_share(10, k, 4), want[k]);
        sum += qc_shard_share(10, k, 4);
    }
    ck_assert_int_eq(sum, 10);
    ck_assert_int_eq(qc_shard_share(10, 0, 1), 10);
    ck_assert_int_eq(qc_shard_share(2, 3, 4), 0);
}
END_TEST

static Suite *shard_suite(void)
{
    Suite *s = suite_create("shard");
    TCase *tc = tcase_create("merge");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_shard_exclusive_claim_overlap_across_ledgers_fails);
    tcase_add_test(tc, test_shard_exclusive_claim_later_claim_in_other_ledger_passes);
    tcase_add_test(tc, test_shard_no_early_reap_clock_per_ledger_finds_refusal);
    tcase_add_test(tc, test_shard_no_early_reap_one_ledger_two_clocks_not_judged);
    tcase_add_test(tc, test_shard_idle_pickup_across_ledgers_not_raised);
    tcase_add_test(tc, test_shard_idle_pickup_one_ledger_fails);
    tcase_add_test(tc, test_shard_stale_token_superseded_in_other_ledger_fails);
    tcase_add_test(tc, test_shard_stale_token_refused_without_now_is_opportunity);
    tcase_add_test(tc, test_shard_stale_token_unproven_order_not_judged);
    tcase_add_test(tc, test_shard_drain_cut_short_in_one_ledger_counts);
    tcase_add_test(tc, test_shard_effects_once_same_op_key_in_two_ledgers_passes);
    tcase_add_test(tc, test_shard_effects_once_other_op_key_in_two_ledgers_fails);
    suite_add_tcase(s, tc);
    TCase *ta = tcase_create("arithmetic");
    tcase_set_timeout(ta, 10);
    tcase_add_test(ta, test_shard_parse_and_share);
    tcase_add_test(ta, test_shard_header_counts_ledgers_and_refuses_bad_index);
    suite_add_tcase(s, ta);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(shard_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
