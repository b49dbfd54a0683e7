#!/usr/bin/env bash
# Build dist/Margin (one folder) and an archive of it, then smoke-test the bundle.
# Usage: packaging/build.sh   (after `make package` installed PyInstaller into .venv)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml | head -1)
ARCH=$(uname -m)
start=$(date +%s)
"$PY" packaging/make_icons.py >/dev/null
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build/pyinstaller packaging/margin.spec
built=$(date +%s)
archive="dist/Margin-${VERSION}-linux-${ARCH}.tar.xz"
tar -C dist -cf - Margin | xz -T0 -6 > "$archive"
end=$(date +%s)
echo "build: $((built - start)) s (PyInstaller), archive: $((end - built)) s"
echo "unpacked: $(du -sh dist/Margin | cut -f1)  archive: $(du -h "$archive" | cut -f1)  ($archive)"
packaging/smoke.sh dist/Margin/Margin
