#!/usr/bin/env bash
# dds_readers.sh KILN TESTDATA BUILD_DIR - kiln's DDS files read by independent readers.
#  * Pillow (python3-pil 9.4, top mip only) opens kiln's legacy DXT1/DXT3/DXT5/ATI1/ATI2/BC5S and DX10
#    BC5/BC6H/BC7 files (random blocks, mips, cube maps), reports the right size and mode, and its pixels
#    equal `kiln_ctool decode` (kiln_decode) of the same file: exactly for BC1-BC5 and BC7 (kiln reads DXT1
#    as BC1 with 1-bit alpha, as Pillow does), <= 1 LSB for BC6H after Pillow's clamp(x,0,1)*255
#    truncation (BC6H SF after switching the random blocks to an untransformed mode: Pillow 9.4 does not
#    sign-extend delta-transformed signed endpoints), and for BC5S - which Pillow 9.4 maps to 8 bits its own
#    way - Pillow's value p must be within the measured relation p ~ 127 + v/2 of kiln's v = 127 * value.
#  * Real textures: nvcompress (libnvtt-bin) -bc1 -bc1a -bc2 -bc3 -bc4 -bc5 DDS files from testdata PNGs are
#    loaded by kiln, decoded and compared with Pillow the same way; kiln then rewrites them (KTX2 -> DDS legacy
#    and DX10) and the data must be unchanged (kiln_ctool same) and Pillow must still decode the same pixels.
#  * nvddsinfo (libnvtt-bin) prints the header fields kiln wrote: size, mip count, FourCC or DXGI format,
#    array size, cube-map caps.
# Exit 77 when Pillow is not installed.
set -u
KILN=$1 TESTDATA=$2 BUILD=$3
CTOOL="$BUILD/kiln_ctool"
[ -x "$CTOOL" ] || { echo "kiln_ctool not built"; exit 1; }
PY=""
for p in /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import PIL' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "SKIP: Pillow (python3-pil) not installed"; exit 77; }

WORK="$BUILD/interop-tmp/dds-readers.$$"
rm -rf "$WORK"; mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
fail=0
"$CTOOL" gen "$WORK" >/dev/null || { echo "FAIL: kiln_ctool gen"; exit 1; }

# compare FILE KIND [DECODE_FROM]: Pillow's top mip of FILE against kiln's decode of DECODE_FROM (default FILE)
compare() {
  local file=$1 kind=$2 src=${3:-$1}
  local dims
  dims=$("$CTOOL" decode "$src" "$WORK/k.raw" | tr -d '\0') || { echo "FAIL: kiln decode $src"; fail=1; return; }
  "$PY" - "$file" "$kind" "$WORK/k.raw" $dims <<'PYEOF' || fail=1
import struct, sys
from PIL import Image
path, kind, raw, w, h, typ = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
im = Image.open(path)
im.load()
assert im.size == (w, h), f"{path}: Pillow size {im.size}, kiln {w}x{h}"
data = open(raw, 'rb').read()
n = w * h * 4
k = struct.unpack('<%df' % n, data) if typ == 'f32' else struct.unpack('<%dH' % n, data) if typ == 'u16' else data
want_mode = {'bc4': 'L', 'bc5': 'RGB', 'bc5s': 'RGB', 'bc6h': 'RGB'}.get(kind, 'RGBA')
assert im.mode == want_mode, f"{path}: Pillow mode {im.mode}, expected {want_mode}"
px = list(im.getdata())
if kind == 'bc5s':
    # Pillow 9.4 maps a signed BC5 value v (kiln: v/127) to about 127 + v/2 (measured: within -1.5..0 of
    # 127.5 + v/2); the +-127 endpoints differ (Pillow's 6-value mode uses its own 0/255). Misplaced or
    # misread blocks would break this relation everywhere.
    worst, used = 0.0, 0
    for i, p in enumerate(px):
        for c in range(2):
            v = round(k[4 * i + c] * 127)
            if abs(v) < 127:
                worst = max(worst, abs(p[c] - (127.5 + v / 2) + 0.75))
                used += 1
    if worst > 0.75 or used < len(px):
        print(f"FAIL {path}: Pillow's BC5S values are off kiln's by {worst} ({used} samples)")
        sys.exit(1)
    print(f"ok {path.rsplit('/', 1)[1]}: {im.mode} {w}x{h}, BC5S values consistent ({used} samples)")
    sys.exit(0)
worst = 0
for i, p in enumerate(px):
    kk = k[4 * i:4 * i + 4]
    if kind == 'bc4':
        pairs = [(p, kk[0])]
    elif kind == 'bc5':
        pairs = [(p[0], kk[0]), (p[1], kk[1]), (p[2], 0)]
    elif kind == 'bc6h':
        pairs = [(p[c], 0 if kk[c] < 0 else 255 if kk[c] > 1 else int(kk[c] * 255.0)) for c in range(3)]
    else:
        pairs = [(p[c], kk[c]) for c in range(4)]
    for a, b in pairs:
        worst = max(worst, abs(a - b))
tol = {'bc6h': 1}.get(kind, 0)
if worst > tol:
    print(f"FAIL {path}: Pillow and kiln differ by up to {worst} (allowed {tol})")
    sys.exit(1)
print(f"ok {path.rsplit('/', 1)[1]}: {im.mode} {w}x{h}, max difference {worst}")
PYEOF
}

# ---- kiln-written files
for f in bc1-mips-legacy bc1-legacy bc1a-mips-legacy bc2-mips-legacy bc3-mips-legacy bc3-legacy; do compare "$WORK/$f.dds" rgba; done
for f in bc4-mips-legacy bc4-legacy; do compare "$WORK/$f.dds" bc4; done
for f in bc5-mips-legacy bc5-mips-dx10 bc5-dx10; do compare "$WORK/$f.dds" bc5; done
for f in bc6h-mips-dx10 bc6h-dx10; do compare "$WORK/$f.dds" bc6h; done
# BC6H SF: Pillow 9.4 does not sign-extend delta-transformed endpoints of signed BC6H (DirectXTex and the
# D3D spec do), so the random blocks are switched to mode 10 (untransformed, 10-bit endpoints) first
"$PY" - "$WORK/bc6h-sf-mips-dx10.dds" "$WORK/bc6h-sf-mode10.dds" <<'PYEOF'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
for o in range(148, len(d), 16):
    d[o] = (d[o] & 0xE0) | 0x03
open(sys.argv[2], 'wb').write(d)
PYEOF
compare "$WORK/bc6h-sf-mode10.dds" bc6h
for f in bc7-mips-dx10 bc7-dx10; do compare "$WORK/$f.dds" rgba; done
compare "$WORK/bc5-snorm-mips-legacy.dds" bc5s
compare "$WORK/bc5-snorm-legacy.dds" bc5s
# cube maps: Pillow sees the first face's top level
"$CTOOL" convert "$WORK/bc3-cube.ktx2" "$WORK/bc3-cube.dds" && compare "$WORK/bc3-cube.dds" rgba
"$CTOOL" convert "$WORK/bc7-cube.ktx2" "$WORK/bc7-cube.dds" && compare "$WORK/bc7-cube.dds" rgba

# ---- real textures from nvcompress
if command -v nvcompress >/dev/null; then
  for src in ldr/gimp_qube1_tiny_31x57.png ldr/stktex_directionSign_a_256_rgba.png; do
    base=$(basename "$src" .png)
    formats="bc1 bc1a bc2 bc3 bc4 bc5"
    case $base in *256*) formats="bc1a bc3 bc5" ;; esac # the larger image: alpha and normal-map formats only
    for f in $formats; do
      dds="$WORK/nv-$base-$f.dds"
      nvcompress -$f "$TESTDATA/$src" "$dds" >/dev/null 2>&1 || { echo "FAIL: nvcompress -$f $src"; fail=1; continue; }
      kind=rgba; [ $f = bc4 ] && kind=bc4; [ $f = bc5 ] && kind=bc5
      compare "$dds" $kind
      out=$("$KILN" validate "$dds" 2>&1) || { echo "$out"; echo "FAIL: kiln validate $dds"; fail=1; }
      "$CTOOL" convert "$dds" "$WORK/rt-$base-$f.ktx2" --zstd 3 || { fail=1; continue; }
      "$CTOOL" convert "$WORK/rt-$base-$f.ktx2" "$WORK/rt-$base-$f.dds" --legacy || { fail=1; continue; }
      "$CTOOL" same "$dds" "$WORK/rt-$base-$f.dds" || fail=1
      compare "$WORK/rt-$base-$f.dds" $kind
      if [ $f = bc5 ] || [ $f = bc3 ]; then
        "$CTOOL" convert "$WORK/rt-$base-$f.ktx2" "$WORK/rt10-$base-$f.dds" --dx10 || { fail=1; continue; }
        "$CTOOL" same "$dds" "$WORK/rt10-$base-$f.dds" || fail=1
        # Pillow 9.4 has no DX10 BC3 ("Unimplemented DXGI format"): check BC5 only
        [ $f = bc5 ] && compare "$WORK/rt10-$base-$f.dds" bc5
      fi
    done
  done
else
  echo "note: nvcompress (libnvtt-bin) not installed: real-texture checks skipped"
fi

# ---- nvddsinfo reads the header fields kiln wrote
if command -v nvddsinfo >/dev/null; then
  check_info() { # FILE PATTERN...
    local file=$1; shift
    local out; out=$(nvddsinfo "$file" 2>&1 | tr -d '\0')
    for pat in "$@"; do
      echo "$out" | grep -qF -- "$pat" || { echo "FAIL: nvddsinfo $(basename "$file"): no '$pat'"; echo "$out"; fail=1; }
    done
  }
  check_info "$WORK/bc1-mips-legacy.dds" "Width: 13" "Height: 7" "Mipmap count: 4" "FourCC: 'DXT1'" "Linear size: 64" "DDSCAPS_MIPMAP"
  check_info "$WORK/bc4-legacy.dds" "FourCC: 'ATI1'" "Mipmap count: 1"
  check_info "$WORK/bc5-mips-legacy.dds" "FourCC: 'ATI2'"
  check_info "$WORK/bc7-srgb-mips-dx10.dds" "FourCC: 'DX10'" "DXGI Format: 99" "Resource dimension: 3" "Array size: 1"
  check_info "$WORK/bc3-cube.dds" "DDSCAPS2_CUBEMAP_ALL_FACES" "Mipmap count: 4"
  check_info "$WORK/rgba8-mips-legacy.dds" "Bit count: 32" "Red mask: 0x000000FF" "Alpha mask: 0xFF000000" "DDSD_PITCH"
  "$CTOOL" convert "$WORK/bc7-array.ktx2" "$WORK/bc7-array.dds" && \
    check_info "$WORK/bc7-array.dds" "Array size: 3" "DXGI Format: 98" "Width: 5" "Height: 3"
  [ $fail = 0 ] && echo "ok nvddsinfo headers"
else
  echo "note: nvddsinfo (libnvtt-bin) not installed: header checks skipped"
fi

[ $fail = 0 ] && echo "PASS" || echo "FAIL"
exit $fail
