#!/usr/bin/env bash
# Fails when generated files (deepcopy, CRDs, RBAC, the chart's CRD copy)
# differ from what is committed, i.e. `make generate manifests` was not run.
# Outside CI it only warns, so work in progress is not blocked.
set -euo pipefail
paths=(api config/crd config/rbac charts)
changes=$(git status --porcelain -- "${paths[@]}")
if [ -n "$changes" ]; then
  echo "generated files are stale or uncommitted (run 'make generate manifests' and commit):"
  echo "$changes"
  git --no-pager diff --stat -- "${paths[@]}"
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  echo "(not failing outside CI)"
fi
