#!/usr/bin/env bash
# Writes the published test vectors (docs/vectors/) from the rules crate.
set -euo pipefail
cd "$(dirname "$0")/.."
ADJUTANT_WRITE_VECTORS=1 cargo test -p adjutant-rules --test vectors --locked
