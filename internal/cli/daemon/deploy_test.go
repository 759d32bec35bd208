package daemon

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/longfair/longfair/server"
)

// deployDir is the repository's deploy directory, above this test's.
func deployDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "deploy")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// tokenFile writes a valid bootstrap token secret and returns its path.
func tokenFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bootstrap-token")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDeployExampleConfigsLoad reads deploy/longfair-server.example.json
// and the server configuration shown in deploy/README.md the way
// 'longfair server --config' does, with the bootstrap token file the
// examples name replaced by one made here.
func TestDeployExampleConfigsLoad(t *testing.T) {
	dir := deployDir(t)
	token := tokenFile(t)
	load := func(path string) server.Config {
		t.Helper()
		cfg, _, err := serverConfig([]string{"--config", path, "--acl-bootstrap-token", token}, io.Discard)
		if err != nil {
			t.Fatalf("longfair server --config %s: %v", path, err)
		}
		return cfg
	}
	example := load(filepath.Join(dir, "longfair-server.example.json"))
	if example.NodeID != "s1" || example.BootstrapExpect != 3 || len(example.Join) != 2 || !example.ACL.Enabled || example.HTTPAddr == "" {
		t.Errorf("the example is not the first server of a three-server group with tokens and metrics: %+v", example)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) == 0 {
		t.Fatal("deploy/README.md shows no server configuration")
	}
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	for i, b := range blocks {
		path := filepath.Join(t.TempDir(), "readme.json")
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(b[1]), "…the key from step 3…", key)), 0o600); err != nil {
			t.Fatal(err)
		}
		c := load(path)
		if c.NodeID == example.NodeID || c.GRPCAddr == example.GRPCAddr || slices.Contains(c.Join, c.GossipAddr) || len(c.GossipKey) != 32 {
			t.Errorf("README configuration %d is not another server of the example's group: %+v", i, c)
		}
	}
}

// deployDocRow is one field's row of a table in deploy/config.md.
type deployDocRow struct{ flag, def string }

func deployDocRows(t *testing.T) map[string]deployDocRow {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(deployDir(t), "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([a-z_.]+)` \\| (—|`--[a-z-]+`) \\|\\s*([^|]*?)\\s*\\|")
	rows := map[string]deployDocRow{}
	sc := bufio.NewScanner(strings.NewReader(string(text)))
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if _, dup := rows[m[1]]; dup {
			t.Errorf("deploy/config.md documents %s twice", m[1])
		}
		rows[m[1]] = deployDocRow{flag: strings.Trim(m[2], "`"), def: m[3]}
	}
	return rows
}

// configFields maps the JSON name of every field of a configuration
// struct (section.field inside sections) to its value.
func configFields(prefix string, v reflect.Value, out map[string]reflect.Value) {
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		fv := v.Field(i)
		out[prefix+name] = fv
		if _, leaf := fv.Interface().(json.Marshaler); fv.Kind() == reflect.Struct && !leaf {
			configFields(prefix+name+".", fv, out)
		}
	}
}

// TestDeployConfigDocCoversEveryField checks deploy/config.md against the
// configuration 'longfair server' builds with no file and no flags: every
// field has a row, every row is a field, each row's default is the one in
// force, and each row's flag sets that field.
func TestDeployConfigDocCoversEveryField(t *testing.T) {
	base, _, err := serverConfig([]string{"--node-id", "x", "--data-dir", "/d"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	base.NodeID, base.DataDir = "", "" // documented as having no default
	fields := map[string]reflect.Value{}
	configFields("", reflect.ValueOf(base), fields)
	rows := deployDocRows(t)
	for name, v := range fields {
		row, ok := rows[name]
		if !ok {
			t.Errorf("config field %s is not documented: add a row for it to deploy/config.md", name)
			continue
		}
		if _, leaf := v.Interface().(json.Marshaler); v.Kind() == reflect.Struct && !leaf {
			continue // a section
		}
		if row.def == "—" {
			if !v.IsZero() {
				t.Errorf("deploy/config.md gives %s no default; it is %v", name, v.Interface())
			}
			continue
		}
		doc := reflect.New(v.Type())
		if err := json.Unmarshal([]byte(strings.Trim(row.def, "`")), doc.Interface()); err != nil {
			t.Errorf("deploy/config.md gives %s the default %s, which is not a JSON value of its type: %v", name, row.def, err)
			continue
		}
		if !reflect.DeepEqual(doc.Elem().Interface(), v.Interface()) {
			t.Errorf("deploy/config.md gives %s the default %s; it is %v", name, row.def, v.Interface())
		}
	}
	for name, row := range rows {
		if _, ok := fields[name]; !ok {
			t.Errorf("deploy/config.md documents %s, which is not a field of the server configuration", name)
		}
		if row.flag == "—" {
			continue
		}
		// The flag must change this field, and only it.
		flagged := fieldsSetBy(t, row.flag)
		if !slices.Contains(flagged, name) {
			t.Errorf("deploy/config.md says %s sets %s; it sets %v", row.flag, name, flagged)
		}
	}
}

// fieldsSetBy returns the configuration fields a flag changes from the
// defaults, given a value of the right kind (not necessarily a valid one).
func fieldsSetBy(t *testing.T, flag string) []string {
	t.Helper()
	value := map[string]string{
		"--node-id": "y", "--data-dir": "/other", "--join": "10.9.9.9:7412", "--bootstrap-expect": "5",
		"--bootstrap": "true", "--acl": "false", "--acl-bootstrap-token": tokenFile(t), "--munge-socket": "/run/munge/munge.socket.2", "--log-level": "debug",
		"--log-format": "json", "--gossip-key": base64.StdEncoding.EncodeToString(make([]byte, 16)),
		"--tls-server-name": "server.longfair", "--worker-loss-timeout": "90s", "--look-ahead": "true", "--raft-log-store": "wal",
	}[flag]
	switch {
	case value != "":
	case strings.HasSuffix(flag, "-addr") || strings.HasSuffix(flag, "-advertise"):
		value = "10.9.9.9:9999"
	case strings.HasPrefix(flag, "--tls-"):
		value = "/nonexistent/file.pem" // refused by validation, which is not what is checked here
	default:
		t.Fatalf("the test does not know a value for %s: add one", flag)
	}
	args := []string{"--node-id", "x", "--data-dir", "/d", flag + "=" + value}
	base, _, err := serverConfig([]string{"--node-id", "x", "--data-dir", "/d"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// serverConfig returns the configuration it built together with what
	// validation says about it.
	got, _, err := serverConfig(args, io.Discard)
	if got.NodeID == "" {
		t.Fatalf("longfair server %v: %v", args, err)
	}
	before, after := map[string]reflect.Value{}, map[string]reflect.Value{}
	configFields("", reflect.ValueOf(base), before)
	configFields("", reflect.ValueOf(got), after)
	var changed []string
	for name, v := range after {
		if _, leaf := v.Interface().(json.Marshaler); v.Kind() == reflect.Struct && !leaf {
			continue
		}
		if !reflect.DeepEqual(v.Interface(), before[name].Interface()) {
			changed = append(changed, name)
		}
	}
	return changed
}
