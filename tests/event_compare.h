/*
 * event_compare.h - compares two qc_event records field by field (numbers
 * bit for bit, strings by content), for tests that hold two readers of one
 * ledger against each other (tests/check_flatjson.c).  Keep the list in
 * step with qc_event in harness/history.h.
 */
#ifndef QC_TEST_EVENT_COMPARE_H
#define QC_TEST_EVENT_COMPARE_H

#include <stdio.h>
#include <string.h>

#include "../harness/history.h"

/* 0 when a and b hold the same values; else 1, with the first differing
 * field named in why (size bytes). */
static int event_differs(const qc_event *a, const qc_event *b, char *why, size_t size)
{
    const qc_event_x *ax = qc_x(a->x), *bx = qc_x(b->x);
#define XNUM(f)                                                                                    \
    if (memcmp(&ax->f, &bx->f, sizeof ax->f) != 0) {                                               \
        snprintf(why, size, "field x->%s differs", #f);                                            \
        return 1;                                                                                  \
    }
#define XSTR(f)                                                                                    \
    if ((ax->f == NULL) != (bx->f == NULL) || (ax->f != NULL && strcmp(ax->f, bx->f) != 0)) {      \
        snprintf(why, size, "field x->%s differs: \"%s\" vs \"%s\"", #f, ax->f ? ax->f : "(null)", \
                 bx->f ? bx->f : "(null)");                                                        \
        return 1;                                                                                  \
    }
#define NUM(f)                                                                                     \
    if (memcmp(&a->f, &b->f, sizeof a->f) != 0) {                                                  \
        snprintf(why, size, "field %s differs", #f);                                               \
        return 1;                                                                                  \
    }
#define SSTR(f)                                                                                    \
    if ((qc_s(a->f) == NULL) != (qc_s(b->f) == NULL) ||                                            \
        (qc_s(a->f) != NULL && strcmp(qc_s(a->f), qc_s(b->f)) != 0)) {                             \
        snprintf(why, size, "field %s differs: \"%s\" vs \"%s\"", #f,                              \
                 qc_s(a->f) ? qc_s(a->f) : "(null)", qc_s(b->f) ? qc_s(b->f) : "(null)");          \
        return 1;                                                                                  \
    }
#define STR(f)                                                                                     \
    if ((a->f == NULL) != (b->f == NULL) || (a->f != NULL && strcmp(a->f, b->f) != 0)) {           \
        snprintf(why, size, "field %s differs: \"%s\" vs \"%s\"", #f, a->f ? a->f : "(null)",      \
                 b->f ? b->f : "(null)");                                                          \
        return 1;                                                                                  \
    }
    NUM(seq)
    NUM(t)
    NUM(type) NUM(op) NUM(worker) NUM(inc) NUM(req) NUM(job) NUM(rows) NUM(now) NUM(lease_until)
        NUM(attempt) NUM(applied) XNUM(drained) XNUM(interrupted) XNUM(timed_out) SSTR(token)
            SSTR(new_token) SSTR(op_key) XSTR(lib_id) SSTR(state) XSTR(fault) SSTR(error) NUM(line)
                NUM(file) NUM(invoke) XNUM(ready) XNUM(inflight) XNUM(expired) XNUM(dead)
                    XNUM(done) XNUM(oldest_ready_age_ms) XNUM(until_t) NUM(counted)
                        XSTR(note) XNUM(calls) NUM(delay_ms) SSTR(group) NUM(pause_ms)
                            XSTR(wake) XNUM(wait_t) XNUM(wait_ms) XSTR(notify)
                                XNUM(notify_t) NUM(work_ms) XNUM(planned) XNUM(target)
                                    XNUM(exclusive) XNUM(complete) XNUM(pid) XNUM(xact_ms)
                                        XNUM(state_ms) XNUM(sent_t) XNUM(w_id) XNUM(w_job)
                                            XNUM(w_txid) XNUM(w_change) XNUM(w_actor)
                                                XNUM(w_worker) XNUM(w_inc) XSTR(w_session)
                                                    XSTR(w_row) XSTR(w_old_state)
                                                        XSTR(w_state) XSTR(w_old_token)
                                                            XSTR(w_token) XSTR(w_old_owner)
                                                                XSTR(w_owner) XNUM(w_now)
                                                                    NUM(w_ev) NUM(w_resolved)
#undef NUM
#undef STR
#undef SSTR
#undef XNUM
#undef XSTR
                                                                        return 0;
}

#endif
