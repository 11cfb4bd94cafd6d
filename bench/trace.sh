# trace.sh - what the perf traces of bench/ share (put_trace.sh,
# commit_trace.sh; sourced, not run): their options, a free port, and a
# scratch directory removed on exit with the server left running killed
# (slowdisk.sh uses the last two).
#
# Design. A script names its options and the variables they set
# (trace_args), and keeps the pid of the server it starts in PID, which
# the exit trap of trace_tmp kills; what each traces and how it reads the
# trace stays its own.

# trace_args SCRIPT OPT=VAR[:count]... -- ARG...: each "--OPT VALUE" in
# ARG sets VAR (":count": VALUE must be a whole number above 0); -h or
# --help prints SCRIPT's opening comment; an unknown option, a missing
# value or a bad count ends the script with exit code 2.
trace_args() {
	local script=$1 spec found var name
	local -a specs=()
	shift
	while [ "$1" != -- ]; do
		specs+=("$1")
		shift
	done
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		-h | --help) sed -n '2,/^set -euo/p' "$script" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
		esac
		found=""
		for spec in "${specs[@]}"; do
			name=${spec%%=*}
			var=${spec#*=}
			[ "$1" = "--$name" ] || continue
			if [ $# -lt 2 ]; then
				echo "$(basename "$script"): --$name needs a value" >&2
				exit 2
			fi
			if [ "${var#*:}" = count ] &&
			    ! [[ $2 =~ ^[0-9]+$ && $((10#$2)) -gt 0 ]]; then
				echo "$(basename "$script"): --$name wants a whole number above 0, not '$2'" >&2
				exit 2
			fi
			printf -v "${var%%:*}" '%s' "$2"
			shift
			found=1
			break
		done
		if [ -z "$found" ]; then
			echo "$(basename "$script"): unknown argument '$1' (--help)" >&2
			exit 2
		fi
		shift
	done
}

# A TCP port free on 127.0.0.1 now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# trace_tmp NAME: TMP, a fresh directory NAME.XXXXXX under BENCH_TMPDIR
# (default BUILD: a real disk, not tmpfs), and PID empty; on exit the
# server in PID, if any, is killed and TMP removed.
trace_tmp() {
	TMP=$(mktemp -d "${BENCH_TMPDIR:-$BUILD}/$1.XXXXXX")
	PID=""
	trap '[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT
}
