#!/usr/bin/env bash
# Install the Debian packages qchaos needs (Debian 12 "bookworm").
#
#   scripts/install-deps.sh [--no-chromium]
#
# Every package is checked with dpkg-query first: on a machine that already
# has them all this does nothing and needs no network.  Otherwise it runs
# `apt-get update` once and installs only the missing packages.  No version is
# pinned (an install may pull a PostgreSQL point release; that is intended).
# No service is started: if the machine has no /usr/sbin/policy-rc.d, a
# temporary one that denies service starts is put in place during the install
# and removed afterwards.  sudo is used only when not running as root.
#
#   --no-chromium     leave chromium out (only the tests need it: tests/check_reports
#                     renders report.html headless and fails without it)
set -euo pipefail

# The Node adapters' libraries (docs/adapters.md): pg-boss and
# graphile-worker at the versions adapters/node/package-lock.json pins,
# installed with `npm ci` into adapters/node/node_modules (skipped when
# they are already there at those versions).  Node 20 or newer is needed.
node_adapters() {
    local dir
    dir="$(cd "$(dirname "$0")/.." && pwd)/adapters/node"
    [[ -f "$dir/package-lock.json" ]] || return 0
    # Debian 12's own nodejs is 18 and comes without npm: the adapters are
    # left out then (a warning, not an error: `qchaos run` and every test
    # but tests/adapters.sh's library step need no Node)
    if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        echo "install-deps: WARNING: node and npm not found: the adapters (scenarios/adapters/," \
            "tests/adapters.sh) need Node 20 or newer with npm (Debian 12's nodejs is 18," \
            "without npm: e.g. NodeSource's); install them and run this script again" >&2
        return 0
    fi
    local major
    major=$(node -p 'process.versions.node.split(".")[0]')
    if ((major < 20)); then
        echo "install-deps: WARNING: Node $(node --version) is too old for pg-boss 10: the" \
            "adapters (scenarios/adapters/, tests/adapters.sh) need Node 20 or newer with npm;" \
            "install it and run this script again" >&2
        return 0
    fi
    if [[ -f "$dir/node_modules/.package-lock.json" ]] &&
        cmp -s <(node -p "JSON.stringify(Object.fromEntries(Object.entries(require('$dir/package-lock.json').packages).filter(([k]) => k).map(([k, v]) => [k, v.version])))") \
            <(node -p "JSON.stringify(Object.fromEntries(Object.entries(require('$dir/node_modules/.package-lock.json').packages).filter(([k]) => k).map(([k, v]) => [k, v.version])))"); then
        echo "install-deps: adapters/node: pg-boss and graphile-worker already at the locked versions"
        return 0
    fi
    echo "install-deps: adapters/node: npm ci (pg-boss, graphile-worker at the locked versions)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
}

usage() { sed -n '2,15s/^# \{0,1\}//p' "$0"; }

with_chromium=1
for arg in "$@"; do
    case "$arg" in
    --with-chromium) with_chromium=1 ;; # the default; kept for older command lines
    --no-chromium) with_chromium=0 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install-deps: unknown argument: $arg" >&2; usage >&2; exit 2 ;;
    esac
done

packages=(
    build-essential pkg-config clang libclang-rt-14-dev
    libpq-dev postgresql-15 postgresql-contrib pgbouncer
    mariadb-server
    unixodbc unixodbc-dev odbc-mariadb odbc-postgresql tdsodbc
    check libjansson-dev libinih-dev
    gnuplot-nox jq
    nodejs libminion-perl libmojo-pg-perl
)
if ((with_chromium)); then packages+=(chromium); fi

is_installed() {
    [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" == installed ]]
}

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: dpkg-query/apt-get not found: this script supports Debian 12 only" >&2
    exit 1
fi

missing=()
for p in "${packages[@]}"; do
    is_installed "$p" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
    echo "install-deps: all ${#packages[@]} packages already installed, nothing to do"
    node_adapters
    exit $?
fi
echo "install-deps: missing: ${missing[*]}"

SUDO=()
if ((EUID != 0)); then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install-deps: not root and sudo is not available; install as root: apt-get install ${missing[*]}" >&2
        exit 1
    fi
    SUDO=(sudo)
fi

# Keep package maintainer scripts from starting services (postgresql,
# mariadb, pgbouncer).  Respect an existing policy-rc.d (e.g. Docker's).
policy=/usr/sbin/policy-rc.d
added_policy=0
cleanup() {
    if ((added_policy)); then
        "${SUDO[@]}" rm -f "$policy" || true
    fi
}
trap cleanup EXIT
if [[ ! -e "$policy" ]]; then
    printf '#!/bin/sh\n# temporary, from qchaos scripts/install-deps.sh\nexit 101\n' |
        "${SUDO[@]}" tee "$policy" >/dev/null
    "${SUDO[@]}" chmod 755 "$policy"
    added_policy=1
fi

apt=("${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y
    -o DPkg::Lock::Timeout=300 -o Dpkg::Use-Pty=0)

echo "install-deps: apt-get update"
if ! "${apt[@]}" update; then
    echo "install-deps: ERROR: apt-get update failed (no network or broken sources?)" >&2
    exit 1
fi

echo "install-deps: apt-get install ${missing[*]}"
if ! "${apt[@]}" install --no-install-recommends "${missing[@]}"; then
    echo "install-deps: ERROR: apt-get install failed for: ${missing[*]}" >&2
    exit 1
fi

still=()
for p in "${missing[@]}"; do
    is_installed "$p" || still+=("$p")
done
if ((${#still[@]})); then
    echo "install-deps: ERROR: still not installed after apt-get: ${still[*]}" >&2
    exit 1
fi
echo "install-deps: installed ${#missing[@]} package(s): ${missing[*]}"
node_adapters
