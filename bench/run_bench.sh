#!/bin/bash
# run_bench.sh - the shared CPU encoder bench driver: runs every bench program listed below (each
# prints "IMAGES <format> <names...>" and "ROW <format> <tool> <mode> <psnr...> <mean> <Mpix/s 1 thread>
# <Mpix/s all threads>" lines), adds command-line peers (nvcompress), and writes
#   OUT/results.tsv       all rows
#   OUT/results.md        one table per format, with machine, date and command
#   OUT/<format>.png      quality vs single-thread speed (log scale), one point per tool and mode
#
# usage: bash bench/run_bench.sh [BUILD_DIR [OUT_DIR]] [-- extra arguments for the bench programs]
#   BUILD_DIR defaults to ./build, OUT_DIR to BUILD_DIR/bench-results. Example (quicker):
#   bash bench/run_bench.sh build-release /tmp/bench -- --min-time 0.1
# To add a bench program, append its name to BENCH_PROGRAMS (it must print the lines above).
set -u
BUILD=${1:-build}
OUT=${2:-$BUILD/bench-results}
shift $(($# > 2 ? 2 : $#))
[ "${1:-}" = "--" ] && shift
EXTRA=("$@")
BENCH_PROGRAMS=(bench_bc)
DATA=$(cd "$(dirname "$0")/.." && pwd)/../shared/testdata
[ -n "${KILN_TESTDATA:-}" ] && DATA=$KILN_TESTDATA
mkdir -p "$OUT"
TSV=$OUT/results.tsv
: > "$TSV"

for prog in "${BENCH_PROGRAMS[@]}"; do
    if [ ! -x "$BUILD/$prog" ]; then
        echo "run_bench.sh: $BUILD/$prog not built, skipped" >&2
        continue
    fi
    echo "run_bench.sh: $prog ${EXTRA[*]}" >&2
    "$BUILD/$prog" --testdata "$DATA" "${EXTRA[@]}" | tee -a "$TSV" >&2
done

# nvcompress (NVTT 2.0.8, libnvtt-bin): listed for reference, not ranked. Time is the wall time of the
# whole process (PNG decode and DDS write included), one run, its own threading.
if command -v nvcompress > /dev/null && [ -x "$BUILD/bench_bc" ]; then
    for fmt in bc1 bc4 bc5 bc3; do
        images=$(awk -v f=$fmt '$1 == "IMAGES" && $2 == f { for (i = 3; i <= NF; i++) print $i; exit }' "$TSV")
        [ -n "$images" ] || continue
        chans=rgb; flag=-bc1
        case $fmt in bc4) chans=r; flag=-bc4 ;; bc5) chans=rg; flag=-bc5 ;; bc3) chans=rgba; flag=-bc3 ;; esac
        row="ROW	$fmt	nvcompress	-nocuda"
        sum=0; n=0; pix=0; secs=0
        for name in $images; do
            src=$(find "$DATA" -name "$name" | head -1)
            [ -n "$src" ] || continue
            in=$src
            if [ $fmt = bc4 ]; then # bench_bc reads R: give nvcompress the grey version of the image
                in=$OUT/nv-$name
                "$BUILD/bench_bc" --red-to-grey "$src" "$in" || continue
            fi
            t0=$(date +%s.%N)
            nvcompress -nocuda $flag -nomips "$in" "$OUT/nv.dds" > /dev/null 2>&1 || continue
            t1=$(date +%s.%N)
            p=$("$BUILD/bench_bc" --psnr "$OUT/nv.dds" "$in" $chans) || continue
            wh=$("$BUILD/bench_bc" --size "$src")
            row="$row	$p"
            sum=$(echo "$sum + $p" | bc -l); n=$((n + 1))
            pix=$(echo "$pix + $wh" | bc -l); secs=$(echo "$secs + $t1 - $t0" | bc -l)
        done
        if [ $n -gt 0 ]; then
            mean=$(echo "scale=3; $sum / $n" | bc -l)
            mps=$(echo "scale=3; $pix / $secs / 1000000" | bc -l)
            printf '%s\t%s\t%s\t%s\n' "$row" "$mean" "-" "$mps" | tee -a "$TSV" >&2
        fi
    done
    rm -f "$OUT/nv.dds" "$OUT"/nv-*
fi

# tables
{
    echo "Command: \`bash bench/run_bench.sh ${BUILD} ${OUT}${EXTRA:+ -- ${EXTRA[*]}}\`  "
    echo "Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; $(uname -sr); $(date -u +%Y-%m-%d)  "
    echo "PSNR in dB over the format's channels (BC1: RGB, BC3: RGBA, BC4: R, BC5: RG), every output decoded"
    echo "by kiln's decoder (D3D10 reference rounding). Mpix/s: 1 thread = pixels / CPU time of the encoding"
    echo "thread; all = pixels / wall time with every CPU. nvcompress: whole process, wall time (not ranked)."
    awk -F'\t' '
        $1 == "IMAGES" { fmt = $2; n[fmt] = NF - 2; for (i = 3; i <= NF; i++) name[fmt, i - 2] = $i; order[++nf] = fmt }
        $1 == "ROW" { rows[$2] = rows[$2] $0 "\n" }
        END {
            for (k = 1; k <= nf; k++) {
                f = order[k]
                printf "\n**%s**\n\n| tool | mode |", toupper(f)
                for (i = 1; i <= n[f]; i++) { nm = name[f, i]; sub(/\.png$/, "", nm); printf " %s |", nm }
                printf " mean | Mpix/s 1T | Mpix/s all |\n|---|---|"
                for (i = 1; i <= n[f] + 3; i++) printf "---:|"
                printf "\n"
                m = split(rows[f], lines, "\n")
                for (j = 1; j <= m; j++) {
                    if (lines[j] == "") continue
                    c = split(lines[j], v, "\t")
                    printf "| %s | %s |", v[3], v[4]
                    for (i = 5; i <= c; i++) printf " %s |", v[i]
                    printf "\n"
                }
            }
        }' "$TSV"
} > "$OUT/results.md"
echo "run_bench.sh: wrote $OUT/results.md" >&2

# plots (Pillow; matplotlib is not needed)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" "$(dirname "$0")/plot_bench.py" "$TSV" "$OUT" || echo "run_bench.sh: no plot (python3 with Pillow needed)" >&2
