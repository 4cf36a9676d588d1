/*
 * usage.c - the harness's own CPU and memory (usage.h).  getrusage(2)
 * RUSAGE_SELF sums every thread of the process; ru_maxrss is in KiB on
 * Linux.
 */
#include "usage.h"
#include "clock.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>

void qc_usage_now(qc_usage *u)
{
    struct rusage ru;
    memset(u, 0, sizeof *u);
    u->wall_ms = qc_clock_ms();
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return;
    u->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    u->sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    u->maxrss_kb = ru.ru_maxrss;
}

/* v rounded to 3 decimals, as the rest of results.json's metrics */
static double r3(double v)
{
    return (double)(long long)(v * 1000.0 + (v < 0 ? -0.5 : 0.5)) / 1000.0;
}

json_t *qc_usage_json(const qc_usage *from, const qc_usage *to, long jobs)
{
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    double user = to->user_s - from->user_s, sys = to->sys_s - from->sys_s;
    double wall = (to->wall_ms - from->wall_ms) / 1000.0;
    json_object_set_new(o, "cpu_s", json_real(r3(user + sys)));
    json_object_set_new(o, "cpu_user_s", json_real(r3(user)));
    json_object_set_new(o, "cpu_sys_s", json_real(r3(sys)));
    json_object_set_new(o, "wall_s", json_real(r3(wall)));
    if (wall > 0)
        json_object_set_new(o, "cores", json_real(r3((user + sys) / wall)));
    if (jobs > 0)
        json_object_set_new(o, "cpu_ms_per_1000_jobs",
                            json_real(r3((user + sys) * 1000.0 * 1000.0 / (double)jobs)));
    json_object_set_new(o, "peak_rss_mb", json_real(r3((double)to->maxrss_kb / 1024.0)));
    return o;
}

int qc_usage_reserve_fds(long need, long *soft_out, qc_err *err)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return qc_err_set(err, QC_EIO, "getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)need) {
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < (rlim_t)need)
            return qc_err_set(err, QC_EINVAL,
                              "%ld open files needed (a connection per worker and more), the "
                              "hard limit is %llu: raise it (ulimit -Hn, limits.conf) or run "
                              "fewer workers",
                              need, (unsigned long long)rl.rlim_max);
        rlim_t old = rl.rlim_cur;
        rl.rlim_cur = (rlim_t)need;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            return qc_err_set(err, QC_EIO, "raising the open files limit from %llu to %ld: %s",
                              (unsigned long long)old, need, strerror(errno));
    }
    if (soft_out != NULL)
        *soft_out = rl.rlim_cur == RLIM_INFINITY ? -1 : (long)rl.rlim_cur;
    return 0;
}
