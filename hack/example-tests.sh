#!/usr/bin/env bash
# Writes examples/NAME/karta_test.yaml for a built-in's example folder that
# has none, from the files the folder holds: every state gets its status and
# pod definitions (inline status and count, and the golden JSON), running.yaml
# also its gang (pods.yaml) and revision (revisions.yaml) goldens. Then
# `karta test --update` fills in the values; review the result.
# Usage: hack/example-tests.sh examples/NAME...
set -euo pipefail
for dir in "$@"; do
	file="$dir/karta_test.yaml"
	[ -e "$file" ] && { echo "$file exists: left alone"; continue; }
	{
		echo "# The built-in $(basename "$dir") on its examples: karta test $dir"
		echo "# (no karta: each object's built-in is found by its kind). The goldens are"
		echo "# what karta status|pods|gang|revise -o json print; karta test --update"
		echo "# rewrites them for review."
		echo "tests:"
		for state in "$dir"/*.yaml; do
			base=$(basename "$state" .yaml)
			case "$base" in pods|revisions|karta_test) continue ;; esac
			echo "- object: $base.yaml"
			echo "  status: {status: '?', golden: golden/$base.status.json}"
			echo "  pods: {count: 0, golden: golden/$base.pods.json}"
			if [ "$base" = running ]; then
				[ -e "$dir/pods.yaml" ] && echo "  gang: {pods: pods.yaml, unmatched: 0, golden: golden/running.gang.json}"
				[ -e "$dir/revisions.yaml" ] && echo "  revise: {revisions: revisions.yaml, patch: golden/running.revise-patch.json}"
			fi
		done
	} > "$file"
done
