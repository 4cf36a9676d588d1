/*
 * adapter.c - adapter processes as workers (adapter.h, docs/adapters.md).
 *
 * One thread per adapter worker owns its process: it starts it, reads its
 * stdout line by line (poll with a 100 ms tick, so sh->stop is seen), turns
 * every message into ledger events in the same schema as a thread worker's
 * (history.h), answers it, and injects the fault plan's faults as process
 * faults: SIGKILL of the process group after the claim or after the effect,
 * SIGSTOP beyond the lease then SIGCONT, pg_terminate_backend of the
 * sessions carrying its application_name just as its library sends its
 * complete (lost ack).  A killed adapter is restarted as a new incarnation
 * after [faults] restart_delay_ms, as a supervisor would.
 */
#define _GNU_SOURCE
#include "adapter.h"
#include "actor.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ---- what every adapter of the run shares (qc_adapter_prepare) ---- */

static struct {
    const qc_scenario *sc;
    char out_dir[1024];
    char dsn[1024];
} cfg;

#define LINE_MAX_BYTES (1 << 20)
#define HELD_MAX 64
#define STOP_GRACE_MS 3000.0

typedef struct adproc {
    pid_t pid;       /* 0: none */
    int in_fd;       /* its stdin (we write) */
    int out_fd;      /* its stdout (we read) */
    char *buf;       /* partial line */
    char *line;      /* the last line ad_readline returned (owned) */
    size_t len, cap;
    long lineno;     /* lines read from it */
    int id, inc;
    char name[32];   /* "w3.1" */
    char log[1200];  /* its stderr */
    int stopped;     /* SIGSTOPped by us */
    int eof;
} adproc;

/* A job the adapter's handler holds. */
typedef struct held {
    int used;
    int64_t job;
    char token[160];
    char op_key[160];
    char lib_id[160];  /* the library's id of the job ("" unknown) */
    int has_token;
    int64_t creq;    /* the pending complete / fail invoke's req, -1 none */
    int cop_fail;    /* the pending one is a fail */
    int lost_ack;    /* the plan's lost_ack fires at its complete */
    int kill_after_effect;
    double work_ms;
} held;

typedef struct adapter {
    qc_worker *w;
    adproc p;
    held h[HELD_MAX];
    PGconn *ctl;         /* for pg_terminate_backend (lost ack), opened on first use */
    int counted_connected;
    int64_t fetch_req;   /* the invoke of a fetch the library sent ("fetching"), -1 none */
    atomic_int cancelled;
} adapter;

/* ---- process handling ---- */

static void app_name(char *out, size_t n, int id, int inc)
{
    if (id < 0)
        snprintf(out, n, "qchaos-enq.%d", inc);
    else
        snprintf(out, n, "qchaos-w%d.%d", id, inc);
}

/* The environment of an adapter: ours, minus the PG* variables (the DSN
 * says where to go), plus the QCHAOS_* and PG* of the DSN.  Strings are
 * malloc'ed; free with env_free. */
static char **build_env(int id, int inc, const char *role)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 40, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strncmp(environ[i], "PG", 2) || !strncmp(environ[i], "QCHAOS_", 7))
            continue;
        env[k++] = strdup(environ[i]);
    }
    const qc_scenario *sc = cfg.sc;
    char app[64];
    app_name(app, sizeof app, id, inc);
#define PUT(...)                                                                            \
    do {                                                                                    \
        char *s_;                                                                           \
        if (asprintf(&s_, __VA_ARGS__) >= 0)                                                \
            env[k++] = s_;                                                                  \
    } while (0)
    PUT("QCHAOS_DSN=%s", cfg.dsn);
    PUT("QCHAOS_ROLE=%s", role);
    PUT("QCHAOS_WORKER_ID=%d", id);
    PUT("QCHAOS_INCARNATION=%d", inc);
    PUT("QCHAOS_APP_NAME=%s", app);
    PUT("PGAPPNAME=%s", app);
    PUT("QCHAOS_LEASE_MS=%ld", sc->lease_ms);
    PUT("QCHAOS_MAX_ATTEMPTS=%ld", sc->max_attempts);
    PUT("QCHAOS_RETRY_DELAY_MS=%ld", sc->retry_delay_ms);
    PUT("QCHAOS_POLL_MS=%ld", sc->adapter_poll_ms);
    PUT("QCHAOS_QUEUE=%s", "qchaos");
    /* the conninfo's parts as libpq variables, for libraries that do not
     * read a libpq key=value string (node-postgres reads PG*) */
    static const struct {
        const char *key, *var;
    } vars[] = {{"host", "PGHOST"},         {"hostaddr", "PGHOSTADDR"}, {"port", "PGPORT"},
                {"dbname", "PGDATABASE"},   {"user", "PGUSER"},         {"password", "PGPASSWORD"},
                {"sslmode", "PGSSLMODE"}};
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(cfg.dsn, &perr);
    if (perr)
        PQfreemem(perr);
    for (PQconninfoOption *o = opts; o && o->keyword; o++) {
        if (!o->val || !o->val[0])
            continue;
        for (size_t v = 0; v < sizeof vars / sizeof *vars; v++)
            if (!strcmp(o->keyword, vars[v].key))
                PUT("%s=%s", vars[v].var, o->val);
    }
    if (opts)
        PQconninfoFree(opts);
#undef PUT
    env[k] = NULL;
    return env;
}

static void env_free(char **env)
{
    if (!env)
        return;
    for (size_t i = 0; env[i]; i++)
        free(env[i]);
    free(env);
}

static int ad_spawn(adproc *p, int id, int inc, const char *role, qc_err *err)
{
    free(p->line); /* a previous incarnation's */
    memset(p, 0, sizeof *p);
    p->id = id;
    p->inc = inc;
    if (id < 0)
        snprintf(p->name, sizeof p->name, "enqueuer.%d", inc);
    else
        snprintf(p->name, sizeof p->name, "w%d.%d", id, inc);
    snprintf(p->log, sizeof p->log, "%s/adapters/%s.log", cfg.out_dir, p->name);
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return qc_err_set(err, QC_EIO, "adapter %s: pipe: %s", p->name, strerror(errno));
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return qc_err_set(err, QC_EIO, "adapter %s: pipe: %s", p->name, strerror(errno));
    }
    char **env = build_env(id, inc, role);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, p->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_addchdir_np(&fa, qc_datadir());
    posix_spawnattr_setpgroup(&at, 0);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    sigset_t def;
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    sigaddset(&def, SIGINT);
    sigaddset(&def, SIGTERM);
    posix_spawnattr_setsigdefault(&at, &def);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    char *argv[] = {"sh", "-c", (char *)cfg.sc->adapter_command, NULL};
    int rc = env ? posix_spawn(&p->pid, "/bin/sh", &fa, &at, argv, env) : ENOMEM;
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    env_free(env);
    close(in[0]);
    close(out[1]);
    if (rc != 0) {
        close(in[1]);
        close(out[0]);
        p->pid = 0;
        return qc_err_set(err, QC_EIO, "adapter %s: cannot start '%s': %s", p->name,
                          cfg.sc->adapter_command, strerror(rc));
    }
    p->in_fd = in[1];
    p->out_fd = out[0];
    fcntl(p->out_fd, F_SETFL, fcntl(p->out_fd, F_GETFL) | O_NONBLOCK);
    return 0;
}

/* Kills the process group (SIGKILL; SIGCONT first if we stopped it) and
 * reaps the process.  Returns its wait status, or -1. */
static int ad_kill(adproc *p)
{
    int st = -1;
    if (p->pid > 0) {
        kill(-p->pid, SIGKILL);
        if (p->stopped)
            kill(-p->pid, SIGCONT);
        waitpid(p->pid, &st, 0);
    }
    p->pid = 0;
    p->stopped = 0;
    if (p->in_fd > 0)
        close(p->in_fd);
    if (p->out_fd > 0)
        close(p->out_fd);
    p->in_fd = p->out_fd = -1;
    free(p->buf);
    p->buf = NULL;
    p->len = p->cap = 0;
    return st;
}

/* Waits up to ms for the process to exit on its own; then kills it. */
static int ad_reap(adproc *p, double ms)
{
    double end = qc_clock_ms() + ms;
    int st = -1;
    while (p->pid > 0) {
        pid_t r = waitpid(p->pid, &st, WNOHANG);
        if (r == p->pid) {
            p->pid = 0;
            break;
        }
        if (qc_clock_ms() >= end)
            return ad_kill(p);
        qc_clock_sleep_ms(20);
    }
    ad_kill(p); /* closes the pipes; the group's stragglers go too */
    return st;
}

static void ad_status(int st, char *out, size_t n)
{
    if (st == -1)
        snprintf(out, n, "unknown status");
    else if (WIFEXITED(st))
        snprintf(out, n, "exit status %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(out, n, "signal %d", WTERMSIG(st));
    else
        snprintf(out, n, "status %d", st);
}

/* Reads the next line (without its newline) into *line (owned by p, valid
 * until the next call).  Returns 1 with a line, 0 when timeout_ms passed
 * (or stop was raised), -1 at end of file (the process closed stdout or
 * died), -2 when a line is longer than LINE_MAX_BYTES. */
static int ad_readline(adproc *p, double timeout_ms, atomic_int *stop, char **line)
{
    double end = qc_clock_ms() + timeout_ms;
    for (;;) {
        char *nl = p->len ? memchr(p->buf, '\n', p->len) : NULL;
        if (nl) {
            size_t l = (size_t)(nl - p->buf);
            free(p->line);
            p->line = malloc(l + 1);
            if (!p->line)
                return -1;
            memcpy(p->line, p->buf, l);
            p->line[l] = 0;
            memmove(p->buf, nl + 1, p->len - l - 1);
            p->len -= l + 1;
            p->lineno++;
            *line = p->line;
            return 1;
        }
        if (p->len > LINE_MAX_BYTES)
            return -2;
        if (p->eof)
            return -1;
        double left = end - qc_clock_ms();
        if (left <= 0 || (stop && atomic_load(stop)))
            return 0;
        struct pollfd pf = {.fd = p->out_fd, .events = POLLIN};
        int r = poll(&pf, 1, left > 100 ? 100 : (int)left + 1);
        if (r <= 0)
            continue;
        if (p->cap - p->len < 65536) {
            size_t nc = p->cap ? p->cap * 2 : 131072;
            char *nb = realloc(p->buf, nc);
            if (!nb)
                return -1;
            p->buf = nb;
            p->cap = nc;
        }
        ssize_t got = read(p->out_fd, p->buf + p->len, p->cap - p->len);
        if (got > 0)
            p->len += (size_t)got;
        else if (got == 0 || (errno != EAGAIN && errno != EINTR))
            p->eof = 1;
    }
}

/* Writes msg (reference stolen) as one line.  0, or -1 when the process is
 * gone (EPIPE: SIGPIPE is ignored by main). */
static int ad_send(adproc *p, json_t *msg)
{
    char *s = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (!s)
        return -1;
    size_t n = strlen(s);
    s[n] = '\n';
    size_t off = 0;
    int rc = 0;
    while (off < n + 1) {
        ssize_t w = write(p->in_fd, s + off, n + 1 - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = -1;
            break;
        }
        off += (size_t)w;
    }
    free(s);
    return rc;
}

/* A protocol error of the adapter: the message names the command, the
 * process, the line and what was expected. */
static int misbehaved(qc_err *err, const adproc *p, const char *line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int misbehaved(qc_err *err, const adproc *p, const char *line, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (line)
        return qc_err_set(err, QC_EADAPTER,
                          "adapter '%s' (%s): line %ld of its stdout: %s: %.200s%s (its stderr: %s)",
                          cfg.sc->adapter_command, p->name, p->lineno, what, line,
                          strlen(line) > 200 ? "..." : "", p->log);
    return qc_err_set(err, QC_EADAPTER, "adapter '%s' (%s): %s (its stderr: %s)",
                      cfg.sc->adapter_command, p->name, what, p->log);
}

static const char *const known_types[] = {
    "hello",   "fetching", "claimed", "polled", "effect",   "completing",
    "completed", "failing", "failed", "enqueued", "log", NULL};

/* Parses a line into a message object with a known "type".  On a bad
 * line: NULL and err (QC_EADAPTER). */
static json_t *parse_msg(const adproc *p, const char *line, qc_err *err)
{
    json_error_t je;
    json_t *m = json_loads(line, JSON_REJECT_DUPLICATES, &je);
    if (!m || !json_is_object(m)) {
        if (m)
            misbehaved(err, p, line, "expected one JSON object per line, got another JSON value");
        else
            misbehaved(err, p, line, "expected one JSON object per line (%s)", je.text);
        json_decref(m);
        return NULL;
    }
    const char *t = json_string_value(json_object_get(m, "type"));
    if (!t) {
        json_decref(m);
        misbehaved(err, p, line, "a message needs a string \"type\"");
        return NULL;
    }
    for (int i = 0; known_types[i]; i++)
        if (!strcmp(known_types[i], t))
            return m;
    misbehaved(err, p, line,
               "unknown message type '%s' (expected hello, fetching, claimed, polled, effect, "
               "completing, completed, failing, failed, enqueued, log)",
               t);
    json_decref(m);
    return NULL;
}

/* Waits for the hello (start_timeout_ms), skipping log lines. */
static int wait_hello(adproc *p, atomic_int *stop, qc_adapter_hello *out, qc_err *err)
{
    double end = qc_clock_ms() + (double)cfg.sc->adapter_start_timeout_ms;
    for (;;) {
        char *line = NULL;
        double left = end - qc_clock_ms();
        int r = left > 0 ? ad_readline(p, left, stop, &line) : 0;
        if (r == 0 && stop && atomic_load(stop))
            return 1;
        if (r == 0)
            return misbehaved(err, p, NULL, "no hello within %ld ms ([adapter] start_timeout_ms)",
                              cfg.sc->adapter_start_timeout_ms);
        if (r == -2)
            return misbehaved(err, p, NULL, "a line longer than %d bytes", LINE_MAX_BYTES);
        if (r < 0) {
            int st = ad_reap(p, 2000);
            char how[64];
            ad_status(st, how, sizeof how);
            return misbehaved(err, p, NULL, "exited (%s) before its hello", how);
        }
        json_t *m = parse_msg(p, line, err);
        if (!m)
            return err->code;
        const char *t = json_string_value(json_object_get(m, "type"));
        if (!strcmp(t, "log")) {
            json_decref(m);
            continue;
        }
        if (strcmp(t, "hello")) {
            misbehaved(err, p, line, "expected hello first, got '%s'", t);
            json_decref(m);
            return err->code;
        }
        const char *lib = json_string_value(json_object_get(m, "library"));
        const char *ver = json_string_value(json_object_get(m, "version"));
        if (!lib || !ver) {
            json_decref(m);
            return misbehaved(err, p, line, "hello needs \"library\" and \"version\" strings");
        }
        if (out) {
            memset(out, 0, sizeof *out);
            snprintf(out->library, sizeof out->library, "%s", lib);
            snprintf(out->version, sizeof out->version, "%s", ver);
            json_t *x = json_object_get(m, "exposes");
            out->exposes = json_is_array(x) ? json_incref(x) : NULL;
            out->message = m;
        } else {
            json_decref(m);
        }
        return 0;
    }
}

void qc_adapter_hello_free(qc_adapter_hello *h)
{
    if (!h)
        return;
    json_decref(h->exposes);
    json_decref(h->message);
    h->exposes = h->message = NULL;
}

/* "FILE:LINE" of the line that set section_key ("faults.notify_lost"), or
 * FILE when the file did not set it (a default, an overlay): for the
 * refusals below (decision 1130). */
static const char *key_at(const qc_scenario *sc, const char *section_key, char *buf, size_t n)
{
    const char *src = sc->path[0] ? sc->path : "scenario";
    int line = qc_scenario_line_of(sc, section_key);
    if (line > 0)
        snprintf(buf, n, "%s:%d", src, line);
    else
        snprintf(buf, n, "%s", src);
    return buf;
}

int qc_adapter_check(const qc_scenario *sc, qc_err *err)
{
    char at[1100], key[64];
    /* The library sends its own requests (no lost_request or targeted
     * stall); its enqueue is the library's, so qchaos has no notify step to
     * lose or send early; its processes connect to the server directly, so
     * the proxy's faults never reach them (scenario.c refuses [network]
     * proxy = on with [adapter] already); it reads its own clock, so
     * :client_now_ms (clock_skew_ms) is bound into nothing. */
    static const qc_fault_kind no[] = {QC_FAULT_LOST_REQUEST,  QC_FAULT_STALL_UNTIL_RECLAIMED,
                                       QC_FAULT_STALL_IN_WORK, QC_FAULT_HALF_OPEN,
                                       QC_FAULT_RESET,         QC_FAULT_GRACEFUL_STOP,
                                       QC_FAULT_LATE_RENEW,    QC_FAULT_LOST_ACK_ON_FAIL,
                                       QC_FAULT_NOTIFY_LOST,
                                       QC_FAULT_NOTIFY_EARLY};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        const qc_fault_kind k = no[i];
        if (sc->faults[k].count > 0 || (sc->faults[k].count < 0 && sc->faults[k].rate > 0))
            return qc_err_set(
                err, QC_EINVAL,
                "%s: [faults] %s is not available with [adapter] (%s; docs/adapters.md lists "
                "the faults)",
                (snprintf(key, sizeof key, "faults.%s", qc_fault_name(k)),
                 key_at(sc, key, at, sizeof at)),
                qc_fault_name(k),
                k == QC_FAULT_NOTIFY_LOST || k == QC_FAULT_NOTIFY_EARLY
                    ? "the library enqueues and notifies by itself: qchaos runs no notify step"
                : k == QC_FAULT_HALF_OPEN || k == QC_FAULT_RESET
                    ? "the library's processes connect to the server directly, not through "
                      "qchaos's proxy"
                : k == QC_FAULT_GRACEFUL_STOP
                    ? "the adapter protocol has no graceful stop request: the library's own "
                      "shutdown decides what happens to its heartbeat"
                    : "the library sends its own requests");
    }
    if (sc->nclock_skew > 0 || sc->reaper_skew_ms != 0)
        return qc_err_set(err, QC_EINVAL,
                          "%s: [faults] %s is not available with [adapter] (the "
                          "library reads its own clock; :client_now_ms reaches no statement)",
                          key_at(sc, sc->nclock_skew > 0 ? "faults.clock_skew_ms"
                                                         : "faults.reaper_skew_ms",
                                 at, sizeof at),
                          sc->nclock_skew > 0 ? "clock_skew_ms" : "reaper_skew_ms");
    if (sc->session_time_zone[0] != '\0')
        return qc_err_set(err, QC_EINVAL,
                          "%s: [faults] session_time_zone is not available with [adapter] (the "
                          "library's processes open their own connections)",
                          key_at(sc, "faults.session_time_zone", at, sizeof at));
    if (sc->listen_close_every_ms > 0 || sc->listen_terminate_every_ms > 0)
        return qc_err_set(err, QC_EINVAL,
                          "%s: [nemesis] %s is not available with [adapter] (qchaos holds no "
                          "listen connection of the library's)",
                          key_at(sc, sc->listen_close_every_ms > 0
                                         ? "nemesis.listen_close_every_ms"
                                         : "nemesis.listen_terminate_every_ms",
                                 at, sizeof at),
                          sc->listen_close_every_ms > 0 ? "listen_close_every_ms"
                                                        : "listen_terminate_every_ms");
    if (sc->listen_lost_ignore || sc->listen_poll_ms != QC_LISTEN_POLL_MS_DEFAULT)
        return qc_err_set(err, QC_EINVAL,
                          "%s: %s is not available with [adapter] (the library waits for its "
                          "jobs its own way; [adapter] poll_ms is its poll interval)",
                          key_at(sc, sc->listen_lost_ignore ? "policy.on_listen_lost"
                                                            : "idle.listen_poll_ms",
                                 at, sizeof at),
                          sc->listen_lost_ignore ? "[policy] on_listen_lost"
                                                 : "[idle] listen_poll_ms");
    if (sc->renew_lost_continue || sc->lease_deadline == QC_LEASE_DEADLINE_ANSWER ||
        sc->stop_heartbeat_first)
        return qc_err_set(err, QC_EINVAL,
                          "%s: [policy] %s is not available with [adapter] (the library keeps "
                          "its own lease and renews by itself)",
                          key_at(sc,
                                 sc->renew_lost_continue    ? "policy.on_renew_lost"
                                 : sc->stop_heartbeat_first ? "policy.stop_heartbeat_first"
                                                            : "policy.lease_deadline",
                                 at, sizeof at),
                          sc->renew_lost_continue    ? "on_renew_lost"
                          : sc->stop_heartbeat_first ? "stop_heartbeat_first"
                                                     : "lease_deadline");
    return 0;
}

int qc_adapter_prepare(const qc_scenario *sc, const char *out_dir, const char *dsn, qc_err *err)
{
    const char *src = sc->path[0] ? sc->path : "scenario";
    char at[1100];
    int rc = qc_adapter_check(sc, err);
    if (rc != 0)
        return rc;
    if (sc->batch != 1)
        return qc_err_set(err, QC_EINVAL,
                          "%s: [workload] batch must be 1 with [adapter] (the library decides "
                          "its fetch size; got %ld)", key_at(sc, "workload.batch", at, sizeof at),
                          sc->batch);
    if (sc->groups > 0)
        return qc_err_set(err, QC_EINVAL, "%s: [workload] groups are not available with [adapter]",
                          key_at(sc, "workload.groups", at, sizeof at));
    if (sc->feed_bursts > 0 && sc->feed_jobs > 0)
        return qc_err_set(err, QC_EINVAL, "%s: [feed] is not available with [adapter]", src);
    if (sc->poison_crash)
        return qc_err_set(err, QC_EINVAL,
                          "%s: [faults] poison_mode = crash is not available with [adapter]",
                          key_at(sc, "faults.poison_mode", at, sizeof at));
    cfg.sc = sc;
    snprintf(cfg.out_dir, sizeof cfg.out_dir, "%s", out_dir);
    snprintf(cfg.dsn, sizeof cfg.dsn, "%s", dsn ? dsn : "");
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/adapters", out_dir);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return qc_err_set(err, QC_EIO, "cannot create %s: %s", dir, strerror(errno));
    return 0;
}

/* ---- the enqueuer ---- */

static adproc enq;

int qc_adapter_enqueuer_start(qc_adapter_hello *hello, qc_err *err)
{
    int rc = ad_spawn(&enq, -1, 0, "enqueuer", err);
    if (rc != 0)
        return rc;
    rc = wait_hello(&enq, NULL, hello, err);
    if (rc != 0)
        ad_kill(&enq);
    return rc;
}

void qc_adapter_enqueuer_stop(void)
{
    if (enq.pid <= 0) {
        free(enq.line);
        enq.line = NULL;
        return;
    }
    json_t *m = json_object();
    json_object_set_new(m, "type", json_string("stop"));
    ad_send(&enq, m);
    ad_reap(&enq, (double)cfg.sc->adapter_answer_timeout_ms);
    free(enq.line);
    enq.line = NULL;
}

int qc_adapter_enqueue(qc_lbuf *lb, long count, int64_t first_id, int64_t **ids, size_t *nids,
                       qc_err *err)
{
    const qc_scenario *s = cfg.sc;
    char *payload = malloc((size_t)s->payload_bytes + 32);
    if (!payload)
        return qc_err_set(err, QC_ENOMEM, "out of memory");
    int rc = 0;
    for (long done = 0; done < count && rc == 0;) {
        long n = count - done < 500 ? count - done : 500;
        json_t *jobs = json_array();
        for (long i = 0; i < n; i++) {
            int64_t id = first_id + done + i;
            int len = snprintf(payload, 32, "job-%" PRId64, id - 1);
            while (len < s->payload_bytes)
                payload[len++] = 'x';
            payload[len] = 0;
            json_t *j = json_object();
            json_object_set_new(j, "job", json_integer(id));
            json_object_set_new(j, "payload", json_string(payload));
            json_array_append_new(jobs, j);
        }
        json_t *m = json_object();
        json_object_set_new(m, "type", json_string("enqueue"));
        json_object_set_new(m, "jobs", jobs);
        if (ad_send(&enq, m) != 0) {
            rc = misbehaved(err, &enq, NULL, "closed its stdin during enqueue");
            break;
        }
        /* the answer: enqueued, listing every job */
        char *line = NULL;
        json_t *a = NULL;
        for (;;) {
            int r = ad_readline(&enq, (double)s->adapter_answer_timeout_ms, NULL, &line);
            if (r == 0) {
                rc = misbehaved(err, &enq, NULL,
                                "no answer to enqueue within %ld ms ([adapter] answer_timeout_ms)",
                                s->adapter_answer_timeout_ms);
                break;
            }
            if (r < 0) {
                rc = misbehaved(err, &enq, NULL, "exited during enqueue");
                break;
            }
            if (!(a = parse_msg(&enq, line, err))) {
                rc = err->code;
                break;
            }
            const char *t = json_string_value(json_object_get(a, "type"));
            if (!strcmp(t, "log")) {
                json_decref(a);
                a = NULL;
                continue;
            }
            if (strcmp(t, "enqueued")) {
                rc = misbehaved(err, &enq, line, "expected enqueued in answer to enqueue, got '%s'",
                                t);
                json_decref(a);
                a = NULL;
            }
            break;
        }
        if (rc != 0)
            break;
        json_t *got = json_object_get(a, "jobs");
        if (!json_is_array(got) || json_array_size(got) != (size_t)n) {
            rc = misbehaved(err, &enq, line,
                            "enqueued must list the %ld jobs sent, each {\"job\":ID,\"lib_id\":...}",
                            n);
            json_decref(a);
            break;
        }
        int64_t *grown = realloc(*ids, sizeof **ids * (*nids + (size_t)n));
        if (!grown) {
            json_decref(a);
            rc = qc_err_set(err, QC_ENOMEM, "out of memory");
            break;
        }
        *ids = grown;
        size_t k;
        json_t *j;
        json_array_foreach(got, k, j)
        {
            json_t *idv = json_object_get(j, "job");
            if (!json_is_integer(idv)) {
                rc = misbehaved(err, &enq, line, "enqueued job %zu has no integer \"job\"", k);
                break;
            }
            json_t *e = json_object();
            json_object_set_new(e, "type", json_string("ok"));
            json_object_set_new(e, "op", json_string("enqueue"));
            json_object_set_new(e, "worker", json_integer(-1));
            json_object_set_new(e, "job", json_integer(json_integer_value(idv)));
            json_t *lib = json_object_get(j, "lib_id");
            if (lib)
                json_object_set(e, "lib_id", lib);
            qc_ledger_append(lb, e);
            (*ids)[(*nids)++] = json_integer_value(idv);
        }
        json_decref(a);
        done += n;
    }
    free(payload);
    return rc;
}

json_t *qc_adapter_header(const qc_scenario *sc, const qc_adapter_hello *hello)
{
    json_t *a = json_object();
    json_object_set_new(a, "command", json_string(sc->adapter_command));
    if (hello) {
        json_object_set_new(a, "library", json_string(hello->library));
        json_object_set_new(a, "version", json_string(hello->version));
        if (hello->exposes)
            json_object_set(a, "exposes", hello->exposes);
    }
    json_t *wit = json_object();
    if (sc->adapter_table[0])
        json_object_set_new(wit, "table", json_string(sc->adapter_table));
    if (sc->adapter_id_column[0])
        json_object_set_new(wit, "id_column", json_string(sc->adapter_id_column));
    if (sc->adapter_state_column[0])
        json_object_set_new(wit, "state_column", json_string(sc->adapter_state_column));
    if (sc->adapter_owner_column[0])
        json_object_set_new(wit, "owner_column", json_string(sc->adapter_owner_column));
    json_object_set_new(a, "table", wit);
    return a;
}

static int exposes(const qc_adapter_hello *h, const char *what)
{
    size_t i;
    json_t *v;
    if (!h || !h->exposes)
        return 0;
    json_array_foreach(h->exposes, i, v)
    {
        if (json_is_string(v) && !strcmp(json_string_value(v), what))
            return 1;
    }
    return 0;
}

void qc_adapter_columns(json_t *cols, const qc_adapter_hello *hello)
{
    json_t *claim = json_array();
    json_array_append_new(claim, json_string("job_id"));
    json_array_append_new(claim, json_string("op_key"));
    json_array_append_new(claim, json_string("payload"));
    static const char *const opt[] = {"token", "lease_until_ms", "now_ms", "attempt"};
    for (size_t i = 0; i < sizeof opt / sizeof *opt; i++)
        if (exposes(hello, opt[i]))
            json_array_append_new(claim, json_string(opt[i]));
    json_object_set_new(cols, "claim", claim);
    json_t *done = json_array();
    if (exposes(hello, "rows"))
        json_array_append_new(done, json_string("rows"));
    if (exposes(hello, "complete_now_ms"))
        json_array_append_new(done, json_string("now_ms"));
    json_object_set_new(cols, "complete", json_deep_copy(done));
    json_object_set_new(cols, "fail", done);
    json_object_del(cols, "enqueue");
    json_object_set_new(cols, "enqueue", json_pack("[s]", "job_id"));
}

/* ---- the worker actor ---- */

static json_t *event(const adproc *p, const char *type, const char *op, int64_t req)
{
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string(type));
    if (op)
        json_object_set_new(e, "op", json_string(op));
    json_object_set_new(e, "worker", json_integer(p->id));
    json_object_set_new(e, "inc", json_integer(p->inc));
    if (req >= 0)
        json_object_set_new(e, "req", json_integer(req));
    return e;
}

static held *find_held(adapter *a, int64_t job)
{
    for (int i = 0; i < HELD_MAX; i++)
        if (a->h[i].used && a->h[i].job == job)
            return &a->h[i];
    return NULL;
}

static held *new_held(adapter *a, int64_t job)
{
    held *h = find_held(a, job);
    for (int i = 0; !h && i < HELD_MAX; i++)
        if (!a->h[i].used)
            h = &a->h[i];
    if (!h)
        h = &a->h[0]; /* more than HELD_MAX jobs in hand: the oldest slot is reused */
    memset(h, 0, sizeof *h);
    h->used = 1;
    h->job = job;
    h->creq = -1;
    return h;
}

static void record_fault(adapter *a, qc_fault_kind k, const held *h, double until_ms)
{
    json_t *e = event(&a->p, "fault", NULL, -1);
    json_object_set_new(e, "fault", json_string(qc_fault_name(k)));
    if (h) {
        json_object_set_new(e, "job", json_integer(h->job));
        if (h->has_token)
            json_object_set_new(e, "token", json_string(h->token));
    }
    if (until_ms > 0)
        json_object_set_new(e, "until_t", json_real(until_ms));
    json_object_set_new(e, "process", json_integer(a->p.pid));
    qc_ledger_append(a->w->lb, e);
    atomic_fetch_add(&a->w->sh->faults, 1);
}

static void note(adapter *a, const char *what, json_t *extra)
{
    json_t *e = event(&a->p, "note", NULL, -1);
    json_object_set_new(e, "note", json_string(what));
    if (extra) {
        json_object_update(e, extra);
        json_decref(extra);
    }
    qc_ledger_append(a->w->lb, e);
}

/* A lost ack taken at h's claim whose complete never came on that claim
 * (the library failed the job itself, as pg-boss does when its handler
 * outlives expireInSeconds; the process died or the run ended first): the
 * fault goes back to the plan, so the job's next claim fires it, and the
 * ledger says why it did not fire here. */
static void defer_lost_ack(adapter *a, held *h, const char *why)
{
    if (!h->lost_ack)
        return;
    h->lost_ack = 0;
    if (qc_fault_plan_rearm(a->w->sh->plan, h->job))
        note(a, "fault deferred to the next claim",
             json_pack("{s:s,s:I,s:s}", "fault", qc_fault_name(QC_FAULT_LOST_ACK), "job",
                       (json_int_t)h->job, "why", why));
}

static int ctl_ok(adapter *a)
{
    if (a->ctl && PQstatus(a->ctl) == CONNECTION_OK)
        return 1;
    if (a->ctl)
        PQfinish(a->ctl);
    a->ctl = PQconnectdb(cfg.dsn);
    return PQstatus(a->ctl) == CONNECTION_OK;
}

static int ctl_cmd(adapter *a, const char *sql, int n, const char *const *params, int *count)
{
    PGresult *r = PQexecParams(a->ctl, sql, n, NULL, params, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(r);
    int ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
    if (count)
        *count = st == PGRES_TUPLES_OK ? PQntuples(r) : -1;
    PQclear(r);
    return ok ? 0 : -1;
}

/* The library's table as a quoted identifier ("schema"."table"), or "" */
static void table_ident(adapter *a, char *out, size_t n)
{
    out[0] = 0;
    const char *t = cfg.sc->adapter_table;
    if (!t[0] || !cfg.sc->adapter_id_column[0])
        return;
    char part[128];
    const char *dot = strchr(t, '.');
    size_t off = 0;
    for (int k = 0; k < 2; k++) {
        const char *from = k == 0 ? t : dot + 1;
        size_t len = k == 0 ? (dot ? (size_t)(dot - t) : strlen(t)) : strlen(dot + 1);
        if (len >= sizeof part)
            return;
        memcpy(part, from, len);
        part[len] = 0;
        char *q = PQescapeIdentifier(a->ctl, part, len);
        if (!q)
            return;
        off += (size_t)snprintf(out + off, off < n ? n - off : 0, "%s%s", k ? "." : "", q);
        PQfreemem(q);
        if (!dot)
            break;
    }
}

/* Lost ack (docs/adapters.md): the library's complete is let go while a
 * connection of qchaos's holds the job's row lock (SELECT ... FOR UPDATE on
 * [adapter] table / id_column), so the request reaches the server and
 * waits there; once pg_stat_activity shows a session of this adapter
 * waiting on a lock, every session of the adapter is terminated: the
 * request was sent, its answer never comes (and it did not commit).
 * Without a table in the scenario, or when the row cannot be locked, the
 * sessions are cut right after go (whether the complete committed first is
 * then a race).  Returns the sessions terminated (-1: could not ask) and
 * sets *blocked when the complete was seen waiting. */
static int cut_at_complete(adapter *a, const held *h, int *blocked)
{
    *blocked = 0;
    char app[64];
    app_name(app, sizeof app, a->p.id, a->p.inc);
    const char *params[1] = {app};
    const char *term = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                       "application_name = $1 AND pid <> pg_backend_pid()";
    json_t *go = json_object();
    json_object_set_new(go, "type", json_string("go"));
    json_object_set_new(go, "job", json_integer(h->job));
    if (!ctl_ok(a)) {
        ad_send(&a->p, go);
        return -1;
    }
    char tbl[400], sql[700];
    table_ident(a, tbl, sizeof tbl);
    int locked = 0;
    if (tbl[0] && h->lib_id[0]) {
        char *col = PQescapeIdentifier(a->ctl, cfg.sc->adapter_id_column,
                                       strlen(cfg.sc->adapter_id_column));
        snprintf(sql, sizeof sql, "SELECT 1 FROM %s WHERE %s::text = $1 FOR UPDATE", tbl,
                 col ? col : "id");
        PQfreemem(col);
        const char *lp[1] = {h->lib_id};
        int rows = 0;
        if (ctl_cmd(a, "BEGIN", 0, NULL, NULL) == 0 && ctl_cmd(a, sql, 1, lp, &rows) == 0 &&
            rows == 1)
            locked = 1;
        else
            ctl_cmd(a, "ROLLBACK", 0, NULL, NULL);
    }
    ad_send(&a->p, go);
    if (locked) {
        double end = qc_clock_ms() + 3000;
        while (qc_clock_ms() < end) {
            int n = 0;
            if (ctl_cmd(a, "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND "
                           "wait_event_type = 'Lock'",
                        1, params, &n) != 0)
                break;
            if (n > 0) {
                *blocked = 1;
                break;
            }
            qc_clock_sleep_ms(2);
        }
    }
    int n = -1;
    ctl_cmd(a, term, 1, params, &n);
    if (locked)
        ctl_cmd(a, "ROLLBACK", 0, NULL, NULL);
    return n;
}

static double num(json_t *m, const char *k, double dflt)
{
    json_t *v = json_object_get(m, k);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

enum { GO_ON = 0, KILLED = 1, FATAL = 2 };

/* Handles one message from a worker adapter.  Returns GO_ON, KILLED (we
 * killed the process: restart it) or FATAL (err set). */
static int handle(adapter *a, json_t *m, const char *line, qc_err *err)
{
    qc_worker *w = a->w;
    qc_shared *sh = w->sh;
    const qc_scenario *sc = sh->sc;
    adproc *p = &a->p;
    const char *t = json_string_value(json_object_get(m, "type"));
    if (!strcmp(t, "log"))
        return GO_ON;
    if (!strcmp(t, "hello") || !strcmp(t, "enqueued")) {
        misbehaved(err, p, line, "unexpected '%s' from a worker after its hello", t);
        return FATAL;
    }
    if (!strcmp(t, "fetching")) {
        /* the library sends its fetch: the claim's invoke, so the server
         * time the claim reports lies between invoke and answer */
        a->fetch_req = atomic_fetch_add(&sh->next_req, 1);
        qc_ledger_append(w->lb, event(p, "invoke", "claim", a->fetch_req));
        return GO_ON;
    }
    if (!strcmp(t, "polled")) {
        int64_t req = a->fetch_req;
        a->fetch_req = -1;
        if (req < 0) {
            req = atomic_fetch_add(&sh->next_req, 1);
            qc_ledger_append(w->lb, event(p, "invoke", "claim", req));
        }
        json_t *e = event(p, "ok", "claim", req);
        json_object_set_new(e, "rows", json_integer(0));
        qc_ledger_append(w->lb, e);
        atomic_fetch_add(&sh->empty_claims, 1);
        return GO_ON;
    }
    json_t *jv = json_object_get(m, "job");
    if (!json_is_integer(jv)) {
        misbehaved(err, p, line, "'%s' needs an integer \"job\" (qchaos's id, from enqueue)", t);
        return FATAL;
    }
    int64_t job = json_integer_value(jv);
    held *h = find_held(a, job);

    if (!strcmp(t, "claimed")) {
        h = new_held(a, job);
        const char *tok = json_string_value(json_object_get(m, "token"));
        if (tok) {
            snprintf(h->token, sizeof h->token, "%s", tok);
            h->has_token = 1;
        }
        const char *ok = json_string_value(json_object_get(m, "op_key"));
        if (ok)
            snprintf(h->op_key, sizeof h->op_key, "%s", ok);
        else
            snprintf(h->op_key, sizeof h->op_key, "%" PRId64, job);
        double lease_until = num(m, "lease_until_ms", -1), now = num(m, "now_ms", -1);
        int64_t req = a->fetch_req;
        a->fetch_req = -1;
        if (req < 0) {
            req = atomic_fetch_add(&sh->next_req, 1);
            qc_ledger_append(w->lb, event(p, "invoke", "claim", req));
        }
        json_t *e = event(p, "ok", "claim", req);
        json_object_set_new(e, "rows", json_integer(1));
        json_object_set_new(e, "job", json_integer(job));
        if (tok)
            json_object_set_new(e, "token", json_string(tok));
        if (lease_until >= 0)
            json_object_set_new(e, "lease_until", json_real(lease_until));
        if (now >= 0)
            json_object_set_new(e, "now", json_real(now));
        json_t *att = json_object_get(m, "attempt");
        if (json_is_integer(att))
            json_object_set_new(e, "attempt", json_integer(json_integer_value(att)));
        json_object_set_new(e, "op_key", json_string(h->op_key));
        json_t *lib = json_object_get(m, "lib_id");
        if (lib)
            json_object_set(e, "lib_id", lib);
        if (json_is_string(lib))
            snprintf(h->lib_id, sizeof h->lib_id, "%s", json_string_value(lib));
        else if (json_is_integer(lib))
            snprintf(h->lib_id, sizeof h->lib_id, "%" JSON_INTEGER_FORMAT, json_integer_value(lib));
        qc_ledger_append(w->lb, e);
        atomic_fetch_add(&sh->claims, 1);
        qc_fault_plan_note_claim(sh->plan, job);

        qc_fault_kind f = qc_fault_plan_get(sh->plan, job);
        int fire = f != QC_FAULT_NONE && f != QC_FAULT_POISON && atomic_load(&sh->chaos) &&
                   qc_fault_plan_take(sh->plan, job);
        if (fire && f == QC_FAULT_KILL_AFTER_CLAIM) {
            record_fault(a, f, h, 0);
            ad_kill(p);
            return KILLED;
        }
        if (fire && f == QC_FAULT_STALL_BEYOND_LEASE) {
            /* the whole process freezes (its library's timers and
             * heartbeats too) for stall_factor times the lease the claim
             * reported, at most the scenario's lease_ms (a library's
             * 4-hour lock is not waited out; without a reported lease,
             * lease_ms) */
            double lease = lease_until >= 0 && now >= 0 && lease_until > now &&
                                   lease_until - now < (double)sc->lease_ms
                               ? lease_until - now
                               : (double)sc->lease_ms;
            double ms = lease * sc->stall_factor;
            record_fault(a, f, h, qc_clock_ms() - sh->t0 + ms);
            kill(-p->pid, SIGSTOP);
            p->stopped = 1;
            qc_clock_sleep_until_stop(ms, &sh->stop);
            kill(-p->pid, SIGCONT);
            p->stopped = 0;
        }
        h->lost_ack = fire && f == QC_FAULT_LOST_ACK;
        h->kill_after_effect = fire && f == QC_FAULT_KILL_AFTER_EFFECT;
        h->work_ms = (double)qc_rng_range(&w->rng, sc->work_ms_min, sc->work_ms_max);
        json_t *r = json_object();
        json_object_set_new(r, "type", json_string("run"));
        json_object_set_new(r, "job", json_integer(job));
        json_object_set_new(r, "work_ms", json_real(h->work_ms));
        json_object_set_new(r, "op_key", json_string(h->op_key));
        if (ad_send(p, r) != 0)
            return GO_ON; /* it died: the read loop sees the end of file */
        return GO_ON;
    }
    if (!strcmp(t, "effect")) {
        const char *ok = json_string_value(json_object_get(m, "op_key"));
        if (!ok)
            ok = h ? h->op_key : NULL;
        if (qc_fault_plan_get(sh->plan, job) == QC_FAULT_POISON) {
            record_fault(a, QC_FAULT_POISON, h, 0);
            json_t *r = json_object();
            json_object_set_new(r, "type", json_string("effect_failed"));
            json_object_set_new(r, "job", json_integer(job));
            json_object_set_new(r, "error", json_string("poison: the effect failed"));
            ad_send(p, r);
            return GO_ON;
        }
        char idbuf[32];
        snprintf(idbuf, sizeof idbuf, "%" PRId64, job);
        int applied = qc_sink_deliver(sh->sink, ok ? ok : idbuf, job);
        json_t *e = event(p, "effect", NULL, -1);
        json_object_set_new(e, "job", json_integer(job));
        json_object_set_new(e, "op_key", json_string(ok ? ok : idbuf));
        if (h && h->has_token)
            json_object_set_new(e, "token", json_string(h->token));
        json_object_set_new(e, "applied", json_boolean(applied));
        if (h)
            json_object_set_new(e, "work_ms", json_real(h->work_ms));
        qc_ledger_append(w->lb, e);
        if (h && h->kill_after_effect) {
            record_fault(a, QC_FAULT_KILL_AFTER_EFFECT, h, 0);
            ad_kill(p);
            return KILLED;
        }
        json_t *r = json_object();
        json_object_set_new(r, "type", json_string("effect_ok"));
        json_object_set_new(r, "job", json_integer(job));
        json_object_set_new(r, "applied", json_boolean(applied));
        ad_send(p, r);
        return GO_ON;
    }
    int is_fail = !strcmp(t, "failing") || !strcmp(t, "failed");
    const char *op = is_fail ? "fail" : "complete";
    if (!strcmp(t, "completing") || !strcmp(t, "failing")) {
        int64_t req = atomic_fetch_add(&sh->next_req, 1);
        json_t *e = event(p, "invoke", op, req);
        json_object_set_new(e, "job", json_integer(job));
        if (h && h->has_token)
            json_object_set_new(e, "token", json_string(h->token));
        qc_ledger_append(w->lb, e);
        if (!h)
            h = new_held(a, job); /* a complete of a job it never said it claimed */
        h->creq = req;
        h->cop_fail = is_fail;
        if (is_fail)
            defer_lost_ack(a, h, "the library failed the job instead of completing it");
        if (!is_fail && h->lost_ack) {
            h->lost_ack = 0;
            record_fault(a, QC_FAULT_LOST_ACK, h, 0);
            int blocked = 0;
            int n = cut_at_complete(a, h, &blocked);
            note(a, "adapter sessions cut", json_pack("{s:I,s:i,s:b}", "job", (json_int_t)job,
                                                      "sessions", n, "complete_waiting",
                                                      blocked));
            return GO_ON;
        }
        json_t *r = json_object();
        json_object_set_new(r, "type", json_string("go"));
        json_object_set_new(r, "job", json_integer(job));
        ad_send(p, r);
        return GO_ON;
    }
    /* completed / failed: the library's answer */
    const char *outcome = json_string_value(json_object_get(m, "outcome"));
    if (!outcome)
        outcome = "ok";
    if (strcmp(outcome, "ok") && strcmp(outcome, "fail") && strcmp(outcome, "info")) {
        misbehaved(err, p, line, "\"outcome\" must be ok, fail or info, got '%s'", outcome);
        return FATAL;
    }
    int64_t req = h && h->creq >= 0 && h->cop_fail == is_fail ? h->creq : -1;
    if (req < 0) {
        /* the adapter could not see the request go out: invoke and answer
         * are recorded together */
        req = atomic_fetch_add(&sh->next_req, 1);
        json_t *e = event(p, "invoke", op, req);
        json_object_set_new(e, "job", json_integer(job));
        if (h && h->has_token)
            json_object_set_new(e, "token", json_string(h->token));
        qc_ledger_append(w->lb, e);
    }
    json_t *e = event(p, outcome, op, req);
    json_object_set_new(e, "job", json_integer(job));
    if (h && h->has_token)
        json_object_set_new(e, "token", json_string(h->token));
    json_t *rows = json_object_get(m, "rows");
    if (json_is_integer(rows))
        json_object_set_new(e, "rows", json_integer(json_integer_value(rows)));
    double now = num(m, "now_ms", -1);
    if (now >= 0)
        json_object_set_new(e, "now", json_real(now));
    const char *er = json_string_value(json_object_get(m, "error"));
    if (er)
        json_object_set_new(e, "error", json_string(er));
    qc_ledger_append(w->lb, e);
    if (!strcmp(outcome, "ok") && !is_fail) {
        if (json_is_integer(rows) && json_integer_value(rows) == 0)
            atomic_fetch_add(&sh->completes_zero, 1);
        else
            atomic_fetch_add(&sh->completes_ok, 1);
    } else if (strcmp(outcome, "ok")) {
        atomic_fetch_add(&sh->errors, 1);
        pthread_mutex_lock(&sh->fatal_mu);
        if (!sh->first_error[0])
            snprintf(sh->first_error, sizeof sh->first_error, "%s of job %" PRId64 " (adapter %s): %s",
                     op, job, p->name, er ? er : outcome);
        pthread_mutex_unlock(&sh->fatal_mu);
    }
    if (h)
        h->used = 0;
    return GO_ON;
}

/* Requests still waiting for the library's answer when the process went
 * away: their outcome is unknown (info). */
static void orphan_requests(adapter *a, const char *why)
{
    for (int i = 0; i < HELD_MAX; i++) {
        held *h = &a->h[i];
        if (h->used && h->creq >= 0) {
            json_t *e = event(&a->p, "info", h->cop_fail ? "fail" : "complete", h->creq);
            json_object_set_new(e, "job", json_integer(h->job));
            if (h->has_token)
                json_object_set_new(e, "token", json_string(h->token));
            json_object_set_new(e, "error", json_string(why));
            qc_ledger_append(a->w->lb, e);
            atomic_fetch_add(&a->w->sh->errors, 1);
        }
        if (h->used)
            defer_lost_ack(a, h, why);
        h->used = 0;
    }
}

static void *adapter_main(void *arg)
{
    adapter *a = arg;
    qc_worker *w = a->w;
    qc_shared *sh = w->sh;
    const qc_scenario *sc = sh->sc;
    qc_err err = {0};
    int fatal = 0;
    while (!atomic_load(&sh->stop) && !fatal) {
        if (ad_spawn(&a->p, w->id, w->inc, "worker", &err) != 0) {
            fatal = 1;
            break;
        }
        int rc = wait_hello(&a->p, &sh->stop, NULL, &err);
        if (rc == 1)
            break; /* stopped while starting */
        if (rc != 0) {
            fatal = 1;
            break;
        }
        note(a, "adapter started", json_pack("{s:i}", "process", (int)a->p.pid));
        if (!a->counted_connected) {
            a->counted_connected = 1;
            atomic_fetch_add(&sh->connected, 1);
        }
        int restart = 0;
        while (!atomic_load(&sh->stop)) {
            char *line = NULL;
            int r = ad_readline(&a->p, 1000, &sh->stop, &line);
            if (r == 0)
                continue;
            if (r == -2) {
                misbehaved(&err, &a->p, NULL, "a line longer than %d bytes", LINE_MAX_BYTES);
                fatal = 1;
                break;
            }
            if (r < 0) {
                /* the library's process ended by itself: a crash to the
                 * supervisor, which restarts it */
                int st = ad_reap(&a->p, 2000);
                char how[64];
                ad_status(st, how, sizeof how);
                fprintf(stderr, "qchaos: adapter %s exited by itself (%s); restarting it (see %s)\n",
                        a->p.name, how, a->p.log);
                a->fetch_req = -1;
                orphan_requests(a, "the adapter process exited before the library's answer");
                note(a, "adapter exited", json_pack("{s:s}", "status", how));
                restart = 1;
                break;
            }
            json_t *m = parse_msg(&a->p, line, &err);
            if (!m) {
                fatal = 1;
                break;
            }
            int h = handle(a, m, line, &err);
            json_decref(m);
            if (h == FATAL) {
                fatal = 1;
                break;
            }
            if (h == KILLED) {
                a->fetch_req = -1;
                orphan_requests(a, "killed by qchaos");
                restart = 1;
                break;
            }
        }
        if (fatal)
            break;
        if (!restart) {
            /* stop: ask it to leave, then make sure it did */
            json_t *m = json_object();
            json_object_set_new(m, "type", json_string("stop"));
            ad_send(&a->p, m);
            /* a library's graceful stop may wait for a handler that waits
             * for qchaos: 3 s, then SIGKILL (docs/adapters.md) */
            ad_reap(&a->p, STOP_GRACE_MS);
            orphan_requests(a, "the run ended before the library's answer");
            break;
        }
        if (qc_clock_sleep_until_stop((double)sc->restart_delay_ms, &sh->stop))
            break;
        w->inc++;
    }
    if (fatal) {
        ad_kill(&a->p);
        orphan_requests(a, "the adapter broke the protocol");
        char msg[1100];
        snprintf(msg, sizeof msg, "%s", err.msg);
        qc_shared_fatal(sh, QC_EADAPTER, msg);
        if (!a->counted_connected) {
            a->counted_connected = 1;
            atomic_fetch_add(&sh->connect_failed, 1);
        }
    }
    if (a->p.pid > 0)
        ad_kill(&a->p);
    free(a->p.line);
    a->p.line = NULL;
    if (a->ctl)
        PQfinish(a->ctl);
    a->ctl = NULL;
    atomic_store(&w->exited, 1);
    return NULL;
}

static int adapter_start(qc_worker *w, qc_shared *sh, int id)
{
    memset(w, 0, sizeof *w);
    w->id = id;
    w->sh = sh;
    qc_rng_init(&w->rng, sh->sc->seed, (uint64_t)(id + 2));
    w->lb = qc_ledger_buf(sh->ledger);
    adapter *a = calloc(1, sizeof *a);
    if (!w->lb || !a) {
        free(a);
        return QC_ENOMEM;
    }
    a->w = w;
    a->p.in_fd = a->p.out_fd = -1;
    a->fetch_req = -1;
    w->actor = a;
    if (pthread_create(&w->thread, NULL, adapter_main, a) != 0) {
        free(a);
        w->actor = NULL;
        return QC_EIO;
    }
    return 0;
}

static void adapter_join(qc_worker *w)
{
    if (!w->actor)
        return;
    pthread_join(w->thread, NULL);
    free(w->actor);
    w->actor = NULL;
}

static void adapter_cancel(qc_worker *w)
{
    adapter *a = w->actor;
    if (a)
        atomic_store(&a->cancelled, 1); /* sh->stop is already set: the loop leaves */
}

const qc_actor_ops qc_actor_adapter = {"adapter", adapter_start, adapter_join, adapter_cancel};
const qc_actor_ops qc_actor_thread = {"thread", qc_worker_start, qc_worker_join,
                                      qc_worker_cancel};

const qc_actor_ops *qc_actor_for(const qc_scenario *sc)
{
    return sc->adapter_command[0] ? &qc_actor_adapter : &qc_actor_thread;
}
