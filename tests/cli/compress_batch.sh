#!/bin/bash
# compress_batch.sh - `kiln compress` with several inputs and formats (kiln_encode_batch): -o templates
# ({name}, {fmt}) and directories, every output byte-identical to a one-input one-format CPU run, on
# the GPU (lavapipe counts: KILN_ALLOW_CPU_VULKAN=1) with the pipelined encoder forced into many
# batches, and with --backend both; bad command lines exit 2 and write nothing.
# usage: bash compress_batch.sh KILN_BINARY TESTDATA_DIR BUILD_DIR
set -u
KILN=$1
DATA=$2
BUILD=$3
TMP=$(mktemp -d "$BUILD/compress-batch-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

ROCK=$DATA/ldr/stk_generic_rock_a_512.png
SARA=$DATA/ldr/Sara_Head_Diff_256_rgba.png
TINY=$DATA/ldr/gimp_qube1_tiny_31x57.png
INPUTS=("$ROCK" "$SARA" "$TINY")
name() { local b; b=$(basename "$1"); echo "${b%.*}"; }

# reference: one input, one format, on the CPU
mkdir -p "$TMP/ref"
for f in bc1 bc4 bc3 etc2-rgb; do
    for i in "${INPUTS[@]}"; do
        "$KILN" compress "$i" -f $f -q normal --backend cpu -o "$TMP/ref/$(name "$i")_$f.ktx2" --quiet ||
            fail "reference $f $(name "$i")"
    done
done
# same_as_ref DIR FORMATS...: DIR/NAME_FMT.ktx2 equals the reference for every input and format
same_as_ref() {
    local dir=$1
    shift
    for f in "$@"; do
        for i in "${INPUTS[@]}"; do
            local n
            n=$(name "$i")
            cmp -s "$dir/${n}_$f.ktx2" "$TMP/ref/${n}_$f.ktx2" || fail "$dir: ${n}_$f.ktx2 differs from the one-by-one CPU run"
        done
    done
}

# several inputs and formats on the CPU, template
mkdir -p "$TMP/cpu"
"$KILN" compress "${INPUTS[@]}" -f bc1,bc4,etc2-rgb -q normal --backend cpu -o "$TMP/cpu/{name}_{fmt}.ktx2" > "$TMP/stdout" ||
    fail "batch on the CPU failed"
same_as_ref "$TMP/cpu" bc1 bc4 etc2-rgb
grep -q "9 files written" "$TMP/stdout" || fail "no total line: $(cat "$TMP/stdout")"

# a directory: DIR/{name}_{fmt}.ktx2 for several formats, DIR/{name}.ktx2 for one
mkdir -p "$TMP/dir1"
"$KILN" compress "${INPUTS[@]}" -f bc1,bc3 -q normal --backend cpu -o "$TMP/dir1" --quiet || fail "directory output failed"
same_as_ref "$TMP/dir1" bc1 bc3
"$KILN" compress "$ROCK" "$TINY" -f bc4 -q normal --backend cpu -o "$TMP/dir2/" --quiet 2> /dev/null &&
    fail "a directory that does not exist was accepted"
mkdir -p "$TMP/dir2"
"$KILN" compress "$ROCK" "$TINY" -f bc4 -q normal --backend cpu -o "$TMP/dir2/" --quiet || fail "dir/ output failed"
cmp -s "$TMP/dir2/$(name "$ROCK").ktx2" "$TMP/ref/$(name "$ROCK")_bc4.ktx2" || fail "dir2: rock differs"

# --mips with several inputs and formats: each output equals its one-by-one run
mkdir -p "$TMP/mips"
"$KILN" compress "$ROCK" "$TINY" -f bc1,bc4 -q fast --mips --backend cpu -o "$TMP/mips/{name}_{fmt}.ktx2" --quiet ||
    fail "--mips batch failed"
for i in "$ROCK" "$TINY"; do
    for f in bc1 bc4; do
        "$KILN" compress "$i" -f $f -q fast --mips --backend cpu -o "$TMP/mips/one.ktx2" --quiet
        cmp -s "$TMP/mips/one.ktx2" "$TMP/mips/$(name "$i")_$f.ktx2" || fail "--mips $(name "$i") $f differs"
    done
done

# more inputs than one chunk (64 images): the next chunk loads while this one encodes
mkdir -p "$TMP/many" "$TMP/many_out"
for k in $(seq 1 70); do ln -s "$TINY" "$TMP/many/t$k.png"; done
"$KILN" compress "$TMP"/many/t*.png -f bc1 -q normal --backend cpu -o "$TMP/many_out/" --quiet || fail "70 inputs failed"
[ "$(ls "$TMP/many_out" | wc -l)" = 70 ] || fail "70 inputs: $(ls "$TMP/many_out" | wc -l) outputs"
for k in 1 33 64 65 70; do
    cmp -s "$TMP/many_out/t$k.ktx2" "$TMP/ref/$(name "$TINY")_bc1.ktx2" || fail "70 inputs: t$k differs"
done
rm -f "$TMP/many/t70.png"
ln -s "$TMP/nonexistent.png" "$TMP/many/t70.png"
"$KILN" compress "$TMP"/many/t*.png -f bc1 -q fast --backend cpu -o "$TMP/many_out/" --quiet 2> "$TMP/stderr"
rc=$?
[ "$rc" = 3 ] || fail "a missing input in the second chunk: exit $rc, expected 3"
grep -q "t70.png" "$TMP/stderr" || fail "a missing input in the second chunk: unclear message: $(cat "$TMP/stderr")"

# the GPU: pipelined (many small batches), and --backend both (KILN_GPU_START_MS=0: even for jobs this
# small, which auto's estimate would keep on the CPU)
export KILN_ALLOW_CPU_VULKAN=1 KILN_GPU_START_MS=0
if "$KILN" compress "$TINY" -f bc1 -q fast --backend vulkan -o "$TMP/probe.ktx2" --quiet 2> /dev/null; then
    mkdir -p "$TMP/gpu" "$TMP/both" "$TMP/both2"
    KILN_GPU_BATCH_BYTES=20000 "$KILN" compress "${INPUTS[@]}" -f bc1,bc4,bc3 -q normal --backend vulkan \
        -o "$TMP/gpu/{name}_{fmt}.ktx2" > "$TMP/stdout" || fail "batch on the GPU failed"
    grep -q "GPU" "$TMP/stdout" || fail "the GPU batch did not say GPU: $(cat "$TMP/stdout")"
    same_as_ref "$TMP/gpu" bc1 bc4 bc3
    # the first image begun in 3 strips of 16 rows on the CPU, its other rows and the rest on the device (the CPU
    # starts early only when every input is loaded: here in the first chunk)
    KILN_EARLY_STRIPS=16:3 "$KILN" compress "${INPUTS[@]}" -f bc1,etc2-rgb,bc4 -q normal \
        --backend both -j 2 -o "$TMP/both/{name}_{fmt}.ktx2" --quiet --timings 2> "$TMP/stderr" || fail "--backend both failed"
    grep -q "3 strips, the last image's other 464 rows on the device" "$TMP/stderr" ||
        fail "--backend both: no strips: $(grep early "$TMP/stderr")"
    same_as_ref "$TMP/both" bc1 etc2-rgb bc4
    "$KILN" compress "${INPUTS[@]}" "$ROCK" -f bc3 -q normal --backend=both -o "$TMP/both2/{fmt}/../{name}_{fmt}.ktx2" \
        --quiet 2> "$TMP/stderr" && fail "duplicate outputs accepted"
    "$KILN" compress "${INPUTS[@]}" -f bc3 -q normal --backend=both -o "$TMP/both2/{name}_{fmt}.ktx2" --quiet ||
        fail "--backend=both failed"
    same_as_ref "$TMP/both2" bc3
else
    echo "note: no Vulkan device: GPU and --backend both runs skipped"
fi

# bad command lines: exit 2, a clear message, nothing written
expect_usage() {
    local pattern=$1
    shift
    rm -rf "$TMP/out"
    mkdir -p "$TMP/out"
    "$KILN" compress "$@" > /dev/null 2> "$TMP/stderr"
    local rc=$?
    [ "$rc" = 2 ] || fail "compress $*: exit $rc, expected 2"
    grep -q -- "$pattern" "$TMP/stderr" || fail "compress $*: stderr lacks '$pattern': $(cat "$TMP/stderr")"
    [ -z "$(ls -A "$TMP/out")" ] || fail "compress $*: left files behind"
}
expect_usage "needs {name}" "$ROCK" "$TINY" -f bc1 -o "$TMP/out/x.ktx2"
expect_usage "needs {fmt}" "$ROCK" -f bc1,bc4 -o "$TMP/out/{name}.ktx2"
expect_usage "both be written" "$ROCK" "$ROCK" -f bc1 -o "$TMP/out/{name}.ktx2"
expect_usage "given twice" "$ROCK" -f bc1,BC1_UNORM -o "$TMP/out/{fmt}.ktx2"
expect_usage "DDS cannot hold" "$ROCK" -f bc1,etc2-rgb -o "$TMP/out/{fmt}.dds"
expect_usage "bad format list" "$ROCK" -f bc1,,bc4 -o "$TMP/out/{fmt}.ktx2"
expect_usage "unknown format" "$ROCK" -f bc1,nope -o "$TMP/out/{fmt}.ktx2"

if [ "$fails" -ne 0 ]; then
    echo "compress_batch.sh: $fails failure(s)"
    exit 1
fi
echo "compress_batch.sh: all passed"
