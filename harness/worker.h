/*
 * worker.h - worker threads (claim -> effect -> complete) and the reaper.
 *
 * Each worker owns its connection, PRNG, stats and ledger buffer (pgbench's
 * per-client state).  Shared state (qc_shared) is read-only after start,
 * atomic, or behind fatal_mu.  Workers stop by flag and are joined.
 */
#ifndef QC_WORKER_H
#define QC_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "../backends/protocol.h"
#include "fault.h"
#include "ledger.h"
#include "rng.h"
#include "scenario.h"
#include "sink.h"

typedef struct qc_shared {
    /* read-only after the threads start */
    const qc_scenario *sc;
    const qc_driver *drv;
    const qc_protocol *proto;
    const char *dsn;
    const char *dsn_role;    /* where dsn came from when not --dsn ("--worker-dsn"), or NULL:
                              * named in connect errors */
    qc_ledger *ledger;
    qc_sink *sink;
    qc_fault_plan *plan;     /* may be NULL: no client-side faults */
    int no_prepare;          /* 1: unnamed statements (transaction-mode pooler) */
    double t0;               /* the run's monotonic origin (qc_clock_ms), as the ledger's */
    int txn_model;           /* protocol model "transaction" (claim stays open until complete) */
    atomic_int *pids;        /* [workers]: each worker's server session id, 0 unknown */
    /* atomics */
    atomic_int chaos;        /* 1 while planned faults may fire (the chaos phase) */
    atomic_int stop;         /* workers and reaper leave their loops */
    atomic_int fatal;        /* a protocol error: the run cannot go on */
    atomic_llong next_req;   /* request ids */
    atomic_long claims;      /* jobs claimed (rows) */
    atomic_long empty_claims;
    atomic_long completes_ok;/* completes with rows > 0 */
    atomic_long completes_zero;
    atomic_long errors;      /* fail / info outcomes */
    atomic_long reaped;
    atomic_long faults;
    atomic_int connected;    /* workers connected at start */
    atomic_int connect_failed;
    pthread_mutex_t fatal_mu; /* protects fatal_msg, fatal_code, first_error */
    char fatal_msg[1024];
    char first_error[1024];  /* the first failed request, for the end-of-run diagnostic */
    int fatal_code;
} qc_shared;

typedef struct qc_worker {
    int id;          /* 0..workers-1; the reaper is -1 */
    int inc;         /* incarnation: bumped when the worker is "restarted" */
    qc_shared *sh;
    qc_conn *conn;
    qc_rng rng;
    qc_lbuf *lb;
    pthread_t thread;
    long idle_step;  /* consecutive empty claims (backoff exponent) */
    int in_txn;      /* transaction model: the claim's transaction is open */
} qc_worker;

/* Starts a worker thread (id >= 0) or the reaper (id == -1) on w, which the
 * caller allocates and keeps until qc_worker_join.  The thread opens its own
 * connection.  Returns 0 or QC_EIO when the thread cannot be created. */
int qc_worker_start(qc_worker *w, qc_shared *sh, int id);
/* Waits for the thread to end (after sh->stop is set) and closes its connection. */
void qc_worker_join(qc_worker *w);

/* Records a fatal error (first one wins) and stops the run.  Thread-safe. */
void qc_shared_fatal(qc_shared *sh, int code, const char *msg);

#endif
