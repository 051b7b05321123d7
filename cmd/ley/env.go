package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// errSecretArg refuses a secret given on the command line.
var errSecretArg = errors.New("a secret on the command line, where every local user can read it (ps, /proc)")

// secretFlags are the flags whose value is, or may hold, a secret, each
// with the test of whether a value is one. A command line is readable by
// every local user (ps, /proc/<pid>/cmdline, /debug/pprof/cmdline), so
// such a value is refused there: it comes from the flag's environment
// variable instead (or, for --host-key, from --host-key-file). A
// --database-url without a password (one taken from PGPASSFILE or
// ~/.pgpass) is no secret and stays allowed.
var secretFlags = map[string]func(string) bool{
	"host-key":      func(string) bool { return true },
	"spawn-token":   func(string) bool { return true },
	"demo-password": func(string) bool { return true },
	// The load tools' admin password is a secret unless it is the demo
	// account's documented one (a realm `ley run` seeded).
	"admin-password": func(v string) bool { return v != defaultDemoPassword },
	"database-url":   dsnHasPassword,
}

// redactedFlags are the flags whose values /debug/pprof/cmdline hides:
// the secret ones, and the load tools' passwords.
var redactedFlags = map[string]bool{"host-key": true, "spawn-token": true, "demo-password": true, "database-url": true,
	"admin-password": true, "password": true}

// dsnHasPassword reports whether a Postgres URL or key=value connection
// string carries a password.
func dsnHasPassword(dsn string) bool {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			return true
		}
	}
	return strings.Contains(strings.ToLower(dsn), "password=")
}

// secretUsage is what --help adds to a secret flag's usage line.
func secretUsage(name string) string {
	if name == "database-url" {
		return fmt.Sprintf(" (env %s; refused on the command line when it holds a password)", envName(name))
	}
	return fmt.Sprintf(" (env %s; refused on the command line, which every local user can read)", envName(name))
}

// secretFromFile reads a secret for a --*-file flag into *dst: the file's
// content without surrounding white space. path "" leaves *dst alone;
// both a file and a value set otherwise is an error. A file other users
// may read is logged as a warning (chmod 600 it).
func secretFromFile(dst *string, path, flag string, log *slog.Logger) error {
	if path == "" {
		return nil
	}
	if *dst != "" {
		return fmt.Errorf("--%s-file and %s both set: give one", flag, envName(flag))
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("--%s-file: %w", flag, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		log.Warn("a secret file others may read; chmod 600 it", "flag", "--"+flag+"-file", "path", path, "mode", fi.Mode().Perm().String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--%s-file: %w", flag, err)
	}
	if *dst = strings.TrimSpace(string(b)); *dst == "" {
		return fmt.Errorf("--%s-file %s is empty", flag, path)
	}
	return nil
}

// envName is the environment variable that stands in for a flag:
// LEY_ followed by the flag name in upper case with dashes as underscores
// (--pool-size is LEY_POOL_SIZE).
func envName(flag string) string {
	return "LEY_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// bindEnvAll walks the command tree, adds the environment variable to every
// flag's usage line (so --help lists it) and, before each command runs, sets
// every flag not given on the command line from its environment variable.
// A flag on the command line wins over the environment, except a secret
// one (secretFlags), which is refused there.
func bindEnvAll(cmd *cobra.Command) {
	annotate := func(f *pflag.Flag) {
		if f.Name == "help" || strings.Contains(f.Usage, "(env ") {
			return
		}
		if _, secret := secretFlags[f.Name]; secret {
			f.Usage += secretUsage(f.Name)
			return
		}
		f.Usage += fmt.Sprintf(" (env %s)", envName(f.Name))
	}
	cmd.Flags().VisitAll(annotate)
	cmd.PersistentFlags().VisitAll(annotate)
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		var secrets []error
		c.Flags().Visit(func(f *pflag.Flag) { // the flags given on the command line
			if isSecret := secretFlags[f.Name]; isSecret != nil && isSecret(f.Value.String()) {
				instead := envName(f.Name)
				if f.Name == "host-key" {
					instead += " or --host-key-file"
				}
				secrets = append(secrets, fmt.Errorf("--%s: %w; set %s instead", f.Name, errSecretArg, instead))
			}
		})
		if err := errors.Join(secrets...); err != nil {
			return err
		}
		var errs []string
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.Changed || f.Name == "help" {
				return
			}
			if v, ok := os.LookupEnv(envName(f.Name)); ok {
				if err := c.Flags().Set(f.Name, v); err != nil {
					if redactedFlags[f.Name] {
						v = "[redacted]"
					}
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
