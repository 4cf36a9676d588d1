/*
 * adapter.h - workers that are processes running a queue library's own
 * worker (pg-boss, graphile-worker, Minion ...), speaking JSON lines with
 * qchaos on stdin/stdout (Maelstrom's idea).  The protocol, the messages and
 * how they become ledger events are in docs/adapters.md; the worker side is
 * the actor qc_actor_adapter (actor.h).
 *
 * Every adapter process is started by /bin/sh -c COMMAND in the data folder,
 * in a process group of its own (faults signal the group: a library that
 * forks its job runners is stopped or killed whole), with stdin and stdout
 * pipes to qchaos and stderr appended to OUT/adapters/w<ID>.<INC>.log.  Its
 * environment: QCHAOS_DSN (libpq conninfo), the PG* variables of that
 * conninfo (PGPASSWORD among them: never printed), QCHAOS_ROLE (worker |
 * enqueuer), QCHAOS_WORKER_ID, QCHAOS_INCARNATION, QCHAOS_APP_NAME
 * (qchaos-w3.1: the application_name every session of it must carry; also
 * PGAPPNAME), QCHAOS_LEASE_MS, QCHAOS_MAX_ATTEMPTS, QCHAOS_RETRY_DELAY_MS,
 * QCHAOS_POLL_MS, QCHAOS_QUEUE (the queue name, "qchaos").
 *
 * An adapter that breaks the protocol (a line that is not a JSON object, an
 * unknown message, a message without its fields, an exit before hello, no
 * hello or answer within [adapter] start_timeout_ms / answer_timeout_ms)
 * stops the run with QC_EADAPTER (exit 5): the message names the command,
 * the worker, the line number and the line; the ledger so far is kept.
 */
#ifndef QC_ADAPTER_H
#define QC_ADAPTER_H

#include <jansson.h>
#include <stdint.h>
#include <stddef.h>

#include "ledger.h"
#include "scenario.h"

/* What an adapter said in its hello (docs/adapters.md). */
typedef struct qc_adapter_hello {
    char library[128];   /* "pg-boss" */
    char version[64];    /* "10.4.2" */
    json_t *exposes;     /* array of claim fields the library exposes ("token",
                            "lease_until_ms", "now_ms", "attempt"), owned; may be NULL */
    json_t *message;     /* the whole hello, owned */
} qc_adapter_hello;

/* Refuses (QC_EINVAL, a message naming the scenario file and the key) what
 * an adapter cannot honour: the faults lost_request, stall_until_reclaimed,
 * stall_in_work (the library sends its own requests), half_open and reset
 * (its processes connect directly; scenario.c refuses the proxy),
 * graceful_stop (the adapter protocol has no stop request), notify_lost
 * and notify_early (its enqueue is the library's: qchaos runs no notify
 * step), clock_skew_ms (it reads its own clock), the nemesis'
 * listen_close_every_ms / listen_terminate_every_ms (qchaos holds none of
 * its listen connections), [policy] on_listen_lost, on_renew_lost,
 * stop_heartbeat_first, lease_deadline = answer and an [idle]
 * listen_poll_ms other than the default.  Pure: reads sc only; thread-safe.
 * The runner calls it at load, before any server is touched (exit 2). */
int qc_adapter_check(const qc_scenario *sc, qc_err *err);

/* Sets what every adapter of this run shares, before anything starts one:
 * the run folder (logs go to OUT/adapters/) and the DSN the adapters get.
 * Creates OUT/adapters.  Refuses (QC_EINVAL naming the scenario) faults an
 * adapter cannot take: lost_request, stall_until_reclaimed, stall_in_work,
 * [policy] keys other than the defaults, batch != 1, groups.  Not
 * thread-safe: call once from the main thread before qc_adapter_enqueue and
 * the actors; the values are read-only afterwards. */
int qc_adapter_prepare(const qc_scenario *sc, const char *out_dir, const char *dsn, qc_err *err);

/* Starts the enqueuer (worker -1, QCHAOS_ROLE=enqueuer), waits for its
 * hello and fills *hello (the caller frees it with qc_adapter_hello_free).
 * The enqueuer's library sets up its own schema before it says hello.
 * Errors: QC_EADAPTER, QC_EIO. */
int qc_adapter_enqueuer_start(qc_adapter_hello *hello, qc_err *err);

/* Through the enqueuer: enqueues count jobs (qchaos's ids first_id ..
 * first_id+count-1, payloads "job-<index>") in messages of 500, writes an
 * ok enqueue event per job the adapter reports enqueued, and appends the ids
 * to *ids (grown; *nids updated).  Errors: QC_EADAPTER (no answer in time,
 * a bad answer), QC_ENOMEM. */
int qc_adapter_enqueue(qc_lbuf *lb, long count, int64_t first_id, int64_t **ids, size_t *nids,
                       qc_err *err);

/* Sends the enqueuer stop and waits for it to exit (answer_timeout_ms, then
 * SIGKILL).  Safe to call when it was never started. */
void qc_adapter_enqueuer_stop(void);

/* The header's "adapter" object: command, library, version, exposes, the
 * witness hints (table, id/state/owner columns).  New reference. */
json_t *qc_adapter_header(const qc_scenario *sc, const qc_adapter_hello *hello);

/* The header's "columns" for an adapter run: the protocol file's (snapshot,
 * monitor) with claim, complete and fail taken from what the adapter
 * exposes.  cols is modified in place (borrowed). */
void qc_adapter_columns(json_t *cols, const qc_adapter_hello *hello);

void qc_adapter_hello_free(qc_adapter_hello *h);

#endif
