package pprofexport

import "github.com/latscope/latscope/internal/frame"

// Options configure the exports.
type Options struct {
	// Rules attribute a blocking stack to its application frame and
	// mechanism for the "frame" and "mechanism" labels. Pass the rules the
	// analysis used (budget.Options.Rules) so labels match the budget.
	Rules frame.Rules
	// Task keeps only the request type of this name; "" keeps all, each
	// sample labelled with its request type ("request").
	Task string
}

// DefaultOptions are the options of `latscope analyze --pprof` without flags.
var DefaultOptions = Options{Rules: frame.DefaultRules}
