#!/usr/bin/env bash
# Installs the Debian packages xpu-perf needs to build, test and benchmark.
# Idempotent: does nothing when they are all present. Needs root (or sudo).
set -euo pipefail
pkgs=(
	make gcc clang llvm bpftool pkg-config
	libbpf-dev libelf-dev libdw-dev libzstd-dev zlib1g-dev liblzma-dev libbz2-dev
	libcapstone-dev libncurses-dev libiberty-dev libdebuginfod-dev
	tmux linux-perf binutils file time  # time: bench/report_speed.sh peak memory
	xz-utils  # e2e_stripped.sh: a stripped program nobody here wrote
	pandoc man-db  # make man / make install: man pages from Documentation/ (man_pages.sh)
	debuginfod curl  # offline_debuginfod.sh: a local server
	libxml2-utils python3  # report_svg.sh: xmllint; the SVG geometry check
	libprotobuf-c-dev protobuf-c-compiler golang-github-google-pprof-dev  # --pprof, --timeline
	golang-go  # report_pprof.sh: go tool pprof reads --pprof output
	python3-jsonschema  # report_speedscope.sh: speedscope's published schema
	chromium  # report_svg_browser.sh, report_diff.sh: render --svg, run its script
	protobuf-compiler  # report_timeline.sh: protoc decodes --timeline output
	python3-numpy zstd gcc  # bench/report_real.sh, tests/shell/report_real.sh: real programs to record
	libpython3.11  # e2e_python_start.sh: a python launcher linked to libpython (as Fedora's, Docker's)
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "setup: all ${#pkgs[@]} packages present"
	exit 0
fi
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
