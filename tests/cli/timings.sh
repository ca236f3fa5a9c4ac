#!/bin/bash
# timings.sh - `kiln compress --timings` (and KILN_TIMINGS=1): one line per phase on stderr, nothing on
# stdout changes; the on-disk pipeline cache (a temporary KILN_PIPELINE_CACHE_DIR): written by the first
# GPU run, loaded by the second, off with KILN_PIPELINE_CACHE=0; a corrupt cache file is ignored and
# replaced; the device started beside the read with the pipelines warmed up (default) and without
# (KILN_WARMUP=0) gives the CPU's bytes. GPU parts need a Vulkan device (lavapipe counts).
# usage: bash timings.sh KILN_BINARY TESTDATA_DIR BUILD_DIR
set -u
KILN=$1
DATA=$2
BUILD=$3
TMP=$(mktemp -d "$BUILD/timings-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
IN=$DATA/ldr/Sara_Head_Diff_256_rgba.png
export KILN_PIPELINE_CACHE_DIR=$TMP/cache

# check_lines FILE: every phase line is there, each "  NAME   NUMBER" with a decimal number
check_lines() {
    for p in "read[+]decode" "device start" "pipelines" "device wait" "encode" "later reads" "write" "cache save" \
        "teardown" "total"; do
        grep -Eq "^  $p +[0-9]+\.[0-9]{2}( |$)" "$1" || fail "timings line '$p' missing or malformed in: $(cat "$1")"
    done
    grep -q "^kiln timings (ms" "$1" || fail "no timings header in: $(cat "$1")"
    grep -q "^pipeline cache: " "$1" || fail "no pipeline cache line in: $(cat "$1")"
}

# CPU: the flag, and the variable
"$KILN" compress "$IN" -f bc1 -q fast --backend cpu -o "$TMP/cpu.ktx2" --quiet --timings 2> "$TMP/e1" > "$TMP/o1" ||
    fail "--timings on the CPU failed"
check_lines "$TMP/e1"
[ -s "$TMP/o1" ] && fail "--timings --quiet wrote to stdout: $(cat "$TMP/o1")"
grep -q "^pipeline cache: off" "$TMP/e1" || fail "CPU run: the pipeline cache should be off: $(cat "$TMP/e1")"
KILN_TIMINGS=1 "$KILN" compress "$IN" -f bc1 -q fast --backend cpu -o "$TMP/cpu2.ktx2" --quiet 2> "$TMP/e2" ||
    fail "KILN_TIMINGS=1 on the CPU failed"
check_lines "$TMP/e2"
"$KILN" compress "$IN" -f bc1 -q fast --backend cpu -o "$TMP/cpu3.ktx2" --quiet 2> "$TMP/e3" || fail "plain CPU run failed"
[ -s "$TMP/e3" ] && fail "timings printed without being asked: $(cat "$TMP/e3")"
# auto (and both) with a job the CPU finishes before a device could start: the CPU, no device started (even
# where lavapipe is allowed), the CPU's bytes; the tests below want the device: KILN_GPU_START_MS=0 (rule off)
for b in auto both; do
    KILN_ALLOW_CPU_VULKAN=1 "$KILN" compress "$IN" -f bc1 -q fast --backend $b -o "$TMP/a_$b.ktx2" --quiet --timings \
        2> "$TMP/a_$b" || fail "--backend $b (small job) failed"
    grep -Eq "^  auto estimate +[0-9]+\.[0-9]{2}  \(.*the CPU was chosen, no device started\)" "$TMP/a_$b" ||
        fail "--backend $b: a small job did not stay on the CPU: $(cat "$TMP/a_$b")"
    grep -Eq "^  device start +0\.00 " "$TMP/a_$b" || fail "--backend $b: a device was started: $(cat "$TMP/a_$b")"
    cmp -s "$TMP/a_$b.ktx2" "$TMP/cpu.ktx2" || fail "--backend $b (small job): the bytes differ from the CPU's"
done

export KILN_ALLOW_CPU_VULKAN=1 KILN_GPU_START_MS=0
"$KILN" compress "$IN" -f bc1 -q fast --backend vulkan -o "$TMP/g1.ktx2" --quiet --timings 2> "$TMP/g1"
rc=$?
if [ "$rc" != 5 ]; then # 5: no usable Vulkan device
    [ "$rc" = 0 ] || fail "GPU run 1 failed: exit $rc"
    check_lines "$TMP/g1"
    grep -Eq "^  pipelines +[0-9.]+  \([1-9][0-9]* created; warm-up encode on the device thread\)" "$TMP/g1" ||
        fail "GPU run 1: no pipelines created by the warm-up: $(cat "$TMP/g1")"
    grep -Eq "^pipeline cache: new, 0 pipeline files read \(0 bytes\), [1-9][0-9]* written, $TMP/cache/pipelines" "$TMP/g1" ||
        fail "GPU run 1: cache not new: $(cat "$TMP/g1")"
    f=$(ls "$TMP"/cache/pipelines/*.bin 2> /dev/null | head -1) # one file per pipeline
    [ -n "$f" ] || fail "GPU run 1 wrote no pipeline cache file"
    [ -n "$f" ] && [ "$(head -c 7 "$f")" = "KILNPC2" ] || fail "the cache file has no kiln header"
    ls "$TMP"/cache/pipelines | grep -q tmp && fail "a temporary file was left in the cache directory: $(ls "$TMP/cache/pipelines")"
    "$KILN" compress "$IN" -f bc1 -q fast --backend vulkan -o "$TMP/g2.ktx2" --quiet --timings 2> "$TMP/g2" ||
        fail "GPU run 2 failed"
    grep -Eq "^pipeline cache: loaded, [1-9][0-9]* pipeline files? read \([0-9]+ bytes\), 0 written" "$TMP/g2" ||
        fail "GPU run 2: cache not loaded: $(cat "$TMP/g2")"
    # corrupt file: ignored (same bytes out), then replaced by a valid one
    if [ -n "$f" ]; then
        head -c 100 /dev/urandom > "$f"
        "$KILN" compress "$IN" -f bc1 -q fast --backend vulkan -o "$TMP/g3.ktx2" --quiet --timings 2> "$TMP/g3" ||
            fail "GPU run with a corrupt cache failed"
        grep -q "^pipeline cache: rejected" "$TMP/g3" || fail "corrupt cache not rejected: $(cat "$TMP/g3")"
        cmp -s "$TMP/g3.ktx2" "$TMP/cpu.ktx2" || fail "corrupt cache: the bytes differ from the CPU's"
        [ "$(head -c 7 "$f")" = "KILNPC2" ] || fail "the corrupt cache file was not replaced"
    fi
    # off: nothing read or written
    rm -rf "$TMP/cache"
    KILN_PIPELINE_CACHE=0 "$KILN" compress "$IN" -f bc1 -q fast --backend vulkan -o "$TMP/g4.ktx2" --quiet --timings \
        2> "$TMP/g4" || fail "GPU run with the cache off failed"
    grep -q "^pipeline cache: off" "$TMP/g4" || fail "KILN_PIPELINE_CACHE=0: cache not off: $(cat "$TMP/g4")"
    [ -e "$TMP/cache" ] && fail "KILN_PIPELINE_CACHE=0 still wrote $(ls -R "$TMP/cache")"
    # device started beside the read, with and without the warm-up: the CPU's bytes
    KILN_WARMUP=0 "$KILN" compress "$IN" -f bc1 -q fast --backend vulkan -o "$TMP/g5.ktx2" --quiet --timings 2> "$TMP/g5" ||
        fail "GPU run without warm-up failed"
    grep -q "warm-up encode not run" "$TMP/g5" || fail "KILN_WARMUP=0 still warmed up: $(cat "$TMP/g5")"
    # --backend both: images the CPU encodes while the device starts, the rest split: the CPU's bytes
    "$KILN" compress "$IN" -f bc1 -q fast --backend both -o "$TMP/g6.ktx2" --quiet --timings 2> "$TMP/g6" ||
        fail "--backend both (one image) failed"
    grep -Eq "^  early cpu +[0-9]+\.[0-9]{2}  \([01] image" "$TMP/g6" || fail "no early cpu line: $(cat "$TMP/g6")"
    mkdir -p "$TMP/b" "$TMP/bc"
    for i in 1 2 3 4 5 6; do cp "$IN" "$TMP/b/i$i.png"; done
    cp "$DATA/ldr/stk_generic_rock_a_512.png" "$TMP/b/i7.png"
    "$KILN" compress "$TMP"/b/*.png -f bc1,bc4 -q fast --backend cpu -o "$TMP/bc/{name}_{fmt}.ktx2" --quiet || fail "CPU batch failed"
    for e in 1; do # (KILN_EARLY_CPU=0 is the batch split of compress_batch.sh)
        mkdir -p "$TMP/bb$e"
        KILN_EARLY_CPU=$e "$KILN" compress "$TMP"/b/*.png -f bc1,bc4 -q fast --backend both -o "$TMP/bb$e/{name}_{fmt}.ktx2" \
            --quiet || fail "--backend both batch (KILN_EARLY_CPU=$e) failed"
        for f in "$TMP"/bc/*; do
            cmp -s "$f" "$TMP/bb$e/${f##*/}" || fail "--backend both (KILN_EARLY_CPU=$e): ${f##*/} differs from the CPU's"
        done
    done
    for g in g1 g2 g4 g5 g6; do
        cmp -s "$TMP/$g.ktx2" "$TMP/cpu.ktx2" || fail "$g.ktx2 differs from the CPU's bytes"
    done
else
    echo "no Vulkan device: GPU parts skipped"
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "timings.sh: all passed"
