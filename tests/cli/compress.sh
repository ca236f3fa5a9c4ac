#!/bin/bash
# compress.sh - `kiln compress`: formats, qualities, containers and their tags, determinism across
# thread counts, bad arguments (clear message, non-zero exit), and no output file left on failure.
# usage: bash compress.sh KILN_BINARY TESTDATA_DIR BUILD_DIR
set -u
KILN=$1
DATA=$2
BUILD=$3
TMP=$(mktemp -d "$BUILD/compress-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

ROCK=$DATA/ldr/stk_generic_rock_a_512.png
SARA=$DATA/ldr/Sara_Head_Diff_256_rgba.png
TINY=$DATA/ldr/gimp_qube1_tiny_31x57.png
GREY=$DATA/grey/stk_displace_512_grey.png
NORMAL=$DATA/normal/stk_generic_rock_a_Normal_512_rgba.png

# expect_fail CODE PATTERN ARGS...: the command fails with exit status CODE and a message matching
# PATTERN on stderr, and leaves no file behind in $TMP/out.
expect_fail() {
    local code=$1 pattern=$2
    shift 2
    rm -rf "$TMP/out"
    mkdir -p "$TMP/out"
    "$KILN" compress "$@" > "$TMP/stdout" 2> "$TMP/stderr"
    local rc=$?
    [ "$rc" = "$code" ] || fail "compress $*: exit $rc, expected $code ($(cat "$TMP/stderr"))"
    grep -q -- "$pattern" "$TMP/stderr" || fail "compress $*: stderr lacks '$pattern': $(cat "$TMP/stderr")"
    [ -z "$(ls -A "$TMP/out")" ] || fail "compress $*: left files behind: $(ls -A "$TMP/out")"
}

"$KILN" compress --help > "$TMP/help" || fail "--help exit status"
for opt in --format --quality --srgb --linear --perceptual --dither --alpha-threshold --alpha-cutout --zstd --dx10 --dx9 --threads --backend --progress --quiet; do
    grep -q -- "$opt" "$TMP/help" || fail "--help does not mention $opt"
done

# every format and quality writes a file that validates (a small image keeps max quick)
for f in bc1 bc1a bc2 bc3 bc4 bc5 bc4-snorm bc5-snorm bc1-srgb r8 rgba8; do
    for q in fast normal high max; do
        out=$TMP/$f-$q.ktx2
        "$KILN" compress "$TINY" -f "$f" -q "$q" --quiet -o "$out" || fail "compress -f $f -q $q: exit $?"
        "$KILN" validate "$out" > /dev/null || fail "$out does not validate"
    done
done
"$KILN" compress "$TINY" -f bc1 -q fast --quiet -o "$TMP/tiny.dds" || fail "31x57 to DDS: exit $?"
"$KILN" decode "$TMP/tiny.dds" -o "$TMP/tiny.png" > /dev/null || fail "decode tiny.dds"
"$KILN" compare "$TINY" "$TMP/tiny.png" > "$TMP/cmp" || fail "compare tiny"
grep -q "31x57" "$TMP/cmp" || fail "31x57 image decodes to another size: $(head -2 "$TMP/cmp")"

# quality is what the tests/unit floors say on the command line too (PSNR RGB of bc1 high >= 34.8 dB)
"$KILN" compress "$ROCK" -f bc1 --quiet -o "$TMP/rock.ktx2" || fail "default quality: exit $?"
psnr=$("$KILN" compare "$ROCK" "$TMP/rock.ktx2" | awk '/^PSNR RGB/ {print $3}')
awk -v p="$psnr" 'BEGIN { exit !(p >= 34.8) }' || fail "bc1 high PSNR $psnr < 34.8"

# --mips: complete chains in KTX2 and DDS for every family; each level is the CPU mip reference's
# level (kiln mip, same filter and colour space) encoded: PSNR against it stays high on every level
"$KILN" mip "$SARA" --srgb -f rgba8 --quiet -o "$TMP/ref-srgb.ktx2" || fail "kiln mip --srgb"
"$KILN" mip "$SARA" --linear -f rgba8 --quiet -o "$TMP/ref-lin.ktx2" || fail "kiln mip --linear"
for spec in "bc1 --srgb:ktx2:srgb:30" "bc3:dds:lin:30" "bc1-srgb:dds:srgb:28" "etc2-rgb:ktx2:lin:30" "etc1 --srgb:ktx2:srgb:26" \
            "bc4:dds:lin:30" "bc5:ktx2:lin:30" "eac-rg11:ktx2:lin:30" "etc2-rgba --srgb:ktx2:srgb:28" "rgba8:dds:lin:99"; do
    IFS=: read -r fmt ext ref floor <<< "$spec"
    out=$TMP/mips-${fmt// /_}.$ext
    "$KILN" compress "$SARA" -f $fmt -q fast --mips --quiet -o "$out" || { fail "compress -f $fmt --mips ($ext): exit $?"; continue; }
    "$KILN" validate "$out" > /dev/null || fail "$out does not validate"
    "$KILN" info --json "$out" | grep -Eq '"levelCount": *9|"levels": *9|"mipMapCount": *9' || fail "$out: not 9 levels: $("$KILN" info "$out" | grep -i level | head -3)"
    ch=3; case $fmt in bc4*) ch=1 ;; bc5*|eac-rg11*) ch=2 ;; esac
    for l in 0 3 8; do
        "$KILN" decode "$out" --level $l --quiet -o "$TMP/lvl.png" || { fail "$out: decode level $l"; continue; }
        "$KILN" decode "$TMP/ref-$ref.ktx2" --level $l --quiet -o "$TMP/reflvl.png" || fail "decode reference level $l"
        p=$("$KILN" compare "$TMP/reflvl.png" "$TMP/lvl.png" --channels $ch | awk '/^PSNR RGB|^PSNR R /{print $3; exit}')
        awk -v p="$p" -v f="$floor" 'BEGIN { exit !(p == "inf" || p >= f) }' || fail "$fmt --mips level $l: PSNR $p < $floor against the mip reference"
    done
done
"$KILN" compress "$TINY" -f bc1 -q fast --mips 3 --quiet -o "$TMP/tiny3.ktx2" || fail "--mips 3"
"$KILN" info "$TMP/tiny3.ktx2" | grep -q "levelCount: 3" || fail "--mips 3 did not write 3 levels"
"$KILN" compress "$NORMAL" -f bc5 -q fast --mips --normal --wrap --filter kaiser --quiet -o "$TMP/nm.dds" || fail "--mips --normal --wrap --filter kaiser"
"$KILN" compress "$SARA" -f bc1a -q fast --mips --alpha-coverage 0.5 --quiet -o "$TMP/cov.ktx2" || fail "--mips --alpha-coverage"
for j in 1 3; do "$KILN" compress "$SARA" -f bc1 -q high --mips -j $j --quiet -o "$TMP/mdet$j.ktx2" || fail "--mips -j $j"; done
cmp -s "$TMP/mdet1.ktx2" "$TMP/mdet3.ktx2" || fail "--mips: 1 and 3 threads differ"

# the summary line, and --quiet
"$KILN" compress "$ROCK" -f bc1 -q fast -o "$TMP/sum.ktx2" > "$TMP/stdout" || fail "summary: exit $?"
grep -q "512x512 -> .*bc1, fast" "$TMP/stdout" || fail "no summary line: $(cat "$TMP/stdout")"
"$KILN" compress "$ROCK" -f bc1 -q fast --quiet -o "$TMP/sum.ktx2" > "$TMP/stdout" || fail "--quiet: exit $?"
[ ! -s "$TMP/stdout" ] || fail "--quiet still prints: $(cat "$TMP/stdout")"

# deterministic: the same bytes for 1, 2 and 7 threads
for q in fast high; do
    for j in 1 2 7; do
        "$KILN" compress "$SARA" -f bc3 -q $q -j $j --quiet -o "$TMP/det-$q-$j.ktx2" || fail "-j $j: exit $?"
    done
    cmp -s "$TMP/det-$q-1.ktx2" "$TMP/det-$q-2.ktx2" || fail "$q: 1 and 2 threads differ"
    cmp -s "$TMP/det-$q-1.ktx2" "$TMP/det-$q-7.ktx2" || fail "$q: 1 and 7 threads differ"
done

# sRGB and alpha tagging in both containers (kiln info prints the VkFormat / DXGI names)
"$KILN" compress "$SARA" -f bc1a --srgb -q fast --quiet -o "$TMP/a.ktx2" || fail "bc1a --srgb ktx2"
"$KILN" info "$TMP/a.ktx2" | grep -q "BC1_RGBA_SRGB_BLOCK" || fail "a.ktx2 is not BC1_RGBA_SRGB_BLOCK"
"$KILN" compress "$SARA" -f bc1a --srgb -q fast --quiet -o "$TMP/a.dds" || fail "bc1a --srgb dds"
"$KILN" info "$TMP/a.dds" | grep -q "BC1_UNORM_SRGB" || fail "a.dds is not BC1_UNORM_SRGB"
"$KILN" compress "$SARA" -f bc3 -q fast --quiet -o "$TMP/l.ktx2" || fail "bc3 default"
"$KILN" info "$TMP/l.ktx2" | grep -q "BC3_UNORM_BLOCK" || fail "bc3 default is not linear UNORM"
"$KILN" compress "$SARA" -f bc3-srgb --linear -q fast --quiet -o "$TMP/l2.ktx2" || fail "bc3-srgb --linear"
"$KILN" info "$TMP/l2.ktx2" | grep -q "BC3_UNORM_BLOCK" || fail "--linear does not pick UNORM"
"$KILN" compress "$NORMAL" -f bc5 --snorm -q fast --quiet -o "$TMP/n.dds" || fail "bc5 --snorm"
"$KILN" info "$TMP/n.dds" | grep -Eq "BC5_SNORM|bc5-snorm" || fail "n.dds is not BC5_SNORM"
"$KILN" compress "$SARA" -f DXT5 -q fast --dx10 --quiet -o "$TMP/dx10.dds" || fail "DXT5 --dx10"
"$KILN" info "$TMP/dx10.dds" | grep -q "DX10" || fail "--dx10 wrote no DX10 header"
"$KILN" compress "$SARA" -f BC3_UNORM -q fast --dx9 --quiet -o "$TMP/dx9.dds" || fail "BC3_UNORM --dx9"
"$KILN" info "$TMP/dx9.dds" | grep -q "DXT5" || fail "--dx9 wrote no DXT5 FourCC"
"$KILN" compress "$SARA" -f bc1 -q fast --zstd 19 --quiet -o "$TMP/z.ktx2" || fail "--zstd 19"
"$KILN" validate "$TMP/z.ktx2" > /dev/null || fail "zstd file does not validate"
cmp -s <("$KILN" decode "$TMP/z.ktx2" -o "$TMP/z.png" && cat "$TMP/z.png") \
       <("$KILN" compress "$SARA" -f bc1 -q fast --quiet -o "$TMP/nz.ktx2" && "$KILN" decode "$TMP/nz.ktx2" -o "$TMP/nz.png" && cat "$TMP/nz.png") \
    || fail "zstd and plain files decode differently"
# punch-through threshold: --alpha-threshold 1 keeps every texel with alpha >= 1 opaque
"$KILN" compress "$SARA" -f bc1a --alpha-threshold 1 -q fast --quiet -o "$TMP/t1.ktx2" || fail "--alpha-threshold 1"
"$KILN" compress "$SARA" -f bc1a --alpha-threshold 255 -q fast --quiet -o "$TMP/t255.ktx2" || fail "--alpha-threshold 255"
cmp -s "$TMP/t1.ktx2" "$TMP/t255.ktx2" && fail "--alpha-threshold has no effect"
"$KILN" compress "$SARA" -f bc1 --alpha-cutout --perceptual --dither -q high --quiet -o "$TMP/opts.ktx2" || fail "--alpha-cutout --perceptual --dither"

# bad arguments: clear messages, exit 2 (usage) / 3 (file) / 4 (input), and nothing written
expect_fail 2 "unknown format 'bc99'" "$ROCK" -f bc99 -o "$TMP/out/x.ktx2"
expect_fail 2 "unknown quality 'ultra'" "$ROCK" -f bc1 -q ultra -o "$TMP/out/x.ktx2"
expect_fail 2 "no format" "$ROCK" -o "$TMP/out/x.ktx2"
expect_fail 2 "no output" "$ROCK" -f bc1
expect_fail 2 "no input" -f bc1 -o "$TMP/out/x.ktx2"
expect_fail 2 "must end in .ktx2" "$ROCK" -f bc1 -o "$TMP/out/x.png"
expect_fail 2 "DDS cannot hold etc2-rgba" "$ROCK" -f etc2-rgba -o "$TMP/out/x.dds"
expect_fail 2 "bc4 has no sRGB variant" "$GREY" -f bc4 --srgb -o "$TMP/out/x.ktx2"
expect_fail 2 "bc1 has no signed" "$ROCK" -f bc1 --snorm -o "$TMP/out/x.ktx2"
expect_fail 2 "contradict" "$ROCK" -f bc1 --srgb --linear -o "$TMP/out/x.ktx2"
expect_fail 2 "alpha-threshold" "$ROCK" -f bc1a --alpha-threshold 300 -o "$TMP/out/x.ktx2"
expect_fail 2 "zstd" "$ROCK" -f bc1 --zstd 0 -o "$TMP/out/x.ktx2"
expect_fail 2 "KTX2 output only" "$ROCK" -f bc1 --zstd 3 -o "$TMP/out/x.dds"
expect_fail 2 "DDS output only" "$ROCK" -f bc1 --dx10 -o "$TMP/out/x.ktx2"
expect_fail 2 "unknown option" "$ROCK" -f bc1 --bogus -o "$TMP/out/x.ktx2"
# bc2 has no GPU encoder: an explicit Vulkan backend says so (or that there is no device) and writes nothing
rm -rf "$TMP/out"; mkdir -p "$TMP/out"
"$KILN" compress "$ROCK" -f bc2 --backend vulkan -o "$TMP/out/x.ktx2" > /dev/null 2> "$TMP/stderr" && fail "bc2 --backend vulkan succeeded"
grep -Eq "no GPU encoder|Vulkan" "$TMP/stderr" || fail "bc2 --backend vulkan: unclear message: $(cat "$TMP/stderr")"
[ -z "$(ls -A "$TMP/out")" ] || fail "bc2 --backend vulkan left files behind"
expect_fail 2 "unknown GPU strategy" "$ROCK" -f bc1 --gpu-strategy fastest -o "$TMP/out/x.ktx2"
expect_fail 2 "need --mips" "$ROCK" -f bc1 --filter kaiser -o "$TMP/out/x.ktx2"
expect_fail 2 "unknown filter" "$ROCK" -f bc1 --mips --filter gauss -o "$TMP/out/x.ktx2"
expect_fail 2 "512x512 image has 10" "$ROCK" -f bc1 --mips 11 -o "$TMP/out/x.ktx2"
expect_fail 3 "missing.png" "$TMP/missing.png" -f bc1 -o "$TMP/out/x.ktx2"
printf 'not an image' > "$TMP/junk.png"
expect_fail 4 "junk.png" "$TMP/junk.png" -f bc1 -o "$TMP/out/x.ktx2"
expect_fail 3 "x.ktx2" "$ROCK" -f bc1 -q fast -o "$TMP/out/no/such/dir/x.ktx2"
# kiln cannot encode BC6H/BC7 yet (unless someone added an encoder): a clear message either way
if ! "$KILN" compress "$ROCK" -f bc7 -q fast --quiet -o "$TMP/bc7.ktx2" 2> "$TMP/stderr"; then
    grep -q "cannot encode bc7" "$TMP/stderr" || fail "bc7: unclear message: $(cat "$TMP/stderr")"
    [ ! -e "$TMP/bc7.ktx2" ] || fail "bc7: a file was left behind"
fi
# an existing output survives a failed run untouched
cp "$TMP/rock.ktx2" "$TMP/keep.ktx2"
"$KILN" compress "$TMP/junk.png" -f bc1 -o "$TMP/keep.ktx2" 2> /dev/null && fail "junk input succeeded"
cmp -s "$TMP/rock.ktx2" "$TMP/keep.ktx2" || fail "a failed run changed the existing output"
ls "$TMP" | grep -q "tmp-" && fail "temporary files left behind: $(ls "$TMP" | grep tmp-)"

if [ $fails -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "compress.sh: all passed"
