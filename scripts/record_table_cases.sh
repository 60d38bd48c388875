#!/bin/sh
# Re-record the table cases of tests/data/replacements and tests/data/vars (or the
# directories given) with the oracle, kubectl kustomize (Kustomize v5.5.0): each case
# directory gets expected.yaml, or expected_error.txt with kubectl's error message.
cd "$(dirname "$0")/.." || exit 1
[ $# -gt 0 ] || set -- tests/data/replacements tests/data/vars
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
for table in "$@"; do
  for d in "$table"/*/; do
    d=${d%/}
    rm -f "$d/expected.yaml" "$d/expected_error.txt"
    if out=$(kubectl kustomize "$d" 2>"$err"); then
      printf '%s\n' "$out" > "$d/expected.yaml"
    else
      sed -n 's/.*err="\(.*\)"$/\1/p' "$err" > "$d/expected_error.txt"
    fi
  done
done
