/*
 * nemesis.c - the server-side fault thread.
 *
 * Invariants: the nemesis only reads workers' published session ids
 * (atomics) and never touches a worker's connection; every fault it
 * injects is a ledger event written before the fault, so a checker can
 * place it in time.
 */
#include "nemesis.h"
#include "clock.h"
#include "topology.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern volatile sig_atomic_t qc_interrupted;

static json_t *fault_event(const char *kind)
{
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string("fault"));
    json_object_set_new(e, "fault", json_string(kind));
    json_object_set_new(e, "worker", json_integer(-2));
    return e;
}

static int ensure_conn(qc_nemesis *n)
{
    qc_shared *sh = n->sh;
    if (n->conn && sh->drv->is_ok(n->conn))
        return 0;
    if (n->conn) {
        qc_slot_publish(&n->slot, NULL);
        sh->drv->close(n->conn);
        n->conn = NULL;
    }
    qc_err err = {0};
    if (qc_open_conn(sh->drv, n->dsn, 0, sh->stmt_timeout_ms, &n->conn, &err) != 0) {
        n->conn = NULL;
        return -1;
    }
    qc_slot_publish(&n->slot, n->conn);
    return 0;
}

static void terminate_one(qc_nemesis *n)
{
    qc_shared *sh = n->sh;
    long nw = sh->sc->workers;
    long pick = qc_rng_range(&n->rng, 0, nw - 1);
    /* first worker from pick on with a known session */
    for (long k = 0; k < nw; k++) {
        long i = (pick + k) % nw;
        int pid = atomic_load(&sh->pids[i]);
        if (pid <= 0)
            continue;
        if (ensure_conn(n) != 0)
            return;
        char buf[24];
        snprintf(buf, sizeof buf, "%d", pid);
        json_t *e = fault_event("terminate_session");
        json_object_set_new(e, "target", json_integer(i));
        json_object_set_new(e, "pid", json_integer(pid));
        qc_ledger_append(n->lb, e);
        qc_params p = {0};
        qc_params_set(&p, "pid", buf);
        qc_result r = {0};
        qc_err err = {0};
        qc_protocol_run(sh->drv, n->conn, sh->proto, QC_STEP_KILL_SESSION, &p, &r, &err);
        qc_result_clear(&r);
        atomic_fetch_add(&sh->faults, 1);
        return;
    }
}

/* LISTEN/NOTIFY faults (issue 17): a random worker with an open listen
 * connection (sh->listen_pids) has it ended by the server (terminate:
 * the protocol's kill_session on its pid; the fault event first) or by
 * qchaos (close: the worker is asked through sh->listen_close, and drops
 * the connection itself at once, recording the fault when it does, so the
 * nemesis never touches a worker's connection). */
static void listen_fault(qc_nemesis *n, int terminate)
{
    qc_shared *sh = n->sh;
    long nw = sh->sc->workers;
    long pick = qc_rng_range(&n->rng, 0, nw - 1);
    if (sh->listen_pids == NULL || sh->listen_close == NULL)
        return;
    for (long k = 0; k < nw; k++) {
        long i = (pick + k) % nw;
        int pid = atomic_load(&sh->listen_pids[i]);
        if (pid <= 0)
            continue;
        if (!terminate) {
            atomic_store(&sh->listen_close[i], 1);
            return;
        }
        if (ensure_conn(n) != 0)
            return;
        char buf[24];
        snprintf(buf, sizeof buf, "%d", pid);
        json_t *e = fault_event("listen_terminate");
        json_object_set_new(e, "target", json_integer(i));
        json_object_set_new(e, "pid", json_integer(pid));
        qc_ledger_append(n->lb, e);
        qc_params p = {0};
        qc_params_set(&p, "pid", buf);
        qc_result r = {0};
        qc_err err = {0};
        qc_protocol_run(sh->drv, n->conn, sh->proto, QC_STEP_KILL_SESSION, &p, &r, &err);
        qc_result_clear(&r);
        atomic_fetch_add(&sh->faults, 1);
        return;
    }
}

/* Runs cmd with /bin/sh in a process group of its own, output discarded,
 * and waits for it; when the run stops or is interrupted meanwhile, the
 * whole group gets SIGTERM (the ephemeral scripts resume a paused server
 * on their way out).  Not system(): that ignores SIGINT in the whole
 * process while the command runs, and Ctrl-C during a 3 s pause would be
 * lost.  Returns the wait status, -1 when the command could not run. */
static int run_command(qc_shared *sh, const char *cmd)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) { /* only async-signal-safe calls until exec */
        setpgid(0, 0);
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    int st = 0, killed = 0;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (r < 0 && errno != EINTR)
            return -1;
        if (!killed && (qc_interrupted || atomic_load(&sh->stop))) {
            kill(-pid, SIGTERM);
            killed = 1;
        }
        qc_clock_sleep_ms(20);
    }
}

/* Runs a server command as the fault kind: the fault event (with until_t
 * when window_ms > 0) goes into the ledger before the command, a note with
 * its exit status after it. */
static int command_fault(qc_nemesis *n, const char *kind, const char *command, long window_ms,
                         const char *done_note)
{
    qc_shared *sh = n->sh;
    double begin = qc_clock_ms() - sh->t0;
    json_t *e = fault_event(kind);
    json_object_set_new(e, "command", json_string(command));
    if (window_ms > 0)
        json_object_set_new(e, "until_t", json_real(begin + (double)window_ms));
    qc_ledger_append(n->lb, e);
    atomic_fetch_add(&sh->faults, 1);
    char note[64];
    int st = run_command(sh, command);
    if (done_note != NULL)
        snprintf(note, sizeof note, "%s", done_note);
    else
        snprintf(note, sizeof note, "%s finished", kind);
    e = json_object();
    json_object_set_new(e, "type", json_string("note"));
    json_object_set_new(e, "note", json_string(note));
    json_object_set_new(e, "from_t", json_real(begin));
    json_object_set_new(e, "exit",
                        json_integer(st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1));
    qc_ledger_append(n->lb, e);
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void restart_server(qc_nemesis *n)
{
    command_fault(n, "restart_server", n->command, 0, NULL);
    if (n->conn) { /* the control session died with the server */
        qc_slot_publish(&n->slot, NULL);
        n->sh->drv->abort(n->conn);
        n->conn = NULL;
    }
}

/* Expands a command template into out: {pgdir} or {dir} becomes dir (-1
 * when the template names it and there is no dir), {ms} becomes ms; a
 * leading "scripts/" is made relative to the qchaos data folder. */
static int build_command(char *out, size_t n, const char *tpl, const char *dir, long ms)
{
    char a[2048], b[sizeof a + 4096];
    size_t len = 0;

    for (const char *p = tpl; *p && len + 1 < sizeof a;) {
        const char *val = NULL;
        char num[24];
        size_t skip = 0;
        if (!strncmp(p, "{pgdir}", 7) || !strncmp(p, "{dir}", 5)) {
            if (dir == NULL)
                return -1;
            val = dir;
            skip = p[1] == 'p' ? 7 : 5;
        } else if (!strncmp(p, "{ms}", 4)) {
            snprintf(num, sizeof num, "%ld", ms);
            val = num;
            skip = 4;
        }
        if (val != NULL) {
            len += (size_t)snprintf(a + len, sizeof a - len, "%s", val);
            p += skip;
        } else {
            a[len++] = *p++;
        }
        a[len < sizeof a ? len : sizeof a - 1] = '\0';
    }
    a[len < sizeof a ? len : sizeof a - 1] = '\0';
    if (!strncmp(a, "scripts/", 8))
        snprintf(b, sizeof b, "'%s'/%s", qc_datadir(), a);
    else
        snprintf(b, sizeof b, "%s", a);
    return (size_t)snprintf(out, n, "%s", b) < n ? 0 : -1;
}

static void pause_server(qc_nemesis *n)
{
    command_fault(n, "pause_server", n->pause, n->sh->sc->pause_ms, NULL);
}

/* Reads the protocol's snapshot on the replica, after the old primary is
 * gone.  failover, switchover: after the replica has replayed all the WAL
 * it received, before it is promoted: the state the new primary starts
 * from, which no client can have changed yet (target_session_attrs=
 * read-write keeps every client off a node in recovery).
 * unfenced_primary: on the promoted replica, just after the old primary
 * was killed.  A "switch_snapshot" marker without a job goes first (sent
 * before the read), then one "switch_snapshot" event per row (job, state,
 * fault = kind); acked_durable judges every complete acknowledged before
 * the marker against the rows.  A failure is a note, never a row. */
static void switch_snapshot(qc_nemesis *n, const char *kind)
{
    qc_shared *sh = n->sh;
    char dsn[600], path[700];
    snprintf(path, sizeof path, "%s/replica", n->topo_dir);
    qc_err err = {0};
    qc_conn *c = NULL;
    qc_result r = {0};
    qc_params p = {0};
    int rc = qc_topology_dsn(path, dsn, sizeof dsn, &err);
    if (rc == 0)
        rc = sh->drv->open(dsn, &c, &err);
    if (rc == 0) {
        /* the marker: only completes acknowledged before the read was sent
         * are judged against it (an answer that arrives while the read runs
         * may be of a commit the read does not see) */
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("switch_snapshot"));
        json_object_set_new(e, "fault", json_string(kind));
        json_object_set_new(e, "note", json_string("read begins"));
        qc_ledger_append(n->lb, e);
        rc = qc_protocol_run(sh->drv, c, sh->proto, QC_STEP_SNAPSHOT, &p, &r, &err);
    }
    if (rc != 0) {
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("note"));
        json_object_set_new(e, "note", json_string("switch snapshot failed"));
        json_object_set_new(e, "error", json_string(err.msg));
        qc_ledger_append(n->lb, e);
    }
    for (int i = 0; rc == 0 && i < r.nrows; i++) {
        const char *id = qc_result_get(&r, i, "job_id");
        const char *st = qc_result_get(&r, i, "state");
        if (!id)
            continue;
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("switch_snapshot"));
        json_object_set_new(e, "fault", json_string(kind));
        json_object_set_new(e, "job", json_integer(strtoll(id, NULL, 10)));
        json_object_set_new(e, "state", st ? json_string(st) : json_null());
        qc_ledger_append(n->lb, e);
    }
    qc_result_clear(&r);
    if (c != NULL)
        sh->drv->close(c);
}

/* The switch of the primary (failover, switchover, unfenced_primary): the
 * fault event goes in first, with until_t the end of the part of the window
 * known beforehand (the walsender frozen for replica_lag_ms, the unfenced
 * primary's unfenced_ms).  failover / switchover: the first half (the old
 * primary killed or stopped), the note "old primary gone: replica not yet
 * promoted", the switch snapshot, the promotion and the note "KIND
 * promoted" (its t ends the window, with the exit status).
 * unfenced_primary: one command (promote, window, kill), the note
 * "unfenced_primary finished", then the switch snapshot.  The control
 * connection is dropped: it was on the old primary. */
static void switch_primary(qc_nemesis *n)
{
    const qc_scenario *sc = n->sh->sc;
    const char *kind = sc->failover_at_s > 0     ? "failover"
                       : sc->switchover_at_s > 0 ? "switchover"
                                                 : "unfenced_primary";
    long window = sc->failover_at_s > 0           ? sc->replica_lag_ms
                  : sc->unfenced_primary_at_s > 0 ? sc->unfenced_ms
                                                  : 0;
    double begin = qc_clock_ms() - n->sh->t0;
    int st = command_fault(n, kind, n->sw, window,
                           n->sw_promote[0] ? "old primary gone: replica not yet promoted" : NULL);
    if (st == 0 && !n->sw_promote[0]) {
        /* unfenced_primary: the promoted replica's state right after the
         * old primary was killed; clients reconnect meanwhile, so a job
         * they redo before the read hides its loss (missed, never made up) */
        switch_snapshot(n, kind);
    }
    if (st == 0 && n->sw_promote[0]) {
        /* the second half: a note, not another fault (one switch, one
         * fault event; "KIND promoted" closes its window) */
        switch_snapshot(n, kind);
        st = run_command(n->sh, n->sw_promote);
        st = st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        char note[64];
        snprintf(note, sizeof note, "%s promoted", kind);
        json_t *e = json_object();
        json_object_set_new(e, "type", json_string("note"));
        json_object_set_new(e, "note", json_string(note));
        json_object_set_new(e, "from_t", json_real(begin));
        json_object_set_new(e, "command", json_string(n->sw_promote));
        json_object_set_new(e, "exit", json_integer(st));
        qc_ledger_append(n->lb, e);
    }
    if (st != 0 && !atomic_load(&n->sh->stop))
        fprintf(stderr, "qchaos: warning: the %s command exited with %d: %s\n", kind, st, n->sw);
    if (n->conn) {
        qc_slot_publish(&n->slot, NULL);
        n->sh->drv->abort(n->conn);
        n->conn = NULL;
    }
}

static void *nemesis_main(void *arg)
{
    qc_nemesis *n = arg;
    qc_shared *sh = n->sh;
    const qc_scenario *sc = sh->sc;
    double start = qc_clock_ms();
    double next_kill = start + (double)sc->terminate_every_ms;
    double next_lterm = start + (double)sc->listen_terminate_every_ms;
    double next_lclose = start + (double)sc->listen_close_every_ms;
    int restarted = 0, paused = 0, switched = 0;
    double switch_at = sc->failover_at_s + sc->switchover_at_s + sc->unfenced_primary_at_s;
    while (!atomic_load(&sh->stop) && atomic_load(&sh->chaos)) {
        qc_clock_sleep_until_stop(10, &sh->stop);
        double now = qc_clock_ms();
        if (sc->restart_at_s > 0 && !restarted && now - start >= sc->restart_at_s * 1000.0) {
            restarted = 1;
            restart_server(n);
            n->restarted = 1;
        }
        if (sc->pause_at_s > 0 && !paused && now - start >= sc->pause_at_s * 1000.0) {
            paused = 1;
            pause_server(n);
            n->paused = 1;
        }
        if (switch_at > 0 && !switched && now - start >= switch_at * 1000.0) {
            switched = 1;
            atomic_store(&n->switch_state, 1);
            switch_primary(n);
            n->switched = 1;
            atomic_store(&n->switch_state, 2);
        }
        if (sc->terminate_every_ms > 0 && now >= next_kill) {
            next_kill = now + (double)sc->terminate_every_ms;
            terminate_one(n);
        }
        if (sc->listen_terminate_every_ms > 0 && now >= next_lterm) {
            next_lterm = now + (double)sc->listen_terminate_every_ms;
            listen_fault(n, 1);
        }
        if (sc->listen_close_every_ms > 0 && now >= next_lclose) {
            next_lclose = now + (double)sc->listen_close_every_ms;
            listen_fault(n, 0);
        }
    }
    return NULL;
}

/* The restart and pause commands of sc with {dir}/{pgdir} and {ms} put in;
 * an empty one is the ephemeral server script's of the engine. */
static int build_commands(const qc_scenario *sc, const char *engine, const char *pgdir,
                          char *restart, size_t rn, char *pause, size_t pn, char *sw, size_t sn,
                          char *sw_promote, qc_err *err)
{
    const char *script =
        !strcmp(engine, "mariadb") ? "scripts/mariadb-ephemeral.sh" : "scripts/pg-ephemeral.sh";
    char dflt[256];

    restart[0] = pause[0] = sw[0] = '\0';
    if (sw_promote != NULL)
        sw_promote[0] = '\0';
    if (qc_scenario_switches_primary(sc)) {
        /* failover and switchover in two halves, with the switch
         * snapshot between them (switch_snapshot) */
        const char *tpl = sc->failover_at_s > 0 ? "scripts/pg-replicated.sh kill-primary {dir} {ms}"
                          : sc->switchover_at_s > 0 ? "scripts/pg-replicated.sh stop-primary {dir}"
                                                    : "scripts/pg-replicated.sh unfenced {dir} {ms}";
        if (strcmp(engine, "postgres") != 0)
            return qc_err_set(err, QC_EINVAL,
                              "%s: [topology] kind = replicated is a PostgreSQL topology, not "
                              "'%s'",
                              sc->path, engine);
        if (build_command(sw, sn, tpl, pgdir,
                          sc->failover_at_s > 0 ? sc->replica_lag_ms : sc->unfenced_ms) != 0)
            return qc_err_set(err, QC_EINVAL,
                              "%s: [nemesis] switching the primary needs the folder of the "
                              "replicated topology (scripts/pg-replicated.sh): set [topology] "
                              "dir or QCHAOS_TOPOLOGY_DIR, or give no --dsn and qchaos starts one",
                              sc->path);
        /* exec: the shell becomes the script, so a stop's SIGTERM is
         * waited for until the script's own trap has fenced the old
         * primary (unfenced) -- never a run that goes on while it lives */
        size_t len = strlen(sw);
        if (len + 6 > sn)
            return qc_err_set(err, QC_EINVAL, "%s: [topology] dir too long", sc->path);
        memmove(sw + 5, sw, len + 1);
        memcpy(sw, "exec ", 5);
        if (sw_promote != NULL && sc->unfenced_primary_at_s <= 0 &&
            build_command(sw_promote, sn, "scripts/pg-replicated.sh promote {dir}", pgdir, 0) != 0)
            return qc_err_set(err, QC_EINVAL, "%s: [topology] dir too long", sc->path);
    }
    if (sc->restart_at_s > 0) {
        snprintf(dflt, sizeof dflt, "%s restart {dir} --immediate", script);
        if (build_command(restart, rn, sc->restart_command[0] ? sc->restart_command : dflt, pgdir,
                          0) != 0)
            return sc->restart_command[0]
                       ? qc_err_set(err, QC_EINVAL,
                                    "%s: [nemesis] restart_command uses {pgdir} / {dir}, which "
                                    "only an ephemeral server has; give a command for your "
                                    "server",
                                    sc->path)
                       : qc_err_set(err, QC_EINVAL,
                                    "%s: [nemesis] restart_at_s restarts the ephemeral server; "
                                    "with --dsn, set restart_command to a command that restarts "
                                    "yours",
                                    sc->path);
    }
    if (sc->pause_at_s > 0) {
        snprintf(dflt, sizeof dflt, "%s pause {dir} {ms}", script);
        if (build_command(pause, pn, sc->pause_command[0] ? sc->pause_command : dflt, pgdir,
                          sc->pause_ms) != 0)
            return sc->pause_command[0]
                       ? qc_err_set(err, QC_EINVAL,
                                    "%s: [nemesis] pause_command uses {dir}, which only an "
                                    "ephemeral server has; give a command for your server",
                                    sc->path)
                       : qc_err_set(err, QC_EINVAL,
                                    "%s: [nemesis] pause_at_s pauses the ephemeral server; with "
                                    "--dsn, set pause_command to a command that pauses yours "
                                    "({ms}: how long)",
                                    sc->path);
    }
    return 0;
}

int qc_nemesis_check(const qc_scenario *sc, const char *engine, const char *pgdir, qc_err *err)
{
    char restart[2048], pause[2048], sw[2048];
    return build_commands(sc, engine, pgdir, restart, sizeof restart, pause, sizeof pause, sw,
                          sizeof sw, NULL, err);
}

int qc_nemesis_start(qc_nemesis *n, qc_shared *sh, const char *dsn, const char *pgdir,
                     qc_err *err)
{
    memset(n, 0, sizeof *n);
    const qc_scenario *sc = sh->sc;
    int listen_faults = sc->listen_terminate_every_ms > 0 || sc->listen_close_every_ms > 0;
    if (sc->terminate_every_ms <= 0 && sc->restart_at_s <= 0 && sc->pause_at_s <= 0 &&
        !qc_scenario_switches_primary(sc) && !listen_faults)
        return 0;
    if (listen_faults && !sh->proto->steps[QC_STEP_LISTEN].present)
        return qc_err_set(err, QC_EINVAL,
                          "%s: [nemesis] listen_close_every_ms / listen_terminate_every_ms need "
                          "a listen statement in %s",
                          sc->path, sh->proto->path);
    if (sc->listen_terminate_every_ms > 0 && !sh->proto->steps[QC_STEP_KILL_SESSION].present)
        return qc_err_set(err, QC_EINVAL,
                          "%s: [nemesis] listen_terminate_every_ms needs a kill_session "
                          "statement in %s",
                          sc->path, sh->proto->path);
    n->sh = sh;
    n->dsn = dsn;
    if (sc->terminate_every_ms > 0 && !sh->proto->steps[QC_STEP_KILL_SESSION].present)
        return qc_err_set(err, QC_EINVAL,
                          "%s: [nemesis] terminate_every_ms needs a kill_session statement in %s",
                          sc->path, sh->proto->path);
    int rc = build_commands(sc, sh->proto->engine, pgdir, n->command, sizeof n->command,
                            n->pause, sizeof n->pause, n->sw, sizeof n->sw, n->sw_promote, err);
    if (pgdir != NULL)
        snprintf(n->topo_dir, sizeof n->topo_dir, "%s", pgdir);
    if (rc != 0)
        return rc;
    qc_rng_init(&n->rng, sc->seed, 0x6e656d);
    n->lb = qc_ledger_buf(sh->ledger);
    qc_slot_init(&n->slot);
    if (!n->lb || pthread_create(&n->thread, NULL, nemesis_main, n) != 0) {
        qc_slot_destroy(&n->slot);
        return qc_err_set(err, QC_EIO, "cannot start the nemesis thread");
    }
    n->started = 1;
    return 0;
}

void qc_nemesis_join(qc_nemesis *n)
{
    if (!n->started)
        return;
    pthread_join(n->thread, NULL);
    if (n->conn)
        n->sh->drv->close(n->conn);
    n->conn = NULL;
    qc_slot_destroy(&n->slot);
    n->started = 0;
}

void qc_nemesis_cancel(qc_nemesis *n)
{
    if (n->started)
        qc_slot_cancel(&n->slot, n->sh->drv);
}
