/*
 * nemesis.h - server-side faults from a control connection or a command
 * hook (DESIGN.md "Faults", server-side): terminate worker sessions at a
 * rate (pg_terminate_backend through the protocol's kill_session step) and
 * restart the server once through a command named in the scenario; on a
 * replicated topology (scripts/pg-replicated.sh), switch the primary once:
 * failover (kill -9 the primary, promote the replica), switchover (stop
 * it cleanly, promote) or unfenced_primary (promote while the old primary
 * accepts writes for unfenced_ms, then kill it).
 * Faults stop when the chaos phase ends (sh->chaos = 0).
 */
#ifndef QC_NEMESIS_H
#define QC_NEMESIS_H

#include "worker.h"

typedef struct qc_nemesis {
    qc_shared *sh;
    const char *dsn;     /* direct connection (never through a pooler) */
    char command[2048];  /* restart command with {pgdir} substituted; "" none */
    char pause[2048];    /* pause command with {dir} and {ms} substituted; "" none */
    char sw[2048];       /* switch of the primary (pg-replicated.sh failover|switchover|
                            unfenced with the topology's folder); "" none */
    char sw_promote[2048]; /* its second half (promote) for failover and switchover */
    char topo_dir[512];  /* the replicated topology's folder, "" none */
    qc_conn *conn;
    qc_conn_slot slot;   /* conn, published for qc_nemesis_cancel */
    qc_lbuf *lb;
    qc_rng rng;
    pthread_t thread;
    int started;
    int restarted, paused; /* the scheduled restart / pause ran (read after join) */
    int switched;          /* the scheduled switch of the primary ran (read after join) */
    atomic_int switch_state; /* 0 not begun, 1 under way, 2 over (old primary gone,
                                new one read): the drain waits for it (any thread) */
} qc_nemesis;

/* Starts the nemesis thread when the scenario asks for server faults
 * (terminate_every_ms > 0, restart_at_s > 0 or pause_at_s > 0); otherwise
 * does nothing and returns 0.  pgdir: the ephemeral server's folder, or
 * NULL; for a replicated topology, its scripts/pg-replicated.sh folder.
 * A restart or pause command left empty in the scenario is the
 * ephemeral server script's (pg-ephemeral.sh or mariadb-ephemeral.sh, by the
 * protocol's engine).  A pause is a fault window in the ledger ("pause_server"
 * with until_t) written before the command runs; the command blocks for the
 * pause (SIGSTOP ... SIGCONT), so the thread injects nothing else meanwhile.
 * Errors: QC_EINVAL when a restart or pause is asked for but no command can
 * be built ({pgdir}/{dir} without an ephemeral server), QC_EIO thread
 * creation. */
/* Checks, before anything touches the database, that the scenario's
 * restart and pause commands can be built for this engine and server
 * (pgdir NULL: --dsn, no ephemeral server).  Errors: QC_EINVAL naming the
 * scenario file and what to set. */
int qc_nemesis_check(const qc_scenario *sc, const char *engine, const char *pgdir, qc_err *err);

int qc_nemesis_start(qc_nemesis *n, qc_shared *sh, const char *dsn, const char *pgdir,
                     qc_err *err);
/* Joins the thread (after sh->stop or sh->chaos = 0) and closes its connection. */
void qc_nemesis_join(qc_nemesis *n);
/* Cancels the statement the nemesis's control connection runs now, if
 * any (SIGINT / SIGTERM).  Any thread, until qc_nemesis_join. */
void qc_nemesis_cancel(qc_nemesis *n);

#endif
