#!/usr/bin/env bash
# Smoke test of a built bundle: start it headless with no network and no key, open a fixture
# book, save a screenshot, exit 0; then the same under Xvfb when it is installed.
# Usage: packaging/smoke.sh [path/to/Margin]
set -euo pipefail
cd "$(dirname "$0")/.."
APP=${1:-dist/Margin/Margin}
BOOK=${SMOKE_BOOK:-}
for dir in "${MARGIN_FIXTURES:-}" ../shared/fixtures /work/shared/fixtures; do
  if [ -z "$BOOK" ] && [ -n "$dir" ] && [ -f "$dir/pdf/pdflatex-4-pages.pdf" ]; then BOOK="$dir/pdf/pdflatex-4-pages.pdf"; fi
done
if [ -z "$BOOK" ]; then  # no fixtures here: a book of our own
  BOOK="$(pwd)/resources/welcome/Welcome to Margin.md"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a clean environment: no key, no MARGIN_HOME, a fresh home; data must go to the user folders
run() {
  env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$tmp/home" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" \
    MARGIN_STARTUP_TIMING=1 QT_QPA_PLATFORM="$1" ${DISPLAY:+DISPLAY=$DISPLAY} ${XAUTHORITY:+XAUTHORITY=$XAUTHORITY} "${@:2}"
}

mkdir -p "$tmp/home"
LANG=C.UTF-8 "$APP" --version
# start-up as a user waits for it: from launching the process to the window's first paint
# (the app prints the wall-clock time of that paint; its own timer starts too late)
t0=$(date +%s%N)
run offscreen "$APP" --exit-after-shown 2> "$tmp/shown.log"
t1=$(date +%s%N)
painted=$(grep -o 'first paint at [0-9]* ns' "$tmp/shown.log" | grep -o '[0-9]*' || true)
if [ -z "$painted" ]; then echo "the window was never painted"; cat "$tmp/shown.log"; exit 1; fi
echo "launch to first painted window: $(( (painted - t0) / 1000000 )) ms; process wall time $(( (t1 - t0) / 1000000 )) ms"
run offscreen "$APP" --open "$BOOK" --page 2 --screenshot "$tmp/offscreen.png"
test "$(stat -c %s "$tmp/offscreen.png")" -gt 10000
test -d "$tmp/data/Margin" || { echo "the bundle did not use the user data folder"; exit 1; }
echo "offscreen screenshot OK"
if command -v xvfb-run >/dev/null; then
  cat > "$tmp/under-x.sh" <<SCRIPT
#!/usr/bin/env bash
exec env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$tmp/home" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" \\
  DISPLAY="\$DISPLAY" XAUTHORITY="\$XAUTHORITY" QT_QPA_PLATFORM=xcb "\$@"
SCRIPT
  chmod +x "$tmp/under-x.sh"
  xvfb-run -a "$tmp/under-x.sh" "$APP" --open "$BOOK" --screenshot "$tmp/xvfb.png"
  test "$(stat -c %s "$tmp/xvfb.png")" -gt 10000
  echo "Xvfb screenshot OK"
fi
echo "smoke test passed"
