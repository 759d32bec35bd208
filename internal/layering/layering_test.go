package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/longfair/longfair/internal/testcluster"
)

const module = "github.com/longfair/longfair"

// Layers, from the bottom. A package may import the module's packages of
// its own layer and those below, never those above.
const (
	layerCore    = iota // core: domain rules and text
	layerLedger         // ledger: quantities, usage, SU
	layerEngine         // sched and sched/...: the policy engine
	layerSim            // sim and sim/...: the simulator, over the engine
	layerFSM            // fsm and its storage helper
	layerService        // server, api, worker, client, ops, cmd, e2e, …
)

var layerNames = []string{"core", "ledger", "sched", "sim", "fsm", "service"}

// layerOf places a package of the module (its path relative to the
// module). A package not listed is a service package: a new package that a
// lower layer is to import must be placed here first, deliberately.
func layerOf(rel string) int {
	switch {
	case rel == "core":
		return layerCore
	case rel == "ledger":
		return layerLedger
	case rel == "sched" || strings.HasPrefix(rel, "sched/"):
		return layerEngine
	case rel == "sim" || strings.HasPrefix(rel, "sim/"):
		return layerSim
	case rel == "fsm" || strings.HasPrefix(rel, "fsm/"), rel == "internal/boltcheck", rel == "internal/durable":
		return layerFSM
	}
	return layerService
}

// network is what a pure package must not link, even indirectly: the
// network, the transport, consensus, gossip and storage.
func network(path string) bool {
	for _, p := range []string{
		"net", "crypto/tls", "golang.org/x/net",
		"google.golang.org/grpc", "github.com/hashicorp/raft", "github.com/hashicorp/memberlist",
		"go.etcd.io/bbolt", "github.com/boltdb/bolt",
	} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// fsmNetwork is what fsm must not import itself: the network, the
// transport and gossip. Raft and bbolt are its job.
func fsmNetwork(path string) bool {
	for _, p := range []string{"net", "crypto/tls", "golang.org/x/net", "google.golang.org/grpc", "github.com/hashicorp/memberlist"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// knownExceptions are imports the rules above refuse that the code still
// has, each to be removed (and its entry with it) as issue 11 moves on.
// The list only shrinks: an entry that no import matches any more fails
// the test, so that it is deleted rather than left to excuse a new one.
// None is left: fsm's refusals are domain kinds since issue 11, mapped to
// gRPC codes in server only.
var knownExceptions = []struct{ pkg, imports, why string }{}

type goPackage struct {
	ImportPath string
	Dir        string
	Standard   bool
	Module     *struct{ Path string }
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
}

// modulePackages is `go list -deps -json ./...` from the module's root,
// with the build tags of the binaries: every package the module's
// non-test code builds from, by import path.
var modulePackages = sync.OnceValues(func() (map[string]*goPackage, error) {
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD: %w", err)
	}
	cmd := exec.Command("go", "list", "-tags", testcluster.BuildTags, "-deps", "-json", "./...")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(root)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w: %s", err, stderr.String())
	}
	pkgs := map[string]*goPackage{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(goPackage)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs, nil
})

func packages(t *testing.T) map[string]*goPackage {
	t.Helper()
	pkgs, err := modulePackages()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pkgs[module+"/sched"]; !ok {
		t.Fatalf("go list found no %s/sched: is the test run inside the module?", module)
	}
	return pkgs
}

// ours returns the module-relative path of a module package, or false.
func ours(path string) (string, bool) {
	if path == module {
		return "", true
	}
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}

// sortedOurs are the module's packages, sorted by relative path.
func sortedOurs(pkgs map[string]*goPackage) []string {
	var rels []string
	for path := range pkgs {
		if rel, ok := ours(path); ok {
			rels = append(rels, rel)
		}
	}
	slices.Sort(rels)
	return rels
}

// chain is a shortest import path from one package to another, for the
// failure message.
func chain(pkgs map[string]*goPackage, from, to string) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var path []string
			for ; p != ""; p = prev[p] {
				path = append(path, strings.TrimPrefix(p, module+"/"))
			}
			slices.Reverse(path)
			return strings.Join(path, " → ")
		}
		if pkgs[p] == nil {
			continue
		}
		for _, imp := range pkgs[p].Imports {
			if _, seen := prev[imp]; !seen {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return from + " → … → " + to
}

// deps are every package path imports, directly or not.
func deps(pkgs map[string]*goPackage, path string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		if pkgs[p] == nil {
			return
		}
		for _, imp := range pkgs[p].Imports {
			if !seen[imp] {
				seen[imp] = true
				walk(imp)
			}
		}
	}
	walk(path)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// TestLayersPointOneWay: no package imports one of the module's packages
// from a layer above its own.
func TestLayersPointOneWay(t *testing.T) {
	pkgs := packages(t)
	for _, rel := range sortedOurs(pkgs) {
		from := layerOf(rel)
		for _, imp := range pkgs[module+"/"+rel].Imports {
			irel, ok := ours(imp)
			if !ok {
				continue
			}
			to := layerOf(irel)
			if to == layerSim && from == layerFSM {
				t.Errorf("%s imports %s: the FSM applies commands, it never runs the simulator; the simulator sits beside the FSM over the engine, not under it", rel, irel)
				continue
			}
			if to > from {
				t.Errorf("%s (layer %s) imports %s (layer %s): layers point one way, core ← ledger ← sched ← fsm ← server; move what %s needs down, or pass it in (a new package meant for the lower layers is placed in layerOf, internal/layering)",
					rel, layerNames[from], irel, layerNames[to], rel)
			}
		}
	}
}

// TestPurePackagesLinkNoNetwork: core, ledger, the engine and the simulator link no
// network, consensus or storage package, even through another package.
func TestPurePackagesLinkNoNetwork(t *testing.T) {
	pkgs := packages(t)
	n := 0
	for _, rel := range sortedOurs(pkgs) {
		if layerOf(rel) > layerSim {
			continue
		}
		n++
		path := module + "/" + rel
		for _, d := range deps(pkgs, path) {
			if network(d) {
				t.Errorf("%s links %s (%s): core, ledger, the engine and the simulator stay pure — no network, consensus or storage; the server passes in what they need",
					rel, d, chain(pkgs, path, d))
				break
			}
		}
	}
	if n < 3 {
		t.Fatalf("only %d pure packages found: the layer table no longer matches the tree", n)
	}
}

// TestFSMImportsNoNetwork: fsm speaks neither the network nor the
// transport; raft and bbolt are its job.
func TestFSMImportsNoNetwork(t *testing.T) {
	pkgs := packages(t)
	used := map[int]bool{}
	for _, rel := range sortedOurs(pkgs) {
		if layerOf(rel) != layerFSM {
			continue
		}
		for _, imp := range pkgs[module+"/"+rel].Imports {
			if !fsmNetwork(imp) {
				continue
			}
			i := slices.IndexFunc(knownExceptions, func(e struct{ pkg, imports, why string }) bool {
				return e.pkg == rel && e.imports == imp
			})
			if i >= 0 {
				used[i] = true
				continue
			}
			t.Errorf("%s imports %s: the FSM imports no network or transport package; return a domain error and let server map it", rel, imp)
		}
	}
	for i, e := range knownExceptions {
		if !used[i] {
			t.Errorf("knownExceptions lists %s importing %s, which it no longer does: delete the entry, so the exception cannot come back", e.pkg, e.imports)
		}
	}
}

// clockAllowlist names the legitimate uses of the clock and random
// sources in the pure packages: the package, the function ("" for any)
// and the use ("time.After", "rand.New"), with the reason.
var clockAllowlist = []struct{ pkg, fn, use, why string }{
	{"fsm", "CheckpointDigest", "time.After",
		"a reader waiting, with a bound, for a checkpoint's digest to finish; never on the apply path"},
	// The simulator draws its workloads from generators seeded by the
	// experiment (the same seed, the same workload), never from the
	// global source.
	{"sim", "", "rand.New", "a generator seeded by the experiment's seed"},
	{"sim", "", "rand.NewPCG", "a generator seeded by the experiment's seed"},
	{"sim/reproduce", "", "rand.New", "a generator seeded by the experiment's seed"},
	{"sim/reproduce", "", "rand.NewPCG", "a generator seeded by the experiment's seed"},
}

// clockFuncs are the functions of package time that read the clock or
// wait on it.
var clockFuncs = map[string]bool{
	"Now": true, "Since": true, "Until": true,
	"After": true, "AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true, "Sleep": true,
}

// randomPackages are the random sources; every call of their functions is
// a use (a *rand.Rand in a signature is not).
var randomPackages = map[string]bool{"math/rand": true, "math/rand/v2": true, "crypto/rand": true}

// clockUse is one place a file reads the clock or a random source.
type clockUse struct {
	pkg, fn, use string
	pos          token.Position
}

// clockUses scans the non-test files of a package.
func clockUses(t *testing.T, rel string, p *goPackage) []clockUse {
	t.Helper()
	var uses []clockUse
	fset := token.NewFileSet()
	for _, name := range append(slices.Clone(p.GoFiles), p.CgoFiles...) {
		file, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		// The names this file gives package time and the random packages.
		local := map[string]string{}
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path != "time" && !randomPackages[path] {
				continue
			}
			name := filepath.Base(path)
			if path == "math/rand/v2" {
				name = "rand"
			}
			if imp.Name != nil {
				name = imp.Name.Name
			}
			local[name] = path
		}
		if len(local) == 0 {
			continue
		}
		for _, decl := range file.Decls {
			fn := ""
			if fd, ok := decl.(*ast.FuncDecl); ok {
				fn = fd.Name.Name
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				var sel *ast.SelectorExpr
				switch n := n.(type) {
				case *ast.CallExpr:
					// Calls of the random packages' functions.
					if s, ok := n.Fun.(*ast.SelectorExpr); ok {
						if id, ok := s.X.(*ast.Ident); ok && randomPackages[local[id.Name]] {
							sel = s
						}
					}
				case *ast.SelectorExpr:
					// Any use of time's clock functions, called or not.
					if id, ok := n.X.(*ast.Ident); ok && local[id.Name] == "time" && clockFuncs[n.Sel.Name] {
						sel = n
					}
				}
				if sel != nil {
					id := sel.X.(*ast.Ident)
					pkgName := filepath.Base(local[id.Name])
					if local[id.Name] == "math/rand/v2" {
						pkgName = "rand"
					}
					uses = append(uses, clockUse{pkg: rel, fn: fn, use: pkgName + "." + sel.Sel.Name, pos: fset.Position(sel.Pos())})
				}
				return true
			})
		}
	}
	return uses
}

// TestPurePackagesNeverReadTheClock: core, ledger, the engine and fsm take
// time as an argument and draw nothing at random, so that every replica
// applies, and every leader schedules, the same way.
func TestPurePackagesNeverReadTheClock(t *testing.T) {
	pkgs := packages(t)
	used := map[int]bool{}
	scanned := 0
	for _, rel := range sortedOurs(pkgs) {
		if layerOf(rel) > layerFSM {
			continue
		}
		scanned++
		for _, u := range clockUses(t, rel, pkgs[module+"/"+rel]) {
			i := slices.IndexFunc(clockAllowlist, func(a struct{ pkg, fn, use, why string }) bool {
				return a.pkg == u.pkg && (a.fn == "" || a.fn == u.fn) && a.use == u.use
			})
			if i >= 0 {
				used[i] = true
				continue
			}
			where := "func " + u.fn
			if u.fn == "" {
				where = "a package-level declaration"
			}
			t.Errorf("%s: %s in %s: %s never reads the clock or a random source — take the time (the command's or the view's) as an argument; a wait off the apply path goes in clockAllowlist with its reason",
				u.pos, u.use, where, u.pkg)
		}
	}
	if scanned < 4 {
		t.Fatalf("only %d packages scanned: the layer table no longer matches the tree", scanned)
	}
	for i, a := range clockAllowlist {
		if !used[i] {
			t.Errorf("clockAllowlist allows %s in %s %s, which no longer uses it: delete the entry", a.use, a.pkg, a.fn)
		}
	}
}

// TestUserCommandsLinkNoDaemon: the user and admin commands
// (internal/cli) and the client binary made of them alone
// (cmd/longfair-client) call the cluster through package client only; they
// link no server, worker, FSM, engine or simulator code, nor Raft, gossip,
// Prometheus or bbolt, nor gRPC's request tracing (x/net/trace and the
// templates it brings), so that the client starts without their size and
// package inits (cmd/longfair adds the daemons, the dev cluster and the
// simulator); nor os/user, which the static client could not serve.
func TestUserCommandsLinkNoDaemon(t *testing.T) {
	pkgs := packages(t)
	for _, from := range []string{module + "/internal/cli", module + "/cmd/longfair-client"} {
		if pkgs[from] == nil {
			t.Fatalf("go list found no %s", from)
		}
		for _, d := range deps(pkgs, from) {
			if d == "os/user" {
				t.Errorf("%s links os/user (%s): the client binary is linked without cgo (Makefile), where os/user reads /etc/passwd alone and misses a centre's LDAP users; ask the server who the user is instead", from, chain(pkgs, from, d))
			}
			for _, heavy := range []string{"github.com/hashicorp/raft", "github.com/hashicorp/memberlist", "github.com/prometheus/", "go.etcd.io/bbolt", "golang.org/x/net/trace"} {
				if strings.HasPrefix(d, heavy) {
					t.Errorf("%s links %s (%s): a client starts in milliseconds only without consensus, gossip, metrics and storage code", from, d, chain(pkgs, from, d))
				}
			}
			rel, ok := ours(d)
			if !ok {
				continue
			}
			for _, banned := range []string{"server", "worker", "fsm", "sched", "sim", "internal/testcluster", "internal/cli/daemon", "internal/cli/dev", "internal/cli/simulate"} {
				if rel == banned || strings.HasPrefix(rel, banned+"/") {
					t.Errorf("%s links %s (%s): the user commands reach the cluster through package client; a command that runs a daemon or the simulator is a sub-package that cmd/longfair adds", from, rel, chain(pkgs, from, d))
				}
			}
		}
	}
}
