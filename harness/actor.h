/*
 * actor.h - the one interface the runner drives workers through
 * (STYLE.md: actors behind one interface, as drivers are behind driver.h).
 *
 * An actor is a worker of the run: a thread that runs the protocol file's
 * statements itself (worker.c), or an adapter process that runs a queue
 * library's own worker and tells qchaos what it does (adapter.c,
 * docs/adapters.md).  Both write the same ledger events (history.h), so the
 * checkers judge either.  The reaper, the feeder and the nemesis stay
 * threads of their own.
 *
 * start: starts actor id (0..workers-1) on w, which the caller allocates
 *        (zeroed) and keeps until join; 0, or a QC_E* code when it could
 *        not be started (then join must not be called).
 * join:  waits for the actor to end (after sh->stop is set) and frees what
 *        it holds.
 * cancel: cuts short what the actor is doing (SIGINT / SIGTERM); any thread,
 *        between start and join.
 */
#ifndef QC_ACTOR_H
#define QC_ACTOR_H

#include "worker.h"

typedef struct qc_actor_ops {
    const char *kind; /* "thread" or "adapter", for messages */
    int (*start)(qc_worker *w, qc_shared *sh, int id);
    void (*join)(qc_worker *w);
    void (*cancel)(qc_worker *w);
} qc_actor_ops;

extern const qc_actor_ops qc_actor_thread;  /* worker.c: qc_worker_start/join/cancel */
extern const qc_actor_ops qc_actor_adapter; /* adapter.c */

/* The kind of actor a scenario's workers are: adapter processes when it
 * has an [adapter] command, else threads. */
const qc_actor_ops *qc_actor_for(const qc_scenario *sc);

#endif
