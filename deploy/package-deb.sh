#!/usr/bin/env bash
# Builds the Debian package and checks it (CI runs this after the tests):
#  1. cmake --preset package (the release build configured for /usr, no tests or benchmarks), the build, and
#     cpack --preset deb: build/package/packages/denoc_<version>_<arch>.deb;
#  2. dpkg-deb -I: package name, the project's version, architecture, dependencies found by dpkg-shlibdeps
#     (libgrpc++, libprotobuf, ...), the conffile /etc/default/denoc;
#  3. dpkg-deb -c: programs, static libraries, headers (generated ones included), the CMake package, the
#     pkg-config files, the protocol, the example models with their licences, the systemd unit, the copyright
#     file (Apache-2.0);
#  4. dpkg -x into a temporary directory (nothing is installed on this machine): denocd --version, denoc
#     --version, `denoc demo` on the packaged models, the pkg-config file's prefix;
#  5. the systemd unit's sandbox options; systemd-analyze verify when systemd is installed;
#  6. lintian: every finding printed; errors fail the check (docs/contributing.md lists what remains).
# Usage: deploy/package-deb.sh   (needs the packages of deploy/install-deps.sh; installs lintian if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/docker-env.sh  # denoc_apt_install
command -v lintian >/dev/null 2>&1 || { echo "package-deb: installing lintian" >&2; denoc_apt_install lintian; }

version=$(sed -nE 's/^project\(denoc VERSION ([0-9.]+).*/\1/p' CMakeLists.txt)
arch=$(dpkg --print-architecture)
deb=build/package/packages/denoc_${version}_${arch}.deb
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok    $*"; }
expect() {  # expect DESCRIPTION COMMAND...: ok when the command succeeds
  local what=$1
  shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}

t0=$(date +%s)
cmake --preset package >/dev/null
cmake --build --preset package
rm -f "$deb"
cpack --preset deb >/dev/null
[ -f "$deb" ] || { echo "package-deb: $deb was not made" >&2; exit 1; }
echo "package-deb: $deb ($(du -k "$deb" | cut -f1) KiB) built in $(($(date +%s) - t0)) s"

# ---- metadata ---------------------------------------------------------------------------------------------------
info=$(dpkg-deb -I "$deb")
echo "$info" | sed -n '/Package:/,$p'
echo " Depends: $(dpkg-deb -f "$deb" Depends)"
field() { dpkg-deb -f "$deb" "$1"; }
expect "Package: $(field Package) (denoc)" [ "$(field Package)" = denoc ]
expect "Version: $(field Version) ($version)" [ "$(field Version)" = "$version" ]
expect "Architecture: $(field Architecture) ($arch)" [ "$(field Architecture)" = "$arch" ]
for dep in 'libgrpc++1.51' libprotobuf32 libspdlog1.10 libmicrohttpd12 'libssl3' 'liburdfdom-model' 'libstdc++6' libc6; do
  if field Depends | tr ',' '\n' | grep -q "^ *${dep}"; then ok "Depends on $dep"; else fail "Depends lacks $dep: $(field Depends)"; fi
done
if echo "$info" | grep -q ' conffiles *$' && dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles | grep -qx /etc/default/denoc; then
  ok "conffile /etc/default/denoc"
else
  fail "/etc/default/denoc is not a conffile"
fi

# ---- contents ---------------------------------------------------------------------------------------------------
contents=$(dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./|/|')
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for f in /usr/bin/denocd /usr/bin/denoc /usr/bin/denoc-health /usr/bin/denoc_probe \
  "/usr/lib/$multiarch/libdenoc_core.a" "/usr/lib/$multiarch/libdenoc_client.a" "/usr/lib/$multiarch/libdenoc_proto.a" \
  /usr/include/denoc/denoc.hpp /usr/include/denoc/version.hpp /usr/include/denoc/config.hpp \
  /usr/include/denoc/client/client.hpp /usr/include/denoc/v1/dynamics.grpc.pb.h \
  "/usr/lib/$multiarch/cmake/denoc/denocConfig.cmake" "/usr/lib/$multiarch/cmake/denoc/denocConfigVersion.cmake" \
  "/usr/lib/$multiarch/cmake/denoc/denocCoreTargets.cmake" "/usr/lib/$multiarch/pkgconfig/denoc.pc" \
  "/usr/lib/$multiarch/pkgconfig/denoc-client.pc" /usr/share/denoc/proto/denoc/v1/dynamics.proto \
  /usr/share/denoc/models/panda.urdf /usr/share/denoc/models/README.md /usr/share/denoc/models/LICENSES/Apache-2.0.txt \
  /lib/systemd/system/denoc.service /etc/default/denoc /usr/share/doc/denoc/copyright \
  /usr/share/doc/denoc/changelog.gz /usr/share/man/man1/denocd.1.gz; do
  if grep -qx "$f" <<<"$contents"; then ok "contains $f"; else fail "missing $f"; fi
done
echo "package-deb: $(grep -vc '/$' <<<"$contents") files; dpkg-deb -c (abridged):"
dpkg-deb -c "$deb" | grep -v '/$' | grep -v -E 'include/denoc/(algorithm|v1)/|models/[a-z_0-9]+\.urdf' | awk '{print "    " $3, $NF}'

# ---- the programs, unpacked ----------------------------------------------------------------------------------------
x=$(mktemp -d /tmp/denoc-deb.XXXXXX)
trap 'rm -rf "$x"' EXIT
dpkg -x "$deb" "$x"
for p in denocd denoc; do
  out=$("$x/usr/bin/$p" --version)
  expect "$p --version: $out" [ "$out" = "$p $version" ]
done
demo=$("$x/usr/bin/denoc" demo | head -n 1)
expect "denoc demo: $demo" grep -q "from $x/usr/share/denoc/models/stanford_arm.json" <<<"$demo"
expect "denoc.pc: prefix=/usr" grep -qx 'prefix=/usr' "$x/usr/lib/$multiarch/pkgconfig/denoc.pc"
expect "copyright: Apache-2.0" grep -q '^License: Apache-2.0$' "$x/usr/share/doc/denoc/copyright"

# ---- the systemd unit -------------------------------------------------------------------------------------------
unit=$x/lib/systemd/system/denoc.service
for opt in 'ExecStart=/usr/bin/denocd' 'DynamicUser=yes' 'StateDirectory=denoc' 'ProtectSystem=strict' \
  'NoNewPrivileges=yes' 'EnvironmentFile=-/etc/default/denoc' 'DENOC_STORE_DIR=/var/lib/denoc/store'; do
  expect "unit: $opt" grep -q -- "$opt" "$unit"
done
if command -v systemd-analyze >/dev/null 2>&1; then
  # verify resolves ExecStart on this machine: point it at the unpacked program
  sed "s|ExecStart=/usr/bin/denocd|ExecStart=$x/usr/bin/denocd|" "$unit" >"$x/denoc.service"
  if out=$(systemd-analyze verify "$x/denoc.service" 2>&1); then ok "systemd-analyze verify"; else fail "systemd-analyze verify: $out"; fi
else
  echo "skip  systemd-analyze verify (systemd is not installed here)"
fi

# ---- lintian --------------------------------------------------------------------------------------------------------
echo "package-deb: lintian $deb"
lint=$(lintian --no-tag-display-limit "$deb" 2>&1 || true)
while IFS= read -r line; do echo "    $line"; done <<<"${lint:-(no findings)}"
if grep -q '^E:' <<<"$lint"; then fail "lintian errors"; else ok "lintian: no errors ($(grep -c '^W:' <<<"$lint") warnings)"; fi

echo "package-deb: $failures failed; $deb"
[ "$failures" -eq 0 ]
