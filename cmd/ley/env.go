package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envName is the environment variable that stands in for a flag:
// LEY_ followed by the flag name in upper case with dashes as underscores
// (--pool-size is LEY_POOL_SIZE).
func envName(flag string) string {
	return "LEY_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// bindEnvAll walks the command tree, adds the environment variable to every
// flag's usage line (so --help lists it) and, before each command runs, sets
// every flag not given on the command line from its environment variable.
// A flag on the command line wins over the environment.
func bindEnvAll(cmd *cobra.Command) {
	annotate := func(f *pflag.Flag) {
		if f.Name == "help" || strings.Contains(f.Usage, "(env ") {
			return
		}
		f.Usage += fmt.Sprintf(" (env %s)", envName(f.Name))
	}
	cmd.Flags().VisitAll(annotate)
	cmd.PersistentFlags().VisitAll(annotate)
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		var errs []string
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Changed || f.Name == "help" {
				return
			}
			if v, ok := os.LookupEnv(envName(f.Name)); ok {
				if err := c.Flags().Set(f.Name, v); err != nil {
					errs = append(errs, fmt.Sprintf("%s=%q: %v", envName(f.Name), v, err))
				}
			}
		})
		if len(errs) > 0 {
			return fmt.Errorf("bad environment: %s", strings.Join(errs, "; "))
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
	for _, sub := range cmd.Commands() {
		bindEnvAll(sub)
	}
}
