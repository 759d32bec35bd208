package cli

import (
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/longfair/longfair/client"
)

// wellKnown resources come first in listings, in this order.
var wellKnown = []string{"cpu", "mem", "gpu", "mic"}

// resourceOrder lists the resource names of the maps: cpu, mem, mic, then
// the others by name.
func resourceOrder(maps ...map[string]float64) []string {
	seen := map[string]bool{}
	var rest []string
	for _, m := range maps {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				if !slices.Contains(wellKnown, k) {
					rest = append(rest, k)
				}
			}
		}
	}
	sort.Strings(rest)
	var out []string
	for _, k := range wellKnown {
		if seen[k] {
			out = append(out, k)
		}
	}
	return append(out, rest...)
}

// fmtVector writes a resource vector as "cpu=2 mem=4G mic=1", leaving out
// zeros; "-" when nothing is left.
func fmtVector(v map[string]float64) string {
	var parts []string
	for _, k := range resourceOrder(v) {
		if v[k] != 0 {
			parts = append(parts, k+"="+client.FormatQuantity(k, v[k]))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// fmtResourceHours writes accumulated usage (resource-seconds) as
// resource-hours: "cpu=12.5h mem=48Gh".
func fmtResourceHours(v map[string]float64) string {
	var parts []string
	for _, k := range resourceOrder(v) {
		h := v[k] / 3600
		switch {
		case h == 0:
			continue
		case h < 0.001 && !client.IsSizeResource(k):
			parts = append(parts, k+"=<0.001h")
		default:
			parts = append(parts, k+"="+client.FormatQuantity(k, h)+"h")
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// fmtVectorOf writes the given resources of v, zeros included: what a
// node has free of what a task needs.
func fmtVectorOf(v map[string]float64, keys map[string]float64) string {
	var parts []string
	for _, k := range resourceOrder(keys) {
		parts = append(parts, k+"="+client.FormatQuantity(k, v[k]))
	}
	return strings.Join(parts, " ")
}

// resourceFlags are the demand flags of submit: --cpu, --mem, --mic and
// repeatable --res name=quantity.
type resourceFlags struct {
	cpu, mem, gpu, mic string
	res                ListFlag
}

func (r *resourceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.cpu, "cpu", "", "CPU cores per task, in hundredths: at least 0.01, rounded up (default 1 when no resource is given)")
	fs.StringVar(&r.mem, "mem", "", "memory per task: bytes, or with a unit such as 512M or 4G (binary, as in Slurm); at least 1M, rounded up to whole MiB")
	fs.StringVar(&r.gpu, "gpu", "", "GPUs per task, whole (the cluster must have the gpu resource)")
	fs.StringVar(&r.mic, "mic", "", "MIC (Xeon Phi) devices per task, whole")
	fs.Var(&r.res, "res", "any other resource per task as `name=quantity`, whole units (sizes named *mem or *bytes in MiB); repeat or comma-separate")
}

// demand builds the demand map; with nothing given it is one CPU core.
func (r *resourceFlags) demand() (map[string]float64, error) {
	d, err := client.ParseResources(r.res...)
	if err != nil {
		return nil, Usagef("--res: %v", err)
	}
	for _, f := range []struct{ name, val string }{{"cpu", r.cpu}, {"mem", r.mem}, {"gpu", r.gpu}, {"mic", r.mic}} {
		if f.val == "" {
			continue
		}
		if _, dup := d[f.name]; dup {
			return nil, Usagef("%s is given both as --%s and in --res: give it once", f.name, f.name)
		}
		q, err := client.ParseQuantity(f.val)
		if err != nil {
			return nil, Usagef("--%s: %v", f.name, err)
		}
		d[f.name] = q
	}
	if len(d) == 0 {
		d["cpu"] = 1
	}
	return d, nil
}

// fmtSU writes micro-SU as SU.
func fmtSU(micro int64) string { return client.FormatSU(micro) }

// fmtPercent writes a fraction as a percentage.
func fmtPercent(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
