package dashboard

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
)

// Path is where the dashboard is served on the HTTP listener.
const Path = "/ui/"

//go:embed assets
var assets embed.FS

// Handler serves the dashboard's files under Path. The files are the same
// for every caller; what a page shows comes from the API calls it makes
// with the caller's own token.
func Handler() (http.Handler, error) {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, fmt.Errorf("dashboard assets: %w", err)
	}
	files := http.StripPrefix(Path, http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The pages run only their own scripts and talk only to this
		// server; a token in sessionStorage is then out of reach of any
		// other origin's code.
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}), nil
}
