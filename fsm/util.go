package fsm

import (
	"cmp"
	"encoding/json"
	"slices"
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
