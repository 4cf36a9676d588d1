# qchaos - build.  `make` builds ./qchaos; `make check` runs unit and
# end-to-end tests (needs a PostgreSQL: scripts/pg-ephemeral.sh is used).
PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
PKGS := libpq jansson inih check odbc
VERSION := 0.1.0

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wvla
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) $(CFLAGS) \
        -DQC_VERSION=\"$(VERSION)\" -DQC_DATADIR=\"$(PREFIX)/share/qchaos\" \
        $(shell pkg-config --cflags libpq jansson inih odbc) -pthread
LIBS := $(shell pkg-config --libs libpq jansson inih odbc) -pthread -lm
CHECK_CFLAGS := $(shell pkg-config --cflags check)
CHECK_LIBS := $(shell pkg-config --libs check)

LIB_SRC := $(filter-out harness/main.c,$(wildcard harness/*.c)) $(wildcard backends/*.c) \
           $(wildcard reports/*.c)
LIB_OBJ := $(LIB_SRC:.c=.o)
HDRS := $(wildcard harness/*.h backends/*.h reports/*.h)
TEST_SRC := $(wildcard tests/check_*.c)
TEST_BIN := $(TEST_SRC:.c=)

.PHONY: all check test unit asan tsan clean install format mutation fuzz fuzz-run bench-witness bench-proxy bench-pool bench

all: qchaos

%.o: %.c $(HDRS)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

libqchaos.a: $(LIB_OBJ)
	ar rcs $@ $^

qchaos: harness/main.o libqchaos.a
	$(CC) $(ALL_CFLAGS) -o $@ harness/main.o libqchaos.a $(LIBS)

tests/check_%: tests/check_%.c libqchaos.a $(HDRS)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -o $@ $< libqchaos.a $(LIBS) $(CHECK_LIBS)

# Unit tests (libcheck).  Tests needing a database read QC_TEST_DSN and are
# started with one by tests/run.sh.
unit: $(TEST_BIN)
	@set -e; for t in $(TEST_BIN); do echo "== $$t"; ./$$t; done

# Everything: unit tests + end-to-end tests on an ephemeral PostgreSQL.
check test: all $(TEST_BIN)
	tests/run.sh

# Detection power: every mutant against its scenario for K seeds, and the
# correct protocol against the same scenarios (false positives).
# ODBC='Driver={MariaDB Unicode};...' adds the MariaDB mutants.
K ?= 3
mutation: all
	./qchaos mutation --seeds $(K) $(if $(ODBC),--odbc '$(ODBC)') --out results/mutation

# The server-side witness's cost: jobs/s without and with it on one
# ephemeral PostgreSQL (tests/bench_witness.sh --help for its options).
bench-witness: all
	tests/bench_witness.sh
# The built-in proxy's cost (issue 17): jobs/s direct vs through the proxy
# with no toxic (tests/bench_proxy.sh --help for its options).
bench-proxy: all
	tests/bench_proxy.sh
# 1,000 workers through PgBouncer (issue 16): the harness's CPU, cores, CPU
# per 1,000 jobs, peak RSS, idle polls and server connections used
# (tests/bench_pool1000.sh says the rest; --workers N for another count).
bench-pool: all
	tests/bench_pool1000.sh
# A benchmark, not a test (issue 16): pgbench against qchaos on one ephemeral
# PostgreSQL, then the audit of generated ledgers; prints numbers and writes
# results/bench/bench.json.  BENCH_FULL=1 for 128 and 256 workers and a
# 10M-event ledger (scripts/bench.sh says the rest).  tests/bench_ledger first:
# the CPU cost of one qc_ledger_append.
bench: all tests/bench_ledger
	./tests/bench_ledger
	scripts/bench.sh
tests/bench_ledger: tests/bench_ledger.c libqchaos.a $(HDRS)
	$(CC) $(ALL_CFLAGS) -o $@ $< libqchaos.a $(LIBS)

# Sanitizer builds go to their own binaries so they never disturb ./qchaos.
SAN_CFLAGS := $(filter-out -O2,$(ALL_CFLAGS)) -O1 -g -fno-omit-frame-pointer
asan: qchaos-asan
tsan: qchaos-tsan
# -fno-sanitize-recover: a UBSan finding aborts the run (UBSan only reports
# and goes on otherwise, so CI would stay green).
qchaos-asan: harness/main.c $(LIB_SRC) $(HDRS)
	clang $(SAN_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=undefined -o $@ \
	    harness/main.c $(LIB_SRC) $(LIBS)
qchaos-tsan: harness/main.c $(LIB_SRC) $(HDRS)
	clang $(SAN_CFLAGS) -fsanitize=thread -o $@ harness/main.c $(LIB_SRC) $(LIBS)

# Fuzzing (libFuzzer, Debian clang): one target per loader, fed by the seed
# corpora in tests/fuzz/corpus/NAME/.  `make fuzz` builds them and the
# regression test under the same sanitizers; `make fuzz-run` fuzzes each for
# FUZZ_SECONDS (new corpus entries go to a scratch folder, crashes to
# build/fuzz/crash-NAME-*).  The library is compiled once, instrumented.
FUZZ_TARGETS := scenario protocol ledger
FUZZ_BIN := $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_OBJ := $(LIB_SRC:%.c=build/fuzz/%.o)
FUZZ_SECONDS ?= 20
FUZZ_MAX_LEN ?= 16384
build/fuzz/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	clang $(SAN_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c -o $@ $<
build/fuzz/libqchaos.a: $(FUZZ_OBJ)
	ar rcs $@ $^
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/libqchaos.a $(HDRS)
	clang $(SAN_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< build/fuzz/libqchaos.a $(LIBS)
build/fuzz/check_fuzz-san: tests/check_fuzz.c tests/fuzz/*.c build/fuzz/libqchaos.a $(HDRS)
	clang $(SAN_CFLAGS) $(FUZZ_SAN) $(CHECK_CFLAGS) -o $@ $< build/fuzz/libqchaos.a $(LIBS) \
	    $(CHECK_LIBS)
fuzz: $(FUZZ_BIN) build/fuzz/check_fuzz-san
fuzz-run: fuzz
	@set -e; for t in $(FUZZ_TARGETS); do \
	    rm -rf build/fuzz/new-$$t; mkdir -p build/fuzz/new-$$t; \
	    echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	    ./build/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAX_LEN) \
	        -timeout=10 -print_final_stats=1 -artifact_prefix=build/fuzz/crash-$$t- \
	        build/fuzz/new-$$t tests/fuzz/corpus/$$t \
	        $$(test -d tests/fuzz/regress/$$t && echo tests/fuzz/regress/$$t) </dev/null \
	        2>build/fuzz/fuzz_$$t.log || { tail -n 40 build/fuzz/fuzz_$$t.log; exit 1; }; \
	    grep -E '^stat::(number_of_executed_units|new_units_added)' build/fuzz/fuzz_$$t.log; \
	done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/qchaos
	install -m 755 qchaos $(DESTDIR)$(PREFIX)/bin/qchaos
	cp -r backends scenarios scripts adapters $(DESTDIR)$(PREFIX)/share/qchaos/
	find $(DESTDIR)$(PREFIX)/share/qchaos -name '*.[cho]' -delete
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 docs/qchaos.1 $(DESTDIR)$(PREFIX)/share/man/man1/qchaos.1

format:
	clang-format -i harness/*.[ch] backends/*.[ch] tests/*.c

clean:
	rm -rf build/fuzz
	rm -f tests/bench_ledger qchaos qchaos-asan qchaos-tsan libqchaos.a harness/*.o backends/*.o reports/*.o $(TEST_BIN)
