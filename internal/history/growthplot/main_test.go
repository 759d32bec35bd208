package main

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// Each figure of each size in the benchmark's output is drawn, on one
// well-formed SVG.
func TestGrowthPlotDrawsEveryPoint(t *testing.T) {
	in := `goos: linux
BenchmarkHistory/attempts=1000000-2   1  1 ns/op  543.0 MiB-heap  1020050 journal-entries  0.60 ms-jobs50  5300 ms-usage-month  4.7 s-snapshot  41.7 s-restore  11.8 s-verify
BenchmarkHistory/attempts=3000000-2   1  1 ns/op  1600 MiB-heap  3020050 journal-entries  0.70 ms-jobs50  16000 ms-usage-month  14 s-snapshot  120 s-restore  35 s-verify
`
	points, err := read(strings.NewReader(in))
	if err != nil || len(points) != 2 || points[3e6]["s-restore"] != 120 {
		t.Fatalf("read %v, %v", points, err)
	}
	var out bytes.Buffer
	write(&out, points)
	if err := xml.Unmarshal(out.Bytes(), new(struct{})); err != nil {
		t.Fatalf("not well-formed SVG: %v", err)
	}
	if got, want := strings.Count(out.String(), "<circle"), 2*len(figures()); got != want {
		t.Fatalf("%d points drawn, want %d", got, want)
	}
	if !strings.Contains(out.String(), ">120</text>") {
		t.Fatal("the 3M restore time is not labelled")
	}
}
