#!/usr/bin/env bash
# The kzgit-validate hook's environment size and a cold first commit through pre-commit.
#
#   benchmarks/bench_validate_install.sh REV [KZGIT_REPO] [PRE_COMMIT]
#
# A temporary repository holding a copy of examples/ names KZGIT_REPO (default: this checkout)
# at REV in its .pre-commit-config.yaml; with a fresh PRE_COMMIT_HOME and no pip cache (so
# every package is downloaded, as on a new machine) one commit changing a kustomization runs
# the hook: the time of that `git commit` includes creating the environment. Prints the time,
# the environment's size and its largest packages (docs/figures.md records them).
set -euo pipefail
rev=$1
kzgit_repo=$(cd "${2:-$(dirname "$0")/..}" && pwd)
pre_commit=${3:-$(command -v pre-commit || echo "$kzgit_repo/.venv/bin/pre-commit")}
base=$(mktemp -d "${TMPDIR:-/tmp}/kzgit-bench-install.XXXXXX")
trap 'rm -rf "$base"' EXIT
export PRE_COMMIT_HOME=$base/pre-commit-home PIP_NO_CACHE_DIR=1
repo=$base/repo
mkdir -p "$repo"
cp -r "$kzgit_repo/examples/base" "$kzgit_repo/examples/overlays" "$repo/"
cd "$repo"
git init -q
cat > .pre-commit-config.yaml <<YAML
repos:
- repo: $kzgit_repo
  rev: $rev
  hooks:
  - id: kzgit-validate
YAML
git add -A
git -c user.name=bench -c user.email=bench@kzgit.invalid commit -qm init --no-verify
"$pre_commit" install >/dev/null
echo "# change" >> overlays/production/kustomization.yaml
git add -A
start=$(date +%s.%N)
if ! git -c user.name=bench -c user.email=bench@kzgit.invalid commit -qm change > "$base/commit.log" 2>&1; then
  cat "$base/commit.log" >&2
  exit 1
fi
end=$(date +%s.%N)
env=$(ls -d "$PRE_COMMIT_HOME"/repo*/py_env-* | head -1)
site=$(echo "$env"/lib/python*/site-packages)
echo "$rev: cold first commit $(python3 -c "print(f'{$end - $start:.1f}')") s; hook environment $(du -sm "$env" | cut -f1) MB"
du -sm "$site"/* | sort -rn | head -8 | awk '{n=$2; sub(".*/", "", n); printf "  %4d MB  %s\n", $1, n}'
