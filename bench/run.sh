#!/usr/bin/env bash
# Runs every benchmark (`make bench`). Not part of `make check`.
set -euo pipefail
cd "$(dirname "$0")"
for b in overhead trace_size report_speed; do
	echo "== $b"
	bash "./$b.sh"
	echo
done
