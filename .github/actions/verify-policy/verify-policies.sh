#!/usr/bin/env bash
# Verify every signed ringfence policy; exit 1 if any does not verify or expires too soon.
# Used by the GitHub action beside it, and as is by any other CI:
#   POLICIES='policies/*.policy.json' ROOTS='root.json' MIN_DAYS_VALID=14 ./verify-policies.sh
# RINGFENCE_COMMAND: how to run ringfence (default: ringfence on PATH).
set -euo pipefail
read -r -a ringfence <<<"${RINGFENCE_COMMAND:-ringfence}"
[ "${#ringfence[@]}" -gt 0 ] || ringfence=(ringfence)

# Split the lists on blanks and newlines without expanding them; each pattern is globbed alone.
read -r -d '' -a patterns <<<"${POLICIES:?set POLICIES to the signed policy files (globs allowed)}" || true
read -r -d '' -a root_files <<<"${ROOTS:?set ROOTS to the trust root files, oldest first}" || true
shopt -s nullglob
files=()
for pattern in "${patterns[@]}"; do
  # shellcheck disable=SC2206 # globbing this one pattern is the point
  matched=($pattern)
  if [ "${#matched[@]}" -eq 0 ]; then
    echo "verify-policies: no file matches $pattern; check the policies input (paths are relative to $PWD)." >&2
    exit 1
  fi
  files+=("${matched[@]}")
done
roots=()
for root in "${root_files[@]}"; do roots+=(--root "$root"); done

status=0
"${ringfence[@]}" policy verify "${files[@]}" "${roots[@]}" --min-days-valid "${MIN_DAYS_VALID:-14}" || status=$?
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  if [ "$status" -eq 0 ]; then
    echo "ringfence: ${#files[@]} signed policies verify and stay valid for ${MIN_DAYS_VALID:-14} days or more." >>"$GITHUB_STEP_SUMMARY"
  else
    echo "ringfence: some signed policies do not verify (see the log of this step): re-sign them with ringfence policy sign." >>"$GITHUB_STEP_SUMMARY"
  fi
fi
exit "$status"
