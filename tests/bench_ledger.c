/*
 * bench_ledger.c - a benchmark, not a test: the cost of qc_ledger_append on
 * the events a worker writes per job (invoke and ok claim, effect, invoke
 * and ok complete, built as harness/worker.c builds them), one thread.
 * Prints ns and CPU ns per event and the bytes per line.
 *
 *   tests/bench_ledger [EVENTS] [LEDGER]     (default 500000, /tmp file)
 *
 * Under `valgrind --tool=callgrind` it gives the instruction count of the
 * append path (make bench prints neither as a pass or fail).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../harness/clock.h"
#include "../harness/ledger.h"

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static json_t *ev(const char *type, const char *op, long job, long req)
{
    json_t *e = json_object();
    json_object_set_new(e, "type", json_string(type));
    if (op)
        json_object_set_new(e, "op", json_string(op));
    json_object_set_new(e, "worker", json_integer(job % 16));
    json_object_set_new(e, "inc", json_integer(0));
    if (req >= 0)
        json_object_set_new(e, "req", json_integer(req));
    return e;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 500000;
    char path[256];
    snprintf(path, sizeof path, "%s", argc > 2 ? argv[2] : "/tmp/qc-bench-ledger.jsonl");
    json_t *hdr = json_pack("{s:i}", "seed", 1);
    qc_ledger *l = NULL;
    qc_err err = {0};
    if (qc_ledger_open(path, hdr, qc_clock_ms(), &l, &err) != 0) {
        fprintf(stderr, "bench_ledger: %s\n", err.msg);
        return 2;
    }
    json_decref(hdr);
    qc_lbuf *b = qc_ledger_buf(l);
    char tok[64];
    double now = 0, w0 = qc_clock_ms(), c0 = cpu_ms();
    long events = 0;
    for (long job = 1; events < n; job++) {
        snprintf(tok, sizeof tok, "4c2fcc48-e683-45bd-9cb3-%012lx", job);
        /* server epoch ms as the database returns them: to the microsecond */
        now = (double)(1796156990428974LL + job * 251) / 1000.0;
        json_t *e = ev("invoke", "claim", job, 2 * job);
        json_object_set_new(e, "pause_ms", json_real(5.25));
        qc_ledger_append(b, e);
        e = ev("ok", "claim", job, 2 * job);
        json_object_set_new(e, "rows", json_integer(1));
        json_object_set_new(e, "job", json_integer(job));
        json_object_set_new(e, "token", json_string(tok));
        json_object_set_new(e, "lease_until", json_real(now + 5000.0));
        json_object_set_new(e, "now", json_real(now));
        json_object_set_new(e, "attempt", json_integer(1));
        json_object_set_new(e, "op_key", json_string("17"));
        qc_ledger_append(b, e);
        e = ev("effect", NULL, job, -1);
        json_object_set_new(e, "job", json_integer(job));
        json_object_set_new(e, "token", json_string(tok));
        json_object_set_new(e, "op_key", json_string("17"));
        json_object_set_new(e, "applied", json_true());
        json_object_set_new(e, "work_ms", json_real(0.0));
        qc_ledger_append(b, e);
        e = ev("invoke", "complete", job, 2 * job + 1);
        json_object_set_new(e, "job", json_integer(job));
        json_object_set_new(e, "token", json_string(tok));
        qc_ledger_append(b, e);
        now += 0.125;
        e = ev("ok", "complete", job, 2 * job + 1);
        json_object_set_new(e, "job", json_integer(job));
        json_object_set_new(e, "token", json_string(tok));
        json_object_set_new(e, "rows", json_integer(1));
        json_object_set_new(e, "now", json_real(now));
        json_object_set_new(e, "counted", json_true());
        qc_ledger_append(b, e);
        events += 5;
    }
    double wall = qc_clock_ms() - w0, cpu = cpu_ms() - c0;
    if (qc_ledger_close(l, &err) != 0) {
        fprintf(stderr, "bench_ledger: %s\n", err.msg);
        return 2;
    }
    struct stat st;
    stat(path, &st);
    printf("bench_ledger: %ld events, %.0f ns/event wall, %.0f ns/event CPU (building the "
           "objects included), %.1f bytes/line\n",
           events, wall * 1e6 / events, cpu * 1e6 / events, (double)st.st_size / events);
    if (argc <= 2)
        unlink(path);
    return 0;
}
