#!/usr/bin/env bash
# run_gpu_decode.sh - runs the GPU decode benchmark (bench/gpu_decode.c) from a prebuilt build
# directory and prints its markdown table on stdout; diagnostics go to stderr.
#
# usage: bench/run_gpu_decode.sh [BUILD_DIR] [gpu_decode options...]
#   BUILD_DIR   holds the gpu_decode binary (default: ./build). The SPIR-V is embedded in it: no
#               glslc or shader files are needed where it runs.
#   options     passed on, e.g. --size 4096 --runs 20 --file-runs 5 --cpu-runs 5 --all --device 1
#               (gpu_decode --help lists them).
# Environment:
#   VULKAN_LOADER_DIR  directory holding an unpacked libvulkan.so.1 (prepended to LD_LIBRARY_PATH)
#   KILN_BENCH_TMP     directory for the KTX2 and .bin files of the file-to-file runs (default: a
#                      fresh mktemp directory, removed afterwards; a 4096^2 float image is 256 MiB)
# Unless VK_DRIVER_FILES / VK_ICD_FILENAMES are set, NVIDIA's driver is reached through a manifest
# written here for libEGL_nvidia.so.0 on headless hosts (see below), passed with VK_DRIVER_FILES.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-$here/../build}
[ $# -gt 0 ] && shift
bin=$build/gpu_decode
if [ ! -x "$bin" ]; then
    echo "run_gpu_decode.sh: $bin not found: build kiln first (cmake --build BUILD_DIR --target gpu_decode)" >&2
    exit 1
fi

if [ -n "${VULKAN_LOADER_DIR:-}" ]; then
    export LD_LIBRARY_PATH="$VULKAN_LOADER_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

tmp=${KILN_BENCH_TMP:-}
cleanup=
if [ -z "$tmp" ]; then
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/kiln-gpu-decode.XXXXXX")
    cleanup=$tmp
fi
trap '[ -n "$cleanup" ] && rm -rf "$cleanup"' EXIT

# NVIDIA's Vulkan driver lives in libGLX_nvidia.so.0 (the manifest NVIDIA installs) and in
# libEGL_nvidia.so.0. On a headless host (no DISPLAY) the GLX entry refuses vkCreateInstance
# ("Could not get 'vkCreateInstance' via 'vk_icdGetInstanceProcAddr'"), so there, and wherever no
# NVIDIA manifest is installed, point the loader at the EGL library with a manifest of our own.
find_nvlib() {
    local name=$1 p
    p=$( (ldconfig -p 2>/dev/null | awk -v n="$name" '$1 == n {print $NF; exit}') || true)
    if [ -z "$p" ]; then
        for d in ${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH//:/ }} /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
            if [ -e "$d/$name" ]; then p=$d/$name; break; fi
        done
    fi
    echo "$p"
}
if [ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]; then
    have_manifest=0
    for d in /etc/vulkan/icd.d /usr/local/etc/vulkan/icd.d /usr/share/vulkan/icd.d /usr/local/share/vulkan/icd.d; do
        if ls "$d"/*nvidia*.json >/dev/null 2>&1; then have_manifest=1; fi
    done
    nvlib=
    if [ -z "${DISPLAY:-}" ]; then nvlib=$(find_nvlib libEGL_nvidia.so.0); fi
    if [ -z "$nvlib" ] && [ "$have_manifest" = 0 ]; then nvlib=$(find_nvlib libGLX_nvidia.so.0); fi
    if [ -n "$nvlib" ]; then
        printf '{ "file_format_version": "1.0.0", "ICD": { "library_path": "%s", "api_version": "1.3.0" } }\n' \
            "$nvlib" > "$tmp/kiln_nvidia_icd.json"
        export VK_DRIVER_FILES="$tmp/kiln_nvidia_icd.json" VK_ICD_FILENAMES="$tmp/kiln_nvidia_icd.json"
        echo "run_gpu_decode.sh: Vulkan driver manifest for $nvlib" >&2
    fi
fi

if ldd "$bin" 2>/dev/null | grep -q "not found"; then
    echo "run_gpu_decode.sh: missing libraries (set VULKAN_LOADER_DIR for libvulkan.so.1):" >&2
    ldd "$bin" | grep "not found" >&2
    exit 1
fi
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >&2 || true
fi

"$bin" --tmp "$tmp" "$@"
