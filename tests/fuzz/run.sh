#!/usr/bin/env bash
# run.sh BUILD_DIR SECONDS [JOBS] - runs every libFuzzer target BUILD_DIR/fuzz_* for SECONDS each and fails on
# any crash, leak, timeout or out-of-memory; JOBS targets at a time (default 1; scripts/test.sh passes the
# number of cores: each target is one single-threaded process, so it gets the same SECONDS of a core). Build the
# targets first:
#   cmake -S . -B build-fuzz -DKILN_FUZZ=ON -DCMAKE_C_COMPILER=clang -DKILN_TESTS=OFF -DKILN_VULKAN=OFF
#   cmake --build build-fuzz -j2
# Each target is seeded from a corpus generated here: the target's own kiln-written files (targets that
# support it write them when KILN_FUZZ_WRITE_SEEDS=DIR is set), DDS files made by nvcompress from a small
# testdata PNG (container targets) and the small files of the testdata folder (image/genome targets).
# The corpus grows in BUILD_DIR/fuzz-corpus/<target> across runs; crash inputs land in
# BUILD_DIR/fuzz-artifacts/<target>/. Environment: KILN_TESTDATA (default: ../shared/testdata next to
# the source tree).
set -u
BUILD=${1:?usage: run.sh BUILD_DIR SECONDS [JOBS]}
SECONDS_EACH=${2:?usage: run.sh BUILD_DIR SECONDS [JOBS]}
JOBS=${3:-1}
HERE=$(cd "$(dirname "$0")" && pwd)
TESTDATA=${KILN_TESTDATA:-$HERE/../../../shared/testdata}
BUILD=$(cd "$BUILD" && pwd)

shopt -s nullglob
targets=("$BUILD"/fuzz_*)
[ ${#targets[@]} -gt 0 ] || { echo "run.sh: no fuzz_* targets in $BUILD (configure with -DKILN_FUZZ=ON)"; exit 1; }

# fuzz_one TARGET: seeds, then the run; prints its lines (run.sh prints them in target order), status 1 on failure
fuzz_one() {
  local t=$1 name seeds corpus art rc
  name=$(basename "$t")
  seeds="$BUILD/fuzz-seeds/$name" corpus="$BUILD/fuzz-corpus/$name" art="$BUILD/fuzz-artifacts/$name"
  rm -rf "$seeds"; mkdir -p "$seeds" "$corpus" "$art"
  # 1. the target's own seeds
  KILN_FUZZ_WRITE_SEEDS="$seeds" "$t" -runs=0 "$seeds" >/dev/null 2>&1 || true
  # 2. testdata
  case $name in
    fuzz_dds|fuzz_ktx2|fuzz_ktx1|fuzz_texture*)
      if command -v nvcompress >/dev/null && [ -f "$TESTDATA/ldr/gimp_qube1_tiny_31x57.png" ]; then
        for f in bc1 bc3 bc4 bc5; do
          nvcompress -$f "$TESTDATA/ldr/gimp_qube1_tiny_31x57.png" "$seeds/nv-$f.dds" >/dev/null 2>&1 || true
        done
      fi ;;
    *)
      if [ -d "$TESTDATA" ]; then
        find "$TESTDATA" -type f -size -64k ! -name '*.md' -exec cp {} "$seeds/" \; 2>/dev/null
      fi ;;
  esac
  # 3. inputs that once crashed a target (regression seeds; libFuzzer runs every seed first)
  [ -d "$HERE/regress/$name" ] && cp "$HERE/regress/$name"/* "$seeds/" 2>/dev/null
  echo "== $name: $(ls "$seeds" | wc -l) seeds, $(ls "$corpus" | wc -l) corpus files, ${SECONDS_EACH}s"
  "$t" -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$art/" "$corpus" "$seeds" > "$BUILD/fuzz-$name.log" 2>&1
  rc=$?
  grep -E "^stat::(number_of_executed_units|peak_rss_mb)|^#[0-9]+ +DONE" "$BUILD/fuzz-$name.log" | tail -3
  if [ $rc -ne 0 ]; then
    echo "FAIL: $name exited with $rc; log: $BUILD/fuzz-$name.log; inputs: $art/"
    grep -A25 -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|==ERROR" "$BUILD/fuzz-$name.log" | head -40
    return 1
  fi
  return 0
}

fail=0
run=()
for t in "${targets[@]}"; do
  [ -x "$t" ] && [ -f "$t" ] || continue
  name=$(basename "$t")
  run+=("$name")
  rm -f "$BUILD/fuzz-$name.rc"
  # at most JOBS at a time; each writes its lines to a file, printed below in target order
  while [ "$(jobs -pr | wc -l)" -ge "$JOBS" ]; do wait -n; done
  ( fuzz_one "$t" > "$BUILD/fuzz-$name.out" 2>&1; echo $? > "$BUILD/fuzz-$name.rc" ) &
done
wait
for name in "${run[@]}"; do
  cat "$BUILD/fuzz-$name.out"
  [ "$(cat "$BUILD/fuzz-$name.rc" 2>/dev/null)" = 0 ] || fail=1
done
[ $fail = 0 ] && echo "fuzz: all targets clean" || echo "fuzz: FAILURES"
exit $fail
