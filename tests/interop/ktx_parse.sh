#!/usr/bin/env bash
# ktx_parse.sh KILN TESTDATA BUILD_DIR - independent KTX2 check: the npm package ktx-parse (pinned 2.0.0 in
# tests/interop/ktx-parse/package-lock.json) must read every KTX2 file kiln writes - every format of the
# table, single level, full mip chains, zstd, cube maps, arrays, 1x1 - and re-serialise it byte for byte
# with write(read(buf), {keepWriter: true}). Real textures from nvcompress (DDS, converted to KTX2 by kiln)
# go through the same check. Every file must also pass `kiln validate`, `kiln info --json` must be
# valid JSON that names the right vkFormat, and the CLI's messages and exit codes for bad input are checked.
# Set-up: installs ktx-parse into BUILD_DIR/interop-npm/ktx-parse with `npm ci`; exits 77 (skipped) when
# node/npm are missing or the npm registry cannot be reached.
set -u
KILN=$1 TESTDATA=$2 BUILD=$3
HERE=$(cd "$(dirname "$0")" && pwd)
CTOOL="$BUILD/kiln_ctool"
[ -x "$CTOOL" ] || { echo "kiln_ctool not built"; exit 1; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "SKIP: node/npm not installed"; exit 77; }

PREFIX="$BUILD/interop-npm/ktx-parse"
mkdir -p "$PREFIX"
if ! cmp -s "$HERE/ktx-parse/package-lock.json" "$PREFIX/package-lock.json" || [ ! -f "$PREFIX/node_modules/ktx-parse/package.json" ]; then
  cp "$HERE/ktx-parse/package.json" "$HERE/ktx-parse/package-lock.json" "$PREFIX/"
  if ! timeout 300 npm ci --prefix "$PREFIX" --no-audit --no-fund --loglevel=error >"$PREFIX/npm.log" 2>&1; then
    cat "$PREFIX/npm.log"; rm -f "$PREFIX/package-lock.json"
    echo "SKIP: npm ci failed (registry unreachable?)"; exit 77
  fi
fi
cp "$HERE/ktx-parse/roundtrip.mjs" "$PREFIX/roundtrip.mjs"

WORK="$BUILD/interop-tmp/ktx-parse.$$"
rm -rf "$WORK"; mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT
fail=0

"$CTOOL" gen "$WORK" || { echo "FAIL: kiln_ctool gen"; exit 1; }
# real textures: nvcompress DDS (legacy DXT1/DXT3/DXT5/ATI1/ATI2) -> kiln -> KTX2, with and without zstd
if command -v nvcompress >/dev/null; then
  for src in ldr/gimp_qube1_tiny_31x57.png ldr/supertuxkart_16_rgba.png; do
    base=$(basename "$src" .png)
    for f in bc1 bc1a bc2 bc3 bc4 bc5; do
      nvcompress -$f "$TESTDATA/$src" "$WORK/nv-$base-$f.dds" >/dev/null 2>&1 || { echo "FAIL: nvcompress -$f $src"; fail=1; continue; }
      "$CTOOL" convert "$WORK/nv-$base-$f.dds" "$WORK/nv-$base-$f.ktx2" || fail=1
      "$CTOOL" convert "$WORK/nv-$base-$f.dds" "$WORK/nv-$base-$f-zstd.ktx2" --zstd 9 || fail=1
      "$CTOOL" same "$WORK/nv-$base-$f.dds" "$WORK/nv-$base-$f-zstd.ktx2" || fail=1
      echo "$WORK/nv-$base-$f.ktx2" >> "$WORK/list.txt"
      echo "$WORK/nv-$base-$f-zstd.ktx2" >> "$WORK/list.txt"
      echo "$WORK/nv-$base-$f.dds" >> "$WORK/list.txt"
    done
  done
else
  echo "note: nvcompress (libnvtt-bin) not installed: real-texture files skipped"
fi

# 1. ktx-parse byte-for-byte re-serialisation
node "$PREFIX/roundtrip.mjs" "$WORK/list.txt" || fail=1

# 2. kiln validate accepts every file it wrote (and nvcompress's DDS files)
mapfile -t files < "$WORK/list.txt"
out=$("$KILN" validate --warnings-as-errors "${files[@]}" 2>&1) || { echo "$out" | grep -v ': valid$'; echo "FAIL: kiln validate"; fail=1; }

# 3. kiln info --json is JSON and agrees with the header
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
for f in "$WORK/bc7-srgb-mips.ktx2" "$WORK/etc1-zstd.ktx2" "$WORK/bc4-mips-legacy.dds"; do
  "$KILN" info --json "$f" > "$WORK/info.json" || { echo "FAIL: kiln info $f"; fail=1; continue; }
  $PY - "$f" "$WORK/info.json" <<'PYEOF' || fail=1
import json, struct, sys
path, info = sys.argv[1], json.load(open(sys.argv[2]))
data = open(path, 'rb').read()
if path.endswith('.ktx2'):
    vk, = struct.unpack_from('<I', data, 12)
    assert info['header']['vkFormat'] == vk, (info['header']['vkFormat'], vk)
    assert info['header']['levelCount'] == struct.unpack_from('<I', data, 40)[0]
    assert len(info['levels']) == max(1, info['header']['levelCount'])
    assert info['dfd']['words'][3] == struct.unpack_from('<I', data, info['header']['dfdByteOffset'] + 12)[0]
    assert any(kv['key'] == 'KTXwriter' and kv['value'].startswith('kiln ') for kv in info['keyValueData'])
else:
    assert info['header']['pixelFormat']['fourCC'] == 'ATI1', info['header']['pixelFormat']
    assert info['header']['mipMapCount'] == struct.unpack_from('<I', data, 28)[0]
print('info ok:', path.rsplit('/', 1)[1])
PYEOF
done

# 4. kiln validate / info on bad input: "FILE: error: ..." lines, exit 4 (bad input) / 3 (unreadable)
bad="$WORK/bad.ktx2"
cp "$WORK/bc7-mips.ktx2" "$bad"
printf '\x07' | dd of="$bad" bs=1 seek=16 conv=notrunc status=none   # typeSize 7
out=$("$KILN" validate "$bad" "$WORK/bc1-mips.ktx2"); rc=$?
[ $rc = 4 ] || { echo "FAIL: kiln validate of a bad file exited $rc, not 4"; fail=1; }
echo "$out" | grep -qF "$bad: error: header: typeSize is 7 but VK_FORMAT_BC7_UNORM_BLOCK needs 1" || { echo "FAIL: validate message: $out"; fail=1; }
echo "$out" | grep -qF "$WORK/bc1-mips.ktx2: valid" || { echo "FAIL: validate did not report the good file"; fail=1; }
"$KILN" validate "$WORK/does-not-exist.ktx2" 2>/dev/null; rc=$?
[ $rc = 3 ] || { echo "FAIL: kiln validate of a missing file exited $rc, not 3"; fail=1; }
"$KILN" validate --quiet "$bad" >"$WORK/q.txt"; rc=$?
[ $rc = 4 ] && [ ! -s "$WORK/q.txt" ] || { echo "FAIL: kiln validate --quiet"; fail=1; }
"$KILN" validate --help | grep -q "usage: kiln validate" || { echo "FAIL: kiln validate --help"; fail=1; }
"$KILN" info --help | grep -q "usage: kiln info" || { echo "FAIL: kiln info --help"; fail=1; }
"$KILN" info "$bad" | grep -q "typeSize: 7" || { echo "FAIL: kiln info of an invalid file"; fail=1; }
head -c 40 "$WORK/bc7-mips.ktx2" > "$WORK/short.ktx2"
"$KILN" info "$WORK/short.ktx2" | grep -q "shorter than the 80-byte header" || { echo "FAIL: kiln info of a truncated file"; fail=1; }
echo "not a texture" > "$WORK/junk.bin"
"$KILN" info "$WORK/junk.bin" 2>/dev/null; rc=$?
[ $rc = 4 ] || { echo "FAIL: kiln info of junk exited $rc, not 4"; fail=1; }
"$KILN" info 2>/dev/null; rc=$?
[ $rc = 2 ] || { echo "FAIL: kiln info without a file exited $rc, not 2"; fail=1; }

[ $fail = 0 ] && echo "PASS" || echo "FAIL"
exit $fail
