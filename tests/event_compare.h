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
        NUM(attempt) NUM(applied) NUM(drained) NUM(interrupted) NUM(timed_out) SSTR(token)
            SSTR(new_token) SSTR(op_key) STR(x->lib_id) SSTR(state) STR(x->fault) SSTR(error) NUM(line)
                NUM(file) NUM(invoke) NUM(x->ready) NUM(x->inflight) NUM(x->expired) NUM(x->dead)
                    NUM(x->done) NUM(x->oldest_ready_age_ms) NUM(x->until_t) NUM(counted)
                        STR(x->note) NUM(x->calls) NUM(delay_ms) SSTR(group) NUM(pause_ms)
                            STR(x->wake) NUM(x->wait_t) NUM(x->wait_ms) STR(x->notify)
                                NUM(x->notify_t) NUM(work_ms) NUM(x->planned) NUM(x->target)
                                    NUM(x->exclusive) NUM(x->complete) NUM(x->pid) NUM(x->xact_ms)
                                        NUM(x->state_ms) NUM(x->sent_t) NUM(x->w_id) NUM(x->w_job)
                                            NUM(x->w_txid) NUM(x->w_change) NUM(x->w_actor)
                                                NUM(x->w_worker) NUM(x->w_inc) STR(x->w_session)
                                                    STR(x->w_row) STR(x->w_old_state)
                                                        STR(x->w_state) STR(x->w_old_token)
                                                            STR(x->w_token) STR(x->w_old_owner)
                                                                STR(x->w_owner) NUM(x->w_now)
                                                                    NUM(w_ev) NUM(w_resolved)
#undef NUM
#undef STR
#undef SSTR
                                                                        return 0;
}

#endif
