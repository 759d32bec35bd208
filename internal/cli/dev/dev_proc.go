package dev

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// devChild is one server or worker process of 'longfair dev'. Its output
// goes to a log file, which is also where dev reads the addresses it
// bound: the JSON log line announcing it started.
type devChild struct {
	Kind    string            `json:"-"`
	ID      string            `json:"id"`
	PID     int               `json:"pid"`
	Addrs   map[string]string `json:"addresses"`
	Dir     string            `json:"dir"`
	LogFile string            `json:"log"`

	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
}

// startChild starts exe with args (and env added to dev's environment) in
// its own process group, logging to dir/<kind>.log, and waits until the log holds the JSON line whose msg is
// startedMsg; the line's fields named in addrKeys become Addrs.
func startChild(ctx context.Context, exe, kind, id, dir string, args, env []string, startedMsg string, addrKeys []string) (*devChild, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	logPath := filepath.Join(dir, kind+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", id, err)
	}
	defer logFile.Close() // the child holds its own descriptor
	start, _ := logFile.Seek(0, 2)
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s %s: %w", kind, id, err)
	}
	c := &devChild{Kind: kind, ID: id, PID: cmd.Process.Pid, Dir: dir, LogFile: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	rec, err := c.waitLogLine(ctx, start, startedMsg)
	if err != nil {
		c.stop(5 * time.Second)
		return nil, err
	}
	c.Addrs = make(map[string]string)
	for _, k := range addrKeys {
		if v, ok := rec[k].(string); ok {
			c.Addrs[k] = v
		}
	}
	return c, nil
}

// waitLogLine polls the log from offset for a JSON record with the given
// msg, until ctx ends or the process exits.
func (c *devChild) waitLogLine(ctx context.Context, offset int64, msg string) (map[string]any, error) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if rec := findLogRecord(c.LogFile, offset, msg); rec != nil {
			return rec, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s %s did not log %q in time (see %s)", c.Kind, c.ID, msg, c.LogFile)
		case <-c.done:
			if rec := findLogRecord(c.LogFile, offset, msg); rec != nil {
				return rec, nil
			}
			return nil, fmt.Errorf("%s %s exited before it started (%v): %s (full log: %s)", c.Kind, c.ID, c.err, lastLogLine(c.LogFile, offset), c.LogFile)
		case <-tick.C:
		}
	}
}

func findLogRecord(path string, offset int64, msg string) map[string]any {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) < offset {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data[offset:]))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == msg {
			return rec
		}
	}
	return nil
}

// lastLogLine is the last non-empty line of the log after offset: usually
// why a process exited.
func lastLogLine(path string, offset int64) string {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) < offset {
		return "no log"
	}
	lines := bytes.Split(bytes.TrimSpace(data[offset:]), []byte("\n"))
	last := string(lines[len(lines)-1])
	var rec map[string]any
	if json.Unmarshal([]byte(last), &rec) == nil {
		if e, ok := rec["error"].(string); ok {
			return fmt.Sprint(rec["msg"], ": ", e)
		}
		if m, ok := rec["msg"].(string); ok {
			return m
		}
	}
	if last == "" {
		return "no output"
	}
	return last
}

// exited reports whether the process has exited.
func (c *devChild) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop asks the process to stop (SIGTERM) and kills it (SIGKILL) if it
// has not exited within grace. It returns once the process is gone.
func (c *devChild) stop(grace time.Duration) {
	if c.exited() {
		return
	}
	signalChild(c.cmd, false)
	select {
	case <-c.done:
	case <-time.After(grace):
		signalChild(c.cmd, true)
		<-c.done
	}
}
