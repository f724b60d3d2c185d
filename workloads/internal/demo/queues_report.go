package demo

import (
	"fmt"
	"io"
	"slices"
)

// printQueues prints a row per queue of a sale with phases: its
// admissions and their share (FIFO is measured within each queue, see
// loadtest.ComputeFairness). A sale without phases has no rows.
func printQueues(w io.Writer, admitted map[string]int) {
	if len(admitted) == 0 {
		return
	}
	names, total := make([]string, 0, len(admitted)), 0
	for q, n := range admitted {
		names = append(names, q)
		total += n
	}
	slices.Sort(names)
	for _, q := range names {
		name := q
		if name == "" {
			name = "general"
		}
		fmt.Fprintf(w, "queue %s\t%d admitted, %.1f%% of admissions\n", name, admitted[q], 100*float64(admitted[q])/float64(max(total, 1)))
	}
}
