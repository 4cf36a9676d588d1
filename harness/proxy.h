/*
 * proxy.h - the built-in loopback TCP proxy between the workers and the
 * database (issue 17, "The network between workers and the database").
 *
 * Toxiproxy is not packaged for Debian, so qchaos carries its own: one
 * listener on 127.0.0.1 per worker (the listener tells the proxy whose
 * connection it is), one poll() thread, non-blocking sockets.  Workers
 * connect through it when the scenario says `[network] proxy = on`; the
 * reaper, the feeder, the monitor, the nemesis, setup and snapshot connect
 * directly (they are the queue's own machinery and the harness's eyes: a
 * partition of the application's workers must not blind the checkers).
 *
 * Toxics, per connection of a targeted worker:
 *   latency_ms + jitter_ms  each chunk read from either side is forwarded
 *                           no sooner than latency + U(0, jitter) ms after
 *                           it was read, in order (TCP keeps order);
 *   bandwidth               bytes/s per direction (token bucket);
 *   half_open               the connection goes silent both ways without
 *                           closing (a planned job fault, after its claim);
 *   reset                   RST (SO_LINGER 0 + close) when the next request
 *                           of the worker arrives (a planned job fault,
 *                           before its complete);
 *   partition               chosen workers for a window: their connections
 *                           silent (mode silent) or reset and new ones
 *                           refused with an RST (mode refuse);
 *   lost ack (PG-aware)     armed by the worker before it sends the complete
 *                           of a planned lost_ack job: the proxy parses the
 *                           backend's messages (1-byte type + int32 length)
 *                           and holds them; at the first ReadyForQuery 'Z'
 *                           with status 'I' (idle: the transaction is over)
 *                           whose previous message is a CommandComplete 'C'
 *                           (tag "COMMIT", or "UPDATE n" for an autocommit
 *                           complete) the connection is dropped (RST to the
 *                           client, close to the server): the server has
 *                           committed and answered, the client never gets
 *                           the answer.  ReadyForQuery 'T' (inside the
 *                           transaction) releases what was held and stays
 *                           armed; an ErrorResponse releases and disarms
 *                           (the complete failed: no fault).
 * On loopback the proxy's own kernel acknowledges whatever a client sends,
 * so the client's TCP timers could never see a silent peer.  The proxy
 * plays the network's part: with `[policy] tcp_user_timeout_ms` (which it
 * also puts into the workers' conninfo, libpq's tcp_user_timeout), a silent
 * connection whose client has data the proxy read or could read but did
 * not deliver for that long is reset, as the client's kernel would give up
 * on unacknowledged data.  A client that only waits for an answer has
 * nothing unacknowledged and waits, as over real TCP.
 * Keepalives are not emulated.  When the run stops (*stop), every silent
 * connection is reset, so a worker wedged without a timeout is let go.
 *
 * Ledger: the proxy thread appends to its own buffer (worker -2, as the
 * nemesis): a fault "latency" / "bandwidth" per targeted worker at start
 * ("target", "latency_ms", "jitter_ms", "bytes_per_s"; the toxic lasts the
 * whole run, so no until_t), a fault "partition" per worker at the window's
 * start with until_t, and notes when a silent connection is reset.  The
 * job faults (half_open, reset, lost_ack) are recorded by the worker.
 *
 * PostgreSQL only (the DSN rewrite is libpq's conninfo; the lost ack parses
 * the PG v3 protocol).  The rewritten DSN sets sslmode=disable and
 * gssencmode=disable so the backend's messages are readable.
 */
#ifndef QC_PROXY_H
#define QC_PROXY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "ledger.h"

#define QC_PROXY_MAX_WORKERS 1024

/* [network] of a scenario.  Zeroed = no proxy. */
typedef struct qc_network {
    int proxy;                /* proxy = on */
    long latency_ms;          /* added per direction, ms */
    long jitter_ms;           /* + U(0, jitter_ms) per chunk */
    long bandwidth;           /* bytes/s per direction per connection; 0 = unlimited */
    char targets[256];        /* workers the latency/bandwidth toxics apply to: "all" or
                                 "w0,w3" (also "0,3") */
    int lost_ack_proxy;       /* lost_ack = proxy: [faults] lost_ack drops the answer in the
                                 proxy (PG-aware) instead of in the client */
    long tcp_user_timeout_ms; /* the workers' libpq tcp_user_timeout, ms; 0 = none.  Set by
                                 [policy] tcp_user_timeout_ms: the application's connection
                                 setting, which a policy mutant may leave out */
    char partition[256];      /* workers partitioned ("w0,w1"); "" = none */
    long partition_at_ms;     /* window start, ms after the proxy started */
    long partition_ms;        /* window length */
    int partition_refuse;     /* partition_mode = refuse (else silent) */
} qc_network;

/* Parses one key of [network] into n.  Returns 1 when the key was taken, 0
 * with a message in msg (what was expected) otherwise. */
int qc_network_parse(qc_network *n, const char *name, const char *value, char *msg, size_t msz);

/* Checks n against the run's worker count: worker names must be w0..wN-1.
 * Returns 0, or -1 with a message. */
int qc_network_check(const qc_network *n, long workers, char *msg, size_t msz);

typedef struct qc_proxy qc_proxy;

/* What a worker arms on its current connection (consumed by the next bytes
 * it sends through the proxy). */
typedef enum {
    QC_PROXY_ARM_NONE = 0,
    QC_PROXY_ARM_LOST_ACK, /* drop the answer to the coming request's end (see above) */
    QC_PROXY_ARM_RESET,    /* RST instead of forwarding the coming request */
    QC_PROXY_ARM_HALF_OPEN /* silence the connection from the coming request on */
} qc_proxy_arm_kind;

/* Starts the proxy: nworkers listeners on 127.0.0.1 (ephemeral ports) and
 * the thread, forwarding to the server named by upstream_dsn (libpq
 * conninfo or URI: host or hostaddr, port; a socket directory host works
 * too).  seed: jitter's PRNG.  lb: the proxy thread's ledger buffer (may be
 * NULL: nothing recorded); t0: the ledger's origin (qc_clock_ms).  stop
 * (may be NULL): when it becomes 1, faults end and silent connections are
 * reset.  Errors: QC_EINVAL (a bad DSN, a multi-host DSN, a worker name out
 * of range), QC_EIO (a socket could not be bound), QC_ENOMEM. */
int qc_proxy_create(const qc_network *cfg, const char *upstream_dsn, int nworkers, uint64_t seed,
                    qc_lbuf *lb, double t0, atomic_int *stop, qc_proxy **out, qc_err *err);

/* A replay's anchor for the partition window (decision 1111): called on
 * the proxy thread with edge 0 (the window's start) or 1 (its end); 1 when
 * the replay has carried out every point the earlier run passed before
 * that edge, 0 not yet, -1 no anchor (the replay ended, or the run's
 * ledger had no such edge): then the edge comes by the clock, as in a
 * run.  ctx is the caller's; it must stay valid until qc_proxy_destroy. */
typedef int (*qc_proxy_anchor_fn)(void *ctx, int edge);

/* Sets the anchor (before the workers start; NULL fn: none).  The window
 * then starts when the replay reaches the point the run's partition began
 * at, not partition_at_ms after the start: a replay runs slower than its
 * run (one action at a time), and a window by the clock would catch
 * requests the run had already had answered. */
void qc_proxy_set_anchor(qc_proxy *p, qc_proxy_anchor_fn fn, void *ctx);

/* Called on the proxy thread each time the server's answer to a worker's
 * statement has been read from the server (a ReadyForQuery after a
 * CommandComplete, an ErrorResponse or an EmptyQueryResponse: a prepare's
 * ParseComplete does not count), before the proxy forwards it (behind
 * latency or a slow link it reaches the worker later).  worker: the
 * connection's worker.  A replay lets that worker's action go there
 * (sched.h qc_sched_server_answered, decision 1132). */
typedef void (*qc_proxy_answer_fn)(void *ctx, int worker);

/* Sets the answer hook (before the workers start; NULL fn: none).  ctx
 * must stay valid until qc_proxy_destroy. */
void qc_proxy_set_answer_hook(qc_proxy *p, qc_proxy_answer_fn fn, void *ctx);

/* Stops the thread, resets every connection still open and frees p.
 * Accepts NULL.  Call after every worker has stopped using it. */
void qc_proxy_destroy(qc_proxy *p);

/* The conninfo worker w (0..nworkers-1) connects with: upstream_dsn with
 * host/port replaced by its listener (keyword form).  Borrowed until
 * destroy; it holds the password: never print it.  Thread-safe. */
const char *qc_proxy_dsn(const qc_proxy *p, int worker);

/* Arms k on worker's connection (see qc_proxy_arm_kind).  Thread-safe; the
 * worker calls it before sending the request it applies to. */
void qc_proxy_arm(qc_proxy *p, int worker, qc_proxy_arm_kind k);

/* Whether what was armed for worker fired since the last call (1), with
 * the dropped answer's CommandComplete tag ("COMMIT", "UPDATE 1") in tag
 * for a lost ack; 0 when it did not fire (an armed kind not yet consumed is
 * cancelled).  Thread-safe. */
int qc_proxy_take_fired(qc_proxy *p, int worker, char *tag, size_t n);

typedef struct qc_proxy_stats {
    long connections;   /* accepted */
    long long bytes_up; /* client -> server, forwarded */
    long long bytes_down;
    long resets;    /* connections the proxy reset (fault, timeout, stop) */
    long lost_acks; /* answers dropped */
} qc_proxy_stats;

/* Counters so far.  Thread-safe. */
void qc_proxy_get_stats(qc_proxy *p, qc_proxy_stats *st);

#endif
