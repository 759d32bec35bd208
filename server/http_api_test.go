package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/ops/tlstest"
)

// apiClient calls a server's JSON/HTTP API as one token.
type apiClient struct {
	tb     testing.TB
	base   string // "http://host:port"
	token  string // "" sends no Authorization header
	client *http.Client
}

func newAPIClient(tb testing.TB, s *server.Server, token string) *apiClient {
	return &apiClient{tb: tb, base: s.HTTPURL(), token: token, client: &http.Client{Timeout: 20 * time.Second}}
}

// apiError is the JSON body of a failed call: the gRPC status.
type apiError struct {
	Code    codes.Code `json:"code"`
	Message string     `json:"message"`
}

// do sends method path with body (JSON text, or "") and returns the HTTP
// status and the response body.
func (a *apiClient) do(method, path, body string, header ...string) (int, []byte) {
	a.tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.tb.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.tb.Fatalf("%s %s: read the answer: %v", method, path, err)
	}
	return resp.StatusCode, b
}

// ok sends a call that must succeed and decodes its answer into out.
func (a *apiClient) ok(method, path, body string, out proto.Message, header ...string) {
	a.tb.Helper()
	code, b := a.do(method, path, body, header...)
	if code != http.StatusOK {
		a.tb.Fatalf("%s %s %s: HTTP %d %s", method, path, body, code, b)
	}
	if out != nil {
		if err := protojson.Unmarshal(b, out); err != nil {
			a.tb.Fatalf("%s %s: answer %s is not a %T: %v", method, path, b, out, err)
		}
	}
}

// refusedLike checks that an HTTP call failed as the gRPC call did: the
// HTTP status of the gRPC code, and the same code and message in the body.
func refusedLike(tb testing.TB, what string, grpcErr error, code int, body []byte, wantHTTP int) {
	tb.Helper()
	if grpcErr == nil {
		tb.Fatalf("%s: the gRPC call succeeded; the test needs one that fails", what)
	}
	st := status.Convert(grpcErr)
	if code != wantHTTP {
		tb.Errorf("%s: HTTP %d, want %d (gRPC %s)", what, code, wantHTTP, st.Code())
	}
	var e apiError
	if err := json.Unmarshal(body, &e); err != nil {
		tb.Fatalf("%s: error body %q is not a status: %v", what, body, err)
	}
	if e.Code != st.Code() || e.Message != st.Message() {
		tb.Errorf("%s: HTTP says %s %q, gRPC says %s %q", what, e.Code, e.Message, st.Code(), st.Message())
	}
}

// TestHTTPAPIBehavesAsGRPC drives a three-server group with tokens through
// the JSON/HTTP API of a follower: writes are forwarded to the leader,
// reads come back as the gRPC API answers them, and refusals (no token, a
// wrong one, a user beyond their rights, bad input) carry the HTTP status
// of the gRPC code and the gRPC message, leaving the state as it was.
func TestHTTPAPIBehavesAsGRPC(t *testing.T) {
	c := testcluster.NewACL(t, 3, withHTTP)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	follower := c.Follower(ctx)
	admin := newAPIClient(t, follower, testcluster.BootstrapSecret)

	// Writes through a follower's HTTP listener reach the leader.
	var acct longfairv1.Account
	admin.ok("POST", "/v1/accounts", `{"name": "phys", "weight": 2}`, &acct)
	if acct.GetName() != "phys" || acct.GetWeight() != 2 {
		t.Fatalf("created account %v, want phys with weight 2", &acct)
	}
	admin.ok("POST", "/v1/users", `{"name": "ann", "accounts": ["phys"]}`, nil)
	admin.ok("POST", "/v1/users", `{"name": "bob"}`, nil)
	admin.ok("POST", "/v1/accounts", `{"name": "chem"}`, nil)
	admin.ok("POST", "/v1/grants", `{"id": "g1", "account": "phys", "amount_micro_su": "1000000000000"}`, nil)
	leader := c.WaitLeader(ctx)
	if got, err := leader.FSM().Account("phys"); err != nil || got.Name != "phys" {
		t.Fatalf("the leader does not hold the account created over HTTP: %+v, %v", got, err)
	}

	annSecret, _ := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_USER, "ann", 0)
	ann := newAPIClient(t, follower, annSecret)
	var sub longfairv1.SubmitJobResponse
	ann.ok("POST", "/v1/jobs", `{"account": "phys", "user": "ann", "name": "sweep", "demand": {"cpu": 1},
		"tasks": 4, "walltime": "60s", "command": ["true"], "request_id": "http-1"}`, &sub)
	id := sub.GetJob().GetId()
	if id == 0 || sub.GetJob().GetTasks() != 4 || sub.GetJob().GetState() != longfairv1.JobState_JOB_STATE_PENDING {
		t.Fatalf("submitted job %v, want a pending job of 4 tasks", sub.GetJob())
	}

	// Read back over HTTP (a consistent read, so the follower's lag does
	// not matter) it is the job gRPC returns.
	var got longfairv1.Job
	ann.ok("GET", "/v1/jobs/"+itoa(id), "", &got, "Longfair-Consistent", "true")
	want, err := longfairv1.NewJobsClient(c.Conn(leader)).GetJob(testcluster.As(ctx, annSecret), &longfairv1.GetJobRequest{JobId: id})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, want) {
		t.Errorf("GET /v1/jobs/%d = %v\ngRPC GetJob = %v", id, &got, want)
	}
	// Fields keep the protos' names, 64-bit integers travel as strings
	// (protojson), enums as their names.
	_, raw := ann.do("GET", "/v1/jobs/"+itoa(id), "", "Longfair-Consistent", "true")
	for _, field := range []string{`"id":"` + itoa(id) + `"`, `"state":"JOB_STATE_PENDING"`, `"hold_micro_su":`} {
		if !bytes.Contains(compactJSON(t, raw), []byte(field)) {
			t.Errorf("GET /v1/jobs/%d answer lacks %s: %s", id, field, raw)
		}
	}
	var list longfairv1.ListJobsResponse
	ann.ok("GET", "/v1/jobs?account=phys&states=JOB_STATE_PENDING", "", &list, "Longfair-Consistent", "true")
	if len(list.GetJobs()) != 1 || list.GetJobs()[0].GetId() != id {
		t.Errorf("GET /v1/jobs?account=phys lists %v, want job %d", list.GetJobs(), id)
	}
	// A window, as sacct asks for one: the pending job was submitted in
	// one ending a second after, not in one ending a second before.
	submitted := got.GetSubmittedAt().AsTime()
	for until, want := range map[time.Time]int{submitted.Add(time.Second): 1, submitted.Add(-time.Second): 0} {
		var list longfairv1.ListJobsResponse
		q := fmt.Sprintf("/v1/jobs?account=phys&since=%s&until=%s", submitted.Add(-time.Hour).Format(time.RFC3339Nano), until.Format(time.RFC3339Nano))
		ann.ok("GET", q, "", &list, "Longfair-Consistent", "true")
		if len(list.GetJobs()) != want {
			t.Errorf("GET %s lists %v, want %d job(s)", q, list.GetJobs(), want)
		}
	}

	before := testcluster.Fingerprint(t, leader)
	jobs := longfairv1.NewJobsClient(c.Conn(follower))

	// No token, and an unknown one: Unauthenticated, 401.
	_, gerr := jobs.GetJob(ctx, &longfairv1.GetJobRequest{JobId: id})
	code, body := newAPIClient(t, follower, "").do("GET", "/v1/jobs/"+itoa(id), "")
	refusedLike(t, "no token", gerr, code, body, http.StatusUnauthorized)
	wrong := "lf_not-a-token-of-this-cluster-000000"
	_, gerr = jobs.GetJob(testcluster.As(ctx, wrong), &longfairv1.GetJobRequest{JobId: id})
	code, body = newAPIClient(t, follower, wrong).do("GET", "/v1/jobs/"+itoa(id), "")
	refusedLike(t, "unknown token", gerr, code, body, http.StatusUnauthorized)

	// A user asking for what only admins or other accounts' members may:
	// PermissionDenied, 403.
	_, gerr = longfairv1.NewACLClient(c.Conn(follower)).ListTokens(testcluster.As(ctx, annSecret), &longfairv1.ListTokensRequest{})
	code, body = ann.do("GET", "/v1/tokens", "")
	refusedLike(t, "user lists tokens", gerr, code, body, http.StatusForbidden)
	_, gerr = longfairv1.NewLedgerClient(c.Conn(follower)).GetBalance(testcluster.As(ctx, annSecret), &longfairv1.GetBalanceRequest{Account: "chem"})
	code, body = ann.do("GET", "/v1/accounts/chem/balance", "")
	refusedLike(t, "user reads another account", gerr, code, body, http.StatusForbidden)

	// Bad input: InvalidArgument, 400, with the validation's message.
	bad := &longfairv1.SubmitJobRequest{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1},
		Tasks: 0, Command: []string{"true"}}
	_, gerr = jobs.SubmitJob(testcluster.As(ctx, annSecret), bad)
	badJSON, err := protojson.Marshal(bad)
	if err != nil {
		t.Fatal(err)
	}
	code, body = ann.do("POST", "/v1/jobs", string(badJSON))
	refusedLike(t, "zero tasks", gerr, code, body, http.StatusBadRequest)
	// A misspelt field is refused, not ignored, and says which.
	code, body = ann.do("POST", "/v1/jobs", `{"account": "phys", "user": "ann", "taskz": 3}`)
	if code != http.StatusBadRequest || !strings.Contains(string(body), "taskz") {
		t.Errorf("a misspelt field: HTTP %d %s, want 400 naming taskz", code, body)
	}
	code, body = ann.do("GET", "/v1/jobs/seven", "")
	if code != http.StatusBadRequest || !strings.Contains(string(body), "job_id") {
		t.Errorf("a job id that is not a number: HTTP %d %s, want 400 naming job_id", code, body)
	}
	// Several jobs' tasks in one listing, at its own route.
	var tasks longfairv1.ListTasksResponse
	ann.ok("GET", "/v1/tasks?job_ids="+itoa(id), "", &tasks, "Longfair-Consistent", "true")
	code, body = ann.do("GET", "/v1/tasks?job_ids="+itoa(id)+"&job_ids="+itoa(id), "")
	if code != http.StatusBadRequest || !strings.Contains(string(body), "twice") {
		t.Errorf("a job named twice in GET /v1/tasks: HTTP %d %s, want 400 saying so", code, body)
	}
	_, gerr = jobs.GetJob(testcluster.As(ctx, annSecret), &longfairv1.GetJobRequest{JobId: id + 1000})
	code, body = ann.do("GET", "/v1/jobs/"+itoa(id+1000), "", "Longfair-Consistent", "true")
	refusedLike(t, "unknown job", gerr, code, body, http.StatusNotFound)
	c.WaitApplied(ctx)
	if after := testcluster.Fingerprint(t, leader); after != before {
		t.Errorf("refused HTTP calls changed the state:\nbefore %s\nafter  %s", before, after)
	}

	// Cancel over HTTP, then the job reads cancelled through gRPC.
	var cancelled longfairv1.Job
	ann.ok("POST", "/v1/jobs/"+itoa(id)+":cancel", "", &cancelled)
	if cancelled.GetId() != id || cancelled.GetCancelledTasks() != 4 {
		t.Errorf("cancelled job %v, want job %d with its 4 tasks cancelled", &cancelled, id)
	}

	// A server-streaming call answers newline-delimited JSON: a snapshot,
	// chunk by chunk.
	resp := admin.stream("GET", "/v1/snapshot")
	defer resp.Body.Close()
	chunks, size := 0, 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var line struct {
			Result json.RawMessage `json:"result"`
			Error  *apiError       `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Error != nil || line.Result == nil {
			t.Fatalf("snapshot stream line %d is not a result: %.200s (%v)", chunks+1, sc.Bytes(), err)
		}
		var chunk longfairv1.SnapshotChunk
		if err := protojson.Unmarshal(line.Result, &chunk); err != nil {
			t.Fatalf("snapshot stream line %d: %v", chunks+1, err)
		}
		chunks++
		size += len(chunk.GetData())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if chunks == 0 || size == 0 {
		t.Errorf("the snapshot stream had %d chunks, %d bytes; want a snapshot", chunks, size)
	}

	t.Run("curl", func(t *testing.T) {
		curl, err := exec.LookPath("curl")
		if err != nil {
			t.Skip("curl is not installed; the JSON/HTTP API was exercised with net/http above")
		}
		run := func(args ...string) (int, []byte) {
			t.Helper()
			out, err := exec.CommandContext(ctx, curl, append([]string{"-sS", "-w", "\n%{http_code}"}, args...)...).Output()
			if err != nil {
				t.Fatalf("curl %v: %v", args, err)
			}
			i := bytes.LastIndexByte(out, '\n')
			return atoi(t, string(out[i+1:])), out[:i]
		}
		code, body := run("-H", "Authorization: Bearer "+annSecret, "-H", "Content-Type: application/json",
			"-d", `{"account":"phys","user":"ann","demand":{"cpu":1},"tasks":2,"walltime":"30s","command":["true"]}`,
			follower.HTTPURL()+"/v1/jobs")
		var sub longfairv1.SubmitJobResponse
		if code != http.StatusOK || protojson.Unmarshal(body, &sub) != nil || sub.GetJob().GetId() == 0 {
			t.Fatalf("curl submit: HTTP %d %s", code, body)
		}
		code, body = run("-H", "Authorization: Bearer "+annSecret, "-H", "Longfair-Consistent: true",
			follower.HTTPURL()+"/v1/jobs/"+itoa(sub.GetJob().GetId()))
		var job longfairv1.Job
		if code != http.StatusOK || protojson.Unmarshal(body, &job) != nil || job.GetTasks() != 2 || job.GetAccount() != "phys" {
			t.Fatalf("curl get: HTTP %d %s", code, body)
		}
		_, gerr := jobs.GetJob(ctx, &longfairv1.GetJobRequest{JobId: id})
		code, body = run(follower.HTTPURL() + "/v1/jobs/" + itoa(id))
		refusedLike(t, "curl without a token", gerr, code, body, http.StatusUnauthorized)

		auth := []string{"-H", "Authorization: Bearer " + annSecret, "-H", "Longfair-Consistent: true"}
		code, body = run(append(auth, follower.HTTPURL()+"/v1/jobs?account=phys")...)
		var list longfairv1.ListJobsResponse
		if code != http.StatusOK || protojson.Unmarshal(body, &list) != nil || len(list.GetJobs()) != 2 || list.GetJobs()[0].GetId() != sub.GetJob().GetId() {
			t.Fatalf("curl list: HTTP %d %s, want jobs %d and %d newest first", code, body, sub.GetJob().GetId(), id)
		}
		code, body = run(append(auth, "-X", "POST", follower.HTTPURL()+"/v1/jobs/"+itoa(sub.GetJob().GetId())+":cancel")...)
		var cancelled longfairv1.Job
		if code != http.StatusOK || protojson.Unmarshal(body, &cancelled) != nil || cancelled.GetCancelledTasks() != 2 {
			t.Fatalf("curl cancel: HTTP %d %s", code, body)
		}
		code, body = run(append(auth, follower.HTTPURL()+"/v1/fairness")...)
		var report longfairv1.FairnessReport
		if code != http.StatusOK || protojson.Unmarshal(body, &report) != nil {
			t.Fatalf("curl fairness: HTTP %d %s", code, body)
		}
		var names []string
		for _, a := range report.GetAccounts() {
			names = append(names, a.GetAccount())
		}
		if strings.Join(names, ",") != "phys" {
			t.Errorf("curl fairness as ann shows accounts %v, want only her own, phys", names)
		}
		_, gerr = longfairv1.NewLedgerClient(c.Conn(follower)).GetBalance(testcluster.As(ctx, annSecret), &longfairv1.GetBalanceRequest{Account: "chem"})
		code, body = run(append(auth, follower.HTTPURL()+"/v1/accounts/chem/balance")...)
		refusedLike(t, "curl: a user reads another account", gerr, code, body, http.StatusForbidden)
	})
}

// stream starts a call and returns its response, for reading as it comes.
func (a *apiClient) stream(method, path string) *http.Response {
	a.tb.Helper()
	req, err := http.NewRequest(method, a.base+path, nil)
	if err != nil {
		a.tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := a.client.Do(req)
	if err != nil {
		a.tb.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		a.tb.Fatalf("%s %s: HTTP %d %s", method, path, resp.StatusCode, b)
	}
	return resp
}

// TestOpenAPIDocumentCoversThePublicAPI checks that a server serves the
// committed OpenAPI document and that it has an operation for every RPC
// the server serves, from what the server registered (only the workers'
// own stream is left out), and none for an RPC it does not serve.
func TestOpenAPIDocumentCoversThePublicAPI(t *testing.T) {
	c := testcluster.NewWith(t, 1, withHTTP)
	s := c.Running()[0]
	code, served := newAPIClient(t, s, "").do("GET", longfairv1.OpenAPIPath, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s", longfairv1.OpenAPIPath, code, served)
	}
	committed, err := os.ReadFile("../api/longfair/v1/longfair.swagger.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(served, committed) {
		t.Fatalf("the served OpenAPI document (%d bytes) is not the committed api/longfair/v1/longfair.swagger.json (%d bytes)", len(served), len(committed))
	}
	var doc struct {
		Swagger string                                `json:"swagger"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(served, &doc); err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{} // operationId → "METHOD path"
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				OperationID string `json:"operationId"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			// A second route of one method (additional_bindings) is
			// Service_Method2, and so on.
			id := strings.TrimRight(op.OperationID, "0123456789")
			documented[id] = strings.TrimPrefix(documented[id]+", ", ", ") + strings.ToUpper(method) + " " + path
		}
	}
	rpcs := 0
	for svc, info := range s.GRPCServer().GetServiceInfo() {
		name, ok := strings.CutPrefix(svc, strings.TrimPrefix(server.APIPrefix, "/"))
		if !ok {
			continue // gRPC's own (health, reflection)
		}
		for _, m := range info.Methods {
			full := server.APIPrefix + name + "/" + m.Name
			id := name + "_" + m.Name
			if server.OnlyWorkersCall(full) {
				// The workers' stream to the leader: not a user's call.
				if _, ok := documented[id]; ok {
					t.Errorf("%s is documented over HTTP, but only workers call it", full)
				}
				continue
			}
			rpcs++
			if _, ok := documented[id]; !ok {
				t.Errorf("%s has no HTTP rule (api/longfair/v1/http.yaml) in the OpenAPI document", full)
			}
			delete(documented, id)
		}
	}
	if rpcs == 0 {
		t.Fatal("the server registered no longfair.v1 method")
	}
	for id, route := range documented {
		t.Errorf("the OpenAPI document has %s (%s), which the servers do not serve", id, route)
	}
}

// TestHTTPAPIOverTLS checks that a server with mutual TLS serves the HTTP
// listener over TLS only, to clients with a certificate the cluster's CA
// signed, as its gRPC listener does.
func TestHTTPAPIOverTLS(t *testing.T) {
	pki := tlstest.New(t, "cluster")
	c := testcluster.NewACL(t, 1, func(cfg *server.Config) {
		cfg.TLS = pki.Issue(cfg.NodeID)
		withHTTP(cfg)
	})
	s := c.Running()[0]
	if !strings.HasPrefix(s.HTTPURL(), "https://") {
		t.Fatalf("HTTPURL %q: want https with TLS configured", s.HTTPURL())
	}
	clientFor := func(cfg *tls.Config) *apiClient {
		a := newAPIClient(t, s, testcluster.BootstrapSecret)
		a.client.Transport = &http.Transport{TLSClientConfig: cfg}
		return a
	}
	withCert, err := pki.Issue("admin-client").ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	var who longfairv1.Token
	clientFor(withCert).ok("GET", "/v1/whoami", "", &who)
	if who.GetRole() != longfairv1.TokenRole_TOKEN_ROLE_ADMIN {
		t.Errorf("whoami over HTTPS: %v, want the admin token", &who)
	}

	// Without a client certificate the handshake fails; plain HTTP gets
	// no answer from the API.
	noCert := withCert.Clone()
	noCert.Certificates = nil
	req, _ := http.NewRequest("GET", s.HTTPURL()+"/v1/whoami", nil)
	req.Header.Set("Authorization", "Bearer "+testcluster.BootstrapSecret)
	if resp, err := (&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: noCert}}).Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("HTTPS without a client certificate answered HTTP %d; want the handshake refused", resp.StatusCode)
	}
	plain := newAPIClient(t, s, testcluster.BootstrapSecret)
	plain.base = "http://" + s.HTTPAddr()
	if code, body := plain.do("GET", "/v1/whoami", ""); code == http.StatusOK {
		t.Errorf("plain HTTP to the TLS listener answered 200: %s", body)
	}
}

func compactJSON(tb testing.TB, b []byte) []byte {
	tb.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		tb.Fatalf("%s: %v", b, err)
	}
	return out.Bytes()
}

func itoa(id uint64) string { return strconv.FormatUint(id, 10) }

func atoi(tb testing.TB, s string) int {
	tb.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		tb.Fatalf("%q is not a number: %v", s, err)
	}
	return n
}

// TestHTTPFollowsTaskOutput reads a running task's output over HTTP with
// follow: the output arrives line by line while the task runs (the task
// waits, a bounded time, for the test to have read its first line), and
// the stream ends when the task does, holding what gRPC reads. A task
// that does not exist is NotFound, 404, as for gRPC.
func TestHTTPFollowsTaskOutput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.NewWith(t, 1, withHTTP)
	s := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, t, c, "physics")
	testcluster.Worker(t, c, "w1", nil)
	testcluster.WaitNodesUp(ctx, t, s, "w1")
	gate := filepath.Join(t.TempDir(), "go")
	resp, err := longfairv1.NewJobsClient(c.Conn(s)).SubmitJob(ctx, testcluster.ShellJob(account, user, "talk", 1, map[string]float64{"cpu": 1}, time.Minute,
		`echo first; for i in $(seq 300); do [ -e '`+gate+`' ] && break; sleep 0.1; done; echo second`))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetId()
	testcluster.WaitFor(ctx, t, "the task to start", func() bool {
		ts, _, _ := s.FSM().Tasks(id, 0, 1)
		return len(ts) == 1
	})

	out := newAPIClient(t, s, "").stream("GET", "/v1/jobs/"+itoa(id)+"/tasks/0/output?follow=true")
	defer out.Body.Close()
	lines := bufio.NewScanner(out.Body)
	var got []byte
	next := func() bool {
		if !lines.Scan() {
			return false
		}
		var line struct {
			Result json.RawMessage `json:"result"`
			Error  *apiError       `json:"error"`
		}
		var chunk longfairv1.TaskOutputChunk
		if err := json.Unmarshal(lines.Bytes(), &line); err != nil || line.Error != nil || protojson.Unmarshal(line.Result, &chunk) != nil {
			t.Fatalf("output stream line %q is not a chunk (%v)", lines.Bytes(), err)
		}
		if chunk.GetOffset() != int64(len(got)) {
			t.Fatalf("chunk at offset %d after %d bytes", chunk.GetOffset(), len(got))
		}
		got = append(got, chunk.GetData()...)
		return true
	}
	for !bytes.Contains(got, []byte("first\n")) {
		if !next() {
			t.Fatalf("the stream ended after %q, before the task's first line", got)
		}
	}
	if bytes.Contains(got, []byte("second")) {
		t.Fatalf("read %q before the task was let go on", got)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for next() {
	}
	if err := lines.Err(); err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	whole, err := readOutput(ctx, c.Conn(s), id)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "first\nsecond\n" || string(got) != whole {
		t.Errorf("followed over HTTP %q; gRPC reads %q; want %q", got, whole, "first\nsecond\n")
	}

	_, gerr := readOutput(ctx, c.Conn(s), id+1)
	code, body := newAPIClient(t, s, "").do("GET", "/v1/jobs/"+itoa(id+1)+"/tasks/0/output", "")
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error answer %q: %v", body, err)
	}
	refusedLike(t, "output of an unknown job", gerr, code, e.Error, http.StatusNotFound)
}

// Profiles for operators (issue 15 item 5): /debug/pprof/ on the HTTP
// listener answers an admin token with Go's profiles, and refuses a call
// without a token (401, saying what to send) and a user's token (403).
func TestPprofIsForAdmins(t *testing.T) {
	c := testcluster.NewACL(t, 1, withHTTP)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := c.WaitLeader(ctx)
	admin := newAPIClient(t, s, testcluster.BootstrapSecret)
	admin.ok("POST", "/v1/accounts", `{"name": "phys"}`, nil)
	admin.ok("POST", "/v1/users", `{"name": "ann", "accounts": ["phys"]}`, nil)
	annSecret, _ := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_USER, "ann", 0)

	code, body := admin.do("GET", "/debug/pprof/goroutine?debug=1", "")
	if code != http.StatusOK || !strings.Contains(string(body), "goroutine profile: total") {
		t.Fatalf("an admin's goroutine profile: HTTP %d\n%.300s", code, body)
	}
	code, body = admin.do("GET", "/debug/pprof/heap", "")
	if code != http.StatusOK || len(body) == 0 {
		t.Fatalf("an admin's heap profile: HTTP %d, %d bytes", code, len(body))
	}
	for _, c := range []struct {
		client *apiClient
		code   int
		says   string
	}{
		{newAPIClient(t, s, ""), http.StatusUnauthorized, "needs a token"},
		{newAPIClient(t, s, annSecret), http.StatusForbidden, "profiles are for admins"},
		{newAPIClient(t, s, "lf_not-a-token"), http.StatusUnauthorized, ""},
	} {
		code, body := c.client.do("GET", "/debug/pprof/goroutine?debug=1", "")
		if code != c.code || !strings.Contains(string(body), c.says) || strings.Contains(string(body), "goroutine profile") {
			t.Errorf("token %q: HTTP %d %q; want %d saying %q and no profile", c.client.token, code, body, c.code, c.says)
		}
	}
}

// A negative nice moves a job ahead of its account's earlier jobs: a
// user's token is refused with the reason, an admin's is not.
func TestNegativeNiceIsForAdmins(t *testing.T) {
	c := testcluster.NewACL(t, 1, withHTTP)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := c.WaitLeader(ctx)
	admin := newAPIClient(t, s, testcluster.BootstrapSecret)
	admin.ok("POST", "/v1/accounts", `{"name": "phys"}`, nil)
	admin.ok("POST", "/v1/users", `{"name": "ann", "accounts": ["phys"]}`, nil)
	admin.ok("POST", "/v1/grants", `{"id": "g1", "account": "phys", "amount_micro_su": "1000000000000"}`, nil)
	annSecret, _ := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_USER, "ann", 0)
	job := `{"account": "phys", "user": "ann", "demand": {"cpu": 1}, "tasks": 1, "walltime": "60s", "command": ["true"], "nice": -5}`
	code, body := newAPIClient(t, s, annSecret).do("POST", "/v1/jobs", job)
	if code != http.StatusForbidden || !strings.Contains(string(body), "only an admin") {
		t.Fatalf("a user's job with nice -5: HTTP %d %s; want 403 saying only an admin may", code, body)
	}
	var sub longfairv1.SubmitJobResponse
	admin.ok("POST", "/v1/jobs", job, &sub)
	if sub.GetJob().GetNice() != -5 {
		t.Fatalf("the admin's job has nice %d, want -5", sub.GetJob().GetNice())
	}

	// A priority crosses accounts: only an admin sets it, and a refused
	// update changes nothing.
	mine := fmt.Sprintf("/v1/jobs/%d", sub.GetJob().GetId())
	code, body = newAPIClient(t, s, annSecret).do("PATCH", mine, `{"priority": 50}`)
	if code != http.StatusForbidden || !strings.Contains(string(body), "only an admin") {
		t.Fatalf("a user's priority 50: HTTP %d %s; want 403 saying only an admin may", code, body)
	}
	var j longfairv1.Job
	admin.ok("GET", mine, "", &j)
	if j.GetPriority() != 0 {
		t.Fatalf("after the refused update the job has priority %d", j.GetPriority())
	}
	admin.ok("PATCH", mine, `{"priority": 50}`, &j)
	if j.GetPriority() != 50 {
		t.Fatalf("the admin's update left priority %d, want 50", j.GetPriority())
	}
	if code, body := admin.do("PATCH", mine, `{"priority": -1}`); code != http.StatusBadRequest {
		t.Fatalf("priority -1: HTTP %d %s; want 400", code, body)
	}
}
