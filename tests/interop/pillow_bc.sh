#!/bin/bash
# pillow_bc.sh KILN_BINARY TESTDATA_DIR BUILD_DIR - kiln's BC1-BC7 decoders vs Pillow's (independent)
# on random blocks; see pillow_bc.py for what is compared and Pillow's known deviations.
# Skips (77) when no Python with Pillow or no kiln_bc_dump is available.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
build="${3:?usage: pillow_bc.sh KILN_BINARY TESTDATA_DIR BUILD_DIR}"
dump="$build/kiln_bc_dump"
if [ ! -x "$dump" ]; then
    echo "kiln_bc_dump not built ($dump): skipping"
    exit 77
fi
py=""
for cand in /usr/bin/python3 python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c "import PIL" >/dev/null 2>&1; then
        py="$cand"
        break
    fi
done
if [ -z "$py" ]; then
    echo "no python3 with Pillow (Debian python3-pil): skipping"
    exit 77
fi
work="$build/test-tmp/pillow_bc.$$"
mkdir -p "$work" || exit 1
"$py" "$here/pillow_bc.py" "$dump" "$work"
rc=$?
rm -rf "$work"
exit $rc
