#!/bin/sh
# What `make run` and `make test` need, checked before they start, so that a
# machine missing something is told all of it at once, with the Debian
# package to install, instead of failing half-way through a build.
#
#   sh build/doctor.sh run    # make run's prerequisites
#   sh build/doctor.sh test   # make test's (run's and the test tools)
#
# It prints one line per prerequisite and exits 1 when one is missing.
set -u

what=${1:-test}
case $what in
run | test) ;;
*)
	echo "usage: $0 run|test" >&2
	exit 2
	;;
esac

missing=0
os=$(uname 2>/dev/null || echo Linux)
ok() { printf '  ok       %s\n' "$1"; }
lack() {
	printf '  MISSING  %s\n' "$1"
	missing=$((missing + 1))
}
has() { command -v "$1" >/dev/null 2>&1; }

# tool NAME PACKAGE WHY: a command on PATH.
tool() {
	if has "$1"; then ok "$1"; else lack "$1: $3 (Debian: apt-get install $2)"; fi
}

echo "switchboard: what \`make $what\` needs on this machine"

if has go; then
	v=$(go env GOVERSION 2>/dev/null)
	v=${v#go}
	major=${v%%.*}
	rest=${v#*.}
	minor=${rest%%.*}
	if [ "${major:-0}" -gt 1 ] 2>/dev/null || { [ "${major:-0}" -eq 1 ] && [ "${minor:-0}" -ge 26 ]; } 2>/dev/null; then
		ok "go $v"
	else
		lack "go: version $v is too old: Go 1.26 or later builds Switchboard (https://go.dev/dl)"
	fi
else
	lack "go: Go 1.26 or later builds Switchboard (https://go.dev/dl)"
fi

if has node; then
	v=$(node --version 2>/dev/null)
	v=${v#v}
	major=${v%%.*}
	if [ "${major:-0}" -ge 20 ] 2>/dev/null; then
		ok "node $v"
	else
		lack "node: version $v is too old: Node.js 20 or later builds the dashboard (Debian 12's nodejs is 18: use nodejs.org's)"
	fi
else
	lack "node: Node.js 20 or later builds the dashboard (https://nodejs.org; Debian 12's nodejs is 18, too old)"
fi
tool npm npm "installs the dashboard's packages (it comes with Node.js)"
tool git git "names the version of the build"
tool gcc "gcc libc6-dev" "the window and the tray link C libraries (and -race needs cgo)"

# The GUI libraries of the window and tray builds. On Linux `make run`
# installs them with apt (its gui-deps step); `make test` builds and runs
# both under Xvfb, and does not install anything.
if [ "$os" = Linux ]; then
	libs="gtk+-3.0 webkit2gtk-4.1 ayatana-appindicator3-0.1"
	if has pkg-config && pkg-config --exists $libs 2>/dev/null; then
		ok "GTK 3, WebKitGTK 4.1, AppIndicator"
	elif [ "$what" = run ] && has apt-get; then
		ok "GTK 3, WebKitGTK 4.1, AppIndicator: not installed yet; make run installs them with apt"
	else
		lack "GTK 3, WebKitGTK 4.1, AppIndicator headers: the window and tray builds (Debian: apt-get install pkg-config libgtk-3-dev libwebkit2gtk-4.1-dev libayatana-appindicator3-dev)"
	fi
fi

if [ "$what" = test ]; then
	if [ -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
		ok "chromium"
	else
		lack "chromium: the dashboard's browser test runs Debian's Chromium at ${CHROMIUM:-/usr/bin/chromium} (Debian: apt-get install chromium)"
	fi
	if [ "$os" = Linux ]; then
		tool xvfb-run xvfb "the window's and the tray's tests run under Xvfb"
		tool xauth xauth "xvfb-run needs it"
		tool dbus-run-session dbus "the tray's menu is a D-Bus service"
		tool xdotool xdotool "the GUI tests click and type"
		tool import imagemagick "the GUI tests take screenshots"
		tool trayer trayer "the tray test needs a system tray to sit in"
	fi
fi

if [ "$missing" -gt 0 ]; then
	echo "switchboard: $missing missing; install them and run \`make $what\` again (.ci/run installs all of them on Debian 12)"
	exit 1
fi
echo "switchboard: everything \`make $what\` needs is here"
