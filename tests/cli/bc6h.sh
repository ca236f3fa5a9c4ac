#!/bin/bash
# bc6h.sh - BC6H through the CLI: `kiln compress IN.hdr|.exr -f bc6h|bc6h-sf -q Q -o OUT.ktx2|.dds`,
# kiln info / validate on the results (KTX2 vkFormat 143/144, DDS DX10 dxgiFormat 95/96), decode back
# to EXR and compare (RMSLE ceilings), mip chains, and the same bytes for 1 and 2 threads.
# usage: bash bc6h.sh KILN_BINARY TESTDATA_DIR BUILD_DIR
set -u
KILN=$1
DATA=$2
BUILD=$3
TMP=$(mktemp -d "$BUILD/bc6h-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if command -v python3 > /dev/null; then
    json_get() {
        python3 -c 'import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1:]:
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v))' "$@"
    }
    # le A B: A <= B for decimals
    le() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)' "$1" "$2"; }
else
    echo "no python3: skipped"; exit 77
fi

HDR=$DATA/hdr/qtcreator_preview_landscape_256x128.hdr
EXR=$DATA/hdr/blender_sunset_1024x512.exr
[ -f "$HDR" ] && [ -f "$EXR" ] || { echo "test images missing: skipped"; exit 77; }

# check_roundtrip TEXTURE SOURCE CEILING: decode to EXR, compare, RMSLE <= CEILING
check_roundtrip() {
    local tex=$1 src=$2 ceiling=$3 out
    out="$TMP/$(basename "$tex").exr"
    "$KILN" decode "$tex" -o "$out" --quiet || { fail "decode $tex: exit $?"; return; }
    local js
    js=$("$KILN" compare --json "$src" "$out") || { fail "compare $tex: exit $?"; return; }
    local rmsle
    rmsle=$(echo "$js" | json_get rmsle)
    [ "$(echo "$js" | json_get hdr)" = "true" ] || fail "$tex: compare does not see HDR images"
    le "$rmsle" "$ceiling" || fail "$tex: RMSLE $rmsle above $ceiling"
    echo "$tex: RMSLE $rmsle (ceiling $ceiling)"
}

# 1. both containers, UF and SF; max quality for two of the four (the .hdr is 256x128: max stays quick)
for run in bc6h:ktx2:max bc6h:dds:fast bc6h-sf:ktx2:fast bc6h-sf:dds:max; do
    IFS=: read -r fmt ext q <<< "$run"
    out="$TMP/max-$fmt.$ext"
    "$KILN" compress "$HDR" -f "$fmt" -q "$q" -o "$out" --quiet || fail "compress -f $fmt -q $q -o .$ext: exit $?"
    "$KILN" validate "$out" > /dev/null || fail "validate $out"
    if [ "$q" = max ]; then check_roundtrip "$out" "$HDR" 0.0056; else check_roundtrip "$out" "$HDR" 0.0066; fi
done

# container fields
js=$("$KILN" info --json "$TMP/max-bc6h.ktx2") || fail "info ktx2"
echo "$js" | grep -q '"vkFormat": *143' || fail "KTX2 UF: vkFormat is not 143"
js=$("$KILN" info --json "$TMP/max-bc6h-sf.ktx2") || fail "info ktx2 sf"
echo "$js" | grep -q '"vkFormat": *144' || fail "KTX2 SF: vkFormat is not 144"
info=$("$KILN" info "$TMP/max-bc6h.dds") || fail "info dds"
echo "$info" | grep -q "fourCC: DX10" || fail "DDS UF: no DX10 header"
echo "$info" | grep -q "dxgiFormat: 95" || fail "DDS UF: dxgiFormat is not 95 (BC6H_UF16)"
info=$("$KILN" info "$TMP/max-bc6h-sf.dds") || fail "info dds sf"
echo "$info" | grep -q "dxgiFormat: 96" || fail "DDS SF: dxgiFormat is not 96 (BC6H_SF16)"

# 2. the EXR at fast quality, and the other qualities on the .hdr: RMSLE ceilings per quality
"$KILN" compress "$EXR" -f bc6h -q fast -o "$TMP/sunset-fast.ktx2" --quiet || fail "compress exr fast: exit $?"
check_roundtrip "$TMP/sunset-fast.ktx2" "$EXR" 0.0060
for q in normal:0.0057 high:0.0056; do
    "$KILN" compress "$HDR" -f bc6h -q "${q%%:*}" -o "$TMP/${q%%:*}.dds" --quiet || fail "compress -q ${q%%:*}: exit $?"
    check_roundtrip "$TMP/${q%%:*}.dds" "$HDR" "${q##*:}"
done

# 3. mip chain: every level present and valid
"$KILN" compress "$HDR" -f bc6h -q normal --mips -o "$TMP/mips.ktx2" --quiet || fail "compress --mips: exit $?"
"$KILN" validate "$TMP/mips.ktx2" > /dev/null || fail "validate mips"
levels=$("$KILN" info --json "$TMP/mips.ktx2" | json_get header levelCount)
[ "$levels" = "9" ] || fail "mip chain of 256x128: levelCount $levels, want 9"
"$KILN" decode "$TMP/mips.ktx2" --level 8 -o "$TMP/level8.exr" --quiet || fail "decode level 8"

# 4. the same bytes for 1 and 2 threads
"$KILN" compress "$HDR" -f bc6h-sf -q normal -j 1 -o "$TMP/j1.ktx2" --quiet || fail "compress -j 1"
"$KILN" compress "$HDR" -f bc6h-sf -q normal -j 2 -o "$TMP/j2.ktx2" --quiet || fail "compress -j 2"
cmp -s "$TMP/j1.ktx2" "$TMP/j2.ktx2" || fail "-j 1 and -j 2 give different files"

if [ $fails -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "bc6h CLI: all passed"
