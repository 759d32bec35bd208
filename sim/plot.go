package sim

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/longfair/longfair/ledger"
)

// Plot geometry, in SVG pixels.
const (
	plotWidth   = 900
	panelHeight = 260
	plotLeft    = 60  // room for the β axis labels
	plotRight   = 170 // room for the legend
	plotTop     = 34  // room for the panel title
	plotBottom  = 36  // room for the time axis labels
	maxLegend   = 14
)

// palette is a qualitative colour scheme readable on white (Tableau 10).
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// WritePlot writes an SVG of β over time per account, one panel per policy,
// all on the same time axis, with β = 1 (the non-sharing baseline) dashed.
// β before an account has any baseline is undefined and left out; values
// above the axis are drawn at its top.
func WritePlot(w io.Writer, results []*Result) error {
	ew := &ErrWriter{w: w}
	if len(results) == 0 {
		return fmt.Errorf("no results to plot")
	}
	t0, t1 := results[0].Start, results[0].End
	yMax := 1.5
	for _, r := range results {
		t0, t1 = min(t0, r.Start), max(t1, r.End)
		warm := r.Start.Add(r.Makespan / 10)
		for a := range r.Samples.Beta {
			for k, b := range r.Samples.Beta[a] {
				if r.Samples.Times[k] >= warm && !math.IsInf(b, 0) && !math.IsNaN(b) {
					yMax = max(yMax, b)
				}
			}
		}
	}
	yMax = math.Min(math.Ceil(yMax*2)/2, 5)
	if t1 <= t0 {
		t1 = t0 + 1
	}
	height := panelHeight * len(results)
	ew.Printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		plotWidth, height, plotWidth, height)
	ew.Printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	for i, r := range results {
		p := panel{top: float64(i * panelHeight), t0: t0, t1: t1, yMax: yMax}
		p.draw(ew, r)
	}
	ew.Printf("</svg>\n")
	return ew.err
}

type panel struct {
	top    float64
	t0, t1 ledger.Time
	yMax   float64
}

func (p panel) x(t ledger.Time) float64 {
	return plotLeft + float64(t-p.t0)/float64(p.t1-p.t0)*(plotWidth-plotLeft-plotRight)
}

func (p panel) y(beta float64) float64 {
	h := float64(panelHeight - plotTop - plotBottom)
	return p.top + plotTop + h*(1-math.Min(beta, p.yMax)/p.yMax)
}

func (p panel) draw(ew *ErrWriter, r *Result) {
	right := float64(plotWidth - plotRight)
	ew.Printf(`<text x="%d" y="%.1f" font-size="14" font-weight="bold">β over time — %s (window %s)</text>`+"\n",
		plotLeft, p.top+20, xmlEscape(string(r.Policy)), xmlEscape(r.Window.String()))
	// β gridlines and labels every half.
	for b := 0.0; b <= p.yMax+1e-9; b += 0.5 {
		y := p.y(b)
		style := `stroke="#e0e0e0"`
		if b == 1 {
			style = `stroke="#555" stroke-dasharray="6,4"`
		}
		ew.Printf(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" %s/>`+"\n", plotLeft, y, right, y, style)
		ew.Printf(`<text x="%d" y="%.1f" text-anchor="end">%.1f</text>`+"\n", plotLeft-6, y+4, b)
	}
	// Time ticks.
	bottom := p.y(0)
	step := tickStep(p.t1.Sub(p.t0))
	for d := time.Duration(0); p.t0.Add(d) <= p.t1; d += step {
		ew.Printf(`<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", p.x(p.t0.Add(d)), bottom+16, xmlEscape(axisTime(d)))
	}
	ew.Printf(`<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", plotLeft, bottom, right, bottom)
	ew.Printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333"/>`+"\n", plotLeft, p.y(p.yMax), plotLeft, bottom)

	for a, ar := range r.Accounts {
		colour := palette[a%len(palette)]
		var pts []string
		flush := func() {
			if len(pts) > 1 {
				ew.Printf(`<polyline fill="none" stroke="%s" stroke-width="1.6" points="%s"/>`+"\n", colour, strings.Join(pts, " "))
			}
			pts = pts[:0]
		}
		for k, b := range r.Samples.Beta[a] {
			if math.IsInf(b, 0) || math.IsNaN(b) {
				flush()
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.x(r.Samples.Times[k]), p.y(b)))
		}
		flush()
		if a < maxLegend {
			ly := p.top + plotTop + float64(a)*16
			ew.Printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/>`+"\n", right+12, ly, right+30, ly, colour)
			ew.Printf(`<text x="%.1f" y="%.1f">%s %s</text>`+"\n", right+36, ly+4, xmlEscape(ar.Name), formatBeta(ar.FinalBeta))
		} else if a == maxLegend {
			ly := p.top + plotTop + float64(a)*16
			ew.Printf(`<text x="%.1f" y="%.1f">+%d more</text>`+"\n", right+12, ly+4, len(r.Accounts)-maxLegend)
		}
	}
}

// tickStep is the smallest round step (1, 2, 5, 10, 15 or 30 of a unit)
// that puts at most six ticks on a time axis of the given span.
func tickStep(span time.Duration) time.Duration {
	for _, unit := range []time.Duration{time.Second, time.Minute, time.Hour, 24 * time.Hour} {
		for _, k := range []time.Duration{1, 2, 5, 10, 15, 30} {
			if step := k * unit; span/step <= 6 {
				return step
			}
		}
	}
	return 7 * 24 * time.Hour * (span/(6*7*24*time.Hour) + 1)
}

// axisTime labels a time-axis tick compactly: 90s, 12m, 3.5h, 2.1d.
func axisTime(d time.Duration) string {
	switch {
	case d < 2*time.Minute:
		return fmt.Sprintf("%gs", math.Round(d.Seconds()*10)/10)
	case d < 2*time.Hour:
		return fmt.Sprintf("%gm", math.Round(d.Minutes()*10)/10)
	case d < 48*time.Hour:
		return fmt.Sprintf("%gh", math.Round(d.Hours()*10)/10)
	default:
		return fmt.Sprintf("%gd", math.Round(d.Hours()/24*10)/10)
	}
}

var xmlReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func xmlEscape(s string) string { return xmlReplacer.Replace(s) }
