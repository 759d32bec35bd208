package dashboard_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
	"github.com/longfair/longfair/worker"
)

// screenshotDirEnv names a directory the browser tests save their
// screenshots to; without it they go to the test's temporary directory.
const screenshotDirEnv = "LONGFAIR_SCREENSHOTS"

// chromium finds Debian's chromium (make deps installs it), or skips.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH: the dashboard's browser tests need a headless Chromium (run `make deps` as root to install Debian's chromium)")
	return ""
}

// browser starts a headless Chromium at 1280×800 (or width×height).
func browser(t *testing.T, width, height int) context.Context {
	t.Helper()
	// Chromium keeps its singleton socket in a directory of its own under
	// TMPDIR and removes it only when it exits cleanly, which a test's
	// browser does not: it is killed. So its TMPDIR is the test's own.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.WindowSize(width, height),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Env("TMPDIR="+t.TempDir()))
	// The browser lives until the test ends; each step has its own
	// timeout (do, value), as chromedp asks.
	before := chromiumTempDirs(t)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelB()
		cancelA()
		for _, d := range chromiumTempDirs(t) {
			if !slices.Contains(before, d) {
				t.Errorf("Chromium left %s behind", d)
			}
		}
	})
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// chromiumTempDirs lists the directories Chromium keeps its singleton
// socket in, under the system's temporary directory.
func chromiumTempDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(os.TempDir(), "org.chromium.Chromium.*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv(screenshotDirEnv)
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := value(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
}

// getJSON calls the JSON API as secret and decodes the answer into out.
func getJSON(t *testing.T, base, secret, path string, out any) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("GET %s: %s: %v", path, b, err)
		}
	}
	return resp.StatusCode, string(b)
}

// stepTimeout bounds one browser step: a page that never draws fails
// the test instead of hanging it.
const stepTimeout = 20 * time.Second

// do runs browser steps in order, failing the test at the first error.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		// Say what the page showed instead.
		html, _ := value(ctx, chromedp.Evaluate[string](`document.getElementById("main").innerHTML`))
		t.Fatalf("%s: %v; the page shows: %.2000s", what, err, html)
	}
}

// value runs one browser action and returns its value.
func value[T any](ctx context.Context, a chromedp.Action[T]) (T, error) {
	sctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	return chromedp.Run(sctx, a)
}

// must is value failing the test on an error.
func must[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := value(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// login opens the dashboard's login page and logs in with secret.
func login(t *testing.T, ctx context.Context, base, secret string) {
	t.Helper()
	do(t, ctx, "log in",
		chromedp.Navigate(base+"/ui/#/logout"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), secret),
		chromedp.Click(chromedp.CSS("#login button")),
	)
}

func TestDashboardInABrowser(t *testing.T) {
	chromium(t)
	c := testcluster.NewACL(t, 1, func(cfg *server.Config) { cfg.HTTPAddr = "127.0.0.1:0" })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	leader := c.WaitLeader(ctx)
	base := leader.HTTPURL()
	admin := testcluster.As(ctx, testcluster.BootstrapSecret)
	conn := c.Conn(leader)
	accounts := longfairv1.NewAccountsClient(conn)
	for _, name := range []string{"phys", "chem", "bio"} {
		if _, err := accounts.CreateAccount(admin, &longfairv1.CreateAccountRequest{Name: name}); err != nil {
			t.Fatal(err)
		}
		if _, err := longfairv1.NewGrantsClient(conn).CreateGrant(admin, &longfairv1.CreateGrantRequest{Id: "g-" + name, Account: name, AmountMicroSu: 5_000_000_000}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := longfairv1.NewUsersClient(conn).CreateUser(admin, &longfairv1.CreateUserRequest{Name: "ann", Accounts: []string{"phys", "chem"}}); err != nil {
		t.Fatal(err)
	}
	annSecret, _ := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_USER, "ann", 0)
	sub, err := longfairv1.NewJobsClient(conn).SubmitJob(testcluster.As(ctx, annSecret), &longfairv1.SubmitJobRequest{
		Account: "phys", User: "ann", Name: "sweep", Demand: map[string]float64{"cpu": 1}, Tasks: 2,
		Walltime: durationpb.New(time.Minute), Command: []string{"true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	jobID := strconv.FormatUint(sub.GetJob().GetId(), 10)
	if _, err := longfairv1.NewUsersClient(conn).CreateUser(admin, &longfairv1.CreateUserRequest{Name: "bob", Accounts: []string{"bio"}}); err != nil {
		t.Fatal(err)
	}
	sub, err = longfairv1.NewJobsClient(conn).SubmitJob(admin, &longfairv1.SubmitJobRequest{
		Account: "bio", User: "bob", Demand: map[string]float64{"cpu": 1}, Tasks: 1,
		Walltime: durationpb.New(time.Minute), Command: []string{"true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	bobJob := strconv.FormatUint(sub.GetJob().GetId(), 10)

	// What ann may see, from the API: the chart must draw one series per
	// account in her fairness report.
	var report struct {
		Accounts []struct{ Account string } `json:"accounts"`
	}
	if code, body := getJSON(t, base, annSecret, "/v1/fairness", &report); code != http.StatusOK {
		t.Fatalf("GET /v1/fairness as ann: %d %s", code, body)
	}
	if len(report.Accounts) == 0 || len(report.Accounts) == 3 {
		t.Fatalf("ann's fairness report shows %d accounts; the test needs a user who sees some, not all", len(report.Accounts))
	}

	b := browser(t, 1280, 800)
	login(t, b, base, annSecret)
	do(t, b, "accounts page", chromedp.WaitVisible(chromedp.CSS("#chart-beta canvas")))
	series := must(t, b, "chart's series", chromedp.AttributeValue(chromedp.CSS("#chart-beta"), "data-series")).Value
	drawn := must(t, b, "uPlot's series", chromedp.Evaluate[int](`window.longfairCharts["chart-beta"].series.length - 1`))
	rows := must(t, b, "table rows", chromedp.Evaluate[int](`document.querySelectorAll("#accounts tbody tr").length`))
	want := len(report.Accounts)
	if series != strconv.Itoa(want) || drawn != want || rows != want {
		t.Errorf("the β chart draws %d series (attribute %s) and the table %d rows; ann may see %d accounts", drawn, series, rows, want)
	}
	// It says how old its data is, and the last hour comes from the
	// minute tier of the history.
	if stale := must(t, b, "staleness", chromedp.Text(chromedp.CSS("#stale"))); !strings.Contains(stale, "s ago") || strings.Count(stale, "history step 60s") != 1 {
		t.Errorf("the page says %q; want how old its data is and one history of 60 s steps", stale)
	}
	screenshot(t, b, "accounts")

	// A pending job's page gives the explain answer's reason.
	var explain struct {
		Wait    string `json:"wait"`
		Lacking string `json:"lacking"`
	}
	if code, body := getJSON(t, base, annSecret, "/v1/jobs/"+jobID+"/explanation", &explain); code != http.StatusOK {
		t.Fatalf("explain: %d %s", code, body)
	}
	do(t, b, "job page", chromedp.Navigate(base+"/ui/#/job/"+jobID), chromedp.WaitVisible(chromedp.CSS("#reason")))
	reason := must(t, b, "reason", chromedp.Text(chromedp.CSS("#reason")))
	job := must(t, b, "job", chromedp.Text(chromedp.CSS("#job")))
	if explain.Wait == "" || reason == "" || reason == "not waiting" || !strings.Contains(job, "PENDING") ||
		(explain.Lacking != "" && !strings.Contains(reason, explain.Lacking)) {
		t.Errorf("job %s's page says it waits for %q (page %q); the API explains wait %q, lacking %q", jobID, reason, job, explain.Wait, explain.Lacking)
	}
	screenshot(t, b, "job")

	// Ann's token is refused another account's job: the page shows the
	// API's refusal, not the job.
	code, refusal := getJSON(t, base, annSecret, "/v1/jobs/"+bobJob, nil)
	var msg struct{ Message string }
	_ = json.Unmarshal([]byte(refusal), &msg)
	if code == http.StatusOK || msg.Message == "" {
		t.Fatalf("GET /v1/jobs/%s (bio's) as ann: %d %s; the test needs a refusal", bobJob, code, refusal)
	}
	do(t, b, "another account's job as ann", chromedp.Navigate(base+"/ui/#/job/"+bobJob), chromedp.WaitVisible(chromedp.CSS("#error-message")))
	if shown := must(t, b, "refusal", chromedp.Text(chromedp.CSS("#error-message"))); !strings.Contains(shown, msg.Message) {
		t.Errorf("ann on bio's job page sees %q; want the API's refusal %q", shown, msg.Message)
	}

	// An unknown token sees an error page, not data.
	bogus := "lf_not_a_token_0000000000000000"
	code, body := getJSON(t, base, bogus, "/v1/fairness", nil)
	_ = json.Unmarshal([]byte(body), &msg)
	if code != http.StatusUnauthorized {
		t.Fatalf("GET /v1/fairness with a bogus token: %d %s, want 401", code, body)
	}
	login(t, b, base, bogus)
	do(t, b, "log in with a bogus token", chromedp.WaitVisible(chromedp.CSS("#error-message")))
	shown := must(t, b, "refusal", chromedp.Text(chromedp.CSS("#error-message")))
	tables := must(t, b, "data on the page", chromedp.Evaluate[int](`document.querySelectorAll("table, canvas").length`))
	if !strings.Contains(shown, msg.Message) || tables != 0 {
		t.Errorf("a bogus token sees %q and %d tables or charts; want the API's refusal %q and no data", shown, tables, msg.Message)
	}
	screenshot(t, b, "unauthorised")

	// The admin sees every page; each is saved, at 1280×800 and on a
	// phone's width.
	login(t, b, base, testcluster.BootstrapSecret)
	for _, page := range []struct{ hash, sel string }{
		{"accounts", "#chart-beta canvas"}, {"nodes", "#nodes"}, {"book", "#balances"}, {"admin", "#peers"}, {"jobs", "#jobs"},
	} {
		do(t, b, page.hash+" page as admin", chromedp.Navigate(base+"/ui/#/"+page.hash), chromedp.WaitVisible(chromedp.CSS(page.sel)))
		screenshot(t, b, "admin-"+page.hash)
	}
	// The SU book names the journal's head as the API has it.
	var journal struct {
		Entries []struct {
			Seq  string `json:"seq"`
			Hash []byte `json:"hash"`
		} `json:"entries"`
	}
	if code, body := getJSON(t, base, testcluster.BootstrapSecret, "/v1/journal?page_size=1000", &journal); code != http.StatusOK || len(journal.Entries) == 0 {
		t.Fatalf("GET /v1/journal: %d %s", code, body)
	}
	headEntry := journal.Entries[len(journal.Entries)-1]
	do(t, b, "SU book", chromedp.Navigate(base+"/ui/#/book"), chromedp.WaitVisible(chromedp.CSS("#head")))
	if head := must(t, b, "journal head", chromedp.Text(chromedp.CSS("#head"))); !strings.Contains(head, hex.EncodeToString(headEntry.Hash)) || !strings.Contains(head, "seq "+headEntry.Seq) {
		t.Errorf("the SU book shows the journal head %q; the API's last entry is seq %s, hash %x", head, headEntry.Seq, headEntry.Hash)
	}
	do(t, b, "Raft page", chromedp.Navigate(base+"/ui/#/admin"), chromedp.WaitVisible(chromedp.CSS("#server-metrics")))
	// Every server's row has its own state and indexes.
	var status struct {
		State       string `json:"state"`
		CommitIndex string `json:"commit_index"`
	}
	if code, body := getJSON(t, base, testcluster.BootstrapSecret, "/v1/raft/status", &status); code != http.StatusOK || status.State != "leader" {
		t.Fatalf("GET /v1/raft/status: %d %s", code, body)
	}
	if row := must(t, b, "peers row", chromedp.Text(chromedp.CSS("#peers tbody tr"))); !strings.Contains(row, "leader") || !strings.Contains(row, "entries") {
		t.Errorf("the Raft page's server row is %q; want its state and how far it is behind the leader", row)
	}
	if m := must(t, b, "server metrics", chromedp.Text(chromedp.CSS("#server-metrics"))); !strings.Contains(m, "commit index") || !strings.Contains(m, "leader") || strings.Contains(m, "null") {
		t.Errorf("the Raft page shows %q; want this server's commit index and its state, leader", m)
	}
	do(t, b, "accounts as admin", chromedp.Navigate(base+"/ui/#/accounts"), chromedp.WaitVisible(chromedp.CSS("#chart-beta canvas")))
	if n := must(t, b, "admin's series", chromedp.Evaluate[int](`window.longfairCharts["chart-beta"].series.length - 1`)); n != 3 {
		t.Errorf("the admin's β chart draws %d series, want all 3 accounts", n)
	}
	phone := browser(t, 390, 844)
	login(t, phone, base, testcluster.BootstrapSecret)
	do(t, phone, "accounts on a phone", chromedp.WaitVisible(chromedp.CSS("#chart-beta canvas")))
	if must(t, phone, "page width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`)) {
		t.Errorf("the accounts page is wider than a phone's screen")
	}
	screenshot(t, phone, "phone-accounts")
}

// The nodes page shows each node's ups and downs: a worker that leaves
// and comes back shows up, down and up again, newest first, as the API
// lists them.
func TestNodesPageShowsUpDownHistory(t *testing.T) {
	chromium(t)
	c := testcluster.NewACL(t, 1, func(cfg *server.Config) { cfg.HTTPAddr = "127.0.0.1:0" })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	leader := c.WaitLeader(ctx)
	secret, _ := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_WORKER, "", 0)
	start := func() *worker.Agent {
		ag := testcluster.Worker(t, c.Cluster, "w1", func(w *worker.Config) { w.Token = secret; w.Simulate = true })
		testcluster.WaitNodesUp(ctx, t, leader, "w1")
		return ag
	}
	ag := start()
	if err := ag.Shutdown(ctx); err != nil { // says goodbye: the node goes down
		t.Fatal(err)
	}
	testcluster.WaitFor(ctx, t, "w1 down", func() bool {
		n := leader.FSM().Nodes()
		return len(n) == 1 && !n[0].Up
	})
	start()
	var nodes struct {
		Nodes []struct {
			History []struct {
				At string `json:"at"`
				Up bool   `json:"up"`
			} `json:"history"`
		} `json:"nodes"`
	}
	if code, body := getJSON(t, leader.HTTPURL(), testcluster.BootstrapSecret, "/v1/nodes", &nodes); code != http.StatusOK || len(nodes.Nodes) != 1 {
		t.Fatalf("GET /v1/nodes: %d %s", code, body)
	}
	h := nodes.Nodes[0].History
	if len(h) != 3 || !h[0].Up || h[1].Up || !h[2].Up {
		t.Fatalf("w1's history through the API: %+v; want up, down, up", h)
	}
	b := browser(t, 1280, 800)
	login(t, b, leader.HTTPURL(), testcluster.BootstrapSecret)
	do(t, b, "nodes page", chromedp.Navigate(leader.HTTPURL()+"/ui/#/nodes"), chromedp.WaitVisible(chromedp.CSS("#nodes .history")))
	shown := must(t, b, "history cell", chromedp.Text(chromedp.CSS("#nodes .history")))
	want := "up " + h[2].At + " · down " + h[1].At + " · up " + h[0].At
	if shown != want {
		t.Errorf("the nodes page shows w1's history as %q, want %q", shown, want)
	}
	screenshot(t, b, "admin-nodes-history")
}
