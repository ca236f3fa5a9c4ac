#!/usr/bin/env bash
# flame_vs_flam3.sh - issue #7's full-size judge: kiln (GPU or CPU) against flam3-render at the same size and
# quality, on the same machine, file to file.
#
#   bash bench/flame_vs_flam3.sh KILN TEST_FLAME_VS_FLAM3 OUTDIR [Q] [SIZE] [THREADS] GENOME...
#     KILN                 the kiln CLI (`kiln flame --backend B` for each B in $BACKENDS, default vulkan)
#     TEST_FLAME_VS_FLAM3  the test program, used in its two-PNG mode for the metrics (blurred PSNR,
#                          luma SSIM, mean signed colour bias in 8-bit steps; notes/flame.md section 9)
#     Q                    test quality (default 125); the reference R is flam3-render at 4 x Q, seed 1
#     SIZE                 WxH (default 1920x1440: flam3-render's ss = 3 on the 640x480 test genomes)
#     THREADS              flam3-render threads (default: all cores)
# Per genome: R = flam3 4Q seed 1; control C = flam3 Q seed 2; kiln K1, K2 = seeds 1, 2 at Q. Prints one
# markdown row per genome: wall seconds (whole process, PNG written) of flam3 at Q and of kiln at Q, and
# the metrics of C and of the mean of K1, K2 against R. "Time to reach flam3's noise level" is kiln's time
# at the quality where its blurred PSNR to R matches flam3's at Q (same Q when the columns agree).
set -euo pipefail
KILN=$1 JUDGE=$2 OUT=$3; shift 3
Q=${1:-125}; SIZE=${2:-1920x1440}; THREADS=${3:-$(nproc)}; shift 3 || true
BACKENDS=${BACKENDS:-vulkan}   # e.g. "vulkan cpu": one row per backend
mkdir -p "$OUT"
W=${SIZE%x*}; H=${SIZE#*x}
now() { date +%s.%N; }
echo "| genome | kiln backend | flam3 s @q$Q ($THREADS thr) | kiln s @q$Q | flam3 seed 2 vs R: blurPSNR / SSIM / bias | kiln seed 1 ; seed 2 vs R |"
echo "|---|---|---:|---:|---|---|"
for g in "$@"; do
  b=$(basename "$g" .flam3)
  gw=$(grep -o 'size="[0-9]* [0-9]*"' "$g" | head -1 | sed 's/size="\([0-9]*\) .*/\1/')
  ss=$(awk "BEGIN{print $W/$gw}")
  q0=$(grep -o ' quality="[0-9.]*"' "$g" | head -1 | grep -o '[0-9.]*')
  qs=$(awk "BEGIN{print $Q/$q0}"); qr=$(awk "BEGIN{print 4*$Q/$q0}")
  env in="$g" ss=$ss qs=$qr isaac_seed=1 nthreads=$THREADS prefix="$OUT/${b}_R_" format=png verbose=0 flam3-render >/dev/null 2>&1
  t0=$(now)
  env in="$g" ss=$ss qs=$qs isaac_seed=2 nthreads=$THREADS prefix="$OUT/${b}_C_" format=png verbose=0 flam3-render >/dev/null 2>&1
  tf=$(awk "BEGIN{print $(now)-$t0}")
  for be in $BACKENDS; do
    t1=$(now)
    for s in 1 2; do "$KILN" flame "$g" --index 0 --size "$SIZE" --quality "$Q" --seed $s --backend "$be" --quiet -o "$OUT/${b}_K$s.png"; done
    t2=$(now)
    m() { "$JUDGE" "$OUT/${b}_R_00000.png" "$1" | tr -s ' ' | sed 's/^ //'; }
    mc=$(m "$OUT/${b}_C_00000.png"); m1=$(m "$OUT/${b}_K1.png"); m2=$(m "$OUT/${b}_K2.png")
    printf '| %s | %s | %.2f | %.2f | %s | %s ; %s |\n' "$b" "$be" "$tf" \
      "$(awk "BEGIN{print ($t2-$t1)/2}")" "$mc" "$m1" "$m2"
  done
done
