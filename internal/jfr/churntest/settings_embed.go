package churntest

import _ "embed"

// JFC is churn.jfc, the settings docs/jfr-churn.md records churn with
// (execution samples every millisecond), for programs that write it out.
//
//go:embed churn.jfc
var JFC []byte
