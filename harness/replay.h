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
 * whole replay run) at a time.  Where the actor X of the diverging entry
 * passed its point for another job (its claim answered B where the
 * earlier run's answered A), the first move is the taker's: the later
 * entry at which another actor Y passed that point for B in the earlier
 * run goes just ahead of X's, with Y's earlier points of that request
 * (at most three) after X's: what took B first there takes it first
 * here (claims answered at the client in another order than the server
 * ran them: a slow link queues their answers).  An attempt after a taker
 * move whose X diverges again at the same entry, for yet another job, is
 * counted a little further (one overlapping action put in its place).
 * Else, and next, at the entry where an attempt
 * diverged (actor X), it moves X's diverging action, or one of X's up to
 * three actions before it in the same request, to just after X's previous
 * point (ahead of every action that ended while it was in flight), or the
 * diverging action one place later (behind the next entry of another
 * actor), or one of those three as late as it goes (right before the
 * actor's next entry) or one place later: a SELECT that ran beside another
 * and ended first, although the other held the row it skipped, answers as
 * it did when it runs after the other's UPDATE.  Best first: each move is taken from
 * the attempted order that got furthest (the latest place of its diverging
 * entry; the same entry moved later is not further) among those with a
 * move left, and an order already run is not run again.  It stops at the
 * first attempt that fails the original's failing checkers (a mutant's
 * expected ones) on the same first jobs, when no move is left, or after
 * max_attempts.  The moves ahead pass only actions the moved one
 * overlapped; a move later may pass more (a SELECT that skipped a row
 * another statement held at once has no serial order that the ledger's
 * overlaps allow): every point's job is checked all the same, so an order
 * that answers otherwise diverges and is never kept as a reproduction.
 * Every attempt is itself a scheduled run: its own ledger replays
 * exactly.
 *
 * Not thread-safe: one search per replay, on the caller's thread.
 */
#ifndef QC_REPLAY_H
#define QC_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
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

/* How many attempts in a row, up to the latest, got no further in the
 * run's order than the furthest before them (by the rank the search
 * orders its states by: a later diverging entry, or the same entry
 * answering with another job after a taker move); 0 when the latest got
 * further.  The caller's stop rule after a same-way attempt (decision
 * 1140). */
int qc_replay_search_stale(const qc_replay_search *rs);

/* After an attempt that failed the same way (the violation came back on
 * the same job, but out of the run's order), the search for the order
 * goes on only while an attempt in the last this many got further. */
#define QC_REPLAY_STALE_AFTER_SAME 4

/* Where attempt (1-based) diverged: the 0-based entry of its order, the
 * order's length when it did not, -1 when not known. */
int qc_replay_search_place(const qc_replay_search *rs, int attempt);

/* The attempt whose run a replay keeps (1-based; 0 before any attempt):
 * the one that reproduced the run (*reproduced = 1), else (*reproduced =
 * 0) the one that got furthest, the earliest among equals: an attempt that
 * did not diverge is further than any that did, else the later its
 * diverging entry in its order, the further.  *place: where the kept one
 * diverged (0-based entry of its order), the order's length when it did
 * not, -1 when not known. */
int qc_replay_search_kept(const qc_replay_search *rs, int *reproduced, int *place);

/* Where a replay's ledger says it diverged: *seq the earlier ledger's seq
 * of the entry, *consumed the entries carried out before; point (size
 * pointn, "" when not known) and *job (INT64_MIN: none or not known) what
 * the actor passed there instead: the point and its job.  point and job
 * may be NULL.  Returns 1 when it diverged, 0 when not (or the file cannot
 * be read). */
int qc_replay_divergence(const char *ledger, long *seq, long *consumed, char *point,
                         size_t pointn, int64_t *job);

/* The replay's folder (out: the --out of `qchaos run --replay`, or
 * RUNDIR/replay-N).  Attempt 1 of the search runs in out itself, attempt
 * a > 1 in out/attempt-a; buf (size n) gets the folder of attempt a. */
void qc_replay_attempt_dir(const char *out, int attempt, char *buf, size_t n);

/* Removes the out/attempt-N folders an earlier replay into out left (a
 * replay with --force into the same folder).  Returns how many, 0 when out
 * does not exist, or -1 with err (QC_EIO naming the folder). */
int qc_replay_clear_attempts(const char *out, qc_err *err);

/* After the search of attempts attempts: makes out hold the run of
 * attempt kept (1-based), so that out/ledger.jsonl and out/results.json
 * are the kept attempt's.  With one attempt there is nothing to do; with
 * more, the regular files in out (attempt 1's run) move to out/attempt-1/,
 * so that every attempt has its folder out/attempt-N/, and attempt kept's
 * are linked (copied where a link cannot be made) into out.  Returns 0, or
 * -1 with err (QC_EIO naming the file). */
int qc_replay_keep(const char *out, int kept, int attempts, qc_err *err);

/* Adds "replay" to out/results.json: of (the replayed run's folder), the
 * attempts run, the one kept and its own folder (out/attempt-KEPT, or out
 * for a single attempt), whether it reproduced the
 * run (failed the same way with its order carried out through the
 * evidence), whether it failed the same way at all (same_way: the same
 * checkers on the same jobs, though it diverged before the evidence),
 * why it was kept, the order's entries and where the kept attempt
 * diverged (1-based entry; null when it did not: place from
 * qc_replay_search_kept).  Returns 0, or -1 with err (QC_EIO). */
int qc_replay_annotate(const char *out, const char *of, int kept, int attempts, int reproduced,
                       int same_way, int place, int entries, qc_err *err);

#endif
