// Package render turns an analysis result into the report a person reads
// (text) or a program reads (JSON, documented in docs/json.md). Build
// derives every printed number from the result and the caller's inputs in
// one place; the writers only format.
package render
