#!/usr/bin/env bash
# Lints the container and deployment files offline (no cluster, no daemon) on a Debian 12 machine, installing
# what it needs (apt-get as root or through sudo; npm packages pinned by deploy/lint/package-lock.json into
# deploy/lint/node_modules, which git ignores):
#   dockerfile   dockerfilelint (npm) on the Dockerfile
#   yaml         yamllint (Debian) with deploy/lint/yamllint.yaml on deploy/compose.yaml and deploy/k8s/*.yaml
#   compose      docker-compose config (Debian's docker-compose): the compose file parses and is valid
#   kustomize    kubectl kustomize deploy/k8s (kubectl, or Debian's kubernetes-client)
#   k8s-schema   every manifest against the Kubernetes API's schemas and types, unknown fields included
#                (deploy/lint/validate-k8s.mjs; kubectl create --dry-run=client needs a cluster to map kinds)
#   shell        shellcheck on deploy/*.sh
# Exit 0 only when every check passes.
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/docker-env.sh  # denoc_apt_install

need() {  # need COMMAND DEBIAN-PACKAGE
  command -v "$1" >/dev/null 2>&1 || { echo "lint: installing $2" >&2; denoc_apt_install "$2"; }
}
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

passed=0
failed=0
check() {  # check NAME COMMAND...
  local name=$1 out
  shift
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

check dockerfile deploy/lint/node_modules/.bin/dockerfilelint Dockerfile
check yaml yamllint --strict -c deploy/lint/yamllint.yaml "${yaml_files[@]}"
check compose docker-compose -f deploy/compose.yaml config -q
check kustomize kubectl kustomize deploy/k8s
check k8s-schema node deploy/lint/validate-k8s.mjs "${manifests[@]}"
check shell shellcheck -x deploy/*.sh

echo "lint: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
