/*
 * ledger_fixture.h - helpers the checker tests share: a hand-written ledger
 * (JSON Lines with ' for " for readability) parsed into a history, one
 * checker run over it, and an assertion on a violation's job and evidence.
 * Header-only (static inline) so each test binary stays one file.
 */
#ifndef QC_TESTS_LEDGER_FIXTURE_H
#define QC_TESTS_LEDGER_FIXTURE_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/checkers.h"
#include "../harness/history.h"

typedef int (*checker_fn)(const qc_history *, qc_check *);

/* Parses text (with ' standing for ") into h; fails the test if it does not parse. */
static inline void load(qc_history *h, const char *text)
{
    char *s = strdup(text);
    qc_err err;

    ck_assert_ptr_nonnull(s);
    memset(&err, 0, sizeof err);
    for (char *p = s; *p != '\0'; p++)
        if (*p == '\'')
            *p = '"';
    int rc = qc_history_parse(h, s, &err);
    free(s);
    ck_assert_msg(rc == 0, "ledger does not parse: %s", err.msg);
}

/* Runs one checker over a ledger; the caller frees c->v. */
static inline void run(checker_fn fn, const char *text, qc_check *c)
{
    qc_history h;

    memset(&h, 0, sizeof h);
    memset(c, 0, sizeof *c);
    load(&h, text);
    ck_assert_int_eq(fn(&h, c), 0);
    qc_history_fini(&h);
}

/* Asserts that violation i is about job and has exactly the seqs given. */
static inline void assert_violation(const qc_check *c, size_t i, int64_t job,
                                    const int64_t *seqs, int nseq)
{
    ck_assert_uint_lt(i, c->nstored);
    const qc_violation *v = &c->v[i];
    ck_assert_msg(v->job == job, "violation %zu: job %lld, expected %lld (%s)", i,
                  (long long)v->job, (long long)job, v->msg);
    ck_assert_msg(v->nseq == nseq, "violation %zu: %d seqs, expected %d (%s)", i, v->nseq, nseq,
                  v->msg);
    for (int k = 0; k < nseq; k++)
        ck_assert_msg(v->seq[k] == seqs[k], "violation %zu: seq[%d] = %lld, expected %lld (%s)", i,
                      k, (long long)v->seq[k], (long long)seqs[k], v->msg);
}

#define ASSERT_VIOLATION(c, i, job, ...)                                                           \
    do {                                                                                           \
        const int64_t seqs_[] = {__VA_ARGS__};                                                     \
        assert_violation((c), (i), (job), seqs_, (int)(sizeof seqs_ / sizeof seqs_[0]));           \
    } while (0)

#endif
