package cli

import (
	"bytes"
	"strings"
	"testing"
)

// cli runs the command line in-process, as a user would type it.
func cli(t *testing.T, home string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	t.Setenv("HOME", t.TempDir())
	code = run("test", append([]string{"--home", home}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCommandLineUsage(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		args       []string
		wantCode   int
		wantOutput string // in stdout or stderr
	}{
		{nil, exitUsage, "Usage: switchboard"},
		{[]string{"--help"}, exitOK, "Commands:"},
		{[]string{"help"}, exitOK, "Commands:"},
		{[]string{"bogus"}, exitUsage, `unknown command "bogus"`},
		{[]string{"--bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"servers", "--bogus"}, exitUsage, "flag provided but not defined: -bogus"},
		{[]string{"start"}, exitUsage, "missing server name"},
		{[]string{"stop", "a", "b"}, exitUsage, "expected one server name"},
		{[]string{"status", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"tools"}, exitUsage, "expected: tools held [SERVER], or tools approve SERVER [TOOL]"},
		{[]string{"tools", "approve"}, exitUsage, "expected: tools held [SERVER]"},
		{[]string{"tools", "approve", "a", "b", "c"}, exitUsage, "expected: tools held [SERVER]"},
		{[]string{"tools", "bless", "a"}, exitUsage, `unknown action "bless"`},
		{[]string{"logs", "-n", "-3", "x"}, exitUsage, "-n must not be negative"},
		{[]string{"logs", "x", "-n", "-3"}, exitUsage, "-n must not be negative"}, // flags after arguments
		{[]string{"clients", "connect"}, exitUsage, "expected: clients, or clients connect|disconnect CLIENT"},
		{[]string{"serve", "--log-level", "loud"}, exitUsage, `invalid log level "loud"`},
		{[]string{"help", "start"}, exitOK, "Usage: switchboard start [flags] NAME"},
		{[]string{"logs", "--help"}, exitOK, "keep printing new lines"},
		{[]string{"version"}, exitOK, "switchboard "},
		{[]string{"tools", "held", "a", "b"}, exitUsage, "expected: tools held [SERVER]"},
		{[]string{"tools", "approve", "a", "--diff"}, exitUsage, "--diff and --json go with held: review with `tools held a --diff`, then approve"},
		{[]string{"tools", "approve", "a", "echo", "--json"}, exitUsage, "--diff and --json go with held"},
		{[]string{"tools", "approve", "a", "--fingerprint", "sha256:00"}, exitUsage, "--fingerprint goes with approve SERVER TOOL"},
		{[]string{"tools", "held", "--fingerprint", "sha256:00"}, exitUsage, "--fingerprint goes with approve SERVER TOOL"},
		{[]string{"profiles", "extra"}, exitUsage, `unknown action "extra": create, edit or delete`},
		{[]string{"profiles", "create"}, exitUsage, "expected: profiles, or profiles create|edit|delete NAME"},
		{[]string{"profiles", "create", "coding"}, exitUsage, "create needs the profile's servers: --server NAME"},
		{[]string{"profiles", "edit", "coding"}, exitUsage, "edit needs a change: --server, --tool, --all-tools, --search or --max-tier"},
		{[]string{"profiles", "--server", "fs"}, exitUsage, "--server goes with create or edit"},
		{[]string{"profiles", "delete", "coding", "--search"}, exitUsage, "--search goes with create or edit"},
		{[]string{"profiles", "create", "coding", "--server", "fs", "--all-tools"}, exitUsage, "--all-tools goes with edit, without --tool"},
		{[]string{"profiles", "create", "coding", "--server", "fs", "--tool", "read_file"}, exitUsage, `--tool "read_file": expected SERVER:TOOL[,TOOL...]`},
		{[]string{"profiles", "create", "coding", "--server", "fs", "--tool", "fs:"}, exitUsage, `--tool "fs:": no tool after "fs:"`},
		{[]string{"profiles", "create", "coding", "--server", "fs", "--max-tier", "root"}, exitUsage, "--max-tier: "},
		{[]string{"profiles", "create", "coding", "--server", "fs", "--max-tier", "none"}, exitUsage, "--max-tier: "},
		{[]string{"profiles", "create", "coding", "--server", "fs,git", "--tool", "fs:read_file,list_directory", "--search"}, exitError, "start it with `switchboard serve`"},
		{[]string{"profiles", "delete", "coding"}, exitError, "start it with `switchboard serve`"},
		{[]string{"clients", "connect", "cursor", "--profile"}, exitUsage, "flag needs an argument: -profile"},
		{[]string{"clients", "--profile", "coding"}, exitUsage, "--profile goes with connect"},
		{[]string{"clients", "import", "cursor", "--profile", "coding"}, exitUsage, "--profile goes with connect"},
		{[]string{"clients", "disconnect", "cursor", "--profile", "coding"}, exitUsage, "--profile goes with connect"},
		{[]string{"clients", "backups", "cursor", "--revoke"}, exitUsage, "--revoke goes with disconnect"},
		// import has no --force (its API request has none): refused, not ignored.
		{[]string{"clients", "import", "cursor", "--replace", "--force"}, exitUsage, "--force goes with connect or disconnect"},
		{[]string{"clients", "restore", "cursor", "b", "--force"}, exitUsage, "--force goes with connect or disconnect"},
		{[]string{"status"}, exitError, "switchboard is not running for " + home},
		// The verbs of profiles and approvals with the daemon down: as every
		// other verb, exit 1 saying how to start it.
		{[]string{"profiles"}, exitError, "switchboard is not running for " + home},
		{[]string{"tools", "held"}, exitError, "start it with `switchboard serve`"},
		{[]string{"tools", "held", "fs", "--diff", "--json"}, exitError, "start it with `switchboard serve`"},
		{[]string{"tools", "approve", "fs", "echo"}, exitError, "start it with `switchboard serve`"},
		{[]string{"clients", "connect", "cursor", "--profile", "coding"}, exitError, "start it with `switchboard serve`"},
		{[]string{"tokens"}, exitError, "start it with `switchboard serve`"},
		{[]string{"servers"}, exitError, "start it with `switchboard serve`"},
		// Signing in to remote servers.
		{[]string{"auth"}, exitUsage, "expected: auth login NAME, auth logout NAME or auth status"},
		{[]string{"auth", "login"}, exitUsage, "expected: auth login NAME"},
		{[]string{"auth", "logout", "a", "b"}, exitUsage, "expected: auth logout NAME"},
		{[]string{"auth", "status", "a"}, exitUsage, "expected: auth status"},
		{[]string{"auth", "refresh", "a"}, exitUsage, `unknown action "refresh"`},
		{[]string{"auth", "login", "linear"}, exitError, "start it with `switchboard serve`"},
		{[]string{"auth", "status"}, exitError, "start it with `switchboard serve`"},
		// Adding a remote server by hand.
		{[]string{"install", "--url", "https://a.example/mcp"}, exitUsage, "a remote server needs --name"},
		{[]string{"install", "--url", "https://a.example/mcp", "--name", "r", "everything"}, exitUsage, "no catalog ENTRY"},
		{[]string{"install", "--url", "https://a.example/mcp", "--name", "r", "--set", "A=b"}, exitUsage, "no catalog ENTRY, --set"},
		{[]string{"install", "everything", "--header", "A=b"}, exitUsage, "--header, --secret-header, --secret-header-from-env, --transport, --client-id, --client-secret-from-env, --scope and --client-metadata-url go with --url"},
		{[]string{"install", "everything", "--client-id", "abc"}, exitUsage, "go with --url"},
		{[]string{"install", "--url", "https://a.example/mcp", "--name", "a", "--client-secret-from-env", "HOME"}, exitUsage, "--client-secret-from-env is the secret of a --client-id"},
		{[]string{"install", "everything", "--transport", "sse"}, exitUsage, "go with --url"},
		{[]string{"install", "--url", "https://a.example/mcp", "--name", "r", "--header", "nobody"}, exitUsage, `expected NAME=VALUE, got "nobody"`},
		{[]string{"install", "--url", "https://a.example/mcp", "--name", "r", "--secret-header-from-env", "Authorization=SB_CLI_TEST_UNSET"},
			exitUsage, "environment variable SB_CLI_TEST_UNSET (for header Authorization) is not set"},
		{[]string{"install", "--url", "https://a.example/mcp", "--name", "r"}, exitError, "start it with `switchboard serve`"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := cli(t, home, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, out, errOut)
			}
			if !strings.Contains(out+errOut, tt.wantOutput) {
				t.Errorf("output lacks %q\nstdout: %s\nstderr: %s", tt.wantOutput, out, errOut)
			}
		})
	}
	for _, v := range verbs() {
		if code, out, _ := cli(t, home, v.name, "--help"); code != exitOK || !strings.Contains(out, "Usage: switchboard "+v.name) {
			t.Errorf("%s --help: exit %d, output %q", v.name, code, out)
		}
	}
}
