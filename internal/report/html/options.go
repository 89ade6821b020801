package htmlreport

// Options configure an analysis report.
type Options struct {
	// Title is the page title; "" uses "latscope — FILE".
	Title string
	// MinShare folds terms under this share of the mean latency (percent),
	// both as goroutine time and on the critical path, into one bar.
	MinShare float64
	// MaxTerms caps the bars of the budget chart; smaller terms fold.
	MaxTerms int
	// Bins caps the bins of the latency histogram.
	Bins int
	// Sections are appended after the analysis (before the findings).
	Sections []Section
	// jvm is set by Analysis for a JVM recording: threads, not goroutines;
	// running and runnable not measured (jvm.go).
	jvm bool
}

// DefaultOptions are the options of `latscope analyze --html`.
var DefaultOptions = Options{MinShare: 0.5, MaxTerms: 12, Bins: 40}
