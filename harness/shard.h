/*
 * shard.h - one run split over several qchaos processes (`qchaos run
 * --shard I/N`, issue 16 "Runs larger than one machine").
 *
 * Who does what (docs/decisions.md 720-724, README "Sharded runs"):
 *   - shard 0 runs the owner check, the protocol's teardown and setup, and
 *     creates the coordination table qchaos.qchaos_shards (PostgreSQL only)
 *     before the tables are marked; shards 1..N-1 wait for its row;
 *   - every shard enqueues its share of the jobs (job indexes k with
 *     k % N == I; the ids come from the database) and drives its share of
 *     the workers (worker ids w with w % N == I, so ids stay globally unique
 *     and ledgers merge);
 *   - the fault plan is built by every shard over every job of the run
 *     (read with the snapshot step once all shards have enqueued), so it is
 *     the plan one process would have; a fault fires on a job's first claim
 *     (attempt 1), whichever shard's worker makes it;
 *   - shard 0 alone runs the reaper, the nemesis and the fault-plan notes;
 *   - every shard samples the monitor; a shard is drained when every shard
 *     has enqueued and the queue (the whole table) has nothing ready or in
 *     flight; then it stops its workers and says so;
 *   - shard 0 waits until every shard has stopped, then takes the one final
 *     snapshot and tears down; the other shards take none and do not audit
 *     their own ledger alone: `qchaos audit L0 L1 ...` judges the run.
 *
 * The coordination table holds one row per shard: (shard, shards, seed,
 * stage, jobs).  Stages only grow: 1 joined, 2 enqueued, 3 drained,
 * 4 stopped, 5 finished (shard 0, after the snapshot).  A shard other than
 * 0 accepts shard 0's row only when its seed and shard count are its own
 * and its stage is below 5, so a finished run kept with --keep is not
 * joined.
 *
 * Not thread-safe: the control connection's, used by the main thread only.
 */
#ifndef QC_SHARD_H
#define QC_SHARD_H

#include "../backends/driver.h"
#include "err.h"

#include <stdint.h>

#define QC_SHARD_MAX 1024

enum {
    QC_SHARD_JOINED = 1,
    QC_SHARD_ENQUEUED = 2,
    QC_SHARD_DRAINED = 3,
    QC_SHARD_STOPPED = 4,
    QC_SHARD_FINISHED = 5
};

/* Parses "I/N" (0 <= I < N <= QC_SHARD_MAX) into *index and *count.
 * Returns 0, or QC_EINVAL with "--shard expects I/N with 0 <= I < N <= 1024,
 * got 'x'" in err. */
int qc_shard_parse(const char *arg, int *index, int *count, qc_err *err);

/* The share of n items (jobs, workers, battery runs) that shard index of
 * count takes when items are dealt round robin (item k to shard k % count):
 * n / count, plus one for the first n % count shards.  count <= 1: n. */
long qc_shard_share(long n, int index, int count);

/* Shard 0, after the protocol's setup and before qc_owner_mark: (re)creates
 * qchaos.qchaos_shards and inserts its own row at stage JOINED.  Errors: the
 * statements' (QC_EDB, QC_ECONN). */
int qc_shard_create(const qc_driver *d, qc_conn *c, uint64_t seed, int count, qc_err *err);

/* Shards 1..N-1: polls every 200 ms, up to timeout_s seconds, until shard 0's
 * row of this seed and count is there (stage 1..4), then inserts its own row
 * at stage JOINED.  Returns 0; QC_ECONN "shard I of N: shard 0 did not set
 * up the run within S s"; QC_ECONN "interrupted" when SIGINT / SIGTERM came (qc_interrupted). */
int qc_shard_join(const qc_driver *d, qc_conn *c, uint64_t seed, int index, int count,
                  double timeout_s, qc_err *err);

/* Moves this shard's row to stage (and jobs, the jobs it enqueued, when
 * jobs >= 0).  Errors: the statement's. */
int qc_shard_set(const qc_driver *d, qc_conn *c, int index, int stage, long jobs, qc_err *err);

/* How many shards' rows are at stage or beyond (0..count); -1 when the
 * table cannot be read (the caller retries). */
int qc_shard_count_at(const qc_driver *d, qc_conn *c, int stage);

/* Polls (every 20 ms, up to timeout_s) until count shards are at stage;
 * returns 0, or QC_ECONN naming how many were there.  The connection may be
 * reopened (dsn) when it breaks; *c is updated. */
int qc_shard_wait(const qc_driver *d, qc_conn **c, const char *dsn, int stage, int count,
                  double timeout_s, qc_err *err);

/* Drops qchaos.qchaos_shards (shard 0, before qc_owner_finish). */
void qc_shard_drop(const qc_driver *d, qc_conn *c);

#endif
