# shellcheck shell=bash
# alternate.sh - what the benchmarks that let builds take turns share
# (batch_sustained.sh, snapstall.sh; sourced, not run): their common
# options, the check of each build's programs, a scratch directory removed
# on exit with the server left running stopped, a free port, and the
# medians of the runs.
#
# Design. A script sets its defaults (N, R), defines alt_option for its
# own options, calls alt_args, alt_check and alt_tmp, keeps the pid of the
# server it starts in SP, and appends one line per run to $TMP/runs: the
# build's directory, then KEY=VALUE fields; alt_medians prints each
# build's medians of the keys it names.

BUILDS=()

# alt_args SCRIPT ARG...: --build DIR (repeated: the builds, default
# build), -n N and --rounds R set BUILDS, N and R; -h or --help prints
# SCRIPT's opening comment. Any other option goes to the script's
# alt_option OPT [VALUE], which returns how many arguments it took (1 or
# 2), or 0 for an option it does not know: the script ends with exit code
# 2.
alt_args() {
	local script=$1 took
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--build)
			BUILDS+=("$2")
			shift 2
			continue
			;;
		-n)
			N=$2
			shift 2
			continue
			;;
		--rounds)
			R=$2
			shift 2
			continue
			;;
		-h | --help)
			sed -n '2,/^set -euo/p' "$script" | sed '$d; s/^# \{0,1\}//'
			exit 0
			;;
		esac
		took=0
		alt_option "$@" || took=$?
		if [ "$took" = 0 ]; then
			echo "$(basename "$script"): unknown argument '$1' (--help)" >&2
			exit 2
		fi
		shift "$took"
	done
	[ ${#BUILDS[@]} -gt 0 ] || BUILDS=(build)
}

# alt_check SCRIPT PROG...: N and R are whole numbers above 0, and every
# build has bin/PROG for each PROG; else the script ends.
alt_check() {
	local script b p v
	script=$(basename "$1")
	shift
	for v in "$N" "$R"; do
		case $v in
		'' | *[!0-9]* | 0)
			echo "$script: -n and --rounds want whole numbers > 0" >&2
			exit 2
			;;
		esac
	done
	for b in "${BUILDS[@]}"; do
		for p in "$@"; do
			if [ ! -x "$b/bin/$p" ]; then
				echo "$script: $b/bin/$p not found" >&2
				exit 1
			fi
		done
	done
}

# alt_tmp NAME: TMP, a fresh directory NAME.XXXXXX under TMPDIR (default
# /tmp), and SP empty; on exit the server in SP, if it runs, is stopped
# and TMP removed.
alt_tmp() {
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	SP=
	trap alt_cleanup EXIT
}

alt_cleanup() {
	if [ -n "$SP" ] && kill -0 "$SP" 2>/dev/null; then
		kill -TERM "$SP" 2>/dev/null || true
		wait "$SP" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}

# A TCP port free on 127.0.0.1 now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# alt_medians KEY...: for each build, the median over its lines of
# $TMP/runs of each KEY's value.
alt_medians() {
	local b
	for b in "${BUILDS[@]}"; do
		python3 - "$b" "$TMP/runs" "$@" <<'EOF'
import re, statistics, sys
b, path, keys = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = [l for l in open(path) if l.split()[0] == b]
med = {k: statistics.median(float(re.search(k + r"=([0-9.]+)", l).group(1))
                            for l in rows) for k in keys}
print("  " + b + " " + " ".join("%s=%.0f" % (k, med[k]) for k in keys))
EOF
	done
}
