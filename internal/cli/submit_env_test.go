package cli

import (
	"slices"
	"testing"
)

func TestExportEnv(t *testing.T) {
	environ := []string{"HOME=/home/ann", "PATH=/bin", "LONGFAIR_TOKEN=secret", "BAD=\xff"}
	for _, tc := range []struct {
		spec    string
		want    []string
		dropped []string
	}{
		{"ALL", []string{"HOME=/home/ann", "PATH=/bin"}, []string{"BAD"}},
		{"NONE", []string{}, nil},
		{"PATH,X=1", []string{"PATH=/bin", "X=1"}, nil},
		{"ALL,PATH=/usr/bin", []string{"HOME=/home/ann", "PATH=/usr/bin"}, []string{"BAD"}},
		{"LONGFAIR_TOKEN,MISSING", []string{}, nil},
	} {
		got, dropped, err := exportEnv(tc.spec, environ)
		if err != nil || !slices.Equal(got, tc.want) || !slices.Equal(dropped, tc.dropped) {
			t.Errorf("exportEnv(%q) = %q, dropped %q, %v; want %q, dropped %q", tc.spec, got, dropped, err, tc.want, tc.dropped)
		}
	}
	for _, bad := range []string{"A,,B", "A,ALL", "NONE,A"} {
		if _, _, err := exportEnv(bad, environ); err == nil {
			t.Errorf("exportEnv(%q) was accepted", bad)
		}
	}
}
