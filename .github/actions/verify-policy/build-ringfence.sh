#!/usr/bin/env bash
# Builds the ringfence CLI from the repository this action lives in (no install scripts run) and
# puts it on PATH for the next steps.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$repo"
npm ci --no-audit --no-fund --ignore-scripts
npx turbo run build --filter=@ringfence/cli...
echo "$repo/node_modules/.bin" >>"$GITHUB_PATH"
