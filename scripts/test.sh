#!/usr/bin/env bash
# test.sh - the whole test suite: the Release build (./build, made by setup.sh), an ASan+UBSan build
# (./build-asan), a Release build without the Vulkan backend (./build-novk: the stubs link and the CPU
# paths pass without a device), and a short run of every fuzz target (./build-fuzz, clang + libFuzzer).
# Usage: bash scripts/test.sh            (after scripts/setup.sh)
# Environment: KILN_FUZZ_SECONDS (default 20 per target), KILN_SKIP_ASAN=1, KILN_SKIP_NOVK=1, KILN_SKIP_FUZZ=1.
# CI budget (tests/README.md, "Test time"): a fresh clone on 2 cores without a GPU, Mesa's shader cache cold, in
# under 20 minutes. The sanitised build's ctest runs the GPU tests light (KILN_TEST_GPU_LIGHT=1: each host path once,
# not the shader-variant matrices, which the Release build's ctest runs in full) and without the Vulkan validation
# layer (KILN_TEST_VK_VALIDATION=0: the Release ctest validates every Vulkan call); the sanitised and fuzz builds skip
# bench/ (-DKILN_BENCH=OFF; the Release and no-Vulkan builds compile it); the fuzz targets run one per core.
set -euo pipefail
cd "$(dirname "$0")/.."
shared="${KILN_SHARED_DIR:-$(cd .. && pwd)/shared}"
jobs="$(nproc)"
export CTEST_OUTPUT_ON_FAILURE=1
# lavapipe (llvmpipe) keeps compiled shaders in Mesa's on-disk cache ($MESA_SHADER_CACHE_DIR, else
# $XDG_CACHE_HOME/mesa_shader_cache or ~/.cache/mesa_shader_cache): the sanitised run reuses what the Release run compiled,
# and a machine that ran the tests before starts warm (a cold cache doubles the Release run's GPU tests on 2 cores).

# phase NAME: prints the phase's start (UTC) and the seconds test.sh has run so far
phase() { echo "== $1 ($(date -u +%H:%M:%S), ${SECONDS} s into test.sh)"; }

phase "Release build: tests"
cmake --build build -j"$jobs"
(cd build && ctest -j"$jobs" --timeout 900)

if [ "${KILN_SKIP_ASAN:-0}" != 1 ]; then
  phase "ASan+UBSan build"
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DKILN_SANITIZE=ON -DKILN_BENCH=OFF -DKILN_SHARED_DIR="$shared" >/dev/null
  cmake --build build-asan -j"$jobs"
  phase "ASan+UBSan build: tests (GPU tests light)"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     KILN_TEST_GPU_LIGHT=1 KILN_TEST_VK_VALIDATION=0 ctest -j"$jobs" --timeout 1500)
fi

if [ "${KILN_SKIP_NOVK:-0}" != 1 ]; then
  phase "build without Vulkan: tests"
  cmake -S . -B build-novk -DCMAKE_BUILD_TYPE=Release -DKILN_VULKAN=OFF -DKILN_SHARED_DIR="$shared" >/dev/null
  cmake --build build-novk -j"$jobs"
  phase "tests without Vulkan"
  (cd build-novk && ctest -j"$jobs" --timeout 900)
fi

if [ "${KILN_SKIP_FUZZ:-0}" != 1 ]; then
  phase "fuzz build"
  cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DKILN_FUZZ=ON -DKILN_TESTS=OFF \
        -DKILN_VULKAN=OFF -DKILN_BENCH=OFF -DKILN_SHARED_DIR="$shared" >/dev/null
  cmake --build build-fuzz -j"$jobs"
  phase "fuzz targets (${KILN_FUZZ_SECONDS:-20} s each, $jobs at a time)"
  bash tests/fuzz/run.sh build-fuzz "${KILN_FUZZ_SECONDS:-20}" "$jobs"
fi
phase "all tests passed"
