#!/usr/bin/env bash
# lab/bench/jfr.sh — `latscope analyze rec.jfr` with the binary JFR reader
# against the same analysis through the JDK's `jfr print --json`, on one
# recording: by default a 30 s recording of lab/bench/jfrbench/Load.java (a JDK
# service with CPU work, monitor, socket, park and sleep waits, recorded with
# settings=profile plus internal/jfr/latscope.jfc). Prints the recording's size, the
# JSON's size, each reader's median time and peak RSS, and the ratio.
#
#   bash lab/bench/jfr.sh                              # record 30 s, 3 runs of each reader
#   bash lab/bench/jfr.sh -dur 60s -reps 5
#   bash lab/bench/jfr.sh -rec x.jfr -handler Foo.handle -requests 1000
#
# Needs a JDK (javac, java, jfr). Output under lab/bench/out/jfr. The host's
# other load makes timings noisy: compare medians, repeat when it matters.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec go run ./lab/bench/jfrbench "$@"
