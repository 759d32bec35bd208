package client

import (
	"context"
	"strconv"
	"testing"
)

func TestPagesFollowsTokensAndStopsOnARepeatedOne(t *testing.T) {
	// Three pages of two items; with stuck set, the server answers the
	// second page's request with the second page's own token.
	walk := func(stuck bool) (got []int, errs int) {
		calls := 0
		fetch := func(_ context.Context, token string) ([]int, string, error) {
			calls++
			if calls > 10 {
				t.Fatal("the walk did not stop")
			}
			page := 0
			if token != "" {
				page, _ = strconv.Atoi(token)
			}
			next := strconv.Itoa(page + 1)
			switch {
			case stuck && page == 1:
				next = token
			case page == 2:
				next = ""
			}
			return []int{2 * page, 2*page + 1}, next, nil
		}
		for v, err := range pages(context.Background(), fetch) {
			if err != nil {
				errs++
				continue
			}
			got = append(got, v)
		}
		return got, errs
	}
	if got, errs := walk(false); len(got) != 6 || got[5] != 5 || errs != 0 {
		t.Errorf("walk of three pages = %v with %d errors, want 0…5 and none", got, errs)
	}
	if got, errs := walk(true); len(got) != 4 || errs != 1 {
		t.Errorf("walk with a stuck token = %v with %d errors, want the first two pages and one error", got, errs)
	}
}
