#!/usr/bin/env bash
# Gathers into .bundle/ (ignored by git) what building ptdp on the lent GPU
# machine needs and that machine lacks (it reaches no registry and has no
# Debian -dev packages): the Debian packages below unpacked into
# .bundle/prefix (never into /), and the cuDNN frontend headers from PyPI into
# .bundle/cudnn_frontend/include. Run here, on the CPU machine; then carry
# ".bundle" with the device call (docs/gpu-campaign.md). Idempotent: a finished
# bundle is rebuilt from scratch only with --fresh.
# Usage: scripts/gpu_bundle.sh [--fresh]
set -euo pipefail
cd "$(dirname "$0")/.."

bundle=.bundle
limit_mib=48
cudnn_frontend_version=1.32.0
# Build dependencies and the runtime libraries they pull in (apt-cache depends):
# libopenblas-dev -> libopenblas-pthread-dev -> libopenblas0-pthread -> libgfortran5 -> libquadmath0;
# libbenchmark-dev -> libbenchmark1debian; libgmock-dev -> libgtest-dev (googletest, the sources, is not needed).
packages=(nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian
          libopenblas-dev libopenblas-pthread-dev libopenblas0-pthread libopenblas0 libgfortran5 libquadmath0)

if [ "${1:-}" = "--fresh" ]; then rm -rf "$bundle"; fi
if [ -f "$bundle/.complete" ]; then
  echo "gpu_bundle: $bundle is complete ($(du -sh "$bundle" | cut -f1)); --fresh rebuilds it"
  exit 0
fi
rm -rf "$bundle"
mkdir -p "$bundle/debs" "$bundle/prefix" "$bundle/cudnn_frontend"
grep -qx "/$bundle/" .gitignore 2>/dev/null || echo "/$bundle/" >> .gitignore

# --- Debian packages, unpacked into the prefix ------------------------------
if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then
  echo "gpu_bundle: apt lists are empty: apt-get update"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
fi
(cd "$bundle/debs" && apt-get download -q "${packages[@]}")
for deb in "$bundle"/debs/*.deb; do
  dpkg -x "$deb" "$bundle/prefix"
done
rm -rf "$bundle/debs"

# What Debian's alternatives would link (update-alternatives does not run under dpkg -x):
# libopenblas.so and libopenblas.so.0 beside the other libraries, cblas.h where find_path looks.
arch=x86_64-linux-gnu
lib="$bundle/prefix/usr/lib/$arch"
ln -sf openblas-pthread/libopenblas.so "$lib/libopenblas.so"
ln -sf openblas-pthread/libopenblas.so.0 "$lib/libopenblas.so.0"
mkdir -p "$bundle/prefix/usr/include/openblas"
cp "$bundle/prefix/usr/include/$arch/openblas-pthread/"*.h "$bundle/prefix/usr/include/openblas/"
# Unused and large: OpenBLAS's static archives (ptdp links the shared library) and
# its LAPACK and reference-BLAS wrappers (ptdp calls cblas_* of libopenblas only); docs.
rm -f "$lib"/openblas-pthread/*.a "$lib"/openblas-pthread/liblapack.so* "$lib"/openblas-pthread/libblas.so*
rm -rf "$bundle/prefix/usr/share/doc" "$bundle/prefix/usr/share/lintian" "$bundle/prefix/usr/share/man"

# --- cuDNN frontend headers (header-only C++ API) from PyPI --------------------
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "nvidia-cudnn-frontend==$cudnn_frontend_version"
wheel=$(ls "$tmp"/nvidia_cudnn_frontend-*.whl)
python3 - "$wheel" "$bundle/cudnn_frontend" <<'EOF'
# Extract only the headers: every member under some include/ folder, re-rooted at include/.
import sys, zipfile, os
wheel, dest = sys.argv[1], sys.argv[2]
n = 0
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        parts = name.split("/")
        if "include" not in parts or name.endswith("/"):
            continue
        rel = "/".join(parts[parts.index("include"):])
        os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(dest, rel), "wb") as out:
            out.write(z.read(name))
        n += 1
if n == 0 or not os.path.exists(os.path.join(dest, "include", "cudnn_frontend.h")):
    sys.exit(f"gpu_bundle: no include/cudnn_frontend.h in {wheel}")
print(f"gpu_bundle: {n} cuDNN frontend headers")
EOF

# --- size check ---------------------------------------------------------------
kib=$(du -sk "$bundle" | cut -f1)
echo "gpu_bundle: $bundle is $((kib / 1024)) MiB (limit $limit_mib MiB; the working tree travels too)"
if [ "$kib" -gt $((limit_mib * 1024)) ]; then
  echo "gpu_bundle: over $limit_mib MiB"
  exit 1
fi
touch "$bundle/.complete"
