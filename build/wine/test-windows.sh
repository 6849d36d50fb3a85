#!/usr/bin/env bash
# The Windows test lane (`make test-windows`): cross-compile the test binaries
# of the core packages for windows/amd64 and run them under Wine, in a fresh
# prefix of their own, with %APPDATA%, %USERPROFILE% and %TEMP% inside it.
#
# Wine's gaps are worked around here, never in product code:
#   - bcryptprimitives.dll: Wine 8.0 has none and Go's runtime needs its
#     ProcessPrng. build/wine/bcryptprimitives.c is compiled with mingw into
#     the prefix's system32.
#   - os.RemoveAll: Go deletes with FileDispositionInformationEx, which Wine
#     8.0 answers with STATUS_NOT_IMPLEMENTED ("Invalid function"), an answer
#     Go does not take as "fall back" (it does for STATUS_INVALID_INFO_CLASS).
#     Every test binary is built with an overlay file (see below) that turns
#     on the standard library's own switch to the older FileDispositionInfo
#     path, which Wine implements. So t.TempDir cleanup and every RemoveAll
#     in product code really delete, as on Windows.
#   - Tests Wine cannot run are listed by name, with the limitation they hit,
#     in build/wine/skip.txt, the one list. A test that skips itself at run
#     time fails the lane.
#   - Wine's timing is not Windows': process starts and file operations are
#     several times slower and their order varies more. A test that fails
#     (at most 3 of a package, no panic) is run once more, alone; if it
#     passes then, the lane goes on, and the table and the last lines name
#     it FLAKY with the first run's failure printed above them. A test that
#     fails twice fails the lane.
#
# Prints a per-package table of passed and skipped tests. Exits non-zero if
# any test failed twice, the run panicked or timed out, or a test skipped
# outside the list.
#
# Environment: WINE_LANE_DIR (default bin/wine-lane) holds the prefix, the
# test binaries and the logs; WINE_LANE_PACKAGES overrides the package list;
# WINE_LANE_RUN, a -run pattern, runs only the tests it matches (to chase
# one test without the whole lane).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

packages=${WINE_LANE_PACKAGES:-"./supervisor ./supervisor/testmcp ./app/internal/procs ./app/config ./app/atomicfile ./app/autostart ./app/clients ./app/secrets ./app/tokens ./app/history ./app/gateway ./app/api ./app/catalog/install ./app/daemon"}
lane=${WINE_LANE_DIR:-$root/bin/wine-lane}
skiplist=$root/build/wine/skip.txt
pkgtimeout=${WINE_LANE_TIMEOUT:-10m}

wine=$(command -v wine64 || true)
[ -n "$wine" ] || { [ -x /usr/lib/wine/wine64 ] && wine=/usr/lib/wine/wine64; }
wineserver=$(command -v wineserver || true)
[ -n "$wineserver" ] || { [ -x /usr/lib/wine/wineserver ] && wineserver=/usr/lib/wine/wineserver; }
mingw=$(command -v x86_64-w64-mingw32-gcc || true)
if [ -z "$wine" ] || [ -z "$wineserver" ] || [ -z "$mingw" ]; then
	echo "test-windows: needs wine64 and gcc-mingw-w64-x86-64 (apt-get install wine64 gcc-mingw-w64-x86-64)" >&2
	exit 1
fi

# The Go caches stay where they are when HOME changes below.
export GOCACHE="$(go env GOCACHE)" GOMODCACHE="$(go env GOMODCACHE)" GOPATH="$(go env GOPATH)"
rm -rf "$lane"
# _overlay: go ignores directories starting with _, so the generated files
# never join `go vet ./...` and `go test ./...` of the module.
mkdir -p "$lane/bin" "$lane/_overlay" "$lane/logs" "$lane/home"
# Wine and the programs under it see only this lane's directories: HOME is
# never the real one, and the prefix is made fresh for every run (so the
# Run key, %APPDATA% and %TEMP% start empty).
export HOME=$lane/home WINEPREFIX=$lane/prefix WINEARCH=win64 WINEDEBUG=-all
# No Mono or Gecko install prompts: the tests need neither.
export WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY WAYLAND_DISPLAY

started=$(date +%s)
# The wineserver of this prefix (and only it) is stopped on exit.
trap '"$wineserver" -k >/dev/null 2>&1 || true' EXIT
"$wine" wineboot -i >"$lane/logs/wineboot.log" 2>&1
"$mingw" -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
	build/wine/bcryptprimitives.c build/wine/bcryptprimitives.def -ladvapi32
echo "test-windows: prefix ready in $(($(date +%s) - started))s ($("$wine" --version 2>/dev/null || echo wine))"

# skip.txt lines: "<package dir> <TestName> <the Wine limitation it hits>".
declare -A skips=()
while read -r pkg name reason; do
	case "$pkg" in '' | '#'*) continue ;; esac
	[ -n "$reason" ] || { echo "test-windows: $skiplist: $pkg $name has no reason" >&2; exit 1; }
	skips[$pkg]+="${skips[$pkg]:+|}$name"
done <"$skiplist"

failed=0
table=()
flaky=()

# print_failures prints what a failing run said, to stderr: the lines of
# its failures, the tests' own lines (file:line), not the daemon's log
# lines the tests pass to t.Log (slog records), which would crowd them
# out.
print_failures() {
	grep -E '^(--- FAIL|panic:|FAIL)|^\s+\S+\.go:[0-9]+:' "$1" | grep -vE '\.go:[0-9]+: time=\S+ level=' | head -60 >&2 || true
}
for pkg in $packages; do
	rel=${pkg#./}
	name=$(go list -f '{{.Name}}' "$pkg")
	slug=${rel//\//_}
	# The overlay adds one file to the package, in the test binary only.
	cat >"$lane/_overlay/$slug.go" <<EOF
//go:build windows

package $name

import _ "unsafe" // go:linkname

// Wine 8.0 does not implement FileDispositionInformationEx: make os.RemoveAll
// use the FileDispositionInfo path the standard library keeps for older
// Windows (its own test switch). Added by build/wine/test-windows.sh only.
//
//go:linkname wineLaneDeleteatFallback internal/syscall/windows.TestDeleteatFallback
var wineLaneDeleteatFallback bool

func init() { wineLaneDeleteatFallback = true }
EOF
	printf '{"Replace":{"%s":"%s"}}' "$root/$rel/zz_wine_lane.go" "$lane/_overlay/$slug.go" >"$lane/_overlay/$slug.json"
	exe=$lane/bin/$slug.test.exe
	t0=$(date +%s)
	if ! GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go test -c -o "$exe" \
		-overlay "$lane/_overlay/$slug.json" -ldflags=-checklinkname=0 "$pkg"; then
		echo "test-windows: $rel: build failed" >&2
		failed=1
		table+=("$rel|-|-|-|BUILD FAILED")
		continue
	fi
	[ -f "$exe" ] || { table+=("$rel|0|0|-|no tests"); continue; }
	args=(-test.v -test.count=1 -test.timeout="$pkgtimeout")
	[ -z "${skips[$rel]:-}" ] || args+=(-test.skip "^(${skips[$rel]})\$")
	[ -z "${WINE_LANE_RUN:-}" ] || args+=(-test.run "$WINE_LANE_RUN")
	log=$lane/logs/$slug.log
	t1=$(date +%s)
	# Run from the package directory (testdata), as go test does.
	rc=0
	(cd "$rel" && "$wine" "$exe" "${args[@]}") >"$log" 2>&1 || rc=$?
	t2=$(date +%s)
	pass=$(grep -c '^--- PASS' "$log" || true)
	listed=$(tr '|' '\n' <<<"${skips[$rel]:-}" | grep -c . || true)
	selfskip=$(grep '^--- SKIP' "$log" | awk '{print $3}' | paste -sd, - || true)
	fails=$(grep '^--- FAIL' "$log" | awk '{print $3}' | paste -sd, - || true)
	note=""
	if [ "$rc" != 0 ] || [ -n "$fails" ] || ! grep -q '^PASS$' "$log"; then
		print_failures "$log"
		# Only a run that failed tests, and nothing else, is run again.
		top=$(grep '^--- FAIL' "$log" | awk '{print $3}' | paste -sd'|' - || true)
		rerun=$log.rerun
		if [ "$rc" = 1 ] && [ -n "$top" ] && [ "$(grep -c '^--- FAIL' "$log")" -le 3 ] && ! grep -q '^panic:' "$log" &&
			(cd "$rel" && "$wine" "$exe" -test.v -test.count=1 -test.timeout="$pkgtimeout" -test.run "^($top)\$") >"$rerun" 2>&1 &&
			grep -q '^PASS$' "$rerun" && ! grep -q '^--- FAIL' "$rerun"; then
			note="ok; flaky under Wine, passed when run again: $fails (first run: $log)"
			flaky+=("$rel: $fails")
		else
			[ ! -f "$rerun" ] || { echo "test-windows: $rel: failed again when run alone:" >&2; print_failures "$rerun"; }
			failed=1
			note="FAILED (exit $rc) ${fails}"
		fi
	fi
	if [ -n "$selfskip" ]; then
		failed=1
		note="$note skipped outside $skiplist: $selfskip"
	fi
	table+=("$rel|$pass|$listed|$((t1 - t0))s+$((t2 - t1))s|${note:-ok}")
done

echo
echo "Windows test lane under Wine: passed and skipped (by name, build/wine/skip.txt) tests per package"
printf '%-24s %6s %6s %12s  %s\n' package passed skipped build+run result
for row in "${table[@]}"; do
	IFS='|' read -r p n s t r <<<"$row"
	printf '%-24s %6s %6s %12s  %s\n' "$p" "$n" "$s" "$t" "$r"
done
for f in "${flaky[@]}"; do
	echo "test-windows: FLAKY under Wine (failed, then passed alone): $f"
done
echo "test-windows: $(($(date +%s) - started))s in all; logs in $lane/logs"
exit $failed
