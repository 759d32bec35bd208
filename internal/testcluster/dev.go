package testcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Dev is a running `longfair dev` cluster: the process, and the exports
// of the dev.env it wrote.
type Dev struct {
	// Dir is the cluster's directory (dev --dir).
	Dir string
	// Env holds dev.env's exports as NAME=value.
	Env  []string
	cmd  *exec.Cmd
	done chan error
	out  string
}

// StartDev runs `bin dev --dir dir` with args, its output going to the
// file out, in the environment without LONGFAIR_ variables, and waits up
// to two minutes for its dev.env. On an error nothing it started is left
// running.
func StartDev(bin, dir, out string, args ...string) (*Dev, error) {
	log, err := os.Create(out)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	d := &Dev{Dir: dir, done: make(chan error, 1), out: out}
	d.cmd = exec.Command(bin, append([]string{"dev", "--dir", dir}, args...)...)
	d.cmd.Stdout, d.cmd.Stderr = log, log
	d.cmd.Env = CleanEnv()
	d.cmd.SysProcAttr = diesWithTest(false) // its own processes die with it
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { d.done <- d.cmd.Wait() }()
	deadline := time.After(2 * time.Minute)
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "dev.env")); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if kv, ok := strings.CutPrefix(line, "export "); ok {
					d.Env = append(d.Env, kv)
				}
			}
			return d, nil
		}
		select {
		case err := <-d.done:
			return nil, fmt.Errorf("longfair dev exited before it was ready (%v):\n%s", err, d.Output())
		case <-deadline:
			_ = d.Interrupt(30 * time.Second)
			return nil, fmt.Errorf("longfair dev was not ready within 2 minutes:\n%s", d.Output())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Getenv is the value dev.env exports for name ("" if none).
func (d *Dev) Getenv(name string) string {
	for _, kv := range d.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// Interrupt stops dev as Ctrl-C would and waits for it to exit, killing it
// after grace. It reports how dev exited, or that it had to be killed.
func (d *Dev) Interrupt(grace time.Duration) error {
	_ = d.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-d.done:
		if err != nil {
			return fmt.Errorf("longfair dev exited with %v after Ctrl-C", err)
		}
		return nil
	case <-time.After(grace):
		_ = d.cmd.Process.Kill()
		<-d.done
		return errors.New("longfair dev did not exit within " + grace.String() + " of Ctrl-C")
	}
}

// Output is what dev printed.
func (d *Dev) Output() string {
	data, _ := os.ReadFile(d.out)
	return string(data)
}

// CleanEnv is the environment without LONGFAIR_ variables, so that a
// developer's own settings do not leak into a test.
func CleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LONGFAIR_") {
			out = append(out, kv)
		}
	}
	return out
}
