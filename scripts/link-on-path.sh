#!/usr/bin/env bash
# Puts a built dvfslab on PATH as a link in /usr/local/bin (or $DVFSLAB_BIN_DIR), so
# the README's `dvfslab ...` lines run as written. Replaces a link (an older
# checkout's), never a file: an installed dvfslab stays. Safe to run again.
# Usage: link-on-path.sh BINARY
set -euo pipefail
binary=$(realpath "$1")
bin_dir=${DVFSLAB_BIN_DIR:-/usr/local/bin}
link="$bin_dir/dvfslab"
if [[ -e "$link" && ! -L "$link" ]]; then
  echo "link-on-path: $link is an installed dvfslab, left as it is; this build is $binary"
elif [[ -d "$bin_dir" && -w "$bin_dir" ]]; then
  ln -sfn "$binary" "$link"
  echo "link-on-path: dvfslab on PATH: $link -> $binary"
else
  echo "link-on-path: cannot write $bin_dir (not root?); to run \`dvfslab\`: export PATH=\"$(dirname "$binary"):\$PATH\""
fi
