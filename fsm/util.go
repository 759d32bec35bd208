package fsm

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/longfair/longfair/ledger"
)

// sortedKeys returns m's keys in order, so that every walk over a map is
// deterministic.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonBytes encodes v the way every record is stored.
func jsonBytes(v any) ([]byte, error) { return json.Marshal(v) }

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// named turns a vector into a map over the cluster's resources.
func (s *state) named(v ledger.Vector) map[string]float64 { return named(s.settings.Resources, v) }

func named(resources []string, v ledger.Vector) map[string]float64 {
	m := make(map[string]float64, len(resources))
	for k, name := range resources {
		if k < len(v) {
			m[name] = v[k]
		} else {
			m[name] = 0
		}
	}
	return m
}

func clonePtr(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// formatTime writes a ledger time for messages.
func formatTime(t ledger.Time) string {
	return time.Unix(0, int64(t)).UTC().Format(time.RFC3339Nano)
}
