package main

// row is one line of the table: a figure, the same-run baseline it is
// compared against, and the target the issues set for it.
type row struct {
	Bench    string // "<pkg>.<BenchmarkName without Benchmark>"
	Metric   string // the reported unit to show, e.g. "ns/op"
	Baseline string
	BMetric  string // unit of the baseline; empty = Metric
	Target   string
}

func (r row) BaselineMetric() string {
	if r.BMetric != "" {
		return r.BMetric
	}
	return r.Metric
}

// rows lists every benchmark of the repository with its baseline. Names are
// filled in as the packages define them.
var rows = []row{}
