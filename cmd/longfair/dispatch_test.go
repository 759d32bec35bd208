package main

import (
	"io"

	"github.com/longfair/longfair/internal/cli"
)

// dispatch runs the binary's command line in the test's process, as main
// does.
func dispatch(args []string, stdout, stderr io.Writer) int {
	return cli.Dispatch(commands(), args, stdout, stderr)
}
