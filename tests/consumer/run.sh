#!/usr/bin/env bash
# Uses denoc the way another project does, from an installed tree (ctest: consumer_install):
#  1. cmake --install BUILD --prefix TMP/prefix (the build as it is);
#  2. the project in this directory, configured with CMAKE_PREFIX_PATH=TMP/prefix: find_package(denoc 0.2)
#     gives denoc::core (core_consumer: inverse dynamics of a two-link arm from URDF against the closed form;
#     no gRPC or protobuf library in its dependencies) and denoc::client (client_consumer: the same through
#     the installed denocd, started here on 127.0.0.1); find_package(denoc 0.3) must fail;
#  3. the same two programs built with a plain compiler command from pkg-config denoc / denoc-client;
#  4. a file compiled without EIGEN_DONT_VECTORIZE is refused with denoc/config.hpp's message;
#  5. the installed programs: --version, and `denoc demo` finds the installed example models;
#  6. the top-level README's C++ example (built with pkg-config denoc-client; its torques against the
#     installed denoc's in-process answer) and its command-line example, run as written against the
#     installed denocd with the installed programs first on PATH.
# Usage: tests/consumer/run.sh BUILD_DIR [WORK_DIR]   (WORK_DIR default: a new temporary directory, removed)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
version=$(sed -nE 's/^project\(denoc VERSION ([0-9.]+).*/\1/p' "$here/../../CMakeLists.txt")
keep=${2:-}
if [ -n "$keep" ]; then
  work=$keep
  rm -rf "$work" && mkdir -p "$work"
else
  work=$(mktemp -d /tmp/denoc-consumer.XXXXXX)
fi
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  [ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT
step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

prefix=$work/prefix
step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
echo "$(grep -c Installing "$work/install.log") files"

step "the installed programs"
for p in denocd denoc; do
  out=$("$prefix/bin/$p" --version)
  echo "$out"
  [ "$out" = "$p $version" ] || fail "$p --version: '$out', expected '$p $version'"
done
demo=$("$prefix/bin/denoc" demo | head -n 1)
echo "$demo"
[[ $demo == *"from $prefix/share/denoc/models/stanford_arm.json"* ]] || fail "denoc demo did not use the installed models"

step "a denocd from the installed tree on 127.0.0.1"
"$prefix/bin/denocd" --listen 127.0.0.1:0 --port-file "$work/port" --store-dir "$work/store" \
  --shutdown-grace-ms 0 >"$work/denocd.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 200); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || { cat "$work/denocd.log"; fail "denocd did not start"; }
server=127.0.0.1:$(cat "$work/port")
grep -q "denocd $version starting" "$work/denocd.log" || fail "the startup line does not name version $version"

step "CMake: find_package(denoc 0.2 CONFIG REQUIRED COMPONENTS core client)"
cmake -S "$here" -B "$work/cmake" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" >"$work/configure.log" ||
  { cat "$work/configure.log"; fail "configure"; }
cmake --build "$work/cmake" >"$work/build.log" || { cat "$work/build.log"; fail "build"; }
"$work/cmake/core_consumer"
if ldd "$work/cmake/core_consumer" | grep -Ei 'grpc|protobuf'; then fail "gRPC or protobuf reached denoc::core"; fi
echo "core_consumer: no gRPC or protobuf library among its dependencies"
"$work/cmake/client_consumer" "$server"
if cmake -S "$here" -B "$work/cmake-0.3" -DCMAKE_PREFIX_PATH="$prefix" -DDENOC_WANT=0.3 >"$work/configure-0.3.log" 2>&1; then
  fail "find_package(denoc 0.3) accepted version $version"
fi
grep -q 'requested version "0.3"' "$work/configure-0.3.log" || { cat "$work/configure-0.3.log"; fail "0.3: another error"; }
echo "find_package(denoc 0.3) refused: version $version"

step "pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
echo "pkg-config --cflags --libs denoc: $(pkg-config --cflags --libs denoc)"
echo "pkg-config --modversion denoc: $(pkg-config --modversion denoc)"
[ "$(pkg-config --modversion denoc)" = "$version" ] || fail "denoc.pc version"
# shellcheck disable=SC2046  # pkg-config's words are separate arguments
c++ -std=c++20 -o "$work/core_pc" "$here/core_consumer.cpp" $(pkg-config --cflags --libs denoc)
"$work/core_pc"
# shellcheck disable=SC2046
c++ -std=c++20 -o "$work/client_pc" "$here/client_consumer.cpp" $(pkg-config --cflags --libs denoc-client)
"$work/client_pc" "$server"

step "a file compiled without EIGEN_DONT_VECTORIZE"
# shellcheck disable=SC2046
if c++ -std=c++20 -fsyntax-only -I"$prefix/include" $(pkg-config --cflags eigen3) "$here/core_consumer.cpp" \
  >"$work/mismatch.log" 2>&1; then
  fail "compiled without EIGEN_DONT_VECTORIZE"
fi
grep -m1 'define EIGEN_DONT_VECTORIZE' "$work/mismatch.log" || { cat "$work/mismatch.log"; fail "another error"; }

step "README.md: the C++ example"
repo=$(cd "$here/../.." && pwd)
python3 "$here/readme_block.py" "$repo/README.md" '**C++**' cpp >"$work/readme.cpp"
# shellcheck disable=SC2046
c++ -std=c++20 -o "$work/readme_cpp" "$work/readme.cpp" $(pkg-config --cflags --libs denoc-client)
DENOC_SERVER=$server "$work/readme_cpp" | tee "$work/readme_cpp.out"
# the in-process core (the installed denoc without a server) gives the same torques, to the 6 digits printed
"$prefix/bin/denoc" id "$repo/examples/models/stanford_arm.json" --q=0.1,0.7,0.05,-0.4,0.9,0.2 --format csv |
  tail -n 1 | awk -F, '{ for (i = NF - 5; i <= NF; i++) print $i }' >"$work/local_tau"
sed 's/^tau = //' "$work/readme_cpp.out" | tr -s ' ' '\n' | grep . >"$work/remote_tau"
paste "$work/remote_tau" "$work/local_tau" | awk 'NF == 2 { n++; d = $1 - $2; s = ($2 < 0 ? -$2 : $2) + 1e-3;
  if ((d < 0 ? -d : d) > 1e-5 * s) bad = 1 } END { exit (bad || n != 6) }' ||
  fail "the README's C++ example: $(cat "$work/readme_cpp.out"), in-process $(tr '\n' ' ' <"$work/local_tau")"
echo "the README's C++ example: the torques of the in-process core"

step "README.md: the command-line example"
python3 "$here/readme_block.py" "$repo/README.md" '**Command line**' sh >"$work/readme_cli.sh"
(cd "$repo" && PATH="$prefix/bin:$PATH" DENOC_SERVER=$server bash -euo pipefail "$work/readme_cli.sh") >"$work/readme_cli.out" 2>&1 ||
  { cat "$work/readme_cli.out"; fail "the README's command-line example"; }
if ! grep -q 'stanford_arm' "$work/readme_cli.out" || ! grep -Eq '^[0-9a-f]{64}$' "$work/readme_cli.out" ||
  ! grep -q '^t,q0,q1,q2,qd0' "$work/readme_cli.out" || ! grep -q 'floating root (nq 19, nv 18)' "$work/readme_cli.out"; then
  cat "$work/readme_cli.out"
  fail "the command-line example's output"
fi
echo "the README's command-line example: $(wc -l <"$work/readme_cli.out") lines of output"

echo "consumer: all checks passed"
