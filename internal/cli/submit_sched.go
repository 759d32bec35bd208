package cli

import "flag"

// aliasFlag makes the one-letter option short the short form of long
// (GNUFlags reads the "short for --" help).
func aliasFlag(fs *flag.FlagSet, short, long string) {
	fs.Var(fs.Lookup(long).Value, short, shortPrefix+long)
}
