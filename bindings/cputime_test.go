package bindings

import "github.com/agentsync/agentsync/internal/cputime"

// cpuNow is the process's CPU time (benchmarks report it per operation).
var cpuNow = cputime.Now
