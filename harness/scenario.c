/*
 * scenario.c - scenario files (INI via inih) with file:line errors.
 *
 * inih calls handler() per key; the handler records the first error's text
 * and returns 0, and ini_parse() returns the line of the first error, which
 * we combine into "path:line: text".
 */
#include "scenario.h"
#include "input.h"
#include "sched.h"

#include <ini.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef QC_DATADIR
#define QC_DATADIR "/usr/local/share/qchaos"
#endif

void qc_scenario_defaults(qc_scenario *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "default");
    snprintf(s->protocol, sizeof s->protocol, "backends/postgres/skip_locked.sql");
    s->workers = 16;
    s->jobs = 20000;
    s->batch = 1;
    s->payload_bytes = 32;
    s->copies = 1;
    s->work_ms_min = 0;
    s->work_ms_max = 0;
    s->duration_s = 0;
    s->lease_ms = 5000;
    s->max_attempts = 3;
    s->reaper_interval_ms = 500;
    s->hosts = 1;
    s->retry_delay_ms = 0;
    s->statement_timeout_ms = -1;
    s->idle_base_ms = 5;
    s->idle_cap_ms = 200;
    s->idle_jitter = 0.2;
    s->drain_timeout_s = 120;
    s->monitor_interval_ms = 250;
    s->monitor_full_interval_ms = 5000;
    s->recovery_slack_ms = 2000;
    s->pct_depth = 3;
    s->block_ms = 300;
    for (int k = 0; k < QC_FAULT_COUNT; k++) {
        s->faults[k].count = 0;
        s->faults[k].rate = 0;
    }
    s->idle_tail_s = 0;
    s->max_idle_polls_per_s = 0;
    s->max_idle_pause_ms = 0;
    s->max_pickup_ms = 0;
    s->max_wedged_ms = 0;
    s->nclock_skew = 0;
    s->reaper_skew_ms = 0;
    s->stall_factor = 2.0;
    s->restart_delay_ms = 200;
    s->poison_crash = 0;
    s->heartbeat = 1;
    s->sink_idempotent = 1;
    s->feed_bursts = 0;
    s->feed_jobs = 0;
    s->feed_gap_ms = 1000;
    s->feed_start_ms = 0;
    s->feed_delay_ms = 0;
    s->terminate_every_ms = 0;
    s->listen_poll_ms = QC_LISTEN_POLL_MS_DEFAULT;
    s->listen_lost_ignore = 0;
    s->listen_close_every_ms = 0;
    s->listen_terminate_every_ms = 0;
    s->restart_at_s = 0;
    s->restart_command[0] = '\0';
    s->adapter_command[0] = '\0';
    s->adapter_start_timeout_ms = 30000;
    s->adapter_answer_timeout_ms = 30000;
    s->adapter_poll_ms = 500;
    s->pause_at_s = 0;
    s->pause_ms = 3000;
    s->pause_command[0] = '\0';
    snprintf(s->pooler, sizeof s->pooler, "none");
    s->pool_size = 4;
    s->failover_at_s = s->switchover_at_s = s->unfenced_primary_at_s = 0;
    s->unfenced_ms = 2000;
    s->replica_lag_ms = 0;
    s->replicated = 0;
    s->replication_sync = 0;
    s->topology_dir[0] = '\0';
    s->seed = 0;
    s->seed_set = 0;
}

static int parse_bool(const char *v, int *out)
{
    if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "on"))
        *out = 1;
    else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0") ||
             !strcasecmp(v, "off"))
        *out = 0;
    else
        return -1;
    return 0;
}

/* Reads the file for inih, counting lines: line is the line the text just
 * read starts on (inih reads a line longer than its buffer in pieces). */
typedef struct line_reader {
    const char *p, *end; /* what is left of the text */
    int line, next;      /* line of the text handed out last, and of the next */
} line_reader;

/* inih's reader over the scenario text in memory, counting lines so the
 * handler knows which line set a key (qc_scenario_set_line). */
static char *read_line(char *str, int num, void *stream)
{
    line_reader *r = stream;
    int k = 0;

    if (r->p >= r->end || num < 2)
        return NULL;
    r->line = r->next;
    while (r->p < r->end && k < num - 1) {
        char ch = *r->p++;
        str[k++] = ch;
        if (ch == '\n') {
            r->next++;
            break;
        }
    }
    str[k] = '\0';
    return str;
}

typedef struct parse_ctx {
    qc_scenario *s;
    line_reader *rd;
    char msg[512];
    int failed;
} parse_ctx;

int qc_scenario_line_of(const qc_scenario *s, const char *section_key)
{
    for (int i = 0; i < s->nset; i++)
        if (strcmp(s->set[i].key, section_key) == 0)
            return s->set[i].line;
    return 0;
}

/* Remembers that the file set section.key at line (the latest line wins). */
static void note_set(qc_scenario *s, const char *section, const char *key, int line)
{
    char full[48];
    int i;

    snprintf(full, sizeof full, "%s.%s", section, key);
    for (i = 0; i < s->nset; i++) {
        if (strcmp(s->set[i].key, full) == 0) {
            s->set[i].line = line;
            return;
        }
    }
    if (s->nset < (int)(sizeof s->set / sizeof s->set[0])) {
        snprintf(s->set[s->nset].key, sizeof s->set[s->nset].key, "%s", full);
        s->set[s->nset++].line = line;
    }
}

int qc_scenario_set_line(const qc_scenario *s, const char *section, const char *key)
{
    char full[48];

    snprintf(full, sizeof full, "%s.%s", section, key);
    for (int i = 0; i < s->nset; i++)
        if (strcmp(s->set[i].key, full) == 0)
            return s->set[i].line;
    return 0;
}

__attribute__((format(printf, 2, 3))) static int fail(parse_ctx *c, const char *fmt, ...)
{
    if (!c->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->msg, sizeof c->msg, fmt, ap);
        va_end(ap);
        c->failed = 1;
    }
    return 0;
}

static int parse_long(const char *v, long min, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < min)
        return -1;
    *out = x;
    return 0;
}

static int parse_double(const char *v, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || x != x || x < min || x > max)
        return -1; /* x != x: NaN */
    *out = x;
    return 0;
}

/* "N" or "MIN-MAX", both >= 0. */
static int parse_range(const char *v, long *lo, long *hi)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", v);
    char *dash = strchr(buf, '-');
    if (!dash)
        return parse_long(buf, 0, lo) || (*hi = *lo, 0);
    *dash = 0;
    if (parse_long(buf, 0, lo) || parse_long(dash + 1, 0, hi) || *hi < *lo)
        return -1;
    return 0;
}

#define LONGKEY(sec, key, field, min)                                                      \
    if (!strcmp(section, sec) && !strcmp(name, key))                                      \
        return parse_long(value, min, &s->field)                                          \
                   ? fail(c, "%s must be an integer >= " #min ", got '%s'", key, value)    \
                   : 1;

/* The keys below are checked inside their section's block. */
#define SECONDSKEY(key, field, min)                                                        \
    if (!strcmp(name, key))                                                               \
        return parse_double(value, min, 1e7, &s->field)                                   \
                   ? fail(c, "%s must be a number of seconds >= " #min ", got '%s'", key, \
                          value)                                                          \
                   : 1;
#define BOOLKEY(key, field)                                                                \
    if (!strcmp(name, key))                                                               \
        return parse_bool(value, &s->field)                                               \
                   ? fail(c, "%s must be yes or no, got '%s'", key, value)                \
                   : 1;
/* A key with two words: field = 0 for off, 1 for on. */
#define CHOICEKEY(key, field, off, on)                                                     \
    if (!strcmp(name, key)) {                                                             \
        if (strcmp(value, off) && strcmp(value, on))                                      \
            return fail(c, "%s must be " off " or " on ", got '%s'", key, value);         \
        s->field = !strcmp(value, on);                                                    \
        return 1;                                                                         \
    }
#define STRKEY(key, field)                                                                 \
    if (!strcmp(name, key)) {                                                             \
        snprintf(s->field, sizeof s->field, "%s", value);                                 \
        return 1;                                                                         \
    }

/* "N" or "A,B,C": per-worker clock offsets (ms).  Returns 0, or -1 for a
 * bad list (s unchanged). */
static int parse_skews(const char *value, qc_scenario *s)
{
    long v[QC_MAX_CLOCK_SKEWS];
    int n = 0;
    const char *p = value;

    for (;;) {
        char *end;
        while (*p == ' ' || *p == '\t')
            p++;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (end == p || errno != 0 || x < -86400000L || x > 86400000L || n >= QC_MAX_CLOCK_SKEWS)
            return -1;
        v[n++] = x;
        p = end;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        if (*p != ',')
            return -1;
        p++;
    }
    memcpy(s->clock_skew_ms, v, (size_t)n * sizeof *v);
    s->nclock_skew = n;
    return 0;
}

/* The sections a scenario file may hold, in the order the README lists
 * them (prescan refuses any other, even one without keys). */
static const char *const known_sections[] = {
    "scenario", "workload", "lease", "idle",     "drain",   "bounds",   "faults",
    "sink",     "policy",   "feed",  "nemesis",  "topology", "network", "witness",
    "checks",   "schedule", "run",   "adapter",
};
#define QC_SECTIONS_EXPECTED                                                                     \
    "[scenario], [workload], [lease], [idle], [drain], [bounds], [faults], [sink], [policy], "   \
    "[feed], [nemesis], [topology], [network], [witness], [checks], [schedule], [run], [adapter]"

static int handler(void *user, const char *section, const char *name, const char *value)
{
    parse_ctx *c = user;
    qc_scenario *s = c->s;
    if (c->failed)
        return 0;
    note_set(s, section, name, c->rd->line);
    if (!strcmp(section, "scenario")) {
        if (!strcmp(name, "name")) {
            snprintf(s->name, sizeof s->name, "%s", value);
            return 1;
        }
        if (!strcmp(name, "description")) {
            snprintf(s->description, sizeof s->description, "%s", value);
            return 1;
        }
        if (!strcmp(name, "protocol")) {
            snprintf(s->protocol, sizeof s->protocol, "%s", value);
            return 1;
        }
        return fail(c, "unknown key '%s' in [%s] (expected name, description, protocol)", name,
                    section);
    }
    if (!strcmp(section, "workload")) {
        LONGKEY("workload", "workers", workers, 1)
        LONGKEY("workload", "jobs", jobs, 0)
        LONGKEY("workload", "batch", batch, 1)
        LONGKEY("workload", "payload_bytes", payload_bytes, 0)
        LONGKEY("workload", "groups", groups, 0)
        LONGKEY("workload", "copies", copies, 1)
        if (!strcmp(name, "copies_rate"))
            return parse_double(value, 0, 1, &s->copies_rate)
                       ? fail(c, "%s must be a fraction 0..1 of the messages, got '%s'", name,
                              value)
                       : 1;
        if (!strcmp(name, "work_ms"))
            return parse_range(value, &s->work_ms_min, &s->work_ms_max)
                       ? fail(c, "%s must be N or MIN-MAX milliseconds, got '%s'", name, value)
                       : 1;
        SECONDSKEY("duration_s", duration_s, 0)
        return fail(c,
                    "unknown key '%s' in [%s] (expected workers, jobs, batch, payload_bytes, "
                    "groups, copies, copies_rate, work_ms, duration_s)",
                    name, section);
    }
    if (!strcmp(section, "lease")) {
        LONGKEY("lease", "lease_ms", lease_ms, 1)
        LONGKEY("lease", "max_attempts", max_attempts, 1)
        LONGKEY("lease", "reaper_interval_ms", reaper_interval_ms, 1)
        LONGKEY("lease", "retry_delay_ms", retry_delay_ms, 0)
        LONGKEY("lease", "statement_timeout_ms", statement_timeout_ms, 0)
        return fail(c,
                    "unknown key '%s' in [%s] (expected lease_ms, max_attempts, "
                    "reaper_interval_ms, retry_delay_ms, statement_timeout_ms)",
                    name, section);
    }
    if (!strcmp(section, "idle")) {
        LONGKEY("idle", "base_ms", idle_base_ms, 0)
        LONGKEY("idle", "cap_ms", idle_cap_ms, 0)
        LONGKEY("idle", "listen_poll_ms", listen_poll_ms, 0)
        if (!strcmp(name, "jitter"))
            return parse_double(value, 0, 1, &s->idle_jitter)
                       ? fail(c, "%s must be a number from 0 to 1, got '%s'", name, value)
                       : 1;
        return fail(c, "unknown key '%s' in [%s] (expected base_ms, cap_ms, jitter, listen_poll_ms)", name,
                    section);
    }
    if (!strcmp(section, "drain")) {
        LONGKEY("drain", "monitor_interval_ms", monitor_interval_ms, 10)
        LONGKEY("drain", "monitor_full_interval_ms", monitor_full_interval_ms, 10)
        SECONDSKEY("timeout_s", drain_timeout_s, 1)
        SECONDSKEY("idle_tail_s", idle_tail_s, 0)
        return fail(c,
                    "unknown key '%s' in [%s] (expected timeout_s, monitor_interval_ms, "
                    "monitor_full_interval_ms, idle_tail_s)",
                    name, section);
    }
    if (!strcmp(section, "bounds")) {
        LONGKEY("bounds", "recovery_slack_ms", recovery_slack_ms, 0)
        LONGKEY("bounds", "max_idle_pause_ms", max_idle_pause_ms, 1)
        LONGKEY("bounds", "max_pickup_ms", max_pickup_ms, 1)
        LONGKEY("bounds", "max_wedged_ms", max_wedged_ms, 1)
        if (!strcmp(name, "max_idle_polls_per_s"))
            return parse_double(value, 0.001, 1e9, &s->max_idle_polls_per_s)
                       ? fail(c, "%s must be a number > 0, got '%s'", name, value)
                       : 1;
        return fail(c,
                    "unknown key '%s' in [%s] (expected recovery_slack_ms, "
                    "max_idle_polls_per_s, max_idle_pause_ms, max_pickup_ms, max_wedged_ms)",
                    name, section);
    }
    if (!strcmp(section, "faults")) {
        qc_fault_kind k = qc_fault_from_name(name);
        if (k == QC_FAULT_LISTEN_CLOSE || k == QC_FAULT_LISTEN_TERMINATE)
            return fail(c, "%s is timed, not planned per job: use [nemesis] %s_every_ms", name,
                        name);
        if (k != QC_FAULT_NONE)
            return qc_fault_spec_parse(value, &s->faults[k])
                       ? fail(c, "%s must be a count of jobs (e.g. 20) or a rate (e.g. 1.5%%), "
                                 "got '%s'", name, value)
                       : 1;
        if (!strcmp(name, "stall_factor"))
            return parse_double(value, 1.0, 1000, &s->stall_factor)
                       ? fail(c, "%s must be a number >= 1 (times the lease), got '%s'", name,
                              value)
                       : 1;
        LONGKEY("faults", "restart_delay_ms", restart_delay_ms, 0)
        CHOICEKEY("poison_mode", poison_crash, "fail", "crash")
        if (!strcmp(name, "reaper_skew_ms")) {
            long x;
            char *end;
            errno = 0;
            x = strtol(value, &end, 10);
            if (end == value || *end || errno || x < -86400000L || x > 86400000L)
                return fail(c, "%s must be milliseconds within +-86400000 (the reaper's clock "
                               "off the database's), got '%s'", name, value);
            s->reaper_skew_ms = x;
            return 1;
        }
        if (!strcmp(name, "session_time_zone")) {
            if (!qc_valid_utc_offset(value))
                return fail(c, "%s must be a UTC offset +HH:MM or -HH:MM (east of UTC "
                               "positive, hours 00-14, minutes 00-59), e.g. +05:30, got '%s'",
                            name, value);
            snprintf(s->session_time_zone, sizeof s->session_time_zone, "%s", value);
            return 1;
        }
        if (!strcmp(name, "clock_skew_ms"))
            return parse_skews(value, s)
                       ? fail(c, "%s must be milliseconds or a comma list of them (at most %d, "
                                 "each within +-86400000), e.g. 0,2500,-2500, got '%s'",
                              name, QC_MAX_CLOCK_SKEWS, value)
                       : 1;
        return fail(c,
                    "unknown key '%s' in [%s] (expected kill_after_claim, kill_after_effect, "
                    "stall_beyond_lease, lost_ack, lost_request, poison, "
                    "stall_until_reclaimed, stall_in_work, half_open, reset, graceful_stop, "
                    "late_renew, lost_ack_on_fail, "
                    "notify_lost, notify_early, stall_factor, restart_delay_ms, poison_mode, "
                    "clock_skew_ms, reaper_skew_ms, session_time_zone)",
                    name, section);
    }
    if (!strcmp(section, "policy")) {
        BOOLKEY("heartbeat", heartbeat)
        BOOLKEY("count_zero_row_complete", count_zero_rows)
        CHOICEKEY("on_lost_ack", lost_ack_fail, "retry", "fail")
        CHOICEKEY("after_stall", stall_then_fail, "complete", "fail")
        CHOICEKEY("on_renew_refused", renew_refused_continue, "stop", "continue")
        LONGKEY("policy", "heartbeat_every_ms", heartbeat_every_ms, 0)
        if (!strcmp(name, "worker_name")) {
            static const char *const v[] = {"per_incarnation", "kept", "host"};
            for (int k = 0; k < 3; k++)
                if (!strcmp(value, v[k])) {
                    s->worker_name_kept = k; /* QC_WORKER_NAME_INCARNATION, _KEPT, _HOST */
                    return 1;
                }
            return fail(c, "worker_name must be per_incarnation, kept or host, got '%s'", value);
        }
        LONGKEY("policy", "hosts", hosts, 1)
        LONGKEY("policy", "tcp_user_timeout_ms", network.tcp_user_timeout_ms, 0)
        CHOICEKEY("on_listen_lost", listen_lost_ignore, "fallback", "ignore")
        CHOICEKEY("on_renew_lost", renew_lost_continue, "stop", "continue")
        BOOLKEY("stop_heartbeat_first", stop_heartbeat_first)
        if (!strcmp(name, "lease_deadline")) {
            static const char *const v[] = {"sent", "answer", "none"};
            for (int k = 0; k < 3; k++)
                if (!strcmp(value, v[k])) {
                    s->lease_deadline = k; /* QC_LEASE_DEADLINE_SENT, _ANSWER, _NONE */
                    return 1;
                }
            return fail(c, "lease_deadline must be sent, answer or none, got '%s'", value);
        }
        return fail(c,
                    "unknown key '%s' in [%s] (expected heartbeat, heartbeat_every_ms, "
                    "on_renew_refused, on_renew_lost, count_zero_row_complete, on_lost_ack, "
                    "after_stall, worker_name, hosts, tcp_user_timeout_ms, on_listen_lost, "
                    "lease_deadline, stop_heartbeat_first)",
                    name, section);
    }
    if (!strcmp(section, "sink")) {
        BOOLKEY("idempotent", sink_idempotent)
        return fail(c, "unknown key '%s' in [%s] (expected idempotent)", name, section);
    }
    if (!strcmp(section, "feed")) {
        LONGKEY("feed", "bursts", feed_bursts, 0)
        LONGKEY("feed", "jobs", feed_jobs, 0)
        LONGKEY("feed", "gap_ms", feed_gap_ms, 0)
        LONGKEY("feed", "start_ms", feed_start_ms, 0)
        LONGKEY("feed", "delay_ms", feed_delay_ms, 0)
        return fail(c,
                    "unknown key '%s' in [%s] (expected bursts, jobs, gap_ms, start_ms, "
                    "delay_ms)",
                    name, section);
    }
    if (!strcmp(section, "nemesis")) {
        LONGKEY("nemesis", "terminate_every_ms", terminate_every_ms, 0)
        SECONDSKEY("restart_at_s", restart_at_s, 0)
        STRKEY("restart_command", restart_command)
        SECONDSKEY("pause_at_s", pause_at_s, 0)
        LONGKEY("nemesis", "pause_ms", pause_ms, 1)
        STRKEY("pause_command", pause_command)
        SECONDSKEY("failover_at_s", failover_at_s, 0)
        SECONDSKEY("switchover_at_s", switchover_at_s, 0)
        SECONDSKEY("unfenced_primary_at_s", unfenced_primary_at_s, 0)
        LONGKEY("nemesis", "unfenced_ms", unfenced_ms, 1)
        LONGKEY("nemesis", "replica_lag_ms", replica_lag_ms, 0)
        LONGKEY("nemesis", "listen_close_every_ms", listen_close_every_ms, 0)
        LONGKEY("nemesis", "listen_terminate_every_ms", listen_terminate_every_ms, 0)
        return fail(c,
                    "unknown key '%s' in [%s] (expected terminate_every_ms, restart_at_s, "
                    "restart_command, pause_at_s, pause_ms, pause_command, failover_at_s, "
                    "switchover_at_s, unfenced_primary_at_s, unfenced_ms, replica_lag_ms, "
                    "listen_close_every_ms, listen_terminate_every_ms)",
                    name, section);
    }
    if (!strcmp(section, "topology")) {
        if (!strcmp(name, "pooler")) {
            if (strcmp(value, "none") && strcmp(value, "pgbouncer"))
                return fail(c, "%s must be none or pgbouncer, got '%s'", name, value);
            snprintf(s->pooler, sizeof s->pooler, "%s", value);
            return 1;
        }
        LONGKEY("topology", "pool_size", pool_size, 1)
        CHOICEKEY("kind", replicated, "single", "replicated")
        CHOICEKEY("replication", replication_sync, "async", "sync")
        STRKEY("dir", topology_dir)
        return fail(c,
                    "unknown key '%s' in [%s] (expected pooler, pool_size, kind, replication, "
                    "dir)",
                    name, section);
    }
    if (!strcmp(section, "network")) {
        char msg[400];
        return qc_network_parse(&s->network, name, value, msg, sizeof msg) ? 1
                                                                           : fail(c, "%s", msg);
    }
    if (!strcmp(section, "witness")) {
        BOOLKEY("on", witness_on)
        /* Names only: they are pasted into the trigger's DDL, so
         * witness.c checks them against the catalog before any use. */
        STRKEY("table", witness_table)
        STRKEY("id", witness_id)
        STRKEY("state", witness_state)
        STRKEY("token", witness_token)
        STRKEY("owner", witness_owner)
        return fail(c, "unknown key '%s' in [%s] (expected on, table, id, state, token, owner)",
                    name, section);
    }
    if (!strcmp(section, "checks")) {
        if (!strcmp(name, "judge")) {
            /* normalise: strip blanks */
            size_t k = 0;
            for (const char *q = value; *q && k + 1 < sizeof s->checkers; q++)
                if (*q != ' ' && *q != '\t')
                    s->checkers[k++] = *q;
            s->checkers[k] = 0;
            return 1;
        }
        if (!strcmp(name, "expect")) {
            snprintf(s->expect, sizeof s->expect, "%s", value);
            return 1;
        }
        if (!strcmp(name, "baseline"))
            return 1; /* read by qchaos mutation: the correct scenario of a policy mutant */
        return fail(c, "unknown key '%s' in [%s] (expected judge, expect, baseline)", name,
                    section);
    }
    if (!strcmp(section, "schedule")) {
        if (!strcmp(name, "step")) {
            char a[64], pt[64], extra[8], msg[400];
            int actor;
            if (s->nsteps >= (int)(sizeof s->steps / sizeof s->steps[0]))
                return fail(c, "too many steps (at most %d)",
                            (int)(sizeof s->steps / sizeof s->steps[0]));
            int nw = sscanf(value, "%63s %63s %7s", a, pt, extra);
            char more[8];
            if (nw < 2 || (nw == 3 && strcmp(extra, "job")) ||
                sscanf(value, "%*s %*s %*s %7s", more) == 1)
                return fail(c, "step must be ACTOR POINT [job] (e.g. 'w0 claim.1', "
                               "'reaper reap.after job'), got '%s'", value);
            s->steps[s->nsteps].with_job = nw == 3;
            if (qc_actor_parse(a, &actor) != 0)
                return fail(c, "unknown actor '%s' in step (expected w0, w1, ... or reaper)", a);
            if (qc_point_check(pt, msg, sizeof msg) != 0)
                return fail(c, "%s", msg);
            if (strlen(a) >= sizeof s->steps[0].actor || strlen(pt) >= sizeof s->steps[0].point)
                return fail(c, "step '%s': name too long", value);
            memcpy(s->steps[s->nsteps].actor, a, strlen(a) + 1);
            memcpy(s->steps[s->nsteps].point, pt, strlen(pt) + 1);
            s->steps[s->nsteps].line = c->rd->line;
            s->nsteps++;
            return 1;
        }
        if (!strcmp(name, "explore")) {
            if (strcmp(value, "pct") && strcmp(value, "none"))
                return fail(c, "explore must be pct or none, got '%s'", value);
            s->explore_pct = !strcmp(value, "pct");
            return 1;
        }
        LONGKEY("schedule", "pct_depth", pct_depth, 1)
        LONGKEY("schedule", "block_ms", block_ms, 10)
        LONGKEY("schedule", "hold_timeout_ms", hold_timeout_ms, 100)
        BOOLKEY("hold_claim_commit", hold_claim_commit)
        BOOLKEY("hold_complete_commit", hold_complete_commit)
        BOOLKEY("hold_reap_commit", hold_reap_commit)
        return fail(c,
                    "unknown key '%s' in [%s] (expected step, explore, pct_depth, block_ms, "
                    "hold_timeout_ms, hold_claim_commit, hold_complete_commit, "
                    "hold_reap_commit)",
                    name, section);
    }
    if (!strcmp(section, "adapter")) {
        STRKEY("command", adapter_command)
        LONGKEY("adapter", "start_timeout_ms", adapter_start_timeout_ms, 1)
        LONGKEY("adapter", "answer_timeout_ms", adapter_answer_timeout_ms, 1)
        LONGKEY("adapter", "poll_ms", adapter_poll_ms, 1)
        STRKEY("table", adapter_table)
        STRKEY("id_column", adapter_id_column)
        STRKEY("state_column", adapter_state_column)
        STRKEY("owner_column", adapter_owner_column)
        return fail(c,
                    "unknown key '%s' in [%s] (expected command, start_timeout_ms, "
                    "answer_timeout_ms, poll_ms, table, id_column, state_column, owner_column)",
                    name, section);
    }
    if (!strcmp(section, "run")) {
        if (!strcmp(name, "seed")) {
            char *end;
            errno = 0;
            unsigned long long x = strtoull(value, &end, 10);
            if (errno || end == value || *end || value[0] == '-')
                return fail(c, "%s must be a non-negative integer, got '%s'", name, value);
            s->seed = x;
            s->seed_set = 1;
            return 1;
        }
        return fail(c, "unknown key '%s' in [%s] (expected seed)", name, section);
    }
    return fail(c, "unknown section [%s] (expected " QC_SECTIONS_EXPECTED ")", section);
}

/* Largest scenario file read (a scenario is a page of keys). */
#define QC_SCENARIO_MAX_BYTES (1024 * 1024)

/* Checks what inih would misreport before it runs: an empty file, a NUL
 * byte, a line longer than inih's buffer (inih cuts it into pieces and
 * blames a later, or a non-existent, line) and an unbalanced double quote
 * or a value opened with a single quote and not closed (values are not
 * quoted; the mistake is blamed on its own line).  0 or QC_EINVAL
 * "path:line: ...". */
static int prescan(const char *path, const char *text, size_t len, qc_err *err)
{
    size_t max = ini_max_line > 3 ? (size_t)ini_max_line - 3 : 1;
    int line = 1, content = 0;

    for (size_t i = 0; i < len; line++) {
        size_t start = i, end;
        while (i < len && text[i] != '\n' && text[i] != '\0')
            i++;
        if (i < len && text[i] == '\0')
            return qc_err_set(err, QC_EINVAL,
                              "%s:%d: the file holds a NUL byte (a scenario is a text file)", path,
                              line);
        end = i;
        if (end > start && text[end - 1] == '\r')
            end--;
        if (end - start > max)
            return qc_err_set(err, QC_EINVAL, "%s:%d: line is %zu bytes long (at most %zu)", path,
                              line, end - start, max);
        const char *p = text + start;
        while (p < text + end && (*p == ' ' || *p == '\t'))
            p++;
        if (p < text + end && *p == '[') {
            /* a section header: inih calls the handler only for keys, so
             * an unknown section without keys would pass unnoticed (and one
             * with keys be blamed on its first key's line) */
            const char *rb = memchr(p, ']', (size_t)(text + end - p));
            if (rb != NULL) {
                size_t n = (size_t)(rb - p - 1);
                int known = 0;
                for (size_t k = 0; k < sizeof known_sections / sizeof *known_sections; k++)
                    known |= strlen(known_sections[k]) == n &&
                             !memcmp(known_sections[k], p + 1, n);
                if (!known)
                    return qc_err_set(err, QC_EINVAL,
                                      "%s:%d: unknown section [%.*s] (expected "
                                      QC_SECTIONS_EXPECTED ")",
                                      path, line, (int)(n > 64 ? 64 : n), p + 1);
            }
        }
        if (p < text + end && *p != ';' && *p != '#') {
            int dq = 0;
            content = 1;
            for (const char *q = p; q < text + end; q++)
                dq += *q == '"';
            const char *eq = memchr(p, '=', (size_t)(text + end - p));
            const char *v = eq ? eq + 1 : NULL;
            while (v && v < text + end && (*v == ' ' || *v == '\t'))
                v++;
            const char *ve = text + end;
            while (v && ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                ve--;
            if (dq % 2 != 0 || (v && v < ve && *v == '\'' && (ve - v < 2 || ve[-1] != '\'')))
                return qc_err_set(err, QC_EINVAL,
                                  "%s:%d: unbalanced quote (values are written without quotes: "
                                  "key = value)",
                                  path, line);
        }
        if (i < len)
            i++;
    }
    if (!content)
        return qc_err_set(err, QC_EINVAL,
                          "%s:%d: the scenario file is empty (no [section] and no key)", path,
                          line > 1 ? line - 1 : 1);
    return 0;
}

int qc_scenario_parse(qc_scenario *s, const char *path, const char *text, size_t len, qc_err *err)
{
    int rc;
    char *copy = NULL;

    if ((rc = prescan(path, text, len, err)) != 0)
        return rc;
    if ((copy = malloc(len + 1)) == NULL)
        return qc_err_set(err, QC_ENOMEM, "out of memory reading '%s'", path);
    memcpy(copy, text, len);
    copy[len] = '\0';
    line_reader rd = {.p = copy, .end = copy + len, .line = 1, .next = 1};
    parse_ctx c = {.s = s, .rd = &rd};
    int line = ini_parse_stream(read_line, &rd, handler, &c);
    free(copy);
    if (line < 0)
        return qc_err_set(err, QC_ENOMEM, "out of memory reading '%s'", path);
    if (line > 0) {
        if (!c.failed)
            snprintf(c.msg, sizeof c.msg,
                     "syntax error (expected [section] or key = value)");
        return qc_err_set(err, QC_EINVAL, "%s:%d: %s", path, line, c.msg);
    }
    snprintf(s->path, sizeof s->path, "%s", path);
    return 0;
}

int qc_scenario_load(qc_scenario *s, const char *path, qc_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = 0;
    FILE *f = NULL;

    /* a FIFO or a device is refused without blocking; a missing file is
     * bad input too (exit 2) */
    if (qc_open_input(path, "scenario", &f, err) != 0) {
        if (err != NULL)
            err->code = QC_EINVAL;
        return QC_EINVAL;
    }
    if ((text = malloc(QC_SCENARIO_MAX_BYTES + 1)) == NULL) {
        rc = qc_err_set(err, QC_ENOMEM, "out of memory reading '%s'", path);
        goto out;
    }
    len = fread(text, 1, QC_SCENARIO_MAX_BYTES + 1, f);
    if (ferror(f)) {
        rc = qc_err_set(err, QC_EIO, "cannot read scenario file '%s': %s", path, strerror(errno));
        goto out;
    }
    if (len > QC_SCENARIO_MAX_BYTES) {
        rc = qc_err_set(err, QC_EINVAL, "scenario '%s' is more than %d bytes", path,
                        QC_SCENARIO_MAX_BYTES);
        goto out;
    }
    rc = qc_scenario_parse(s, path, text, len, err);
out:
    free(text);
    fclose(f);
    return rc;
}

static int exists(const char *p)
{
    struct stat st;
    return access(p, R_OK) == 0 && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Writes path with "dir/../" and "./" taken out (lexically) into out, and
 * keeps it only when it names the same file (a symlink in the way would
 * make it another): "scenarios/../backends/x.sql" reads as
 * "backends/x.sql" in every message and in the ledger. */
static void tidy_path(const char *path, char *out, size_t n)
{
    char buf[PATH_MAX * 2];
    const char *seg[256];
    size_t len[256], ns = 0;
    const char *p = path;
    int abs = path[0] == '/';

    snprintf(out, n, "%s", path);
    while (*p) {
        while (*p == '/')
            p++;
        const char *e = strchr(p, '/');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == 0)
            break;
        if (l == 1 && p[0] == '.') {
            /* "./": nothing */
        } else if (l == 2 && p[0] == '.' && p[1] == '.' && ns > 0 &&
                   !(len[ns - 1] == 2 && seg[ns - 1][0] == '.' && seg[ns - 1][1] == '.')) {
            ns--;
        } else {
            if (ns == sizeof seg / sizeof *seg)
                return;
            seg[ns] = p;
            len[ns++] = l;
        }
        p += l;
    }
    size_t bl = 0;
    if (abs)
        buf[bl++] = '/';
    for (size_t i = 0; i < ns; i++) {
        if (bl + len[i] + 2 > sizeof buf)
            return;
        if (i > 0)
            buf[bl++] = '/';
        memcpy(buf + bl, seg[i], len[i]);
        bl += len[i];
    }
    buf[bl] = '\0';
    struct stat a, b;
    if (bl > 0 && bl < n && stat(path, &a) == 0 && stat(buf, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        snprintf(out, n, "%s", buf);
}

int qc_scenario_own_server(const qc_scenario *s)
{
    return strcmp(s->pooler, "none") != 0 || s->restart_at_s > 0 || s->pause_at_s > 0 ||
           (s->replicated && !s->topology_dir[0]);
}

int qc_scenario_switches_primary(const qc_scenario *s)
{
    return s->failover_at_s > 0 || s->switchover_at_s > 0 || s->unfenced_primary_at_s > 0;
}

/* Whether dir holds scripts/ (what every data folder has). */
static int has_scripts(const char *dir)
{
    char p[PATH_MAX * 2];
    struct stat st;
    snprintf(p, sizeof p, "%s/scripts", dir);
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char exe_datadir[PATH_MAX];
static pthread_once_t exe_datadir_once = PTHREAD_ONCE_INIT;

/* Finds the data folder from the executable's own path: its folder (the
 * checkout: ./qchaos next to scripts/), else ../share/qchaos (an install
 * under any PREFIX: PREFIX/bin/qchaos, PREFIX/share/qchaos).  Leaves
 * exe_datadir empty when neither holds scripts/. */
static void find_exe_datadir(void)
{
    char exe[PATH_MAX], buf[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    *slash = 0;
    if (has_scripts(exe)) {
        snprintf(exe_datadir, sizeof exe_datadir, "%s", exe);
        return;
    }
    snprintf(buf, sizeof buf, "%s/../share/qchaos", exe);
    char real[PATH_MAX];
    if (has_scripts(buf) && realpath(buf, real))
        snprintf(exe_datadir, sizeof exe_datadir, "%s", real);
}

const char *qc_datadir(void)
{
    const char *env = getenv("QCHAOS_HOME");
    if (env && *env)
        return env;
    pthread_once(&exe_datadir_once, find_exe_datadir);
    return exe_datadir[0] ? exe_datadir : QC_DATADIR;
}

int qc_scenario_find(const char *name, char *out, size_t n, qc_err *err)
{
    char buf[PATH_MAX * 2];
    const char *dd = qc_datadir();
    size_t len = strlen(name);
    int has_ini = len >= 4 && !strcmp(name + len - 4, ".ini");
    if (!name[0])
        return qc_err_set(err, QC_EINVAL, "empty scenario name");
    /* as given (relative to the current folder), then under the data
     * folder: DATADIR/NAME, DATADIR/scenarios/NAME, DATADIR/scenarios/NAME.ini */
    if (name[0] == '/' || exists(name)) {
        snprintf(out, n, "%s", name);
        return 0;
    }
    static const char *const sub[] = {"", "scenarios/", "scenarios/"};
    for (int i = 0; i < (has_ini ? 2 : 3); i++) {
        snprintf(buf, sizeof buf, "%s/%s%s%s", dd, sub[i], name, i == 2 ? ".ini" : "");
        if (exists(buf)) {
            tidy_path(buf, out, n);
            return 0;
        }
    }
    return qc_err_set(err, QC_EINVAL,
                      "scenario '%s' not found (looked in the current folder and in %s/scenarios; "
                      "the data folder is set by QCHAOS_HOME)",
                      name, dd);
}

int qc_scenario_resolve(const char *name, const char *base_dir, char *out, size_t n, qc_err *err)
{
    char buf[PATH_MAX * 2];
    if (!name[0])
        return qc_err_set(err, QC_EINVAL, "empty protocol file name");
    if (name[0] == '/') {
        snprintf(out, n, "%s", name);
        return exists(name) ? 0
                            : qc_err_set(err, QC_EINVAL, "protocol file '%s' not found", name);
    }
    /* the scenario file's folder first, then the current folder, then the
     * data folder (README "Scenario files") */
    if (base_dir) {
        snprintf(buf, sizeof buf, "%s/%s", base_dir, name);
        if (exists(buf)) {
            tidy_path(buf, out, n);
            return 0;
        }
    }
    if (exists(name)) {
        snprintf(out, n, "%s", name);
        return 0;
    }
    snprintf(buf, sizeof buf, "%s/%s", qc_datadir(), name);
    if (exists(buf)) {
        snprintf(out, n, "%s", buf);
        return 0;
    }
    /* A bundled scenario names its protocol from its own folder under the
     * data folder's scenarios/ ("../backends/..."); a copy of it taken
     * elsewhere to be edited still finds it there. */
    snprintf(buf, sizeof buf, "%s/scenarios/%s", qc_datadir(), name);
    if (!strncmp(name, "../", 3) && exists(buf)) {
        tidy_path(buf, out, n);
        return 0;
    }
    if (base_dir == NULL || !strcmp(base_dir, "."))
        return qc_err_set(err, QC_EINVAL,
                          "protocol file '%s' not found (looked in . and %s)", name, qc_datadir());
    return qc_err_set(err, QC_EINVAL,
                      "protocol file '%s' not found (looked in %s, . and %s)", name, base_dir,
                      qc_datadir());
}

long qc_scenario_hold_timeout_ms(const qc_scenario *s)
{
    double planned = (double)s->lease_ms * s->stall_factor + (double)s->work_ms_max;
    long derived = (long)(3.0 * planned);
    if (s->hold_timeout_ms > 0)
        return s->hold_timeout_ms;
    return derived > 10000 ? derived : 10000;
}

int qc_scenario_validate(const qc_scenario *s, qc_err *err)
{
    const char *src = s->path[0] ? s->path : "scenario";
    for (int i = 0; i < s->nsteps; i++) {
        int actor;
        if (qc_actor_parse(s->steps[i].actor, &actor) == 0 && actor >= s->workers)
            return qc_err_set(err, QC_EINVAL,
                              "%s:%d: step names worker %s, but the run has %ld worker%s "
                              "(w0 .. w%ld)",
                              src, s->steps[i].line, s->steps[i].actor, s->workers,
                              s->workers == 1 ? "" : "s", s->workers - 1);
    }
    if ((s->copies > 1 || s->copies_rate > 0) && s->adapter_command[0]) {
        int line = qc_scenario_set_line(s, "workload", s->copies > 1 ? "copies" : "copies_rate");
        char at[16] = "";
        if (line > 0)
            snprintf(at, sizeof at, ":%d", line);
        return qc_err_set(err, QC_EINVAL,
                          "%s%s: [workload] %s with [adapter]: an adapter's library enqueues "
                          "each job once through its own API, qchaos cannot hand it copies "
                          "of one message",
                          src, at, s->copies > 1 ? "copies" : "copies_rate");
    }
    if ((s->nsteps > 0 || s->explore_pct) && s->adapter_command[0])
        return qc_err_set(err, QC_EINVAL,
                          "%s: [schedule] with [adapter]: an adapter's library runs its own "
                          "loop, qchaos has no points inside it to schedule",
                          src);
    {
        char msg[300];
        if (qc_network_check(&s->network, s->workers, msg, sizeof msg) != 0)
            return qc_err_set(err, QC_EINVAL, "%s: %s", src, msg);
        if (s->network.proxy && s->adapter_command[0])
            return qc_err_set(err, QC_EINVAL,
                              "%s: [network] proxy = on with [adapter]: adapter processes "
                              "connect by themselves, not through the proxy",
                              src);
        int needs = s->faults[QC_FAULT_HALF_OPEN].count != 0 ||
                    s->faults[QC_FAULT_HALF_OPEN].rate > 0 ||
                    s->faults[QC_FAULT_RESET].count != 0 || s->faults[QC_FAULT_RESET].rate > 0 ||
                    s->network.lost_ack_proxy || s->network.partition[0] ||
                    s->network.latency_ms || s->network.jitter_ms || s->network.bandwidth;
        if (needs && !s->network.proxy)
            return qc_err_set(err, QC_EINVAL,
                              "%s: the network faults (half_open, reset, [network] lost_ack = "
                              "proxy, partition, latency, bandwidth) need [network] proxy = on",
                              src);
    }
    if (s->nsteps > 0 && s->explore_pct)
        return qc_err_set(err, QC_EINVAL,
                          "%s:%d: [schedule] has steps and explore = pct: a script or an "
                          "exploration, not both",
                          src, s->steps[0].line);
    if (s->idle_cap_ms < s->idle_base_ms)
        return qc_err_set(err, QC_EINVAL, "%s: [idle] cap_ms (%ld) must be >= base_ms (%ld)", src,
                          s->idle_cap_ms, s->idle_base_ms);
    if (s->workers < 1 || s->workers > 1000)
        return qc_err_set(err, QC_EINVAL, "%s: workers must be 1..1000, got %ld", src, s->workers);
    if (s->jobs > 10000000)
        return qc_err_set(err, QC_EINVAL, "%s: jobs must be <= 10000000, got %ld", src, s->jobs);
    if (qc_scenario_switches_primary(s) && !s->replicated)
        return qc_err_set(err, QC_EINVAL,
                          "%s: [nemesis] failover_at_s, switchover_at_s and unfenced_primary_at_s "
                          "switch the primary of a replicated topology: set [topology] kind = "
                          "replicated",
                          src);
    if ((s->failover_at_s > 0) + (s->switchover_at_s > 0) + (s->unfenced_primary_at_s > 0) > 1)
        return qc_err_set(err, QC_EINVAL,
                          "%s: [nemesis] a run switches the primary once: give one of "
                          "failover_at_s, switchover_at_s, unfenced_primary_at_s",
                          src);
    if (strcmp(s->pooler, "none") && s->terminate_every_ms > 0)
        return qc_err_set(err, QC_EINVAL,
                          "%s: [nemesis] terminate_every_ms cannot run behind [topology] pooler: "
                          "a worker's server session is not its own there (the pooler hands it "
                          "to whichever client's transaction comes next), so ending it would "
                          "end another worker's transaction",
                          src);
    if (s->replicated && (strcmp(s->pooler, "none") || s->restart_at_s > 0 || s->pause_at_s > 0))
        return qc_err_set(err, QC_EINVAL,
                          "%s: [topology] kind = replicated goes without a pooler, restart_at_s "
                          "and pause_at_s (they act on a single server)",
                          src);
    static const struct {
        const char *key;
        long max;
        size_t off;
    } caps[] = {
        {"[workload] batch", 10000, offsetof(qc_scenario, batch)},
        {"[workload] payload_bytes", 1048576, offsetof(qc_scenario, payload_bytes)},
        {"[workload] work_ms", 3600000, offsetof(qc_scenario, work_ms_max)},
        {"[workload] groups", 1000000, offsetof(qc_scenario, groups)},
        {"[workload] copies", QC_MAX_COPIES, offsetof(qc_scenario, copies)},
        {"[lease] lease_ms", 86400000, offsetof(qc_scenario, lease_ms)},
        {"[lease] max_attempts", 1000000, offsetof(qc_scenario, max_attempts)},
        {"[lease] reaper_interval_ms", 86400000, offsetof(qc_scenario, reaper_interval_ms)},
        {"[lease] retry_delay_ms", 86400000, offsetof(qc_scenario, retry_delay_ms)},
        {"[lease] statement_timeout_ms", 86400000, offsetof(qc_scenario, statement_timeout_ms)},
        {"[idle] cap_ms", 86400000, offsetof(qc_scenario, idle_cap_ms)},
        {"[faults] restart_delay_ms", 3600000, offsetof(qc_scenario, restart_delay_ms)},
        {"[feed] jobs", 10000000, offsetof(qc_scenario, feed_jobs)},
        {"[feed] bursts", 100000, offsetof(qc_scenario, feed_bursts)},
        {"[feed] delay_ms", 86400000, offsetof(qc_scenario, feed_delay_ms)},
        {"[nemesis] unfenced_ms", 3600000, offsetof(qc_scenario, unfenced_ms)},
        {"[nemesis] replica_lag_ms", 3600000, offsetof(qc_scenario, replica_lag_ms)},
    };
    for (size_t i = 0; i < sizeof caps / sizeof *caps; i++) {
        long v = *(const long *)((const char *)s + caps[i].off);
        if (v > caps[i].max) {
            char sec[32] = "", key[48] = "", at[16] = "";
            int line = sscanf(caps[i].key, "[%31[^]]] %47s", sec, key) == 2
                           ? qc_scenario_set_line(s, sec, key)
                           : 0;
            if (line > 0)
                snprintf(at, sizeof at, ":%d", line);
            return qc_err_set(err, QC_EINVAL, "%s%s: %s must be <= %ld, got %ld", src, at,
                              caps[i].key, caps[i].max, v);
        }
    }
    if (s->checkers[0]) {
        static const char *const known =
            ",exclusive_claim,double_complete,no_lost_jobs,acked_durable,stale_token_rejected,"
            "no_false_success,effects_once,exclusive_run,recovery,bounded_failure,no_early_reap,batch_bound,retry_delay,"
            "bounded_idle_polling,group_exclusive,group_order,worker_progress,own_lease,"
            "message_once,";
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", s->checkers);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            char pat[160];
            snprintf(pat, sizeof pat, ",%.150s,", t);
            if (!strstr(known, pat)) {
                char names[600];
                size_t k = 0;
                for (const char *q = known + 1; *q && k + 3 < sizeof names; q++)
                    if (*q == ',') {
                        if (q[1]) {
                            names[k++] = ',';
                            names[k++] = ' ';
                        }
                    } else {
                        names[k++] = *q;
                    }
                names[k] = '\0';
                int line = qc_scenario_set_line(s, "checks", "judge");
                char at[16] = "";
                if (line > 0)
                    snprintf(at, sizeof at, ":%d", line);
                return qc_err_set(err, QC_EINVAL,
                                  "%s%s: [checks] judge names unknown checker '%s' (known: %s)",
                                  src, at, t, names);
            }
        }
    }
    return 0;
}

long qc_scenario_statement_timeout_ms(const qc_scenario *s)
{
    if (s->statement_timeout_ms >= 0)
        return s->statement_timeout_ms;
    return s->lease_ms > 3000 ? 10 * s->lease_ms : 30000;
}

long qc_scenario_max_wedged_ms(const qc_scenario *s)
{
    long b = 5000;
    if (s->max_wedged_ms > 0)
        return s->max_wedged_ms;
    if (3 * s->lease_ms > b)
        b = 3 * s->lease_ms;
    if (2 * s->work_ms_max + s->lease_ms > b)
        b = 2 * s->work_ms_max + s->lease_ms;
    return b;
}

long qc_scenario_actor_skew_ms(const qc_scenario *s, int id)
{
    return id < 0 ? s->reaper_skew_ms : qc_scenario_clock_skew_ms(s, id);
}

long qc_scenario_clock_skew_ms(const qc_scenario *s, int worker_id)
{
    if (worker_id < 0 || s->nclock_skew <= 0)
        return 0;
    return s->clock_skew_ms[worker_id % s->nclock_skew];
}
