#!/bin/bash
# compare.sh - `kiln compare`: output forms, exit codes, image and texture inputs.
# usage: bash compare.sh KILN_BINARY TESTDATA_DIR BUILD_DIR
set -u
KILN=$1
DATA=$2
BUILD=$3
TMP=$(mktemp -d "$BUILD/compare-test.XXXXXX")
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
elif command -v node > /dev/null; then
    json_get() { node -e 'let v=JSON.parse(require("fs").readFileSync(0,"utf8")); for (const k of process.argv.slice(1)) v=v[k]; console.log(JSON.stringify(v))' -- "$@"; }
else
    echo "neither python3 nor node: skipped"; exit 77
fi

ROCK=$DATA/ldr/stk_generic_rock_a_512.png
FERN=$DATA/ldr/city_fern_512_rgba.png
TINY=$DATA/ldr/gimp_qube1_tiny_31x57.png
EXR=$DATA/hdr/blender_city_1024x512.exr

"$KILN" compare --help > "$TMP/help" || fail "--help exit status"
grep -q -- "--json" "$TMP/help" || fail "--help does not mention --json"

out=$("$KILN" compare "$ROCK" "$ROCK") || fail "identical images: exit $?"
echo "$out" | grep -q "PSNR RGB *inf" || fail "identical images: no infinite PSNR line: $out"
echo "$out" | grep -q "SSIM *1.000000" || fail "identical images: SSIM is not 1"

js=$("$KILN" compare --json "$ROCK" "$FERN") || fail "--json: exit $?"
[ "$(echo "$js" | json_get identical)" = "false" ] || fail "different images reported identical"
[ "$(echo "$js" | json_get channels)" = "4" ] || fail "channels is not the larger count (4): $js"
psnr=$(echo "$js" | json_get psnr_rgb)
awk -v v="$psnr" 'BEGIN { exit !(v > 3 && v < 30) }' || fail "implausible PSNR between two unrelated images: $psnr"

js=$("$KILN" compare --json --channels 1 "$ROCK" "$ROCK") || fail "--channels 1: exit $?"
[ "$(echo "$js" | json_get channels)" = "1" ] || fail "--channels 1 not applied: $js"
[ "$(echo "$js" | json_get psnr_rgb)" = "null" ] || fail "identical: psnr_rgb should be null in JSON"
[ "$(echo "$js" | json_get psnr 1)" = "null" ] || fail "channel not compared should be null"
[ "$(echo "$js" | json_get identical)" = "true" ] || fail "identical not true"

js=$("$KILN" compare --json "$EXR" "$EXR") || fail "EXR: exit $?"
[ "$(echo "$js" | json_get hdr)" = "true" ] || fail "EXR comparison is not HDR: $js"
[ "$(echo "$js" | json_get rmse)" = "0.0" ] || [ "$(echo "$js" | json_get rmse)" = "0" ] || fail "EXR rmse not 0: $js"

"$KILN" compare --normal "$DATA/normal/stk_generic_rock_a_Normal_512_rgba.png" \
    "$DATA/normal/stk_generic_rock_a_Normal_512_rgba.png" | grep -q "normal angle *0.0000" || fail "--normal line missing"

# exit codes
"$KILN" compare "$ROCK" "$TINY" 2> "$TMP/err"
[ $? -eq 4 ] || fail "size mismatch should exit 4"
grep -q "512x512" "$TMP/err" || fail "size mismatch message lacks the sizes"
"$KILN" compare "$ROCK" "$TMP/missing.png" 2> "$TMP/err"
[ $? -eq 3 ] || fail "missing file should exit 3"
grep -q "missing.png" "$TMP/err" || fail "missing file message lacks the path"
printf 'not an image' > "$TMP/bad.png"
"$KILN" compare "$ROCK" "$TMP/bad.png" 2> /dev/null
[ $? -eq 4 ] || fail "corrupt input should exit 4"
"$KILN" compare "$ROCK" 2> /dev/null
[ $? -eq 2 ] || fail "one input should exit 2"
"$KILN" compare --channels 5 "$ROCK" "$ROCK" 2> /dev/null
[ $? -eq 2 ] || fail "--channels 5 should exit 2"
"$KILN" compare --bogus "$ROCK" "$ROCK" 2> /dev/null
[ $? -eq 2 ] || fail "unknown option should exit 2"

# textures (needs `kiln compress` and `kiln decode`; skipped while those are unavailable)
STONE=$DATA/ldr/gimp_stone33_tileable_156.png
if "$KILN" compress -f bc1 "$STONE" -o "$TMP/rock.ktx2" > /dev/null 2>&1 && [ -s "$TMP/rock.ktx2" ]; then
    js=$("$KILN" compare --json "$STONE" "$TMP/rock.ktx2") || fail "PNG vs KTX2: exit $?"
    psnr=$(echo "$js" | json_get psnr_rgb)
    awk -v v="$psnr" 'BEGIN { exit !(v > 25) }' || fail "BC1 PSNR too low: $psnr"
    if "$KILN" decode "$TMP/rock.ktx2" -o "$TMP/rock_dec.png" > /dev/null 2>&1; then
        js=$("$KILN" compare --json "$TMP/rock_dec.png" "$TMP/rock.ktx2") || fail "decoded PNG vs KTX2: exit $?"
        [ "$(echo "$js" | json_get identical)" = "true" ] || fail "decoded PNG differs from the texture it came from"
    fi
else
    echo "note: kiln compress -f bc1 unavailable, texture inputs not tested"
fi

# cross-check the JPEG, TGA and BMP readers against Pillow's decoders (Debian python3-pil)
if /usr/bin/python3 -c "import PIL" 2> /dev/null; then
    /usr/bin/python3 - "$STONE" "$TMP" << 'EOF' || fail "Pillow could not write the reference files"
import sys
from PIL import Image
src, tmp = sys.argv[1], sys.argv[2]
im = Image.open(src).convert("RGB")
im.save(tmp + "/p.jpg", quality=90, progressive=True)
Image.open(tmp + "/p.jpg").save(tmp + "/p_jpg.png")
im.convert("L").save(tmp + "/g.jpg", quality=90)
Image.open(tmp + "/g.jpg").save(tmp + "/g_jpg.png")
im.convert("RGBA").save(tmp + "/rle.tga", compression="tga_rle")
im.save(tmp + "/raw.tga")
im.save(tmp + "/b.bmp")
im.save(tmp + "/ref.png")
EOF
    for pair in "p.jpg p_jpg.png" "g.jpg g_jpg.png"; do
        set -- $pair
        js=$("$KILN" compare --json "$TMP/$1" "$TMP/$2") || fail "$1: exit $?"
        psnr=$(echo "$js" | json_get psnr_rgb)
        # stb_image and libjpeg differ only in IDCT and chroma upsampling rounding
        awk -v v="$psnr" 'BEGIN { exit !(v == "null" || v > 35) }' || fail "$1 decodes far from Pillow: $psnr dB"
    done
    for f in rle.tga raw.tga b.bmp; do
        js=$("$KILN" compare --json --channels 3 "$TMP/$f" "$TMP/ref.png") || fail "$f: exit $?"
        [ "$(echo "$js" | json_get identical)" = "true" ] || fail "$f differs from Pillow's pixels: $js"
    done
else
    echo "note: Pillow (python3-pil) missing, JPEG/TGA/BMP cross-check skipped"
fi

if [ $fails -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "all compare checks passed"
