#!/usr/bin/env bash
# The core's object code keeps AVX2 and AVX-512 instructions inside the kernels chosen at run time
# (core/src/batch_kernels.cpp, core/src/cholesky_blocked.cpp, core/src/negated_product.cpp,
# core/src/derivative_assembly.cpp, core/src/dense_kernels.cpp; docs/batches.md): in every object of the
# core library, a function that touches a ymm, zmm or mask register, or an EVEX-only register (xmm16-31,
# ymm16-31), or has any VEX-encoded instruction (a mnemonic v...: AVX even on xmm registers), must be one of
# those kernels; the AVX2 kernels use no AVX-512 register; and every kernel
# exists and does use its wide registers (else the target attributes did nothing).
#   tests/core/isa_isolation.sh OBJECT...     (ctest passes the objects of denoc_core)
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 OBJECT..." >&2; exit 2; }
# ctest passes the objects as one ;-separated list
objects=()
for arg in "$@"; do
  IFS=';' read -r -a parts <<< "$arg"
  objects+=("${parts[@]}")
done
set -- "${objects[@]}"
command -v objdump >/dev/null || { echo "objdump not found" >&2; exit 2; }

# function name (demangled) and the wide registers it touches, one line per function that touches any
report="$(for o in "$@"; do objdump -d --no-show-raw-insn "$o"; done | c++filt | awk '
  /^[0-9a-f]+ <.*>:$/ { fn = substr($0, index($0, "<") + 1); sub(/>:$/, "", fn); next }
  /%[yz]mm|%k[0-7]|%xmm(1[6-9]|2[0-9]|3[01])/ || $2 ~ /^v[a-z]/ {
    if ($0 ~ /%zmm|%k[0-7]|%[xy]mm(1[6-9]|2[0-9]|3[01])/) evex[fn] = 1
    wide[fn] = 1
  }
  END { for (f in wide) printf "%s\t%s\n", (f in evex) ? "avx512" : "avx2", f }')"

fail=0
expected_avx2=(inverseDynamicsLanes4 forwardDynamicsLanes4 fullFactorLanes4 choleskyBlocked4 negatedProduct4 assemble4
  placementsAvx2 crbaAvx2 denseUDUAvx2 explicitUAvx2 inverseBySweepsAvx2 negatedSolveUDUAvx2 treeLocalCrbaAvx2
  treeFactorAvx2)
expected_avx512=(inverseDynamicsLanes8 forwardDynamicsLanes8 fullFactorLanes8 choleskyBlocked8 negatedProduct8)
while IFS=$'\t' read -r isa fn; do
  [ -n "$fn" ] || continue
  # the function's own name: the identifier right before its parameter list
  name="$(grep -oE '[A-Za-z_][A-Za-z0-9_]*\(' <<< "$fn" | head -n1 | tr -d '(')"
  case " ${expected_avx2[*]} " in
    *" $name "*)
      if [ "$isa" = avx512 ]; then echo "FAIL: AVX2 kernel uses AVX-512 registers: $fn"; fail=1; fi
      continue ;;
  esac
  case " ${expected_avx512[*]} " in *" $name "*) continue ;; esac
  echo "FAIL: wide registers outside the run-time dispatched kernels: $fn"
  fail=1
done <<< "$report"

for name in "${expected_avx2[@]}" "${expected_avx512[@]}"; do
  if ! grep -q "::${name}(" <<< "$report"; then
    echo "FAIL: kernel $name missing or without wide registers"
    fail=1
  fi
done
functions=$(grep -c . <<< "$report" || true)
if [ "$fail" = 0 ]; then
  echo "ok: $functions functions with wide registers, all of them the dispatched kernels, in $# objects"
fi
exit "$fail"
