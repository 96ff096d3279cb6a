#!/usr/bin/env bash
# Lints the sources and the container and deployment files offline (no cluster, no daemon) on a Debian 12
# machine, installing what it needs (apt-get as root or through sudo; npm packages pinned by
# deploy/lint/package-lock.json and clients/node/package-lock.json into their node_modules, which git
# ignores). The rules, and how to run one check alone, are in docs/contributing.md.
#   cxx-format   clang-format --dry-run -Werror (the committed .clang-format) on every C++ file
#   python       flake8 (Debian; the committed .flake8) on every Python file
#   ts-strict    tsc --strict on the Node package's TypeScript (sources, tests, examples)
#   ts-eslint    eslint (npm; clients/node/eslint.config.mjs) on the same
#   dockerfile   dockerfilelint (npm) on the Dockerfile
#   yaml         yamllint (Debian) with deploy/lint/yamllint.yaml on deploy/compose.yaml and deploy/k8s/*.yaml
#   compose      docker-compose config (Debian's docker-compose): the compose file parses and is valid
#   kustomize    kubectl kustomize deploy/k8s (kubectl, or Debian's kubernetes-client)
#   k8s-schema   every manifest against the Kubernetes API's schemas and types, unknown fields included
#                (deploy/lint/validate-k8s.mjs; kubectl create --dry-run=client needs a cluster to map kinds)
#   shell        shellcheck on deploy/*.sh (every finding), and on the other scripts (warnings and errors)
# Exit 0 only when every check passes. Usage: deploy/lint.sh [CHECK...] (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/docker-env.sh  # denoc_apt_install

need() {  # need COMMAND DEBIAN-PACKAGE
  command -v "$1" >/dev/null 2>&1 || { echo "lint: installing $2" >&2; denoc_apt_install "$2"; }
}
need clang-format clang-format
need flake8 flake8
need yamllint yamllint
need shellcheck shellcheck
need docker-compose docker-compose
need kubectl kubernetes-client
if ! command -v node >/dev/null 2>&1; then denoc_apt_install nodejs npm; fi
if [ ! -x deploy/lint/node_modules/.bin/dockerfilelint ] ||
  [ deploy/lint/package-lock.json -nt deploy/lint/node_modules/.package-lock.json ]; then
  echo "lint: npm ci in deploy/lint" >&2
  npm ci --prefix deploy/lint --no-audit --no-fund --loglevel=error >/dev/null
fi
if [ ! -f clients/node/node_modules/.package-lock.json ] ||
  [ clients/node/package-lock.json -nt clients/node/node_modules/.package-lock.json ]; then
  echo "lint: npm ci in clients/node" >&2
  npm ci --prefix clients/node --no-audit --no-fund --loglevel=error >/dev/null
fi

only=("$@")
passed=0
failed=0
check() {  # check NAME COMMAND...
  local name=$1 out
  shift
  if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then return 0; fi
  if out=$("$@" 2>&1); then
    passed=$((passed + 1))
    echo "lint: $name: ok"
  else
    failed=$((failed + 1))
    echo "lint: $name: FAILED"
    printf '%s\n' "$out" | sed 's/^/    /'
  fi
}

yaml_files=(deploy/compose.yaml deploy/k8s/*.yaml deploy/lint/yamllint.yaml)
manifests=()
for f in deploy/k8s/*.yaml; do
  [ "$(basename "$f")" = kustomization.yaml ] || manifests+=("$f")
done

# the sources, wherever they are (not the build trees or fetched packages)
sources() {  # sources NAME-PATTERN...: files of the checkout matching any pattern
  local args=() p
  for p in "$@"; do args+=(-o -name "$p"); done
  find . \( -name build -o -name 'build-*' -o -name node_modules -o -name .git -o -name dist -o -name generated \
    -o -path ./clients/python/denoc/v1 \) -prune -o -type f \( "${args[@]:1}" \) -print | sort
}
mapfile -t cxx_files < <(sources '*.cpp' '*.hpp' '*.hxx' '*.h' '*.cc')
mapfile -t python_files < <(sources '*.py')
mapfile -t other_scripts < <(sources '*.sh' | grep -v '^./deploy/[^/]*\.sh$'; echo .ci/run)
# the Node package's TypeScript: its generated message types first (scripts/build.js), then tsc without output
node_typescript() {
  (cd clients/node && node scripts/build.js >/dev/null && node node_modules/typescript/bin/tsc --strict --noEmit -p tsconfig.json)
}

check cxx-format clang-format --dry-run -Werror "${cxx_files[@]}"
check python flake8 "${python_files[@]}"
check ts-strict node_typescript
check ts-eslint bash -c 'cd clients/node && node_modules/.bin/eslint --max-warnings 0 src test examples'
check dockerfile deploy/lint/node_modules/.bin/dockerfilelint Dockerfile
check yaml yamllint --strict -c deploy/lint/yamllint.yaml "${yaml_files[@]}"
check compose docker-compose -f deploy/compose.yaml config -q
check kustomize kubectl kustomize deploy/k8s
check k8s-schema node deploy/lint/validate-k8s.mjs "${manifests[@]}"
check shell bash -c 'shellcheck -x deploy/*.sh && shellcheck -x -S warning "$@"' shell "${other_scripts[@]}"

echo "lint: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
