/*
 * check_runs.c - unit tests of exclusive_run (harness/check_runs.c, issue
 * 18): runs of one job (claim to effect) never overlap across actors; and
 * of own_lease (decision 950): no effect or complete past the worker's own
 * lease deadline.
 * Hand-written ledgers (' for ") that violate the rule, and ones with the
 * innocent explanations it must not call a violation.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/checkers.h"
#include "../harness/history.h"
#include "ledger_fixture.h"

#define HDR(hb) "{'type':'header','seed':7,'lease_ms':1000,'sink':'idempotent','heartbeat':" hb "}\n"

/* Worker 3 claims job 17 (lease 1000.25 .. 2000.25); its renew at t 1500
 * is refused (the lease ran out, the reaper took it, worker 9 claimed it at
 * 2500.5); worker 3 works on and delivers its effect at t 2600, after
 * worker 9's claim: two runs of job 17 at once, and worker 3 knew. */
#define KNEW_BODY                                                                                  \
    "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"                    \
    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"        \
    "'token':'a','now':1000.25,'lease_until':2000.25}\n"                                           \
    "{'seq':3,'t':1499,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"                 \
    "{'seq':4,'t':1500,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':1,'job':17,"     \
    "'token':'b','now':2500.5,'lease_until':3500.5}\n"                                             \
    "{'seq':5,'t':1600,'type':'invoke','op':'renew','worker':3,'inc':0,'req':3,'job':17,"          \
    "'token':'a'}\n"                                                                               \
    "{'seq':6,'t':1601,'type':'ok','op':'renew','worker':3,'inc':0,'req':3,'job':17,"              \
    "'token':'a','rows':0}\n"                                                                      \
    "{'seq':7,'t':1700,'type':'effect','worker':9,'inc':0,'job':17,'token':'b','op_key':'17',"     \
    "'applied':true,'work_ms':100}\n"                                                              \
    "{'seq':8,'t':2600,'type':'effect','worker':3,'inc':0,'job':17,'token':'a','op_key':'17',"     \
    "'applied':false,'work_ms':2500}\n"

START_TEST(test_exclusive_run_worked_on_after_refused_renew_fails)
{
    qc_check c;

    run(qc_check_exclusive_run, HDR("true") KNEW_BODY, &c);
    ck_assert_str_eq(c.name, "exclusive_run");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ck_assert_int_eq(c.opportunities, 1);
    ASSERT_VIOLATION(&c, 0, 17, 2, 4, 7, 8);
    ck_assert_msg(strstr(c.v[0].msg, "after its renew had been refused") != NULL, "%s",
                  c.v[0].msg);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_run_starved_worker_excused_passes)
{
    qc_check c;

    /* The same without the refused renew: worker 3 renews while working
     * (heartbeat) but its thread was starved, its lease ran out and the
     * queue rightly gave the job to worker 9; worker 3 was never told. */
    run(qc_check_exclusive_run,
        HDR("true") "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
                    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
                    "'job':17,'token':'a','now':1000.25,'lease_until':2000.25}\n"
                    "{'seq':3,'t':1499,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"
                    "{'seq':4,'t':1500,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,"
                    "'rows':1,'job':17,'token':'b','now':2500.5,'lease_until':3500.5}\n"
                    "{'seq':5,'t':1700,'type':'effect','worker':9,'inc':0,'job':17,'token':'b',"
                    "'op_key':'17','applied':true,'work_ms':100}\n"
                    "{'seq':6,'t':2600,'type':'effect','worker':3,'inc':0,'job':17,'token':'a',"
                    "'op_key':'17','applied':false,'work_ms':2500}\n"
                    "{'seq':7,'t':2601,'type':'invoke','op':'renew','worker':3,'inc':0,'req':3,"
                    "'job':17,'token':'a'}\n",
        &c);
    ck_assert_msg(c.nviolations == 0, "%s", c.nstored > 0 ? c.v[0].msg : c.summary);
    ck_assert_int_eq(c.verdict, QC_PASS);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_run_job_handed_out_within_live_lease_fails)
{
    qc_check c;

    /* Worker 9's claim ran at server 1500.5, inside worker 3's lease: no
     * excuse, whatever worker 3 planned. */
    run(qc_check_exclusive_run,
        HDR("true") "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
                    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
                    "'job':17,'token':'a','now':1000.25,'lease_until':2000.25}\n"
                    "{'seq':3,'t':499,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"
                    "{'seq':4,'t':500,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,"
                    "'rows':1,'job':17,'token':'b','now':1500.5,'lease_until':2500.5}\n"
                    "{'seq':5,'t':600,'type':'effect','worker':9,'inc':0,'job':17,'token':'b',"
                    "'op_key':'17','applied':true,'work_ms':100}\n"
                    "{'seq':6,'t':700,'type':'effect','worker':3,'inc':0,'job':17,'token':'a',"
                    "'op_key':'17','applied':false,'work_ms':500}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_run_sequential_runs_and_group_overlap)
{
    qc_check c;

    /* Job 17: worker 3's run ended (effect seq 3) before worker 9 claimed
     * it (seq 5): no overlap.  Jobs 20 and 21 of group g1: worker 4 claimed
     * 21 (seq 9) while worker 2 was running 20 (effect at seq 10). */
    run(qc_check_exclusive_run,
        HDR("true") "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"
                    "{'seq':2,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
                    "'job':17,'token':'a','now':1000.25,'lease_until':2000.25}\n"
                    "{'seq':3,'t':5,'type':'effect','worker':3,'inc':0,'job':17,'token':'a',"
                    "'applied':true,'work_ms':3}\n"
                    "{'seq':4,'t':9,'type':'invoke','op':'claim','worker':9,'inc':0,'req':2}\n"
                    "{'seq':5,'t':10,'type':'ok','op':'claim','worker':9,'inc':0,'req':2,'rows':1,"
                    "'job':17,'token':'b','now':1010.5,'lease_until':2010.5}\n"
                    "{'seq':6,'t':12,'type':'effect','worker':9,'inc':0,'job':17,'token':'b',"
                    "'applied':false,'work_ms':1}\n"
                    "{'seq':7,'t':20,'type':'ok','op':'claim','worker':2,'inc':0,'req':3,'rows':1,"
                    "'job':20,'token':'c','now':1020.5,'lease_until':2020.5,'group':'g1'}\n"
                    "{'seq':8,'t':21,'type':'invoke','op':'claim','worker':4,'inc':0,'req':4}\n"
                    "{'seq':9,'t':22,'type':'ok','op':'claim','worker':4,'inc':0,'req':4,'rows':1,"
                    "'job':21,'token':'d','now':1022.5,'lease_until':2022.5,'group':'g1'}\n"
                    "{'seq':10,'t':30,'type':'effect','worker':2,'inc':0,'job':20,'token':'c',"
                    "'applied':true,'work_ms':10}\n"
                    "{'seq':11,'t':31,'type':'effect','worker':4,'inc':0,'job':21,'token':'d',"
                    "'applied':true,'work_ms':10}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 1);
    ASSERT_VIOLATION(&c, 0, 21, 7, 9, 10, 11);
    ck_assert_msg(strstr(c.v[0].msg, "group 'g1'") != NULL, "%s", c.v[0].msg);
    free(c.v);
}
END_TEST

START_TEST(test_exclusive_run_single_runs_inconclusive)
{
    qc_check c;

    run(qc_check_exclusive_run,
        HDR("true") "{'seq':1,'t':1,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,"
                    "'job':17,'token':'a','now':1000.25,'lease_until':2000.25}\n"
                    "{'seq':2,'t':5,'type':'effect','worker':3,'inc':0,'job':17,'token':'a',"
                    "'applied':true,'work_ms':3}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.opportunities, 0);
    free(c.v);
}
END_TEST

/* ---- many overlapping runs on one job and one group (decisions 970-971) ----
 *
 * exclusive_run finds the earlier lease's renews through an index of its
 * job and judges each run only against the runs still going on at its
 * claim; this ledger has both in bulk: 16 workers, 40 runs each, half on
 * job 1, half on jobs 20..23 of group 'g', 100 ms leases, work of 1-250
 * ms, renews granted (extending the lease: some overlaps stop being
 * excused) or refused (the worker knew), a new incarnation every 10 runs,
 * and one effect in 10 delivered twice (two runs of one claim).  The reference below is the
 * checker's rule written out for every pair with the shared
 * qc__lapse_excused: the violations (count, order, evidence) must agree. */

typedef struct gen_ev {
    double t;
    int ord; /* ties: generation order */
    char line[256];
} gen_ev;

typedef struct gen_run {
    int worker, inc, job, knew;
    double t_claim, t_effect;
    int64_t claim_seq, effect_seq; /* filled once sorted */
    int claim_ord, effect_ord;
} gen_run;

static int cmp_gen_ev(const void *pa, const void *pb)
{
    const gen_ev *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->ord - b->ord;
}

static uint64_t gen_state = 88172645463325252ull;
static unsigned gen_rand(unsigned n)
{
    gen_state ^= gen_state << 13;
    gen_state ^= gen_state >> 7;
    gen_state ^= gen_state << 17;
    return (unsigned)(gen_state % n);
}

static const qc_event *ev_of_seq(const qc_history *h, int64_t seq)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->ev[i].seq == seq)
            return &h->ev[i];
    return NULL;
}

static int cmp_i64(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return a < b ? -1 : a > b;
}

/* The reference: runs rr[0..n) in claim order; appends the pairs reported
 * (4 sorted seqs each) to out, counts excused pairs and those a granted
 * renew made unexcused. */
static void ref_judge(const qc_history *h, gen_run **rr, int n, int grouped, int64_t (*out)[4],
                      int *nout, int *nexcused, int *nextended)
{
    for (int j = 1; j < n; j++) {
        for (int i = 0; i < j; i++) {
            if (rr[i]->worker == rr[j]->worker && rr[i]->inc == rr[j]->inc)
                continue;
            if (grouped && rr[i]->job == rr[j]->job)
                continue;
            if (!(rr[j]->claim_seq < rr[i]->effect_seq))
                continue;
            const qc_event *ci = ev_of_seq(h, rr[i]->claim_seq);
            const qc_event *cj = ev_of_seq(h, rr[j]->claim_seq);
            if (qc__lapse_excused(h, ci, cj, rr[i]->knew, QC_NO_TIME, rr[j]->knew, QC_NO_TIME, 1,
                                  0.001, 0)) {
                (*nexcused)++;
                continue;
            }
            const qc_event *x = ci->now <= cj->now ? ci : cj, *y = x == ci ? cj : ci;
            int kx = x == ci ? rr[i]->knew : rr[j]->knew;
            if (!kx && !(y->now + 0.001 < x->lease_until))
                (*nextended)++; /* only the renews kept the first lease live */
            int64_t *v = out[(*nout)++];
            v[0] = rr[i]->claim_seq;
            v[1] = rr[j]->claim_seq;
            v[2] = rr[i]->effect_seq;
            v[3] = rr[j]->effect_seq;
            qsort(v, 4, sizeof *v, cmp_i64);
            break;
        }
    }
}

START_TEST(test_exclusive_run_many_overlaps_match_every_pair)
{
    enum { W = 16, R = 40, NR = 2 * W * R, MAXEV = NR * 8 };
    gen_ev *ev = calloc(MAXEV, sizeof *ev);
    gen_run *runs = calloc(NR, sizeof *runs);
    int ne = 0, nr = 0, req = 0;
    ck_assert_ptr_nonnull(ev);
    ck_assert_ptr_nonnull(runs);

#define GEN(T, ...)                                                                                \
    do {                                                                                           \
        ev[ne].t = (T);                                                                            \
        ev[ne].ord = ne;                                                                           \
        snprintf(ev[ne].line, sizeof ev[ne].line, __VA_ARGS__);                                    \
        ne++;                                                                                      \
    } while (0)
    for (int w = 0; w < W; w++) {
        double t = gen_rand(50);
        for (int k = 0; k < R; k++, nr++) {
            gen_run *r = &runs[nr];
            int job = gen_rand(2) ? 1 : 20 + (int)gen_rand(4);
            double work = 1 + gen_rand(250);
            int inc = k / 10; /* a new incarnation every 10 runs */
            r->worker = w;
            r->inc = inc;
            r->job = job;
            r->t_claim = t + 0.5;
            r->claim_ord = ne + 1;
            GEN(t, "{'t':%.3f,'type':'invoke','op':'claim','worker':%d,'inc':%d,'req':%d}", t, w, inc,
                ++req);
            GEN(t + 0.5,
                "{'t':%.3f,'type':'ok','op':'claim','worker':%d,'inc':%d,'req':%d,'rows':1,"
                "'job':%d,'token':'w%dr%d','now':%.3f,'lease_until':%.3f%s}",
                t + 0.5, w, inc, req, job, w, k, 1000.0 + t + 0.5, 1100.0 + t + 0.5,
                job == 1 ? "" : ",'group':'g'");
            unsigned what = gen_rand(20);
            double tr = t + 0.5 + work / 2;
            if (what < 10 || what == 19) { /* a granted renew, a refused one, or none */
                GEN(tr, "{'t':%.3f,'type':'invoke','op':'renew','worker':%d,'inc':%d,'req':%d,"
                        "'job':%d,'token':'w%dr%d'}", tr, w, inc, ++req, job, w, k);
                if (what < 10)
                    GEN(tr + 0.25, "{'t':%.3f,'type':'ok','op':'renew','worker':%d,'inc':%d,"
                                   "'req':%d,'job':%d,'token':'w%dr%d','rows':1,'now':%.3f,"
                                   "'lease_until':%.3f}",
                        tr + 0.25, w, inc, req, job, w, k, 1000.0 + tr + 0.25, 1100.0 + tr + 0.25);
                else {
                    GEN(tr + 0.25, "{'t':%.3f,'type':'ok','op':'renew','worker':%d,'inc':%d,"
                                   "'req':%d,'job':%d,'token':'w%dr%d','rows':0}",
                        tr + 0.25, w, inc, req, job, w, k);
                    r->knew = 1;
                }
            }
            r->t_effect = t + 0.75 + work;
            r->effect_ord = ne;
            GEN(t + 0.75 + work, "{'t':%.3f,'type':'effect','worker':%d,'inc':%d,'job':%d,"
                                 "'token':'w%dr%d','op_key':'%d','applied':false,'work_ms':%.0f}",
                t + 0.75 + work, w, inc, job, w, k, job, work);
            if (gen_rand(10) == 0) { /* a re-delivery: a second run of the same claim */
                gen_run *r2 = &runs[++nr];
                *r2 = *r;
                r2->t_effect = t + 0.875 + work;
                r2->effect_ord = ne;
                GEN(t + 0.875 + work, "{'t':%.3f,'type':'effect','worker':%d,'inc':%d,'job':%d,"
                                      "'token':'w%dr%d','op_key':'%d','applied':false,"
                                      "'work_ms':%.0f}",
                    t + 0.875 + work, w, inc, job, w, k, job, work);
            }
            t += work + 1 + gen_rand(30);
        }
    }
#undef GEN
    /* seq order = time order; the runs learn their seqs */
    int *seq_of = calloc(MAXEV, sizeof *seq_of);
    ck_assert_ptr_nonnull(seq_of);
    qsort(ev, ne, sizeof *ev, cmp_gen_ev);
    for (int i = 0; i < ne; i++)
        seq_of[ev[i].ord] = i + 1;
    size_t cap = 128 + (size_t)ne * 300, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text, cap, "%s", HDR("true"));
    for (int i = 0; i < ne; i++)
        len += (size_t)snprintf(text + len, cap - len, "{'seq':%d,%s\n", i + 1, ev[i].line + 1);
    for (int k = 0; k < nr; k++) {
        runs[k].claim_seq = seq_of[runs[k].claim_ord];
        runs[k].effect_seq = seq_of[runs[k].effect_ord];
    }

    qc_history h;
    qc_check c;
    memset(&h, 0, sizeof h);
    memset(&c, 0, sizeof c);
    load(&h, text);
    ck_assert_int_eq(qc_check_exclusive_run(&h, &c), 0);

    /* the reference, in the checker's order: jobs ascending, then the group */
    int64_t(*want)[4] = calloc(2 * NR, sizeof *want);
    gen_run **rr = calloc(NR, sizeof *rr);
    int nw = 0, nexc = 0, next = 0;
    ck_assert_ptr_nonnull(want);
    ck_assert_ptr_nonnull(rr);
    const int jobs[] = {1, 20, 21, 22, 23, 0};
    for (int g = 0; g < 6; g++) {
        int n = 0;
        for (int64_t s = 1; s <= ne; s++) /* claim order (a claim's runs in effect order) */
            for (int k = 0; k < nr; k++)
                if (runs[k].claim_seq == s && (g < 5 ? runs[k].job == jobs[g] : runs[k].job != 1))
                    rr[n++] = &runs[k];
        ref_judge(&h, rr, n, g == 5, want, &nw, &nexc, &next);
    }
    ck_assert_msg(nw > 0 && nexc > 0 && next > 0,
                  "the ledger must hold violations (%d), excused overlaps (%d) and overlaps only "
                  "granted renews make (%d)", nw, nexc, next);
    ck_assert_msg(c.nviolations == nw, "checker %ld violations, every pair %d (%s)",
                  c.nviolations, nw, c.summary);
    for (size_t k = 0; k < c.nstored; k++) {
        ck_assert_int_eq(c.v[k].nseq, 4);
        for (int q = 0; q < 4; q++)
            ck_assert_msg(c.v[k].seq[q] == want[k][q], "violation %zu: seq[%d] %lld, want %lld (%s)",
                          k, q, (long long)c.v[k].seq[q], (long long)want[k][q], c.v[k].msg);
    }
    qc_history_fini(&h);
    free(c.v);
    free(want);
    free(rr);
    free(text);
    free(seq_of);
    free(ev);
    free(runs);
}
END_TEST

/* ---- own_lease (docs/decisions.md 950) ---- */

#define OL_HDR(dl) "{'type':'header','seed':7,'lease_ms':1000,'sink':'idempotent','heartbeat':true," \
                   "'lease_deadline':'" dl "'}\n"

/* Worker 3 claims job 17 (sent t 100), renews at t 400 (granted: its
 * deadline is 1400), renews again at 700 into a partition: no answer
 * (info at 1700).  It works on: effect at 1750, complete at 1760, both
 * past 1400, and it knew (its info came at 1700): the mutant
 * on_renew_lost = continue. */
#define OL_LOST_BODY                                                                               \
    "{'seq':1,'t':100,'type':'invoke','op':'claim','worker':3,'inc':0,'req':1}\n"                  \
    "{'seq':2,'t':110,'type':'ok','op':'claim','worker':3,'inc':0,'req':1,'rows':1,'job':17,"      \
    "'token':'a','now':1000.25,'lease_until':2000.25}\n"                                           \
    "{'seq':3,'t':400,'type':'invoke','op':'renew','worker':3,'inc':0,'req':2,'job':17,"           \
    "'token':'a'}\n"                                                                               \
    "{'seq':4,'t':410,'type':'ok','op':'renew','worker':3,'inc':0,'req':2,'job':17,"               \
    "'token':'a','rows':1,'now':1300,'lease_until':2300}\n"                                        \
    "{'seq':5,'t':700,'type':'invoke','op':'renew','worker':3,'inc':0,'req':3,'job':17,"           \
    "'token':'a'}\n"                                                                               \
    "{'seq':6,'t':1700,'type':'info','op':'renew','worker':3,'inc':0,'req':3,'job':17,"            \
    "'token':'a','error':'timeout'}\n"                                                             \
    "{'seq':7,'t':1750,'type':'effect','worker':3,'inc':0,'job':17,'token':'a','op_key':'17',"     \
    "'applied':true,'work_ms':30}\n"                                                               \
    "{'seq':8,'t':1760,'type':'invoke','op':'complete','worker':3,'inc':0,'req':4,'job':17,"       \
    "'token':'a'}\n"                                                                               \
    "{'seq':9,'t':1770,'type':'ok','op':'complete','worker':3,'inc':0,'req':4,'job':17,"           \
    "'token':'a','rows':0}\n"

START_TEST(test_own_lease_went_on_after_lost_renew_fails)
{
    qc_check c;

    run(qc_check_own_lease, OL_HDR("sent") OL_LOST_BODY, &c);
    ck_assert_str_eq(c.name, "own_lease");
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 2);
    ck_assert_int_eq(c.opportunities, 2);
    ASSERT_VIOLATION(&c, 0, 17, 2, 3, 6, 7);
    ASSERT_VIOLATION(&c, 1, 17, 2, 3, 7, 8);
    ck_assert_msg(strstr(c.v[0].msg, "deadline t=1400.0") != NULL &&
                      strstr(c.v[0].msg, "lease_ms 1000 from its renew sent at t=400.0") != NULL &&
                      strstr(c.v[0].msg, "renew seq 6: no answer") != NULL,
                  "%s", c.v[0].msg);
    free(c.v);
    /* the same ledger from workers that keep no deadline: not judged */
    run(qc_check_own_lease, OL_HDR("none") OL_LOST_BODY, &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.nviolations, 0);
    free(c.v);
    run(qc_check_own_lease, HDR("true") OL_LOST_BODY, &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    free(c.v);
}
END_TEST

/* The claim's answer took 400 ms (a slow link): sent at t 0, read at 400;
 * 600 ms of work to the effect at t 1001: past the deadline t 1000, and
 * the plan alone (400 + 600) said so.  A worker measuring its lease from
 * the answer (lease_deadline = answer) thinks 399 ms are left. */
START_TEST(test_own_lease_measured_from_the_answer_fails)
{
    qc_check c;

    run(qc_check_own_lease,
        OL_HDR("answer")
        "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':1,'inc':0,'req':1}\n"
        "{'seq':2,'t':400,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,'rows':1,"
        "'job':5,'token':'a','now':1000,'lease_until':2000}\n"
        "{'seq':3,'t':1001,'type':'effect','worker':1,'inc':0,'job':5,'token':'a',"
        "'applied':true,'work_ms':600}\n"
        "{'seq':4,'t':1001.5,'type':'invoke','op':'complete','worker':1,'inc':0,'req':2,"
        "'job':5,'token':'a'}\n",
        &c);
    ck_assert_int_eq(c.verdict, QC_FAIL);
    ck_assert_int_eq(c.nviolations, 2);
    ASSERT_VIOLATION(&c, 0, 5, 1, 2, 3);
    ASSERT_VIOLATION(&c, 1, 5, 1, 2, 3, 4);
    ck_assert_msg(strstr(c.v[0].msg, "planned work 600 ms") != NULL, "%s", c.v[0].msg);
    free(c.v);
}
END_TEST

/* What the correct worker does, and the harness's lateness:
 *   - job 5: planned to finish at 510 (answer 10 + work 500), so its test
 *     passed, then its thread was descheduled: effect at 1200, late; its
 *     complete's test at 1201 failed: it gave the job up (note);
 *   - job 6: a granted renew moved the deadline to 2300 (sent 1300);
 *   - job 7: a stall the harness injected after the effect; the stale
 *     complete at 5000 is the fault's;
 *   - job 8: a complete whose answer was lost, retried after the lease. */
START_TEST(test_own_lease_starved_granted_stalled_retried_passes)
{
    qc_check c;

    run(qc_check_own_lease,
        OL_HDR("sent")
        "{'seq':1,'t':0,'type':'invoke','op':'claim','worker':1,'inc':0,'req':1}\n"
        "{'seq':2,'t':10,'type':'ok','op':'claim','worker':1,'inc':0,'req':1,'rows':1,"
        "'job':5,'token':'a','now':1000,'lease_until':2000}\n"
        "{'seq':3,'t':1200,'type':'effect','worker':1,'inc':0,'job':5,'token':'a',"
        "'applied':true,'work_ms':500}\n"
        "{'seq':4,'t':1201,'type':'note','note':'own lease ran out','worker':1,'inc':0,"
        "'job':5,'point':'complete'}\n"
        "{'seq':5,'t':1300,'type':'invoke','op':'claim','worker':1,'inc':0,'req':2}\n"
        "{'seq':6,'t':1310,'type':'ok','op':'claim','worker':1,'inc':0,'req':2,'rows':1,"
        "'job':6,'token':'b','now':2300,'lease_until':3300}\n"
        "{'seq':7,'t':1900,'type':'invoke','op':'renew','worker':1,'inc':0,'req':3,'job':6,"
        "'token':'b'}\n"
        "{'seq':8,'t':1910,'type':'ok','op':'renew','worker':1,'inc':0,'req':3,'job':6,"
        "'token':'b','rows':1}\n"
        "{'seq':9,'t':2500,'type':'effect','worker':1,'inc':0,'job':6,'token':'b',"
        "'applied':true,'work_ms':1150}\n"
        "{'seq':10,'t':2501,'type':'invoke','op':'complete','worker':1,'inc':0,'req':4,"
        "'job':6,'token':'b'}\n"
        "{'seq':11,'t':2510,'type':'ok','op':'complete','worker':1,'inc':0,'req':4,'job':6,"
        "'token':'b','rows':1}\n"
        "{'seq':12,'t':2600,'type':'invoke','op':'claim','worker':1,'inc':0,'req':5}\n"
        "{'seq':13,'t':2610,'type':'ok','op':'claim','worker':1,'inc':0,'req':5,'rows':1,"
        "'job':7,'token':'c','now':3600,'lease_until':4600}\n"
        "{'seq':14,'t':2620,'type':'effect','worker':1,'inc':0,'job':7,'token':'c',"
        "'applied':true,'work_ms':5}\n"
        "{'seq':15,'t':2621,'type':'fault','fault':'stall_beyond_lease','worker':1,'inc':0,"
        "'job':7,'token':'c','until_t':4900}\n"
        "{'seq':16,'t':5000,'type':'invoke','op':'complete','worker':1,'inc':0,'req':6,"
        "'job':7,'token':'c'}\n"
        "{'seq':17,'t':5010,'type':'ok','op':'complete','worker':1,'inc':0,'req':6,'job':7,"
        "'token':'c','rows':0}\n"
        "{'seq':18,'t':5100,'type':'invoke','op':'claim','worker':1,'inc':0,'req':7}\n"
        "{'seq':19,'t':5110,'type':'ok','op':'claim','worker':1,'inc':0,'req':7,'rows':1,"
        "'job':8,'token':'d','now':6100,'lease_until':7100}\n"
        "{'seq':20,'t':5120,'type':'effect','worker':1,'inc':0,'job':8,'token':'d',"
        "'applied':true,'work_ms':5}\n"
        "{'seq':21,'t':5121,'type':'invoke','op':'complete','worker':1,'inc':0,'req':8,"
        "'job':8,'token':'d'}\n"
        "{'seq':22,'t':6200,'type':'info','op':'complete','worker':1,'inc':0,'req':8,'job':8,"
        "'token':'d','error':'timeout'}\n"
        "{'seq':23,'t':6300,'type':'invoke','op':'complete','worker':1,'inc':0,'req':9,"
        "'job':8,'token':'d'}\n"
        "{'seq':24,'t':6310,'type':'ok','op':'complete','worker':1,'inc':0,'req':9,'job':8,"
        "'token':'d','rows':0}\n",
        &c);
    ck_assert_msg(c.verdict == QC_PASS, "%s", c.nstored ? c.v[0].msg : c.summary);
    /* effects of 5, 6, 7, 8 and first completes of 6 and 8 */
    ck_assert_int_eq(c.opportunities, 6);
    ck_assert_msg(strstr(c.summary, "1 late by the thread's own lateness") != NULL &&
                      strstr(c.summary, "1 jobs given up") != NULL,
                  "%s", c.summary);
    free(c.v);
}
END_TEST

START_TEST(test_own_lease_transaction_model_inconclusive)
{
    qc_check c;

    run(qc_check_own_lease,
        "{'type':'header','seed':7,'lease_ms':1000,'model':'transaction',"
        "'lease_deadline':'sent'}\n" OL_LOST_BODY,
        &c);
    ck_assert_int_eq(c.verdict, QC_INCONCLUSIVE);
    ck_assert_int_eq(c.nviolations, 0);
    ck_assert_msg(strstr(c.summary, "transaction model") != NULL, "%s", c.summary);
    free(c.v);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("runs");
    TCase *tc = tcase_create("exclusive_run");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_exclusive_run_worked_on_after_refused_renew_fails);
    tcase_add_test(tc, test_exclusive_run_starved_worker_excused_passes);
    tcase_add_test(tc, test_exclusive_run_job_handed_out_within_live_lease_fails);
    tcase_add_test(tc, test_exclusive_run_sequential_runs_and_group_overlap);
    tcase_add_test(tc, test_exclusive_run_single_runs_inconclusive);
    tcase_add_test(tc, test_exclusive_run_many_overlaps_match_every_pair);
    suite_add_tcase(s, tc);
    tc = tcase_create("own_lease");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_own_lease_went_on_after_lost_renew_fails);
    tcase_add_test(tc, test_own_lease_measured_from_the_answer_fails);
    tcase_add_test(tc, test_own_lease_starved_granted_stalled_retried_passes);
    tcase_add_test(tc, test_own_lease_transaction_model_inconclusive);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
