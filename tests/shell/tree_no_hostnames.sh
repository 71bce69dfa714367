#!/usr/bin/env bash
# No package-archive host is written into the tree's code: scripts take a
# mirror from the machine's own apt sources, advice names an archive
# without a host. What a user's machine uses is its own business.
# Documentation may quote hosts as examples; the code may not.
set -u
cd "$(dirname "$0")/../.."
hosts='deb\.debian\.org|ftp\.[a-z]*\.debian\.org|security\.debian\.org|archive\.ubuntu\.com|ports\.ubuntu\.com|ddebs\.ubuntu\.com|debuginfod\.[a-z.]*\.(org|net|com)'
hits=$(git ls-files -- scripts record report cupti common format archive bpf bench tests Makefile Makefile.config .ci |
	grep -v '^tests/shell/tree_no_hostnames\.sh$' |
	xargs grep -nIE "$hosts" 2>/dev/null)
if [ -n "$hits" ]; then
	echo "FAIL  package-archive host names in the tree (take them from the machine's apt sources, or name the archive without a host):"
	echo "$hits"
	exit 1
fi
# the script's own mirror is the machine's
m=$(bash -c 'source <(sed -n "/^machine_mirror()/,/^}/p" scripts/python-interpreters.sh); machine_mirror')
want=$(apt-get indextargets --format '$(TARGET_OF) $(RELEASE) $(REPO_URI)' 2>/dev/null |
	awk '$1 == "deb" && $2 !~ /-/ { sub("/$", "", $3); print $3; exit }')
[ -n "$want" ] || { echo "skip: no apt sources on this machine"; exit 2; }
[ "$m" = "$want" ] || { echo "FAIL  python-interpreters.sh's mirror '$m', the machine's apt sources say '$want'"; exit 1; }
echo "ok    no archive host in the code; python-interpreters.sh takes $m from apt"
