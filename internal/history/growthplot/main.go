// Command growthplot draws BenchmarkHistory's figures against the size of
// the history, one small panel per figure with its goal dashed, as an SVG
// for the README:
//
//	go test ./internal/history -run '^$' -bench BenchmarkHistory -benchtime 1x \
//	    | go run ./internal/history/growthplot > docs/history-growth.svg
//
// (with LONGFAIR_BENCH_HISTORY=1000000,3000000,10000000 for the three
// sizes). It reads the benchmark's lines from standard input.
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// figure is one panel: a metric of the benchmark, its goal at 10 million
// attempts, and how to show it.
type figure struct {
	metric, title, unit string
	goal, scale         float64
}

func figures() []figure {
	return []figure{
		{"s-verify", "ledger verify", "s", 60, 1},
		{"s-snapshot", "snapshot", "s", 30, 1},
		{"s-restore", "restore onto a new FSM", "s", 60, 1},
		{"MiB-heap", "heap after the fill", "GiB", 2, 1.0 / 1024},
		{"ms-usage-month", "a month's usage report", "s", 1, 1.0 / 1000},
		{"ms-jobs50", "newest 50 jobs", "ms", 50, 1},
	}
}

func main() {
	points, err := read(os.Stdin)
	if err == nil && len(points) == 0 {
		err = fmt.Errorf("no BenchmarkHistory lines on standard input")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "growthplot:", err)
		os.Exit(1)
	}
	write(os.Stdout, points)
}

// read returns each history size's metrics.
func read(r io.Reader) (map[float64]map[string]float64, error) {
	benchLine := regexp.MustCompile(`attempts=(\d+)`)
	metricRe := regexp.MustCompile(`([0-9.e+]+) ([A-Za-z0-9-]+)`)
	out := map[float64]map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		m := benchLine.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(line, "BenchmarkHistory") {
			continue
		}
		n, _ := strconv.ParseFloat(m[1], 64)
		metrics := map[string]float64{}
		for _, mm := range metricRe.FindAllStringSubmatch(line, -1) {
			if v, err := strconv.ParseFloat(mm[1], 64); err == nil {
				metrics[mm[2]] = v
			}
		}
		out[n] = metrics
	}
	return out, sc.Err()
}

func write(w io.Writer, points map[float64]map[string]float64) {
	const pw, ph, cols = 300, 200, 3
	figs := figures()
	rows := (len(figs) + cols - 1) / cols
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", pw*cols, ph*rows)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	var sizes []float64
	for n := range points {
		sizes = append(sizes, n)
	}
	sort.Float64s(sizes)
	xmin, xmax := math.Log10(sizes[0])-0.1, math.Log10(1e7)+0.1
	for i, f := range figs {
		ox, oy := float64(i%cols*pw), float64(i/cols*ph)
		left, right, top, bottom := ox+45, ox+pw-10, oy+25, oy+ph-30
		ymax := f.goal * 1.2
		for _, n := range sizes {
			ymax = max(ymax, points[n][f.metric]*f.scale*1.1)
		}
		x := func(n float64) float64 { return left + (math.Log10(n)-xmin)/(xmax-xmin)*(right-left) }
		y := func(v float64) float64 { return bottom - v/ymax*(bottom-top) }
		fmt.Fprintf(w, `<text x="%.0f" y="%.0f" font-weight="bold">%s (%s)</text>`+"\n", left, oy+15, f.title, f.unit)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", left, bottom, right, bottom)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", left, top, left, bottom)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end">%.3g</text>`+"\n", left-3, top+4, ymax)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end">0</text>`+"\n", left-3, bottom)
		for _, n := range []float64{1e6, 3e6, 1e7} {
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle">%gM</text>`+"\n", x(n), bottom+14, n/1e6)
		}
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e15759" stroke-dasharray="4 3"/>`+"\n", left, y(f.goal), right, y(f.goal))
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end" fill="#e15759">goal %g</text>`+"\n", right, y(f.goal)-3, f.goal)
		var path []string
		for _, n := range sizes {
			v, ok := points[n][f.metric]
			if !ok {
				continue
			}
			v *= f.scale
			path = append(path, fmt.Sprintf("%.1f,%.1f", x(n), y(v)))
			fmt.Fprintf(w, `<circle cx="%.1f" cy="%.1f" r="3" fill="#4e79a7"/>`+"\n", x(n), y(v))
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f" fill="#4e79a7">%.3g</text>`+"\n", x(n)+5, y(v)-5, v)
		}
		fmt.Fprintf(w, `<polyline points="%s" fill="none" stroke="#4e79a7"/>`+"\n", strings.Join(path, " "))
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">task attempts in the journal</text>`+"\n", (left+right)/2, oy+ph-4)
	}
	fmt.Fprintln(w, "</svg>")
}
