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
#include "sched.h"
#include "sink.h"

/* A thread's current connection, published so that another thread can
 * cancel its statement (SIGINT / SIGTERM: the main thread cancels every
 * in-flight statement).  The owner publishes a connection after opening it
 * and unpublishes it before closing it; mu is held only for that and across
 * the driver's cancel call, never across the owner's statements, so a
 * cancel can never reach a freed connection. */
typedef struct qc_conn_slot {
    pthread_mutex_t mu;
    qc_conn *conn; /* NULL: nothing to cancel */
} qc_conn_slot;

void qc_slot_init(qc_conn_slot *s);
void qc_slot_destroy(qc_conn_slot *s);
/* Publishes c (NULL: unpublishes).  Owner thread only. */
void qc_slot_publish(qc_conn_slot *s, qc_conn *c);
/* Cancels the published connection's current statement (driver cancel);
 * does nothing when none is published.  Any thread.  Blocks for the
 * cancel's round trip to the server. */
void qc_slot_cancel(qc_conn_slot *s, const qc_driver *d);

/* Opens a connection for a run's thread: prepare off when no_prepare, and
 * the statement timeout (ms, 0 = none) set.  Errors: the driver's open
 * errors; QC_EDB / QC_ECONN when the server refuses the timeout (the
 * connection is closed, the message says so). */
int qc_open_conn(const qc_driver *d, const char *dsn, int no_prepare, long timeout_ms,
                 qc_conn **out, qc_err *err);

/* Seeds the session's server-side random() (PostgreSQL: setseed) from the
 * run's seed and who the session is (who: a worker id, -1 the reaper, -2
 * the feeder; inc: its incarnation / connection count), so that a protocol
 * drawing on random() (a sampled claim, a random retry jitter) makes the
 * same draws when the run is replayed in the same order (issue 12).  The
 * value is a function of (seed, who, inc) alone, in [-1, 1).  A no-op on
 * engines without a session seed (MariaDB's RAND() takes its seed per
 * call; ODBC drivers: nothing is sent).  Errors are ignored: an unseeded
 * session only makes a replay less exact.  Thread-safe (c is the caller's). */
void qc_seed_session(const qc_driver *d, qc_conn *c, uint64_t seed, long who, long inc);

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
    long stmt_timeout_ms;    /* every worker / reaper / feeder / nemesis statement; 0 = none */
    atomic_int *pids;        /* [workers + 1]: each worker's server session id, then the
                                reaper's; 0 unknown */
    qc_sched *sched;         /* the schedule over named points, or NULL: actors run freely */
    qc_proxy *proxy;         /* [network] proxy = on: workers connect through it (the reaper
                                directly), or NULL */
    atomic_int *listen_pids; /* [workers]: each worker's listen session id (issue 17), 0 none
                                open; NULL without a listen step */
    atomic_int *listen_close;/* [workers]: 1 = the nemesis asks the worker to drop its listen
                                connection (it clears it); NULL without a listen step */
    /* atomics */
    atomic_int chaos;        /* 1 while planned faults may fire (the chaos phase) */
    atomic_int stop;         /* workers and reaper leave their loops */
    atomic_int fatal;        /* a protocol error: the run cannot go on */
    atomic_llong next_req;   /* request ids */
    atomic_long claims;      /* jobs claimed (rows) */
    atomic_long empty_claims;
    atomic_long completes_ok;/* completes with rows > 0 */
    atomic_long completes_zero;
    atomic_long own_lease_gave_up; /* jobs given up by [policy] lease_deadline */
    atomic_long errors;      /* fail / info outcomes */
    atomic_long reaped;
    atomic_long faults;
    atomic_int connected;    /* workers connected at start */
    atomic_int stalled;      /* workers asleep in a stall_beyond_lease: the drain waits for
                                their stale requests (the scenario's planned opportunity of
                                stale_token_rejected; a run that drained first ended them
                                unsent) */
    int shards;              /* > 1: one of several processes (--shard): a planned fault
                                fires on the job's first claim (attempt 1) only, as the
                                other processes' plans hold the same job (shard.h); a
                                claim without an attempt column fires per process */
    atomic_int connect_failed;
    pthread_mutex_t fatal_mu; /* protects fatal_msg, fatal_code, first_error */
    char fatal_msg[1024];
    char first_error[1024];  /* the first failed request, for the end-of-run diagnostic */
    int fatal_code;
} qc_shared;

/* The text of the parameters every step of an actor gets (README
 * "Parameters"), bound by pointer into a step's qc_params; the identity
 * and the scenario's values are made once per incarnation (worker.c
 * bind_actor), :client_now_ms at every bind. */
typedef struct qc_actor_params {
    char worker[40], worker_id[24], incarnation[24], lease[24], batch[24], delay[24],
        max_att[24], client_now[32];
} qc_actor_params;

typedef struct qc_worker {
    int id;          /* 0..workers-1; the reaper is -1 */
    int inc;         /* incarnation: bumped when the worker is "restarted" */
    long reconnects; /* connections it opened (seeds each session's random(): qc_seed_session) */
    qc_shared *sh;
    qc_conn *conn;
    qc_rng rng;
    qc_lbuf *lb;
    pthread_t thread;
    long idle_step;  /* consecutive empty claims (backoff exponent) */
    double planned_pause_ms; /* the idle pause before the next claim (ledger "pause_ms"), -1 none */
    double last_send_ms;     /* qc_clock_ms() just before the last request's invoke was
                                written (its send, for the worker's own lease clock) */
    double planned_work_ms;  /* the work drawn for the job in hand (ledger effect "work_ms") */
    int in_txn;      /* transaction model: the claim's transaction is open */
    int stop_requested;       /* [faults] graceful_stop arrived: this incarnation finishes the
                                 jobs it holds, then ends and restarts (worker.c graceful_restart) */
    int64_t cur_req, cur_job; /* the request in flight, for its statements' point events */
    qc_conn_slot slot; /* conn, published for qc_worker_cancel */
    atomic_int exited; /* the thread has left its loop (join will not block) */
    void *actor;     /* another actor kind's own state (adapter.c), NULL for a thread worker */
    /* LISTEN/NOTIFY (issue 17): the incarnation's own listen connection */
    qc_conn *lconn;  /* NULL: none open (never opened, lost, or closed) */
    int listens;     /* LISTENs this incarnation opened (a second one is a re-LISTEN) */
    int listen_lost_seen; /* on_listen_lost = ignore: the loss was recorded once */
    const char *wake;/* how the idle wait before the next claim ended ("notify", "poll",
                        "lost", "listen"), NULL: no listen wait (ledger "wake") */
    double wait_t, wait_ms; /* that wait's start (ms since the run's t0) and planned
                               fallback (ms; -1 none) */
    qc_actor_params names;  /* bind_actor's text of this incarnation (names_inc) */
    int names_inc;          /* the incarnation names was made for + 1; 0: not made */
} qc_worker;

/* Starts a worker thread (id >= 0) or the reaper (id == -1) on w, which the
 * caller allocates and keeps until qc_worker_join.  The thread opens its own
 * connection.  Returns 0 or QC_EIO when the thread cannot be created. */
int qc_worker_start(qc_worker *w, qc_shared *sh, int id);
/* Waits for the thread to end (after sh->stop is set) and closes its connection. */
void qc_worker_join(qc_worker *w);
/* Cancels the statement the worker (or reaper) is running, if any.  Any
 * thread, between qc_worker_start and qc_worker_join. */
void qc_worker_cancel(qc_worker *w);

/* Records a fatal error (first one wins) and stops the run.  Thread-safe. */
void qc_shared_fatal(qc_shared *sh, int code, const char *msg);

#endif
