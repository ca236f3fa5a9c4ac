#!/usr/bin/env bash
# tests/cli/mip_encode.sh KILN TESTDATA BUILD - `kiln compress --mips --backend vulkan` keeps the mip chain
# on the device (src/gpu/gpu_mip_encode.c, issue 5): the KTX2 files are byte-identical to --backend cpu
# (BC1 sRGB Lanczos-3, BC4 max Mitchell --wrap, BC3 sRGB, BC6H from HDR at normal quality, EAC RG11 --snorm Kaiser,
# ETC1 high with a quality filter, ETC2 RGBA fast sRGB; the full matrix is test_gpu_mip_encode's), the
# verbose line names the device-resident path, and KILN_GPU_MIP_RESIDENT=0 (the host path) gives the same bytes without it.
# Skipped (77) without a Vulkan device (lavapipe counts).
set -u
KILN=$1
DATA=$2
BUILD=$3
T="$BUILD/test-tmp/cli-mip-encode.$$"
mkdir -p "$T"
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# the validation layer on, unless KILN_TEST_VK_VALIDATION=0 (scripts/test.sh: the sanitised run; tests/README.md)
[ "${KILN_TEST_VK_VALIDATION:-1}" = 0 ] || export KILN_VK_VALIDATION=1

SMALL="$DATA/ldr/gimp_qube1_tiny_31x57.png"
SIGN="$DATA/ldr/stktex_directionSign_a_256_rgba.png"
HDR="$DATA/hdr/qtcreator_preview_landscape_256x128.hdr"
if ! "$KILN" compress "$SMALL" -f bc1 --mips --backend vulkan -o "$T/probe.ktx2" --quiet 2>"$T/err.txt"; then
    echo "skip: no Vulkan device ($(head -c 200 "$T/err.txt"))"
    exit 77
fi

# one case: input, then kiln compress options
check() {
    local in=$1
    shift
    local name
    name=$(echo "$*" | tr -c 'a-z0-9' '_')
    "$KILN" compress "$in" "$@" --mips --backend vulkan --verbose -o "$T/$name.v.ktx2" >"$T/out.txt" 2>"$T/err.txt" ||
        { fail "vulkan $*: $(cat "$T/err.txt")"; return; }
    grep -q "device-resident:" "$T/err.txt" || fail "$*: the device-resident path was not taken: $(cat "$T/err.txt")"
    grep -q "kiln: Vulkan .* \(warning\|error\):" "$T/err.txt" && fail "$*: Vulkan messages: $(grep "kiln: Vulkan" "$T/err.txt" | head -3)"
    "$KILN" compress "$in" "$@" --mips --backend cpu -o "$T/$name.c.ktx2" >/dev/null 2>&1 || { fail "cpu $*"; return; }
    cmp -s "$T/$name.v.ktx2" "$T/$name.c.ktx2" || fail "$(basename "$in") $*: GPU and CPU files differ"
}

# One case per encoder family and per option the CLI passes through (--srgb, -q, --filter, --wrap, --snorm, an
# HDR input): the format x quality x size matrix is tests/unit/test_gpu_mip_encode.c's (kiln_encode_mips, the same
# bytes as the CPU at every level); here it is the command line, the file and the verbose line that are checked.
check "$SMALL" -f bc1 --srgb --filter lanczos3
check "$SMALL" -f bc4 -q max --filter mitchell --wrap
check "$SIGN" -f bc3 --srgb
check "$HDR" -f bc6h -q normal
check "$SIGN" -f eac-rg11 --snorm -q fast --filter kaiser
check "$SMALL" -f etc1 -q high --filter mitchell
check "$SIGN" -f etc2-rgba -q fast --srgb

# the host path on request: no device-resident line, same bytes
KILN_GPU_MIP_RESIDENT=0 "$KILN" compress "$SIGN" -f bc3 --srgb --mips --backend vulkan --verbose -o "$T/host.ktx2" \
    >/dev/null 2>"$T/err.txt" || fail "host path: $(cat "$T/err.txt")"
grep -q "device-resident:" "$T/err.txt" && fail "KILN_GPU_MIP_RESIDENT=0 still took the device-resident path"
n=$(echo "-f bc3 --srgb" | tr -c 'a-z0-9' '_')
cmp -s "$T/host.ktx2" "$T/$n.v.ktx2" || fail "host path and device-resident path differ"

if [ "$fails" -ne 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "all mip_encode checks passed"
