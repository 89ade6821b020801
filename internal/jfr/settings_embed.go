package jfr

import _ "embed"

// LatscopeJFC is internal/jfr/latscope.jfc, the recording settings docs/jfr.md asks
// for (1 ms wait thresholds with stacks, 10 ms execution samples): a
// program can write it out, so a latscope binary records without the
// source tree.
//
//go:embed latscope.jfc
var LatscopeJFC []byte
