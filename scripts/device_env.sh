# device_env.sh - sourced at the start of every command on the GPU device machine (see docs/PERFORMANCE.md,
# "How the GPU numbers are taken"). The device has the NVIDIA driver but no Vulkan loader: the loader and
# GL dispatch packages (downloaded once into the git-ignored .gl/ with apt-get download) are unpacked into /,
# flam3-render and its libraries (.gl/flam3/) into /opt/flam3. B points at the carried binaries.
for f in .gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
if [ -d .gl/flam3 ]; then
  mkdir -p /opt/flam3
  for f in .gl/flam3/*.deb; do dpkg -x "$f" /opt/flam3; done
  export PATH=/opt/flam3/usr/bin:$PATH
  export LD_LIBRARY_PATH=/opt/flam3/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export flam3_palettes=/opt/flam3/usr/share/flam3/flam3-palettes.xml
fi
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
export VK_LAYER_PATH=/usr/share/vulkan/explicit_layer.d
# tests and benches were built with KILN_SHARED_DIR=/work/shared: the carried copy .gl/shared stands in
if [ ! -e /work/shared ] && [ -d .gl/shared ]; then mkdir -p /work; ln -s "$PWD/.gl/shared" /work/shared; fi
export B=$PWD/build-dev
# libraries the binaries link that the device lacks (cmocka, zstd, OpenEXR, expat ...), copied by ldd into .gl/lib
[ -d .gl/lib ] && export LD_LIBRARY_PATH=$PWD/.gl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
