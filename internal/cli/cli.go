package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/ops"
)

// UsageError is a mistake in how a command was called (a flag or an
// argument); longfair exits with code 2 for it.
type UsageError struct{ msg string }

func (e UsageError) Error() string { return e.msg }

func Usagef(format string, args ...any) error { return UsageError{fmt.Sprintf(format, args...)} }

// ErrHelpShown ends a command whose --help text was printed.
var ErrHelpShown = errors.New("help shown")

// cmdIO is where a command writes.
type cmdIO struct {
	stdout, stderr io.Writer
}

// NewFlags returns a flag set that prints nothing by itself: ParseFlags
// prints the help on -h and turns mistakes into one-line usage errors.
func NewFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// ParseFlags parses args, allowing flags before and after the positional
// arguments. Everything after a "--" is returned as rest, unparsed (a
// command line to run). help is the command's usage text, printed with the
// flags on -h or --help.
func ParseFlags(fs *flag.FlagSet, args []string, help string, w io.Writer) (positional, rest []string, err error) {
	positional, rest, err = ParseGNU(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		PrintHelp(fs, help, w)
		return nil, nil, ErrHelpShown
	}
	// The table completion asked for goes up as it is, not as a usage error.
	if _, asked := err.(optionTable); asked {
		return nil, nil, err
	}
	if err != nil {
		return nil, nil, Usagef("%v (run 'longfair %s --help' for the flags)", err, fs.Name())
	}
	return positional, rest, nil
}

func PrintHelp(fs *flag.FlagSet, help string, w io.Writer) {
	fmt.Fprint(w, strings.TrimLeft(help, "\n"))
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if has {
		fmt.Fprintln(w, "\nFlags:")
		PrintFlags(w, fs)
	}
}

// wantArgs checks the number of positional arguments.
func wantArgs(name string, args []string, min, max int, what string) error {
	if len(args) < min {
		return Usagef("missing %s: usage is 'longfair %s %s' (see --help)", what, name, what)
	}
	if max >= 0 && len(args) > max {
		return Usagef("unexpected argument %q: usage is 'longfair %s %s' (see --help)", args[max], name, what)
	}
	return nil
}

// clientFlags are the flags of every command that calls the cluster.
type clientFlags struct {
	addr, token string
	timeout     time.Duration
	attempt     attemptFlag
	stale       bool
	output      string
	tls         ops.TLSConfig // cli_tls.go
}

// register adds the connection flags, and --output when the command
// prints a listing.
func (f *clientFlags) register(fs *flag.FlagSet, listing bool) {
	fs.StringVar(&f.addr, "addr", "", "servers' gRPC `host:port`, comma-separated (default $"+client.EnvAddr+", else "+client.DefaultAddr+")")
	fs.StringVar(&f.token, "token", "", "bearer `token` (default $"+client.EnvToken+")")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "give up when the cluster has not answered within `duration`")
	fs.Var(&f.attempt, "attempt-timeout", "give up on a server that has not answered within `duration` and try the next (doubled once every server stalled; at most a third of --timeout; 0: off) (default $"+client.EnvAttemptTimeout+", else "+client.DefaultAttemptTimeout.String()+")")
	fs.BoolVar(&f.stale, "stale", false, "let any server answer reads from its replica, which may lag behind the leader")
	f.registerTLS(fs)
	if listing {
		fs.StringVar(&f.output, "output", "table", "output `format`: table, json or csv")
		fs.StringVar(&f.output, "o", "table", "short for --output")
	}
}

// checkOutput validates --output.
func (f *clientFlags) checkOutput() error {
	switch f.output {
	case "", "table", "json", "csv":
		return nil
	}
	return Usagef("--output %q: use table, json or csv", f.output)
}

// dial builds a client from the flags and the environment.
func (f *clientFlags) dial() (*client.Client, error) {
	if err := f.checkOutput(); err != nil {
		return nil, err
	}
	addr, from := f.addr, "--addr"
	if addr == "" {
		addr, from = os.Getenv(client.EnvAddr), client.EnvAddr
	}
	if addr == "" {
		addr = client.DefaultAddr
	}
	addrs, err := client.ParseAddresses(addr)
	if err != nil {
		return nil, Usagef("%s: %v", from, err)
	}
	tlsOpts, err := f.tlsOptions()
	if err != nil {
		return nil, err
	}
	attempt := f.attempt.d
	if !f.attempt.set {
		if attempt, err = client.AttemptTimeoutFromEnv(); err != nil {
			return nil, Usagef("%v", err)
		}
	}
	opts := append(tlsOpts, client.WithToken(f.resolvedToken()), client.WithConsistentReads(!f.stale),
		client.WithRetry(max(f.timeout, time.Second), client.DefaultUnreachableFor), client.WithAttemptTimeout(attempt))
	if f.output != "json" {
		opts = append(opts, client.WithDialOptions(escapeReplies()...))
	}
	if f.mungeAuth() {
		opts = append(opts, client.WithDialOptions(mungeDialOption(mungeSocket())))
	}
	return client.New(addrs, opts...)
}

// attemptFlag is --attempt-timeout; unset, $LONGFAIR_ATTEMPT_TIMEOUT or
// the client's default applies.
type attemptFlag struct {
	d   time.Duration
	set bool
}

func (a *attemptFlag) String() string {
	if a == nil || !a.set {
		return ""
	}
	return a.d.String()
}

func (a *attemptFlag) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is not a duration: give one such as 2s, or 0 to turn per-attempt deadlines off", v)
	}
	a.d, a.set = d, true
	return nil
}

// resolvedToken is --token, else $LONGFAIR_TOKEN.
func (f *clientFlags) resolvedToken() string {
	if f.token != "" {
		return f.token
	}
	return os.Getenv(client.EnvToken)
}

// signalContext is cancelled by Ctrl-C or SIGTERM, so that a command
// stops cleanly (a partial snapshot file is removed, a watch ends).
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// callContext bounds one exchange with the cluster by --timeout.
func (f *clientFlags) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, f.timeout)
}

// clientCommand wraps the body of a command that calls the cluster: it
// handles help, turns gRPC errors into their one-line message and gives
// the body a client and a context cancelled by Ctrl-C.
func clientCommand(name, help string, listing bool, setup func(fs *flag.FlagSet), body func(ctx context.Context, c *client.Client, f *clientFlags, args, rest []string, out cmdIO) error) func(args []string, stdout, stderr io.Writer) error {
	return func(args []string, stdout, stderr io.Writer) error {
		fs := NewFlags(name)
		var f clientFlags
		if setup != nil {
			setup(fs)
		}
		f.register(fs, listing)
		pos, rest, err := ParseFlags(fs, args, help, stdout)
		if errors.Is(err, ErrHelpShown) {
			return nil
		}
		if err != nil {
			return err
		}
		c, err := f.dial()
		if err != nil {
			return err
		}
		defer c.Close()
		ctx, stop := signalContext()
		defer stop()
		return friendly(body(ctx, c, &f, pos, rest, cmdIO{stdout: stdout, stderr: stderr}), f.timeout)
	}
}

// rpcPrefix is how gRPC prefixes a status error's message.
var rpcPrefix = regexp.MustCompile(`rpc error: code = \w+ desc = `)

// friendly turns an error into one line a person can act on: the
// server's message without gRPC's "rpc error: code = … desc =" wrapping.
func friendly(err error, timeout time.Duration) error {
	if err == nil {
		return nil
	}
	var ue UsageError
	if errors.As(err, &ue) {
		return err
	}
	msg := rpcPrefix.ReplaceAllString(err.Error(), "")
	if _, ok := status.FromError(err); ok {
		switch status.Code(err) {
		case codes.DeadlineExceeded:
			msg = fmt.Sprintf("no answer within %v (raise --timeout if the cluster is just slow): %s", timeout, msg)
		case codes.Canceled:
			msg = "interrupted: " + msg
		case codes.Unimplemented:
			msg = "this server does not offer that call (is it an older version?): " + msg
		}
	} else if errors.Is(err, context.DeadlineExceeded) {
		msg = fmt.Sprintf("no answer within %v (raise --timeout if the cluster is just slow): %s", timeout, msg)
	}
	msg = strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
	return errors.New(msg)
}
