#!/usr/bin/env bash
# tests/cli/flame.sh KILN TESTDATA BUILD - `kiln flame`: PNG output, several flames per file, --index,
# determinism across thread counts, straight into textures (-f bc1/etc2-rgb/rgba8 --mips, checked with
# `kiln validate` and `kiln info`, decoded and compared with the PNG), and bad genomes / bad options
# (clear message, right exit code, no crash or hang). The statistical comparison with flam3-render is
# tests/unit/test_flame_vs_flam3.c.
set -u
KILN=$1
DATA=$2
BUILD=$3
T="$BUILD/test-tmp/cli-flame.$$"
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

expect_rc() {
    local want=$1
    shift
    timeout 60 "$@" >"$T/out.txt" 2>"$T/err.txt"
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "exit $rc (want $want): $*"
        sed 's/^/    /' "$T/err.txt"
        return 1
    fi
    return 0
}

G="$DATA/flam3/gen_random_s1001.flam3"
[ -f "$G" ] || { echo "skip: $G missing"; exit 77; }

# 1. PNG, same seed + different thread counts = same bytes; another seed differs
expect_rc 0 "$KILN" flame "$G" --size 96x72 --quality 8 --seed 5 -j 1 -o "$T/a.png" --quiet &&
expect_rc 0 "$KILN" flame "$G" --size 96x72 --quality 8 --seed 5 -j 2 -o "$T/b.png" --quiet &&
expect_rc 0 "$KILN" flame "$G" --size 96x72 --quality 8 --seed 6 -j 2 -o "$T/c.png" --quiet && {
    if cmp -s "$T/a.png" "$T/b.png"; then ok "deterministic for 1 and 2 threads"; else fail "thread count changed the image"; fi
    if cmp -s "$T/a.png" "$T/c.png"; then fail "seed 6 gave the seed 5 image"; else ok "seeds differ"; fi
}
# the image is not black: compare against itself is infinite, against a black image finite
expect_rc 0 "$KILN" compare "$T/a.png" "$T/b.png" && ok "compare identical"

# 2. several flames per file: all by default, one with --index
F2="$DATA/flam3/flam3utils_test.flam3"
if [ -f "$F2" ]; then
    expect_rc 0 "$KILN" flame "$F2" --size 64x48 --quality 4 -o "$T/multi.png" --quiet &&
        if [ -f "$T/multi_0000.png" ] && [ -f "$T/multi_0001.png" ]; then ok "two flames, two files"; else fail "missing multi_000N.png"; fi
    expect_rc 0 "$KILN" flame "$F2" --size 64x48 --quality 4 --index 1 -o "$T/one.png" --quiet &&
        if cmp -s "$T/one.png" "$T/multi_0001.png"; then ok "--index 1 = second flame"; else fail "--index 1 differs from multi_0001"; fi
    expect_rc 2 "$KILN" flame "$F2" --index 2 -o "$T/x.png" && ok "--index out of range: usage error"
fi

# 3. straight into textures
for fmt in bc1 etc2-rgb rgba8; do
    if expect_rc 0 "$KILN" flame "$G" --size 64x48 --quality 6 --seed 5 -f $fmt --mips -o "$T/t_$fmt.ktx2" --quiet; then
        expect_rc 0 "$KILN" validate "$T/t_$fmt.ktx2" && ok "$fmt: valid KTX2" 
        expect_rc 0 "$KILN" info "$T/t_$fmt.ktx2" &&
            if grep -qi "levels *[:=]* *7\|7 levels\|levelCount *[:=]* *7" "$T/out.txt"; then ok "$fmt: 7 levels"; else
                grep -i level "$T/out.txt" | head -3; fail "$fmt: expected 7 mip levels"; fi
        # level 0 decodes close to the PNG render of the same seed and size
        expect_rc 0 "$KILN" flame "$G" --size 64x48 --quality 6 --seed 5 -o "$T/t_ref.png" --quiet
        if expect_rc 0 "$KILN" decode "$T/t_$fmt.ktx2" -o "$T/t_$fmt.png"; then
            "$KILN" compare "$T/t_ref.png" "$T/t_$fmt.png" >"$T/cmp.txt" 2>&1
            psnr=$(grep -io 'psnr[^0-9i]*\(inf\|[0-9.]*\)' "$T/cmp.txt" | head -1 | grep -o '\(inf\|[0-9.]*\)$')
            case "$psnr" in
                inf) ok "$fmt: level 0 = PNG" ;;
                "") fail "$fmt: no PSNR in: $(head -3 "$T/cmp.txt")" ;;
                *) if awk "BEGIN{exit !($psnr > 25)}"; then ok "$fmt: level 0 PSNR $psnr dB vs the PNG"; else fail "$fmt: PSNR $psnr too low"; fi ;;
            esac
        fi
    fi
done
expect_rc 0 "$KILN" flame "$G" --size 64x48 --quality 2 -f bc3 -o "$T/t.dds" --quiet && expect_rc 0 "$KILN" validate "$T/t.dds" && ok "bc3 DDS"

# 4. bad genomes and options: clear errors, no crash, no hang
printf '<flame size="10 10"><xform weight="1" linear="1"' >"$T/trunc.flam3"
printf '<flame size="10 10"><xform weight="1" wobble="1"/></flame>' >"$T/unknown.flam3"
printf '<flame size="10 10"><xform weight="1" linear="1" coefs="nan 0 0 1 0 0"/></flame>' >"$T/nan.flam3"
printf '<flame size="10 10"><xform weight="1" linear="1" coefs="1e200 0 0 1 0 0"/></flame>' >"$T/huge.flam3"
printf '<flame size="10 10"><xform weight="0" linear="1"/></flame>' >"$T/zero.flam3"
printf '<flame size="9999999 10"><xform weight="1" linear="1"/></flame>' >"$T/size.flam3"
printf '<flame quality="1e12"><xform weight="1" linear="1"/></flame>' >"$T/quality.flam3"
printf '' >"$T/empty.flam3"
head -c 3000 /dev/urandom >"$T/random.flam3"
for b in trunc unknown nan huge zero size quality empty random; do
    if expect_rc 4 "$KILN" flame "$T/$b.flam3" -o "$T/bad.png"; then
        if grep -q "kiln flame: .*$b.flam3" "$T/err.txt"; then ok "bad genome $b: $(head -c 150 "$T/err.txt")"; else
            fail "bad genome $b: message does not name the file: $(cat "$T/err.txt")"; fi
    fi
done
expect_rc 3 "$KILN" flame "$T/none.flam3" -o "$T/bad.png" && ok "missing file: I/O error"
expect_rc 2 "$KILN" flame "$G" --quality 1e9 -o "$T/bad.png" && ok "absurd --quality: usage error"
expect_rc 2 "$KILN" flame "$G" --size 0x5 -o "$T/bad.png" && ok "bad --size: usage error"
expect_rc 2 "$KILN" flame "$G" -o "$T/bad.ktx2" && ok "texture without -f: usage error"
expect_rc 2 "$KILN" flame "$G" -f nosuch -o "$T/bad.ktx2" && ok "unknown format: usage error"
expect_rc 4 "$KILN" flame "$G" --size 60000x60000 -o "$T/bad.png" && ok "too large: $(head -c 150 "$T/err.txt")"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all flame CLI checks passed"
