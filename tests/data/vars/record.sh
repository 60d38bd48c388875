#!/bin/sh
# Re-record expected outputs with the oracle: kubectl kustomize (Kustomize v5.5.0).
cd "$(dirname "$0")" || exit 1
for d in */; do
  d=${d%/}
  rm -f "$d/expected.yaml" "$d/expected_error.txt"
  if out=$(kubectl kustomize "$d" 2>/tmp/kz_err); then
    printf '%s\n' "$out" > "$d/expected.yaml"
  else
    sed -n 's/.*err="\(.*\)"$/\1/p' /tmp/kz_err > "$d/expected_error.txt"
  fi
done
