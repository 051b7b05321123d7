// Command ley is the single ley binary: every role (demo, and later director,
// area host, load driver, ladder) is a subcommand. This package only parses
// flags and wires packages together; it holds no logic of its own.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// exitReasonFile, when set (ley areahost --exit-reason-file), is where
// the error the command exits with is written too: the director that
// spawned the host reads it to say why the host could not start.
var exitReasonFile string

func main() {
	if err := newRoot().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "ley:", err)
		if exitReasonFile != "" {
			_ = os.WriteFile(exitReasonFile, []byte(err.Error()), 0o600)
		}
		os.Exit(1)
	}
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "ley",
		Short:         "ley — a server for sharded, persistent, grid-based multiplayer worlds",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newDemoCmd(), newAreahostCmd(), newDirectorCmd(), newRunCmd(), newMigrateCmd(), newLoadCmd(), newLadderCmd())
	bindEnvAll(root)
	return root
}
