package budget

import "github.com/latscope/latscope/internal/frame"

// InferMode says where requests come from.
type InferMode uint8

// Inference modes.
const (
	// InferAuto uses tasks, and infers net/http and grpc-go server requests
	// only when the trace has no task at all.
	InferAuto InferMode = iota
	// InferTasks uses tasks only.
	InferTasks
	// InferHTTP ignores tasks and infers server requests: net/http's and
	// grpc-go's (the name is from before gRPC was inferred).
	InferHTTP
)

// Options configure an Analyzer.
type Options struct {
	// Rules decide application frames and mechanisms.
	Rules frame.Rules
	// Infer says where requests come from.
	Infer InferMode
	// Predictions are evaluated for every request.
	Predictions []Prediction
	// FixPotential computes, per term, the latency saved if it were gone
	// (one extra simulation per term on each request's critical path).
	FixPotential bool
	// PathSamples is how many requests' critical paths are kept (reservoir
	// sampled) to show the median request; the slowest is always kept.
	PathSamples int
	// Each, when set, is called for every finished request with its critical
	// path (the Path and its Segs are only valid during the call).
	Each func(name string, p *Path)
	// StacksOnly splits running time by frame from the stacks at state
	// changes alone, as for a trace without CPU samples, even when the trace
	// has them: to measure that estimate against the samples.
	StacksOnly bool
	// TraceID, when set (32 hex digits, ParseTraceID), keeps only the
	// requests whose latscope.request log carries that trace ID (several
	// requests may share one); the others are neither booked nor counted
	// as cut by the window. An ID that does not parse, or that no request
	// carries, gives a refusing finding.
	TraceID string
}

// DefaultOptions are the options of `latscope analyze` without flags.
var DefaultOptions = Options{
	Rules:        frame.DefaultRules,
	Infer:        InferAuto,
	FixPotential: true,
	PathSamples:  1024,
}
