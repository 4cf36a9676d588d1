/*
 * replay.h - the replay search: which order of points a replay imposes
 * when the ledger's own order does not reproduce the run (issue 12).
 *
 * A replay runs one action at a time in the order the earlier run's
 * actions ENDED (decision 58).  Where two actions overlapped in that run,
 * the order of their ends need not be the order in which what mattered
 * happened: a SELECT sent before another worker's complete committed, and
 * answered after it, saw the row before the complete, although it ended
 * after it.  Serialised by ends, the replay runs the complete first, the
 * SELECT sees the row done, and the replay diverges (the worker passes its
 * point for another job than the ledger says).
 *
 * The search tries the other orders those overlaps allow, one attempt (a
 * whole replay run) at a time: at the entry where an attempt
 * diverged (actor X), it moves X's diverging action, or one of X's up to
 * three actions before it in the same request, to just after X's previous
 * point (ahead of every action that ended while it was in flight), or the
 * diverging action one place later.  Best first: each move is taken from
 * the attempted order that got furthest (the latest place of its diverging
 * entry; the same entry moved later is not further) among those with a
 * move left, and an order already run is not run again.  It stops at the
 * first attempt that fails the original's failing checkers (a mutant's
 * expected ones) on the same first jobs, when no move is left, or after
 * max_attempts.  Every order it tries is a linearisation
 * the earlier ledger allows (each moved action overlapped the actions it
 * passes), and every attempt is itself a scheduled run: its own ledger
 * replays exactly.
 *
 * Not thread-safe: one search per replay, on the caller's thread.
 */
#ifndef QC_REPLAY_H
#define QC_REPLAY_H

#include <stddef.h>

#include "sched.h"

typedef struct qc_replay_search qc_replay_search;

/* A search over the replay of entries e (n, copied: qc_sched_load_replay's
 * order).  max_attempts: replay runs in all (>= 1).  NULL on out of memory. */
qc_replay_search *qc_replay_search_new(const qc_sched_entry *e, int n, int max_attempts);

void qc_replay_search_free(qc_replay_search *rs);

/* The order the next attempt imposes (n entries); valid until the next
 * call of qc_replay_search_next or free. */
const qc_sched_entry *qc_replay_search_order(const qc_replay_search *rs, int *n);

/* After an attempt: reproduced says whether it failed the original's
 * failing checkers on the same first jobs; ledger is the attempt's
 * ledger.jsonl (where it diverged is read from its "schedule abandoned"
 * note: replay_seq, replay_consumed).  Returns 1 when another attempt
 * should run (the order is updated and msg, size msgn, says what changed),
 * 0 when the search is over (msg says why, or is empty when the attempt
 * reproduced the run or did not diverge). */
int qc_replay_search_next(qc_replay_search *rs, const char *ledger, int reproduced, char *msg,
                          size_t msgn);

/* Attempts run so far. */
int qc_replay_search_attempts(const qc_replay_search *rs);

/* Where a replay's ledger says it diverged: *seq the earlier ledger's seq
 * of the entry, *consumed the entries carried out before.  Returns 1 when
 * it diverged, 0 when not (or the file cannot be read). */
int qc_replay_divergence(const char *ledger, long *seq, long *consumed);

#endif
