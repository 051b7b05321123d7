package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestSecretsRefusedOnTheCommandLine (issue 12, finding 5): a secret flag
// given on the command line (readable by every local user) is refused
// before the command runs; the same value from its environment variable
// is taken; a database URL without a password stays allowed.
func TestSecretsRefusedOnTheCommandLine(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		refused bool
		flag    string // the flag to read back when not refused
		want    string
	}{
		{"host key as an argument", []string{"--host-key", "s3cret"}, nil, true, "", ""},
		{"host key inline", []string{"--host-key=s3cret"}, nil, true, "", ""},
		{"spawn token as an argument", []string{"--spawn-token", "tok"}, nil, true, "", ""},
		{"demo password as an argument", []string{"--demo-password", "pw"}, nil, true, "", ""},
		{"admin password as an argument", []string{"--admin-password", "pw"}, nil, true, "", ""},
		{"the demo's documented admin password", []string{"--admin-password", defaultDemoPassword}, nil, false, "admin-password", defaultDemoPassword},
		{"admin password from the environment", nil, map[string]string{"LEY_ADMIN_PASSWORD": "pw"}, false, "admin-password", "pw"},
		{"database url with a password", []string{"--database-url", "postgres://ley:pw@db/ley"}, nil, true, "", ""},
		{"database key=value string with a password", []string{"--database-url", "host=db user=ley password=pw"}, nil, true, "", ""},
		{"database url with a password parameter", []string{"--database-url", "postgres://ley@db/ley?password=pw"}, nil, true, "", ""},
		{"database url without a password", []string{"--database-url", "postgres://ley@db/ley"}, nil, false, "database-url", "postgres://ley@db/ley"},
		{"host key from the environment", nil, map[string]string{"LEY_HOST_KEY": "s3cret"}, false, "host-key", "s3cret"},
		{"spawn token from the environment", nil, map[string]string{"LEY_SPAWN_TOKEN": "tok"}, false, "spawn-token", "tok"},
		{"database url with a password from the environment", nil, map[string]string{"LEY_DATABASE_URL": "postgres://ley:pw@db/ley"}, false, "database-url", "postgres://ley:pw@db/ley"},
		{"an ordinary flag", []string{"--name", "n"}, nil, false, "name", "n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			ran := false
			sub := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { ran = true; return nil }}
			for _, f := range []string{"host-key", "spawn-token", "demo-password", "admin-password", "database-url", "name"} {
				sub.Flags().String(f, "", "a flag")
			}
			root := &cobra.Command{Use: "ley", SilenceUsage: true, SilenceErrors: true}
			root.AddCommand(sub)
			bindEnvAll(root)
			root.SetArgs(append([]string{"x"}, tt.args...))
			err := root.Execute()
			if tt.refused {
				if !errors.Is(err, errSecretArg) || ran {
					t.Fatalf("err = %v, ran %v; want refused with errSecretArg before running", err, ran)
				}
				if !strings.Contains(err.Error(), "LEY_") {
					t.Fatalf("err = %v; want it to name the environment variable to use", err)
				}
				return
			}
			if err != nil || !ran {
				t.Fatalf("err = %v, ran %v; want it run", err, ran)
			}
			if got, _ := sub.Flags().GetString(tt.flag); got != tt.want {
				t.Fatalf("--%s = %q; want %q", tt.flag, got, tt.want)
			}
		})
	}
}

// TestSecretFlagsHelp: --help says where each secret goes instead.
func TestSecretFlagsHelp(t *testing.T) {
	for _, sub := range []string{"director", "run", "areahost"} {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs([]string{sub, "--help"})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, "--host-key ") && !strings.Contains(line, "env LEY_HOST_KEY; refused on the command line") {
				t.Errorf("ley %s --help: %q; want it to say the host key is refused on the command line", sub, line)
			}
		}
		if !strings.Contains(out.String(), "--host-key-file") {
			t.Errorf("ley %s --help lists no --host-key-file", sub)
		}
	}
}

func TestSecretFromFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	private := write("key", "  s3cret\n", 0o600)
	open := write("open-key", "s3cret", 0o644)
	empty := write("empty", "\n", 0o600)
	tests := []struct {
		name    string
		preset  string
		path    string
		want    string
		wantErr bool
		warned  bool
	}{
		{"no file", "from-env", "", "from-env", false, false},
		{"a private file", "", private, "s3cret", false, false},
		{"a file others may read", "", open, "s3cret", false, true},
		{"an empty file", "", empty, "", true, false},
		{"a missing file", "", filepath.Join(dir, "none"), "", true, false},
		{"a file and the environment", "from-env", private, "", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			got := tt.preset
			err := secretFromFile(&got, tt.path, "host-key", slog.New(slog.NewTextHandler(&logs, nil)))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v; want error %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Fatalf("got %q; want %q", got, tt.want)
			}
			if warned := strings.Contains(logs.String(), "chmod 600"); warned != tt.warned {
				t.Fatalf("warned %v; want %v (log %q)", warned, tt.warned, logs.String())
			}
		})
	}
}
