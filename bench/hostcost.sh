#!/usr/bin/env bash
# hostcost.sh: what one player's intent costs an area host, counted, not
# timed: instructions, and misses of a small simulated cache, per intent.
#
#   bench/hostcost.sh [ley binary] [homes]       (defaults: bin/ley, 60)
#
# Timings of homes on a shared machine move by 10% from run to run, more
# than most changes to a home's step (bench/RESULTS.md). Counts do not:
# the host runs under valgrind's cachegrind with a 32 KiB first-level and
# a 256 KiB last-level data cache, small enough that each home's state is
# gone from it between its player's steps, as it is from a real host's
# caches with hundreds of homes. A last-level miss here is a first touch
# of a line the step needs, which a real host mostly waits for.
#
# Two runs, each a fresh realm with one host under cachegrind and `ley
# load` driving homes (one player each, walk5: 5 steps a second), the
# first walking 20 s and the second 80 s; the difference of their counts
# is 60 s of steady play, without the start, the logins or the stop. It
# prints the intents that difference holds, the counts per intent, and
# the functions with the most last-level misses per intent.
#
# Needs valgrind (Debian: apt-get install valgrind); takes some 3 minutes.
set -euo pipefail

bin=$(realpath "${1:-bin/ley}")
homes=${2:-60}
work=$(mktemp -d /tmp/hostcost.XXXXXX)
ctl=127.0.0.1:17570
api=127.0.0.1:18580
ws=127.0.0.1:17600

command -v valgrind >/dev/null || { echo "hostcost: valgrind is not installed" >&2; exit 1; }
[ -x "$bin" ] || { echo "hostcost: no ley binary at $bin (make build)" >&2; exit 1; }

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT

LEY_HOST_KEY=$(head -c 24 /dev/urandom | base64 | tr -d '+/=')
export LEY_HOST_KEY

# run NAME SECONDS: one realm, one host under cachegrind, homes walking for
# SECONDS; writes the intents the load sent to $work/NAME/intents.
run() {
	local name=$1 secs=$2 dir=$work/$1
	mkdir -p "$dir"
	"$bin" run --min-hosts 0 --max-hosts 0 --control $ctl --http $api \
		--data-dir "$dir/data" --load-provisioning >"$dir/director.log" 2>&1 &
	local director=$!
	pids+=("$director")
	# Go's asynchronous preemption signals upset valgrind's thread state.
	GODEBUG=asyncpreemptoff=1 valgrind --tool=cachegrind --cache-sim=yes \
		--I1=32768,8,64 --D1=32768,8,64 --LL=262144,16,64 \
		--cachegrind-out-file="$dir/cg.out" \
		"$bin" areahost --director $ctl --listen $ws --writev --huge-pages=false \
		--interest-radius 0 --pool-size $((homes * 4 + 256)) >"$dir/host.log" 2>&1 &
	local host=$!
	pids+=("$host")
	for _ in $(seq 120); do
		grep -q 'registered with the director' "$dir/host.log" && break
		sleep 0.5
	done
	grep -q 'registered with the director' "$dir/host.log" || { echo "hostcost: the host did not register; see $dir/host.log" >&2; exit 1; }
	echo "hostcost: $name: $homes homes walking ${secs}s" >&2
	"$bin" load --director "http://$api" --players "$homes" --areas "$homes" --pattern walk5 \
		--raise-cap --ramp 10s --duration "${secs}s" --drain 1s >"$dir/load.log" 2>&1 ||
		{ echo "hostcost: the load failed; see $dir/load.log" >&2; exit 1; }
	kill -TERM "$host"
	wait "$host" 2>/dev/null || true
	kill -TERM "$director"
	wait "$director" 2>/dev/null || true
	[ -s "$dir/cg.out" ] || { echo "hostcost: cachegrind wrote nothing; see $dir/host.log" >&2; exit 1; }
	# Every player must have played: a home that could not start would
	# leave the counts per intent of a smaller run.
	grep -q "^players $homes/$homes connected.* errors 0 " "$dir/load.log" ||
		{ echo "hostcost: not every player played; see $dir/load.log" >&2; exit 1; }
	# "answers/intent 1.0000 (19453/19453)": the intents sent.
	sed -n 's#.*answers/intent [0-9.]* ([0-9]*/\([0-9]*\)).*#\1#p' "$dir/load.log" | tail -1 >"$dir/intents"
}

run short 20
run long 80
intents=$(($(cat "$work/long/intents") - $(cat "$work/short/intents")))
cg_diff "$work/short/cg.out" "$work/long/cg.out" >"$work/diff.out" 2>/dev/null
echo "hostcost: $bin, $homes homes, 60 s of steady play: $intents intents"
# One row per function, the most last-level misses first; the program's
# totals on top.
cg_annotate --auto=no --threshold=0 --show=Ir,D1mr,D1mw,DLmr,DLmw "$work/diff.out" 2>/dev/null |
	sed -E 's/\( *-?[0-9.]+%\)//g' | grep -E '^ *-?[0-9,]+ +-?[0-9,]+ ' |
	awk -v n="$intents" '
		{
			for (i = 1; i <= 5; i++) gsub(",", "", $i)
			# file:function, the file being where inlined code came from:
			# its base name, and the function without ley'"'"'s module path
			name = $NF
			k = index(name, ".go:")
			if (k > 0) {
				file = substr(name, 1, k + 2)
				sub("^.*/", "", file)
				name = file ":" substr(name, k + 4)
			}
			gsub("github.com/leyworks/ley/", "", name)
			printf "%9.0f %8.1f %8.1f  %s\n", $1 / n, ($2 + $3) / n, ($4 + $5) / n, name
		}' | sort -k3,3nr | awk 'BEGIN { printf "%9s %8s %8s  %s\n", "Ir", "D1 miss", "LL miss", "per intent" } NR <= 31'
echo "hostcost: counts kept in $work"
trap - EXIT
cleanup
