// Package cputime reads the process's CPU time for benchmarks: on a
// shared, loaded machine, CPU time per operation is a steadier measure of
// a benchmark's cost than wall time (it leaves out the time other
// processes held the cores), and it includes the garbage collector's work
// on other threads.
package cputime
