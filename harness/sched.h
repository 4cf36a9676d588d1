/*
 * sched.h - the schedule: which actor (a worker, the reaper) may take its
 * next action, at named points of the protocol (issue 12).
 *
 * Points.  An actor passes a named point each time it records a ledger
 * event of its protocol: the invoke of a request ("claim.before"), its
 * answer ("claim.after": ok, fail or info), the end of each statement of a
 * step of several statements but the last ("claim.1" after the first,
 * "claim.2" ...), a step's COMMIT about to be sent ("claim.commit": a step
 * of several statements in one transaction, and the transaction model's
 * claim transaction before complete / fail commit it), the effect
 * ("effect.after") and a client-side fault ("fault.kill_after_claim" ...).
 * STEP is claim, complete, renew, fail or reap.  The events are the record:
 * a ledger's events in seq order are the order in which points were passed,
 * which is what --replay imposes again.
 *
 * Actions.  What an actor does between two of its points is one action (a
 * statement, a sleep, the effect).  Under a schedule one action runs at a
 * time, in the order the schedule gives, as PostgreSQL's isolationtester
 * runs one step at a time: an actor that reached a point waits there until
 * it is granted its next action.  An action that sends a statement and gets
 * no answer within block_ms while its session waits for a lock (on
 * PostgreSQL pg_stat_activity.wait_event_type = 'Lock', as isolationtester
 * asks; elsewhere the time alone) is recorded as `blocked` and the next
 * action is granted; the blocked one completes
 * when the lock goes (isolationtester's "waiting" steps).
 *
 * Modes.
 *  - script ([schedule] step = ACTOR POINT lines): entry k lets ACTOR run
 *    until it passes POINT; actors named in the script wait at every point
 *    for their next entry; workers not named wait at their start, the
 *    reaper runs freely unless named; when the script is done everyone
 *    runs freely.
 *  - replay (--replay RUNDIR): the entries are the points of the earlier
 *    run's ledger, with the job each was passed for; an actor that reaches
 *    another point or job than the ledger says ends the replay (recorded:
 *    "replay diverged"), and everyone runs freely.  An entry is not granted
 *    before its action began in the earlier run (start_ms after the first
 *    point): the replay never runs ahead of that run's clock.  An actor
 *    that passed a point goes on at once and waits for its grant only at
 *    its next event or statement (qc_sched_turn): its sleeps overlap the
 *    others' actions as in the earlier run.
 *  - pct (explore = pct): PCT (Burckhardt et al., ASPLOS 2010): every actor
 *    gets a random priority from the seed, the highest-priority waiting actor
 *    is granted, and at depth-1 random action counts the running actor drops
 *    below all others; an empty claim or reap drops its actor too (an idle
 *    poll yields), so a polling loop cannot starve the others; and, a bias
 *    of ours, an actor drops with probability 1/2 at each point between a
 *    step's statements (where claim and reap races live).
 *
 * Holds never hang: when the actor an entry waits for does not pass its
 * point within hold_timeout_ms (or exits), the schedule is abandoned with a
 * ledger note naming the entry and where the actor was, everyone runs
 * freely, and qc_sched_abandoned() says why (the run is INCONCLUSIVE).
 *
 * Thread safety: every function is thread-safe; a NULL qc_sched is "no
 * schedule" and every call on it returns at once.
 */
#ifndef QC_SCHED_H
#define QC_SCHED_H

#include <stdint.h>

#include "../backends/protocol.h"
#include "ledger.h"
#include "scenario.h"

typedef struct qc_sched qc_sched;

typedef enum { QC_SCHED_SCRIPT = 1, QC_SCHED_REPLAY = 2, QC_SCHED_PCT = 3 } qc_sched_mode;

#define QC_SCHED_ANY_JOB (INT64_MIN + 1)
/* A replay entry that must be passed for no job (an empty reap) */
#define QC_SCHED_NO_JOB (INT64_MIN + 2)

/* The reaper's actor number (workers are 0..workers-1). */
#define QC_SCHED_REAPER (-1)

/* One entry of a schedule. */
typedef struct qc_sched_entry {
    int actor;         /* worker id, or QC_SCHED_REAPER */
    char point[40];    /* "claim.1" */
    int64_t job;       /* replay: the job the point was passed for; INT64_MIN: any;
                          QC_SCHED_ANY_JOB: any job, but not none (a script's "job") */
    int nowait;        /* replay of a `blocked` event: grant the action, do not wait for it */
    long where;        /* scenario line (script) or ledger seq (replay), for messages */
    double start_ms;   /* replay: when the action began in the earlier run (its actor's
                          previous point), ms after the run's first point; it is not granted
                          earlier in the replay (leases expire, delays pass as they did); 0 */
    int expiry;        /* replay: 1 when the action found expired_job's lease run out in the
                          earlier run (a reap returned it, a claim took it over while its
                          lease was held): it is not granted before that job's lease of the
                          replay has run out (decision 1133); 0 none */
    int64_t expired_job;
    double start_lease; /* replay loader: that lease's end in the earlier run (server epoch
                           ms), to keep the one that ran out last */
    char abort_err[200]; /* replay, a step's `.after`: the error the earlier run's server
                            answered it with when it aborted the request's transaction
                            itself (SQLSTATE 40001 serialization failure / deadlock victim,
                            40P01 deadlock), without the step's "op: " prefix, e.g. "40001
                            Deadlock found ..."; "" none (decision 1144) */
    int at_once;         /* replay: the earlier run held no actor at its points (no
                            [schedule]), so the statement an actor sent after this point
                            went out right after it: a COMMIT after `.commit` and a
                            statement the server aborted go out at once (decisions 1145,
                            1147, 1148); 0: a scripted or PCT run, where the actor may
                            have been held here */
} qc_sched_entry;

/* Replay (decision 1144): whether the statement actor is about to send
 * (after qc_sched_request's turn) is where the earlier run's server
 * aborted the request (a deadlock victim, a serialization failure: the
 * server's own choice, which no client-side order can make it repeat).
 * 1 when the actor's next entry is that request's `.after` with
 * abort_err set: the error is copied to msg (size n) and the caller
 * answers the statement with it instead of sending it (and rolls back
 * the transaction it began, as the server did); 0 else, also outside a
 * replay (s NULL or another mode).  Thread-safe. */
int qc_sched_replay_abort(qc_sched *s, int actor, char *msg, size_t n);

/* Checks a point name's grammar (see above).  Returns 0 when it is one,
 * else -1 with what was expected in msg (size n). */
int qc_point_check(const char *point, char *msg, size_t n);

/* Whether protocol p has point (its step present, its statement number
 * below the step's count, a commit point on a step that has one, or
 * "claim.commit" on a claim qc_claim_commit_held wraps).  A script naming
 * a point the protocol lacks drops that entry (a step of one statement
 * has no "claim.1"), so one script serves a protocol and its mutants.
 * hold: the scenario's [schedule] holds, QC_HOLD_CLAIM_COMMIT (1: its
 * hold_claim_commit) | QC_HOLD_COMPLETE_COMMIT (2: hold_complete_commit). */
int qc_point_in_protocol(const char *point, const qc_protocol *p, int txn_model, int hold);

#define QC_HOLD_CLAIM_COMMIT 1
#define QC_HOLD_COMPLETE_COMMIT 2
#define QC_HOLD_REAP_COMMIT 4

/* Whether the worker runs p's claim in an explicit transaction of its own
 * (driver begin, the statement, point "claim.commit", driver commit), so
 * that a schedule can hold a claim between its row locks and its commit:
 * 1 when hold_claim_commit (the scenario's [schedule] key) is set, the
 * protocol is not of the transaction model (whose claim transaction stays
 * open until complete / fail) and its claim is one statement (a claim of
 * several has its own claim.commit, or is autocommit by design and must
 * stay so: wrapping its statements in one transaction would hold a lock
 * the protocol lets go).  One statement under autocommit is its own
 * transaction, so the wrap changes no lock, snapshot or visibility, only
 * how long the commit may wait (docs/decisions.md).  Pure; thread-safe. */
int qc_claim_commit_held(const qc_protocol *p, int txn_model, int hold_claim_commit);

/* The same for p's complete under [schedule] hold_complete_commit (decision
 * 1105): 1 when hold_complete_commit is set, the protocol is not of the
 * transaction model (whose complete commits the claim's transaction and
 * has "complete.commit" already) and its complete is one statement.  The
 * worker then sends BEGIN, the complete, passes "complete.commit" with the
 * row changed and locked but not yet visible, and sends COMMIT: a script
 * can make another actor (the reaper) meet that row lock, as it does when
 * a one-statement complete's own commit is slow.  Pure; thread-safe. */
int qc_complete_commit_held(const qc_protocol *p, int txn_model, int hold_complete_commit);

/* The same for p's reap under [schedule] hold_reap_commit (decision 1146):
 * 1 when hold_reap_commit is set and the reap is one statement (a reap of
 * several has its own reap.commit, or is autocommit by design).  The
 * reaper then sends BEGIN, the reap, passes "reap.commit" (with the first
 * row's job; not at all when it found nothing) with the rows it returned
 * changed and locked but not yet visible, and sends COMMIT: a script can
 * make the owner's renew or complete meet that row lock, as it does when
 * a one-statement reap's own commit is slow.  The reaper works outside
 * the claims' transactions, so the transaction model wraps it too.
 * Pure; thread-safe. */
int qc_reap_commit_held(const qc_protocol *p, int hold_reap_commit);

/* Parses "w3", "reaper" into *actor.  Returns 0, or -1. */
int qc_actor_parse(const char *name, int *actor);

/* Writes an actor's name ("w3", "reaper") into buf (size n). */
void qc_actor_name(int actor, char *buf, size_t n);

/* The point a ledger event marks, or NULL when it marks none (notes, header,
 * workers' bookkeeping).  type/op/point/fault are the event's fields (NULL
 * when absent).  The same function names points in a run and in a replay.
 * Returns a pointer into buf (size n) or to a static string. */
const char *qc_point_of_event(const char *type, const char *op, const char *point,
                              const char *fault, char *buf, size_t n);

/* A new schedule.  entries (n, copied) for script and replay; for pct,
 * seed and depth.  workers: the run's worker count (actors 0..workers-1 and
 * the reaper).  block_ms: a statement without an answer this long is
 * blocked (ms, > 0).  hold_timeout_ms: see above.  lb: a ledger buffer the
 * schedule records its own events in (blocked, abandoned), used only under
 * the schedule's mutex.  source: where entries came from, for messages
 * ("scenarios/scripts/race.ini", "results/run-1/ledger.jsonl").
 * Returns NULL on out of memory. */
qc_sched *qc_sched_new(qc_sched_mode mode, const qc_sched_entry *entries, int n, int workers,
                       uint64_t seed, int depth, long block_ms, long hold_timeout_ms,
                       qc_lbuf *lb, const char *source);

void qc_sched_free(qc_sched *s);

/* How the blocked rule asks the server whether actor's session waits for a
 * lock: 1 it does, 0 it does not (a slow statement, not a blocked one: the
 * schedule keeps waiting), -1 cannot tell (the time rule alone decides).
 * Called with the schedule's mutex held, on a waiting actor's thread, at
 * most once per block_ms per actor; ctx is the caller's. */
typedef int (*qc_sched_lock_fn)(void *ctx, int actor);

/* Sets the lock check (before any actor starts). */
void qc_sched_set_lock_check(qc_sched *s, qc_sched_lock_fn fn, void *ctx);

/* An actor starts (a worker thread after connecting, the reaper): waits
 * for its first grant when the schedule names it. */
void qc_sched_begin(qc_sched *s, int actor);

/* An actor passed point (its event is already in the ledger) for job
 * (INT64_MIN: none; an empty claim or reap).  Ends its current action and
 * waits until its next action is granted. */
void qc_sched_point(qc_sched *s, int actor, const char *point, int64_t job);

/* The actor sends a statement (in = 1; 2 for a step's leading setting,
 * whose answer does not end the action) or has its answer (in = 0): a
 * statement without an answer for block_ms is blocked.  Under a replay a
 * statement is sent only in the actor's turn: in = 1 first takes the turn
 * it owes (qc_sched_turn). */
void qc_sched_request(qc_sched *s, int actor, int in);

/* Replay: the lease of job the replay's claim or renew was just answered
 * with ends at lease_until (server epoch ms; now: the server's time of
 * the answer, epoch ms, QC_NO_TIME-like negative when unknown).  The
 * schedule keeps each job's latest lease and the offset between the
 * server's clock and its own (the smallest client time minus server time
 * of an answer seen, the reaper's direct answers the closest), so that an
 * entry whose action found that lease run out in the earlier run waits
 * until it has run out here (qc_sched_entry.expiry).  job INT64_MIN:
 * only now is read (the reaper's answers).  No-op outside a replay.
 * Thread-safe. */
void qc_sched_lease(qc_sched *s, int64_t job, double lease_until, double now);

/* Replay: the server has answered the actor's statement in flight (the
 * built-in proxy saw its ReadyForQuery leave the server, proxy.h
 * qc_proxy_answer_fn), and the answer is on its way.  When that statement
 * ends the action of the entry at the cursor, the entry is let go: the
 * next entry is granted now, and the actor passes this one when its
 * answer arrives (its own next entry still waits for it).  The earlier
 * run overlapped an answer's time on the wire (latency, a slow link) with
 * the others' actions; a replay that waited for every answer one after
 * another would run leases out that the run kept live (decision 1132).
 * No-op in other modes, for a statement not in flight, or a leading
 * setting.  Thread-safe (called on the proxy's thread). */
void qc_sched_server_answered(qc_sched *s, int actor);

/* Replay: the actor is about to do something the replay orders (record an
 * event, deliver an effect, take a job's planned fault): waits until its
 * next action is granted, when it has not been since its last point.
 * Under a replay an actor is not held at the point it passed but here, so
 * that what its next action begins with that no one else sees (a sleep:
 * its work, an idle pause, a LISTEN wait, a stall, the reaper's interval)
 * runs from the point on, overlapping the others' actions as it did in
 * the earlier run, instead of after its grant, one sleep after another
 * (decision 66).  The replay still orders every event and statement.
 * No-op in the other modes (they hold the actor at the point) and for
 * NULL. */
void qc_sched_turn(qc_sched *s, int actor);

/* Replay: the actor's next point in the earlier run, for a decision the
 * actor takes by its own clock (the worker's own lease deadline, decision
 * 1111): 1 with point (size n) and *job (INT64_MIN: none) of the actor's
 * first entry not yet carried out, 0 when there is none, the schedule is
 * not a replay, or the replay ended (diverged, released): decide as a run
 * does.  The caller then takes the decision the earlier run took, which
 * its clock alone, on a replay that runs slower or faster, need not
 * repeat.  Thread-safe; NULL gives 0. */
int qc_sched_replay_next(qc_sched *s, int actor, char *point, size_t n, int64_t *job);

/* Replay: 1 when every entry of a point the earlier run passed before its
 * ledger seq `seq` has been carried out (or is in flight: a blocked one),
 * 0 when some is still to come, -1 when the schedule is not a replay or
 * the replay ended (diverged, released).  For what the run did at a time
 * and not at a point of its own (the proxy's partition window: decision
 * 1111), so that it comes at the same place in the order.  Thread-safe;
 * NULL gives -1. */
int qc_sched_replay_reached(qc_sched *s, long seq);

/* The actor's thread ends: an entry waiting for it can never come. */
void qc_sched_exit(qc_sched *s, int actor);

/* The run stops (its ledger still open): a replay with entries not
 * carried out diverged at the first of them, as far as the search and
 * "reproduced" go (a "schedule abandoned" note with replay_seq, decision
 * 1135); then everyone runs freely, as qc_sched_release.  Thread-safe. */
void qc_sched_finish(qc_sched *s);

/* 0 while a script or replay has steps left (the run's drain waits for
 * them: a step the run can never reach abandons the schedule after
 * hold_timeout_ms, and the run is INCONCLUSIVE), or while a PCT action has
 * a statement in flight; else 1 (also for NULL). */
int qc_sched_settled(qc_sched *s);

/* Everyone runs freely from now on (the run stops). */
void qc_sched_release(qc_sched *s);

/* Why a script was released before its end because the race it sets up
 * cannot happen on this protocol (a "claim.after job" step met an empty
 * claim), or NULL.  The run is then judged as it ran.  Valid until free. */
const char *qc_sched_released(const qc_sched *s);

/* NULL while the schedule was kept (or there is none), else why it was
 * abandoned ("scenarios/scripts/x.ini:14: step 'w1 claim.after' did not
 * come within 10000 ms (w1 was at claim.before)").  Valid until free. */
const char *qc_sched_abandoned(const qc_sched *s);

/* Counters for the summary: entries consumed, total, blocked actions,
 * actions of a replay let go at their server answer. */
void qc_sched_stats(const qc_sched *s, int *consumed, int *total, int *blocked, int *on_wire);

/* Loads the entries of a replay from a run's ledger (path): every event
 * that marks a point, in seq order, one per request (a claim of several
 * rows is one point).  *out (n entries) is malloc'd; the caller frees it.
 * Errors: QC_EIO, QC_EINVAL "path:line: ..." for a line that is not an
 * event. */
int qc_sched_load_replay(const char *path, qc_sched_entry **out, int *n, qc_err *err);

#endif
