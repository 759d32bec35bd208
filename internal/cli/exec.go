package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/ops"
)

// ExitStatus is an error that only sets the process's exit status, with
// nothing to print: `longfair exec` exits with its remote command's.
type ExitStatus int

func (e ExitStatus) Error() string { return "exit status " + strconv.Itoa(int(e)) }

const execHelp = `Usage: longfair exec [--node] NODE [--] COMMAND [ARG...]

Run COMMAND on NODE, another node of the parallel task this runs in,
through that node's worker, with stdin, stdout and stderr passed through;
exit with the command's status. It works only inside a parallel task (the
task's credential and nodes are in its environment: LONGFAIR_JOB_CREDENTIAL,
LONGFAIR_NODE_ADDRESSES), only on the task's nodes and only while it runs.
The command runs as /bin/sh -c with the words joined by spaces, as rsh and
ssh run theirs, in this environment and directory, and ends when the task
ends on that node.

It is an rsh-style agent (ssh's -x, -n, -q and -T, and -l USER, are
accepted and ignored), and the task's LONGFAIR_RSH runs it, so MPI
launchers start their ranks on the task's nodes without ssh:

  longfair exec node7 hostname
  mpiexec -launcher rsh -launcher-exec "$LONGFAIR_RSH" -f "$LONGFAIR_HOSTFILE" -n 4 ./a.out
  mpirun --mca plm_rsh_agent "$LONGFAIR_RSH" --hostfile "$LONGFAIR_HOSTFILE" -np 4 ./a.out
`

// execCommand is `longfair exec`.
func execCommand() func(args []string, stdout, stderr io.Writer) error {
	return func(args []string, stdout, stderr io.Writer) error {
		node, argv, err := parseExecArgs(args)
		if errors.Is(err, ErrHelpShown) {
			fmt.Fprint(stdout, execHelp)
			return err
		}
		if err != nil {
			return err
		}
		ctx, cancel := signalContext()
		defer cancel()
		return runExec(ctx, node, argv, nil, os.Stdin, stdout, stderr)
	}
}

// parseExecArgs reads rsh's and ssh's command line: options first, then
// the node, then the command.
func parseExecArgs(args []string) (node string, argv []string, err error) {
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "-h" || a == "--help" || a == "-help":
			return "", nil, ErrHelpShown
		case a == "--node" || a == "-node" || a == "-l":
			if len(args) < 2 {
				return "", nil, Usagef("%s needs a value; run 'longfair exec --help'", a)
			}
			if a != "-l" {
				node = args[1]
			}
			args = args[2:]
			continue
		case strings.HasPrefix(a, "--node="):
			node, args = strings.TrimPrefix(a, "--node="), args[1:]
			continue
		case a == "-x" || a == "-n" || a == "-q" || a == "-T":
			args = args[1:]
			continue
		}
		break
	}
	if node == "" {
		if len(args) == 0 {
			return "", nil, Usagef("give the node to run on and the command: longfair exec NODE COMMAND")
		}
		node, args = args[0], args[1:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return "", nil, Usagef("give the command to run on %s: longfair exec %s COMMAND", node, node)
	}
	return node, args, nil
}

// runExec starts argv on node through its worker and relays its stdio;
// extra adds to the environment passed on.
func runExec(ctx context.Context, node string, argv, extra []string, stdin io.Reader, stdout, stderr io.Writer) error {
	job, err := strconv.ParseUint(os.Getenv("LONGFAIR_JOB_ID"), 10, 64)
	task, err2 := strconv.ParseInt(os.Getenv("LONGFAIR_TASK_INDEX"), 10, 64)
	attempt, err3 := strconv.ParseInt(os.Getenv("LONGFAIR_ATTEMPT"), 10, 32)
	cred := os.Getenv("LONGFAIR_JOB_CREDENTIAL")
	if err != nil || err2 != nil || err3 != nil || cred == "" {
		return errors.New("not inside a parallel task: longfair exec needs the task's LONGFAIR_JOB_ID, LONGFAIR_TASK_INDEX, LONGFAIR_ATTEMPT and LONGFAIR_JOB_CREDENTIAL (submit with --nodes N and run it from the task)")
	}
	addr := ""
	for _, pair := range strings.Split(os.Getenv("LONGFAIR_NODE_ADDRESSES"), ",") {
		if n, a, ok := strings.Cut(pair, "="); ok && n == node {
			addr = a
		}
	}
	if addr == "" {
		return fmt.Errorf("node %q is not one of this task's nodes (%s): run only on the nodes in LONGFAIR_NODELIST", node, os.Getenv("LONGFAIR_NODELIST"))
	}
	creds := insecure.NewCredentials()
	tc := ops.TLSConfig{CAFile: os.Getenv(envTLSCA), CertFile: os.Getenv(envTLSCert), KeyFile: os.Getenv(envTLSKey), ServerName: os.Getenv(envTLSServerName)}
	if tc.Enabled() {
		if creds, err = tc.ClientCredentials(); err != nil {
			return fmt.Errorf("TLS for the worker of node %s: %w", node, err)
		}
	}
	conn, err := grpc.NewClient(addr, append(longfairv1.DialOptions(), grpc.WithTransportCredentials(creds))...)
	if err != nil {
		return fmt.Errorf("connect to the worker of node %s at %s: %w", node, addr, err)
	}
	defer conn.Close()
	stream, err := longfairv1.NewAllocationClient(conn).Exec(ctx)
	if err != nil {
		return fmt.Errorf("reach the worker of node %s at %s: %w", node, addr, err)
	}
	dir, _ := os.Getwd()
	start := &longfairv1.ExecStart{
		Attempt:    &longfairv1.AttemptRef{JobId: job, Task: task, Attempt: int32(attempt)},
		Credential: cred, Argv: argv, Env: append(os.Environ(), extra...), Dir: dir,
	}
	if err := stream.Send(&longfairv1.ExecRequest{Msg: &longfairv1.ExecRequest_Start{Start: start}}); err != nil {
		return fmt.Errorf("start on node %s: %w", node, err)
	}
	if stdin != nil {
		go relayStdin(stream, stdin)
	}
	for {
		m, err := stream.Recv()
		if err != nil {
			return fmt.Errorf("run on node %s: %w", node, friendly(err, 0))
		}
		switch {
		case m.GetStdout() != nil:
			if _, err := stdout.Write(m.GetStdout()); err != nil {
				return err
			}
		case m.GetStderr() != nil:
			if _, err := stderr.Write(m.GetStderr()); err != nil {
				return err
			}
		default:
			if code := m.GetExitCode(); code != 0 {
				return ExitStatus(code)
			}
			return nil
		}
	}
}

// relayStdin sends stdin to the remote process until it ends.
func relayStdin(stream grpc.BidiStreamingClient[longfairv1.ExecRequest, longfairv1.ExecResponse], stdin io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := stdin.Read(buf)
		if n > 0 {
			if stream.Send(&longfairv1.ExecRequest{Msg: &longfairv1.ExecRequest_Stdin{Stdin: append([]byte(nil), buf[:n]...)}}) != nil {
				return
			}
		}
		if err != nil {
			_ = stream.Send(&longfairv1.ExecRequest{Msg: &longfairv1.ExecRequest_StdinClosed{StdinClosed: true}})
			return
		}
	}
}
