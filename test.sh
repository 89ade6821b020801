#!/usr/bin/env bash
# latscope's tests, on a fresh machine: installs what is missing, then runs
#
#   vet     go vet, every package of every module of the workspace (go.work), and gofmt
#   fuzz    every fuzz target for FUZZTIME on FUZZ_PARALLEL workers (1s on 1 unless set;
#           a campaign: FUZZTIME=60s FUZZ_PARALLEL=2 ./test.sh fuzz)
#   fast    the fast tier: go test of the same packages — recorded traces and recordings,
#           no server, no network, no clock; in parallel
#   timing  the timing tier: LATSCOPE_TIER=timing, one package at a time —
#           live recording, the labs, overhead, real PostgreSQL, MariaDB,
#           Redis, Prometheus, a JVM and Chromium (see internal/tier)
#
# Usage: ./test.sh [all|fast|timing|fuzz|vet]...   (default: all: gofmt,
# then the fast tier and the busy-host timing tests side by side, then the
# serial timing tier with go vet and the fuzz targets beside it at nice
# 19). Installing needs root and Debian's packages; without root it says
# what is missing, and the tests that need it skip, saying so.
set -euo pipefail
cd "$(dirname "$0")"

export PATH="/usr/local/go/bin:$PATH"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(all)
want() {
  local s
  for s in "${steps[@]}"; do
    [ "$s" = all ] || [ "$s" = "$1" ] && return 0
  done
  return 1
}
for s in "${steps[@]}"; do
  case "$s" in all|vet|fuzz|fast|timing) ;; *) echo "test.sh: unknown step $s (all, vet, fuzz, fast, timing)" >&2; exit 2 ;; esac
done

# install puts in place what the timing tier's tests start: they find and
# start it themselves, and skip loudly where the machine lacks it.
install() {
  local need_apt=()
  # PostgreSQL server binaries (the lab and the DB tests start a private cluster).
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
    need_apt+=(postgresql)
  fi
  # Headless Chromium: the HTML reports are checked in a real browser.
  command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
  # Prometheus: fleet triage is tested against a real server the tests start.
  command -v prometheus >/dev/null 2>&1 || need_apt+=(prometheus)
  # node_exporter: dbwait reads a database host's CPU pressure from it, through Prometheus.
  command -v prometheus-node-exporter >/dev/null 2>&1 || need_apt+=(prometheus-node-exporter)
  # MariaDB: the DB-wait tests read a real server's slow query log.
  if ! command -v mariadbd >/dev/null 2>&1 && ! [ -x /usr/sbin/mariadbd ]; then
    need_apt+=(mariadb-server)
  fi
  # Redis: the agent's stack test runs go-redis against a real server.
  command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
  # A JDK (javac, java, jcmd, jfr): the JVM tests record real programs.
  command -v javac >/dev/null 2>&1 || need_apt+=(openjdk-17-jdk-headless)
  # pgjdbc: the JVM lab's service reaches PostgreSQL through it.
  [ -f /usr/share/java/postgresql.jar ] || need_apt+=(libpostgresql-jdbc-java)
  # A javax servlet API jar: the Java library's servlet filter is compiled against it.
  ls /usr/share/java/servlet-api*.jar >/dev/null 2>&1 || need_apt+=(libservlet-api-java)
  if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "test.sh: not root, so not installing ${need_apt[*]}: the timing tier's tests that need them skip, saying so"
    else
      echo "test.sh: installing ${need_apt[*]}"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
    fi
  fi
  # The PostgreSQL server refuses to run as root: tests run it as this user.
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
    useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
  fi
}

# fuzz runs every fuzz target for FUZZTIME on FUZZ_PARALLEL workers (1s
# on 1 unless set: a smoke run, beside the fast tier or, in a whole run, at
# nice 19 beside the serial timing tier; findings are kept under
# testdata/fuzz/), each printing how many inputs it executed.
# -fuzzminimizetime=1x: the engine does not stop fuzzing to minimise each new
# input it finds (by default it spends up to 60 s on each); a failing input is
# saved as found. A failure that saved a failing input is a parser bug and
# fails at once; a failure without one (the fuzzing engine itself, e.g. a
# worker that died) is printed and the target is run once more. A target that
# executed fewer than FUZZ_MIN_EXECS inputs (100 unless set) is named in a
# warning.
fuzz() {
  local fuzztime=${FUZZTIME:-1s} fuzzmin=${FUZZ_MIN_EXECS:-100} fuzzpar=${FUZZ_PARALLEL:-1}
  local fuzzlog=$scratch/fuzz.log fuzzsum=$scratch/fuzz.sum target fn n
  # The engine's own corpus goes to a fresh directory: the one under GOCACHE
  # grows with every run on a machine, and re-running all of it for baseline
  # coverage took whole 3 s runs.
  local fuzzcache=$scratch/fuzzcache bin
  # Each package's test binary is built once, instrumented for fuzzing
  # (go test -c -fuzz), and run once per target in the package's directory,
  # as go test runs it: a failing input lands in its testdata/fuzz/. A go
  # test -fuzz per target relinked and restarted the binary every time
  # (about 3 s a target beside the fast tier).
  build() {
    bin=$scratch/fuzzbin/$(tr '/.' '__' <<<"$1").test
    mkdir -p "$scratch/fuzzbin"
    go test -c -fuzz=. -o "$bin" "$1" >"$fuzzlog" 2>&1 || { cat "$fuzzlog"; echo "test.sh: building $1's fuzz targets failed"; return 1; }
  }
  one() {
    (cd "$1" && "$bin" -test.run='^$' -test.fuzz="^$2\$" -test.fuzztime="$fuzztime" -test.fuzzminimizetime=1x \
      -test.parallel="$fuzzpar" -test.timeout=10m -test.fuzzcachedir="$fuzzcache/$1/$2") >"$fuzzlog" 2>&1
  }
  # execs prints the executions of the last run: go test's last
  # "fuzz: elapsed: 3s, execs: 123456 (41152/sec), new interesting: …" line.
  execs() { sed -n 's/^fuzz: elapsed: [^,]*, execs: \([0-9][0-9]*\) .*/\1/p' "$fuzzlog" | tail -n 1; }
  for target in $(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do
    build "$target" || return 1
    for fn in $(grep -h '^func Fuzz' "$target"/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do
      if ! one "$target" "$fn"; then
        tail -40 "$fuzzlog"
        if [ -n "$(git status --porcelain --untracked-files=all -- "$target/testdata/fuzz/$fn" 2>/dev/null)" ]; then
          echo "test.sh: $fn in $target found a failing input (above; saved under $target/testdata/fuzz/$fn)"
          return 1
        fi
        echo "test.sh: $fn in $target failed without saving a failing input; running it once more"
        one "$target" "$fn" || { tail -40 "$fuzzlog"; echo "test.sh: $fn in $target failed again"; return 1; }
      fi
      n=$(execs)
      n=${n:-0}
      echo "test.sh: fuzz $target $fn: $n executions in $fuzztime"
      printf '%12s  %s %s\n' "$n" "$target" "$fn" >>"$fuzzsum"
    done
  done
  echo "test.sh: fuzz executions per target (fewest first):"
  sort -n "$fuzzsum"
  awk -v min="$fuzzmin" '$1 < min { printf "test.sh: warning: %s %s executed only %d inputs in '"$fuzztime"' (under %d): a slow target or a large seed?'"${fuzz_where:-}"'\n", $2, $3, $1, min }' "$fuzzsum"
}

# A test module kept out of the workspace (a go.mod of its own that go.work
# does not use, e.g. agent/internal/otelcol: the OpenTelemetry collector's
# modules would raise the versions the workspace selects for the product)
# is run and vetted with GOWORK=off in its own directory.
# outside says whether the package directory DIR is such a module's;
# outside_modules lists such modules' directories.
outside() { [ -f "$1/go.mod" ] && ! grep -Eq "^[[:space:]]*\./${1#./}[[:space:]]*\$" go.work; }
outside_modules() {
  local d
  for d in $(git ls-files '*go.mod' 2>/dev/null | xargs -r -n1 dirname); do
    [ "$d" = . ] || ! outside "./$d" || echo "./$d"
  done
}
# go_test_pkgs runs go test ARGS… -- PKG… for the workspace's packages at
# once and for each outside module's in its directory.
go_test_pkgs() {
  local args=() p r=0 inside=() outside=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  for p in "$@"; do
    if outside "$p"; then outside+=("$p"); else inside+=("$p"); fi
  done
  [ ${#inside[@]} -eq 0 ] || go test "${args[@]}" "${inside[@]}" || r=$?
  for p in "${outside[@]}"; do (cd "$p" && GOWORK=off go test "${args[@]}" .) || r=$?; done
  return $r
}

# busy_start starts, in the background, the timing tests that call
# tier.Busy: they were judged with a CPU burner per core and measure no
# time (real servers, a browser, a JDK), so they run beside the fast tier
# (and go vet, unless it runs beside the serial timing tier), in two
# streams that take their packages from one queue, one
# package at a time each (each stream claims the next package by renaming
# its entry, so no package runs twice). busy_wait waits for them and
# prints their output.
busy_pids=()
busy_start() {
  local list pattern q=$scratch/busyq i=0 p w
  list=$(go run ./internal/tier/timingtests -busy)
  pattern=$(head -n 1 <<<"$list")
  mapfile -t busy_pkgs < <(tail -n +2 <<<"$list")
  [ ${#busy_pkgs[@]} -gt 0 ] || return 0
  mkdir -p "$q/todo" "$q/taken"
  for p in "${busy_pkgs[@]}"; do printf '%s\n' "$p" >"$q/todo/$(printf %03d $i)"; i=$((i + 1)); done
  echo "test.sh: timing tier, busy-host tests, in the background in two streams: $(tr '|' '\n' <<<"$pattern" | wc -l) tests in ${#busy_pkgs[@]} packages"
  for w in 1 2; do
    { r=0
      for i in $(ls "$q/todo"); do
        mv "$q/todo/$i" "$q/taken/$i" 2>/dev/null || continue
        p=$(cat "$q/taken/$i")
        LATSCOPE_TIER=timing go_test_pkgs -count=1 -p 1 -run "$pattern" -- "$p" || r=$?
      done
      echo "test.sh: busy-host timing tests, stream $w, done at $SECONDS s"; exit $r; } >"$scratch/busy-$w.log" 2>&1 &
    busy_pids+=($!)
  done
}
busy_wait() {
  [ ${#busy_pids[@]} -gt 0 ] || return 0
  local rc=0 pid
  for pid in "${busy_pids[@]}"; do wait "$pid" || rc=$?; done
  busy_pids=()
  echo "test.sh: timing tier, busy-host tests:"
  cat "$scratch"/busy-*.log
  return $rc
}

# timing runs the timing tier: the tests that call tier.Timing (and those
# that call tier.Busy, unless busy_start ran them), in the packages that
# hold them, one package at a time (they measure timing on real servers, a
# JVM, Chromium, CPU bursts and CFS throttling, and must not share the two
# CPUs with each other).
#
# TIMING_RUNS=N runs the tier N times and prints, at the end, every test
# that failed and in how many runs (a flakiness report) and the slowest
# tests; TIMING_BURNERS=1 adds a CPU burner per core for the runs (a busy
# host). Each run's go test -json output is kept in TIMING_LOGS (a new
# directory under ${TMPDIR:-/tmp} unless set), so that a failure can be
# read after the script has gone.
timing() {
  local list pattern runs=${TIMING_RUNS:-1} i rc=0 burners=() which= logs
  [ -z "${busy_ran:-}" ] || which=-quiet
  # (called as timing || rc=$?, where set -e does not hold: a failed
  # listing must not run an empty tier)
  list=$(go run ./internal/tier/timingtests $which) || { echo "test.sh: listing the timing tier failed"; return 1; }
  pattern=$(head -n 1 <<<"$list")
  mapfile -t pkgs < <(tail -n +2 <<<"$list")
  echo "test.sh: timing tier: $(tr '|' '\n' <<<"$pattern" | wc -l) tests in ${#pkgs[@]} packages"
  # -count=1: a result the go command cached says nothing of this host now.
  if [ "$runs" = 1 ] && [ -z "${TIMING_BURNERS:-}" ]; then
    LATSCOPE_TIER=timing go_test_pkgs -count=1 -p 1 -run "$pattern" -- "${pkgs[@]}"
    return
  fi
  if [ -n "${TIMING_BURNERS:-}" ]; then
    for _ in $(seq "$(nproc)"); do (while :; do :; done) & burners+=($!); done
    echo "test.sh: ${#burners[@]} CPU burners running"
  fi
  logs=${TIMING_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/latscope-timing-$(date +%Y%m%d-%H%M%S)-XXXX")}
  mkdir -p "$logs"
  echo "test.sh: each run's go test -json output goes to $logs"
  for i in $(seq "$runs"); do
    local start=$SECONDS
    LATSCOPE_TIER=timing go_test_pkgs -count=1 -p 1 -json -run "$pattern" -- "${pkgs[@]}" >"$logs/timing-$i.json" 2>&1 || rc=1
    echo "test.sh: timing run $i of $runs: $((SECONDS - start)) s, $(grep -c '"Action":"fail","Package":"[^"]*","Test":"[^"/]*",' "$logs/timing-$i.json") failed tests"
  done
  [ ${#burners[@]} -eq 0 ] || kill "${burners[@]}"
  echo "test.sh: failures over $runs runs (runs failed, package, test):"
  cat "$logs"/timing-*.json | sed -n 's/.*"Action":"fail","Package":"\([^"]*\)","Test":"\([^"/]*\)",.*/\1 \2/p' | sort | uniq -c | sort -rn
  echo "test.sh: the slowest tests (seconds, longest run of $runs; package, test):"
  cat "$logs"/timing-*.json | sed -n 's/.*"Action":"\(pass\|fail\|skip\)","Package":"\([^"]*\)","Test":"\([^"/]*\)","Elapsed":\([0-9.]*\).*/\4 \2 \3/p' |
    awk '{ k = $2 " " $3; if ($1 > m[k]) m[k] = $1 } END { for (k in m) printf "%8.1f  %s\n", m[k], k }' | sort -rn | head -n 15
  echo "test.sh: the runs' output stays in $logs"
  return $rc
}

scratch=$(mktemp -d)
# took prints the seconds since the script started, after a step.
took() { echo "test.sh: $1 done at $SECONDS s"; }
fast_pid=
fuzz_pid=
# On exit, stop what still runs in the background (nothing, after a whole
# run: the waits clear the pids) and remove the scratch directory; the
# trap must not change the exit status (set -e would make a failed kill
# the script's status).
trap '[ ${#busy_pids[@]} -eq 0 ] || kill -- "${busy_pids[@]}" 2>/dev/null || true; [ -z "${vet_pid:-}" ] || kill -- "$vet_pid" 2>/dev/null || true; [ -z "$fast_pid" ] || kill -- "$fast_pid" 2>/dev/null || true; [ -z "$fuzz_pid" ] || kill -- "$fuzz_pid" 2>/dev/null || true; rm -rf "$scratch"' EXIT
want timing && install
go version
# The packages: the main module's and the agent's light modules' (go.work
# lists them; ./... stops at a nested module), not the corpus recorders
# under testdata/.
mapfile -t all_pkgs < <(go list -e github.com/latscope/latscope/... | grep -v '/testdata/')
echo "test.sh: ${#all_pkgs[@]} packages in the workspace (go.work)"
# vet_all runs go vet on every package of the workspace and on each
# module kept out of it.
vet_all() {
  local r=0 d
  go vet "${all_pkgs[@]}" || r=$?
  for d in $(outside_modules); do (cd "$d" && GOWORK=off go vet ./...) || r=$?; done
  echo "test.sh: go vet done at $SECONDS s"
  return $r
}
# In a whole run (one run of the timing tier, no burners of test.sh's
# own), go vet and the fuzz targets run beside the serial timing tier at
# the lowest CPU and I/O priority (nice 19, idle I/O class): they take
# only the time its tests leave idle, and the tier's tests were shown to
# hold with a CPU burner per core at normal priority (docs/testing.md, the
# flakiness report), a harder host than that. The busy-host timing tests
# then start now, beside the fast tier.
single_run=
[ "${TIMING_RUNS:-1}" = 1 ] && [ -z "${TIMING_BURNERS:-}" ] && single_run=1
beside_timing=
if want timing && [ -n "$single_run" ] && { want vet || want fuzz; }; then beside_timing=1; fi
fuzz_beside_timing=
if want fuzz && [ -n "$beside_timing" ]; then fuzz_beside_timing=1; fi
vet_pid=
if want vet; then
  unformatted=$(git ls-files '*.go' 2>/dev/null | xargs -r gofmt -l)
  if [ -n "$unformatted" ]; then
    echo "test.sh: not gofmt-ed (gofmt -w them):"; echo "$unformatted"; exit 1
  fi
  if [ -z "$beside_timing" ]; then
    # go vet runs in the background beside the rest of the first phase;
    # its verdict is waited for before the timing tier.
    echo "test.sh: go vet, in the background"
    { r=0; vet_all || r=$?; exit $r; } >"$scratch/vet.log" 2>&1 &
    vet_pid=$!
  fi
fi
busy_ran=
if want timing && { want fuzz || want fast; } && [ -n "$single_run" ]; then
  busy_start
  busy_ran=1
fi
rc=0
if want fuzz && want fast && [ -z "$fuzz_beside_timing" ]; then
  # The fast tier gives the same result on a busy host, and a fuzz target
  # runs for FUZZTIME whatever else runs: side by side, they take the time
  # of the longer of the two.
  echo "test.sh: fast tier, in the background beside the fuzz targets"
  { r=0; go test "${all_pkgs[@]}" || r=$?; echo "test.sh: fast tier done at $SECONDS s"; exit $r; } >"$scratch/fast.log" 2>&1 &
  fast_pid=$!
  fuzz || rc=$?
  took fuzz
  wait "$fast_pid" || rc=$?
  fast_pid=
  echo "test.sh: fast tier:"
  cat "$scratch/fast.log"
else
  if want fuzz && [ -z "$fuzz_beside_timing" ]; then fuzz || rc=$?; fi
  if [ $rc = 0 ] && want fast; then
    echo "test.sh: fast tier"
    go test "${all_pkgs[@]}" || rc=$?
    took "fast tier"
  fi
fi
[ -z "$busy_ran" ] || busy_wait || rc=$?
if [ -n "$vet_pid" ]; then
  wait "$vet_pid" || rc=$?
  vet_pid=
  echo "test.sh: go vet:"
  cat "$scratch/vet.log"
fi
[ $rc = 0 ] || exit $rc
if [ -n "$beside_timing" ]; then
  echo "test.sh: go vet, then the fuzz targets, in the background beside the timing tier at nice 19 (idle I/O class)"
  { renice -n 19 -p "$BASHPID" >/dev/null || true
    ionice -c 3 -p "$BASHPID" 2>/dev/null || true
    r=0
    if want vet; then vet_all >"$scratch/vet.log" 2>&1 || r=$?; fi
    if want fuzz; then
      fuzz_where=" (it ran at nice 19 beside the timing tier, on the CPU the tier left idle)"
      { fuzz; } >"$scratch/fuzzbg.log" 2>&1 || r=$?
      echo "test.sh: fuzz done at $SECONDS s" >>"$scratch/fuzzbg.log"
    fi
    exit $r; } &
  fuzz_pid=$!
fi
if want timing; then timing || rc=$?; took "timing tier"; fi
if [ -n "$fuzz_pid" ]; then
  wait "$fuzz_pid" || rc=$?
  fuzz_pid=
  if want vet; then echo "test.sh: go vet:"; cat "$scratch/vet.log"; fi
  if want fuzz; then echo "test.sh: fuzz targets:"; cat "$scratch/fuzzbg.log"; fi
fi
exit $rc
