// Package triagereport writes the report of `latscope triage` (a
// triage.Report): as text ([WriteText]), as JSON ([WriteJSON], schema
// version [JSONVersion], docs/triage.md) and as a self-contained HTML
// page ([WriteHTML]) whose colours are the product's palette
// (internal/report/html). It only formats: every number, verdict and
// phrase is package triage's.
package triagereport
