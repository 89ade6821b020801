package jfr

import "context"

// ReadEvents calls fn with each event of the recording at path whose type is
// in o.Events, in the recording's order. It is the one place the analysis
// reads events from; today it runs the JDK's jfr tool (Print).
func ReadEvents(ctx context.Context, path string, o PrintOptions, fn func(*Event) error) error {
	return Print(ctx, path, o, fn)
}
