#!/usr/bin/env bash
# with-postgres.sh — a throwaway PostgreSQL for tests.
#
#   scripts/with-postgres.sh CMD [ARGS...]   start a cluster, run CMD against it, stop it, clean up
#   scripts/with-postgres.sh --start         start a cluster, print KEY=VALUE lines (DIR, DSNs), leave it running
#   scripts/with-postgres.sh --stop DIR      stop the cluster started by --start and delete DIR
#   scripts/with-postgres.sh --halt DIR      stop its server (sessions ended at once), keep DIR
#   scripts/with-postgres.sh --resume DIR    start a halted server again
#
# The cluster lives in a fresh temporary directory, listens only on a Unix
# socket in that directory (no TCP port to collide on), trusts local
# connections, and runs with fsync off: it is for tests and is deleted after.
# As root (CI), PostgreSQL is installed from the distribution's packages when
# missing and the server runs as an unprivileged user (postgres, else nobody),
# because postgres refuses to run as root.
#
# For CMD it exports:
#   PONDER_OCA_DSN        the database "oneiro" (empty: run `ponder oca init`)
#   LASERKIT_TEST_PG_DSN  the superuser on database "postgres" (tests create
#                         their own databases through it)
#   LASERKIT_PG_SCRIPT    this script's absolute path (tests start private clusters)
#
# When no server can be started, CMD still runs without those variables (the
# integration tests then skip, saying why) and a banner says so, unless
# LASERKIT_REQUIRE_PG=1, which makes that a failure. LASERKIT_REQUIRE_PG
# defaults to 1 for root with apt-get (the CI machine), 0 otherwise.
# If LASERKIT_TEST_PG_DSN is already set, CMD runs against that server as is;
# LASERKIT_NO_PG=1 pretends no server can be started (to see the skip path).
set -euo pipefail

SCRIPT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
PGUSER_NAME=laserkit

log() { echo "with-postgres: $*" >&2; }

banner() {
	{
		echo "######################################################################"
		echo "## NO POSTGRESQL: $*"
		echo "## The OCA integration tests are SKIPPED. Install PostgreSQL (Debian:"
		echo "## apt-get install postgresql) or set LASERKIT_TEST_PG_DSN to a server"
		echo "## whose user may CREATE DATABASE."
		echo "######################################################################"
	} >&2
}

is_root() { [ "$(id -u)" = 0 ]; }

require_pg() {
	case "${LASERKIT_REQUIRE_PG:-}" in
	1) return 0 ;;
	0) return 1 ;;
	esac
	is_root && command -v apt-get >/dev/null
}

# find_bindir prints the directory holding initdb, pg_ctl and postgres.
find_bindir() {
	local d
	if [ -n "${PG_BINDIR:-}" ] && [ -x "$PG_BINDIR/initdb" ]; then
		echo "$PG_BINDIR"
		return 0
	fi
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
			echo "$d"
			return 0
		fi
	done
	if command -v pg_config >/dev/null && [ -x "$(pg_config --bindir)/initdb" ]; then
		pg_config --bindir
		return 0
	fi
	if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
		dirname "$(command -v initdb)"
		return 0
	fi
	return 1
}

install_pg() {
	is_root && command -v apt-get >/dev/null || return 1
	log "PostgreSQL not found; installing it with apt-get"
	# The package would create and start a default cluster; tests need none.
	if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
		mkdir -p /etc/postgresql-common
		echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 || return 1
	# confold keeps the createcluster.conf written above without asking.
	apt-get install -y -qq --no-install-recommends \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold postgresql >&2 || return 1
}

# as_server runs a command as the user that owns the cluster.
as_server() {
	if is_root; then
		runuser -u "$RUN_AS" -- "$@"
	else
		"$@"
	fi
}

# start_server DIR starts the server of an initialised cluster.
start_server() {
	as_server "$BINDIR/pg_ctl" -D "$1/data" -l "$1/postgres.log" -w -t 60 \
		-o "-k $1 -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
		start >/dev/null 2>&1
}

# halt_server DIR stops the server, ending every session at once, keeping its files.
# (-m fast, not immediate: with synchronous_commit off an immediate stop would
# lose the last commits, which a halted-then-resumed test must still see.)
halt_server() {
	local bindir owner
	bindir="${BINDIR:-$(find_bindir || true)}"
	[ -n "$bindir" ] && [ -f "$1/data/postmaster.pid" ] || return 0
	owner="$(stat -c %U "$1/data")"
	if is_root; then
		runuser -u "$owner" -- "$bindir/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1 || true
	else
		"$bindir/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
}

# start_cluster sets DIR, BINDIR and the DSNs, or returns 1 with REASON set.
start_cluster() {
	REASON=""
	if [ -n "${LASERKIT_NO_PG:-}" ]; then
		REASON="LASERKIT_NO_PG is set"
		return 1
	fi
	if ! BINDIR="$(find_bindir)"; then
		if install_pg && BINDIR="$(find_bindir)"; then
			:
		else
			REASON="initdb/pg_ctl/postgres not found and PostgreSQL could not be installed"
			return 1
		fi
	fi
	# As root the server's user must reach the directory: /tmp, not a private TMPDIR.
	local tmp="${TMPDIR:-/tmp}"
	is_root && tmp=/tmp
	DIR="$(mktemp -d "$tmp/lk-pg.XXXXXX")"
	if is_root; then
		if id postgres >/dev/null 2>&1; then RUN_AS=postgres; else RUN_AS=nobody; fi
		chown "$RUN_AS" "$DIR"
		chmod 0755 "$DIR"
	fi
	if ! as_server "$BINDIR/initdb" -D "$DIR/data" -U "$PGUSER_NAME" -A trust -N -E UTF8 --locale=C >"$DIR/initdb.log" 2>&1; then
		REASON="initdb failed: $(tail -n 3 "$DIR/initdb.log" | tr '\n' ' ')"
		rm -rf "$DIR"
		return 1
	fi
	if ! start_server "$DIR"; then
		REASON="postgres did not start: $(tail -n 3 "$DIR/postgres.log" 2>/dev/null | tr '\n' ' ')"
		rm -rf "$DIR"
		return 1
	fi
	LASERKIT_TEST_PG_DSN="host=$DIR user=$PGUSER_NAME dbname=postgres"
	PONDER_OCA_DSN="host=$DIR user=$PGUSER_NAME dbname=oneiro"
	local psql="$BINDIR/psql"
	[ -x "$psql" ] || psql=psql
	if ! "$psql" -X -q -v ON_ERROR_STOP=1 "$LASERKIT_TEST_PG_DSN" -c "CREATE DATABASE oneiro" >/dev/null 2>"$DIR/createdb.log"; then
		REASON="CREATE DATABASE failed: $(tr '\n' ' ' <"$DIR/createdb.log")"
		stop_cluster "$DIR"
		return 1
	fi
}

# stop_cluster DIR stops the server (if it still runs) and deletes DIR.
stop_cluster() {
	halt_server "$1"
	rm -rf "$1"
}

case "${1:-}" in
"")
	echo "usage: $0 CMD [ARGS...] | --start | --stop DIR | --halt DIR | --resume DIR" >&2
	exit 2
	;;
--start)
	if ! start_cluster; then
		log "$REASON"
		exit 1
	fi
	echo "DIR=$DIR"
	echo "BINDIR=$BINDIR"
	echo "LASERKIT_TEST_PG_DSN=$LASERKIT_TEST_PG_DSN"
	echo "PONDER_OCA_DSN=$PONDER_OCA_DSN"
	exit 0
	;;
--stop | --halt | --resume)
	[ -n "${2:-}" ] || { echo "usage: $0 $1 DIR" >&2; exit 2; }
	case "$2" in */lk-pg.*) ;; *) log "refusing: $2 is not a directory this script made"; exit 2 ;; esac
	case "$1" in
	--stop) stop_cluster "$2" ;;
	--halt) halt_server "$2" ;;
	--resume)
		BINDIR="$(find_bindir)"
		RUN_AS="$(stat -c %U "$2/data")"
		start_server "$2" || { log "postgres did not start: $(tail -n 3 "$2/postgres.log" | tr '\n' ' ')"; exit 1; }
		;;
	esac
	exit 0
	;;
esac

export LASERKIT_PG_SCRIPT="$SCRIPT"
if [ -n "${LASERKIT_TEST_PG_DSN:-}" ]; then
	log "using the server at LASERKIT_TEST_PG_DSN"
	exec "$@"
fi

if ! start_cluster; then
	if require_pg; then
		log "FATAL: $REASON (LASERKIT_REQUIRE_PG is on)"
		exit 1
	fi
	banner "$REASON"
	rc=0
	"$@" || rc=$?
	banner "$REASON"
	exit "$rc"
fi
trap 'stop_cluster "$DIR"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
export LASERKIT_TEST_PG_DSN PONDER_OCA_DSN
export PG_BINDIR="$BINDIR"
log "PostgreSQL $("$BINDIR/postgres" --version | awk '{print $3}') on socket $DIR"
rc=0
"$@" || rc=$?
exit "$rc"
