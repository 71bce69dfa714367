#!/usr/bin/env bash
# Fetches CPython interpreters Debian 12 does not ship (3.13, 3.14, 3.15)
# from Debian's newer suites, without touching the machine's apt setup: a
# private apt configuration (its own sources list, lists, cache and an
# empty dpkg status) downloads the .debs, dpkg -x unpacks them with that
# suite's libc6 and the libraries the interpreter needs into
# $XPU_PY_CACHE/<version> (default ~/.cache/xpu-perf/python), and a
# wrapper script runs the interpreter through that libc's own loader:
#
#   $XPU_PY_CACHE/3.14/run python3.14 script.py
#
# (the process's exe is then the loader, ld-linux-x86-64.so.2; xpu-record
# finds the interpreter by its symbols, not by the exe's path).
#
# The .debs come from the mirror the machine's own apt sources name
# (apt-get indextargets), or from $XPU_PY_MIRROR.
#
# Usage: scripts/python-interpreters.sh [3.13 3.14 3.15]
# Prints one line per version: "3.14 /path/to/run" or "3.14 FAILED: why".
set -u
CACHE=${XPU_PY_CACHE:-$HOME/.cache/xpu-perf/python}
# the Debian mirror this machine's own apt sources name for its release
# (not its -security or -updates suites); XPU_PY_MIRROR overrides it
machine_mirror() {
	apt-get indextargets --format '$(TARGET_OF) $(RELEASE) $(REPO_URI)' 2>/dev/null |
		awk '$1 == "deb" && $2 !~ /-/ { sub("/$", "", $3); print $3; exit }'
}
MIRROR=${XPU_PY_MIRROR:-$(machine_mirror)}
if [ -z "$MIRROR" ]; then
	echo "python-interpreters: no Debian mirror in this machine's apt sources: set XPU_PY_MIRROR to one" >&2
	exit 1
fi
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(3.13 3.14 3.15)

# the suite each version is taken from (the oldest that has it)
suite_of() {
	case $1 in
	3.13) echo trixie;;
	*) echo sid;;
	esac
}

# libraries the interpreter and its standard modules load
LIBS="libc6 libexpat1 zlib1g libffi8 libssl3t64 libmpdec4 libzstd1 libbz2-1.0 liblzma5
      libuuid1 libsqlite3-0 libncursesw6 libtinfo6 libreadline8t64 libgcc-s1 libstdc++6"

apt_private() {	# suite, apt-get or apt-cache, then its arguments
	local suite=$1 tool=$2 d=$CACHE/apt-$1; shift 2
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/etc/sources.list.d" \
		 "$d/etc/preferences.d" "$d/etc/apt.conf.d"
	: >"$d/status"
	[ -s "$d/etc/sources.list" ] ||
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR $suite main" \
			>"$d/etc/sources.list"
	APT_CONFIG=/dev/null "$tool" -q \
		-o Dir::Etc="$d/etc" -o Dir::Etc::SourceList="$d/etc/sources.list" \
		-o Dir::Etc::SourceParts="$d/etc/sources.list.d" \
		-o Dir::Etc::Parts="$d/etc/apt.conf.d" \
		-o Dir::Etc::PreferencesParts="$d/etc/preferences.d" \
		-o Dir::State="$d" -o Dir::State::Lists="$d/lists" -o Dir::State::status="$d/status" \
		-o Dir::Cache="$d/cache" -o Debug::NoLocking=1 -o APT::Architecture=amd64 \
		-o APT::Architectures=amd64 "$@"
}

fetch_one() {
	local v=$1 suite dir pkgs p
	suite=$(suite_of "$v")
	dir=$CACHE/$v
	if [ -x "$dir/run" ] && "$dir/run" "python$v" -c 'pass' 2>/dev/null; then
		echo "$v $dir/run"
		return 0
	fi
	apt_private "$suite" apt-get update >"$CACHE/apt-$suite.log" 2>&1 ||
		{ echo "$v FAILED: apt-get update of $MIRROR $suite: $(tail -n 2 "$CACHE/apt-$suite.log" | tr '\n' ' ')"; return 1; }
	pkgs="python$v-minimal libpython$v-minimal libpython$v-stdlib"
	for p in $LIBS; do
		apt_private "$suite" apt-cache show "$p" >/dev/null 2>&1 && pkgs="$pkgs $p"
	done
	mkdir -p "$dir/debs"
	(cd "$dir/debs" && apt_private "$suite" apt-get download $pkgs) >"$dir/download.log" 2>&1 ||
		{ echo "$v FAILED: apt-get download from $suite: $(tail -n 2 "$dir/download.log" | tr '\n' ' ')"; return 1; }
	for p in "$dir"/debs/*.deb; do
		dpkg -x "$p" "$dir/root" || { echo "$v FAILED: dpkg -x $p"; return 1; }
	done
	cat >"$dir/run" <<EOS
#!/bin/sh
# Runs a program of $dir/root (python$v) through that root's own loader.
R=$dir/root
LD=\$R/lib64/ld-linux-x86-64.so.2
[ -e "\$LD" ] || LD=\$R/usr/lib64/ld-linux-x86-64.so.2	# merged /usr
prog=\$1; shift
exec "\$LD" --library-path "\$R/lib/x86_64-linux-gnu:\$R/usr/lib/x86_64-linux-gnu" "\$R/usr/bin/\$prog" "\$@"
EOS
	chmod +x "$dir/run"
	"$dir/run" "python$v" -c 'import sys; print(sys.version)' >"$dir/version.txt" 2>&1 ||
		{ echo "$v FAILED: the unpacked interpreter does not run: $(head -c 300 "$dir/version.txt")"; return 1; }
	echo "$v $dir/run"
}

mkdir -p "$CACHE"
rc=0
for v in "${versions[@]}"; do
	fetch_one "$v" || rc=1
done
exit $rc
