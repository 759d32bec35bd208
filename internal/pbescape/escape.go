package pbescape

// Strings replaces each element of s, in place, by esc of it.
func Strings(s []string, esc func(string) string) {
	for i, v := range s {
		s[i] = esc(v)
	}
}

// Keys replaces each key of m by esc of it, keeping its value. A key
// whose escaped form is also a key of m replaces that entry, as setting
// it would.
func Keys[V any](m map[string]V, esc func(string) string) {
	var moved map[string]V
	for k, v := range m {
		if e := esc(k); e != k {
			if moved == nil {
				moved = make(map[string]V)
			}
			moved[e] = v
			delete(m, k)
		}
	}
	for k, v := range moved {
		m[k] = v
	}
}

// Values replaces each value of m, in place, by esc of it.
func Values[K comparable](m map[K]string, esc func(string) string) {
	for k, v := range m {
		if e := esc(v); e != v {
			m[k] = e
		}
	}
}
