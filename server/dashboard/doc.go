// Package dashboard serves the web dashboard every server offers on its
// HTTP listener under /ui/: accounts and their fairness over time, a
// job's page with the explain answer, nodes, the SU book, and for admins
// the Raft group.
//
// The pages are static files built into the binary (go:embed): the servers
// often have no internet, so nothing is fetched from a CDN at run time.
// They hold no data and no authority of their own. The login page takes a
// token and keeps it in sessionStorage (gone when the tab closes); every
// data call goes to the JSON/HTTP API under /v1/ with that token as its
// bearer, so the API's authorisation alone decides what a user sees, and a
// refused call shows the API's own message on an error page.
//
// Charts use uPlot (MIT, assets/uPlot.LICENSE), a small, well-kept
// canvas time-series library with no dependencies: about 50 KB minified,
// against Chart.js's 200 KB, and it draws many series cheaply. The copy in
// assets/ is re-fetched at the pinned version with `make dashboard-assets`.
// A server-side SVG renderer was not chosen because charts that redraw
// from the page's own polls need no round trip per redraw.
//
// Staleness: each page says when its data was read and from which server;
// reads are answered by whichever server the browser talks to, so a
// follower's view may lag the leader's by its replication lag.
package dashboard
