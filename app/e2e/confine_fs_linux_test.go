package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

// TestConfinedFilesystemServer installs the catalog's filesystem server
// (@modelcontextprotocol/server-filesystem, the catalog's pinned version)
// from npm with a granted folder, as a user would, and runs it under the
// policy the daemon derives for a catalog install. Inside the folder it
// lists, reads and writes. Outside, two layers refuse: the server's own path
// checks (a symlink in the folder to a file outside, a ../ escape, ~/.ssh),
// which answer "Access denied"; and, where that check is passed, Landlock,
// which answers EACCES: after the server resolved its roots, another folder
// (with a secret) is moved to the granted folder's path; the server's check
// compares path strings and lets the read through, Landlock's rule holds
// the granted folder itself (its inode, now at another path) and refuses.
// It needs npm and the npm registry, as the other install tests do.
func TestConfinedFilesystemServer(t *testing.T) {
	home, d := npmDaemon(t)
	granted := filepath.Join(d.userHome, "Documents", "notes")
	writeFile(t, filepath.Join(granted, "hello.txt"), "hello from the granted folder")
	outside := filepath.Join(d.userHome, "outside.txt")
	writeFile(t, outside, "fake secret outside the granted folder")
	sshKey := filepath.Join(d.userHome, ".ssh", "id_ed25519")
	writeFile(t, sshKey, "-----BEGIN OPENSSH PRIVATE KEY----- fake")
	private := filepath.Join(d.userHome, "private")
	writeFile(t, filepath.Join(private, "secret.txt"), "fake secret in another folder")
	if err := os.Symlink(outside, filepath.Join(granted, "link-to-outside.txt")); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	code, out, errOut := cli(t, home, "install", "filesystem", "--set", "directory="+granted)
	if code != exitOK || !strings.Contains(out, "filesystem is installed and running") {
		t.Fatalf("install filesystem: %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("npm install and start of server-filesystem: %v", time.Since(start).Round(time.Millisecond))

	cs := mcpSession(t, d, "/mcp")
	call := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "filesystem__" + tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return text.String(), !res.IsError
	}
	testutil.Eventually(t, 60*time.Second, "the confined filesystem server's tools on /mcp", func() bool {
		res, err := cs.ListTools(t.Context(), nil)
		return err == nil && slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "filesystem__read_text_file" })
	})

	v, err := d.client.Server(t.Context(), "filesystem")
	if err != nil {
		t.Fatal(err)
	}
	sb := v.Sandbox
	if !sb.Confined || !sb.Enforced || !strings.HasPrefix(sb.Mechanism, "landlock ABI ") || sb.Network ||
		!slices.Contains(sb.Write, granted) || slices.Contains(sb.Read, d.userHome) || slices.Contains(sb.Write, d.userHome) {
		t.Fatalf("sandbox view = %+v; want the derived policy in force: landlock, no network, %s writable, not the home", sb, granted)
	}

	allowed := func(tool string, args map[string]any, want string) func(t *testing.T) {
		return func(t *testing.T) {
			out, ok := call(tool, args)
			if !ok || !strings.Contains(out, want) {
				t.Fatalf("%s %v = %q (ok %v); want it allowed with %q", tool, args, out, ok, want)
			}
		}
	}
	// byServer: the server's own check refuses, before any file access.
	byServer := func(tool string, args map[string]any) func(t *testing.T) {
		return func(t *testing.T) {
			out, ok := call(tool, args)
			if ok || !strings.Contains(out, "Access denied") || strings.Contains(out, "fake secret") {
				t.Fatalf("%s %v = %q (ok %v); want the server's Access denied", tool, args, out, ok)
			}
		}
	}
	// byLandlock: the server lets it through and the kernel refuses.
	byLandlock := func(tool string, args map[string]any) func(t *testing.T) {
		return func(t *testing.T) {
			out, ok := call(tool, args)
			if ok || !strings.Contains(out, "EACCES") || strings.Contains(out, "Access denied") || strings.Contains(out, "fake secret") {
				t.Fatalf("%s %v = %q (ok %v); want EACCES from Landlock, not the server's check", tool, args, out, ok)
			}
		}
	}
	t.Run("list the granted folder", allowed("list_directory", map[string]any{"path": granted}, "[FILE] hello.txt"))
	t.Run("read in the granted folder", allowed("read_text_file", map[string]any{"path": filepath.Join(granted, "hello.txt")}, "hello from the granted folder"))
	t.Run("write in the granted folder", allowed("write_file", map[string]any{"path": filepath.Join(granted, "new.txt"), "content": "written"}, "Successfully wrote"))
	t.Run("symlink in the granted folder to a file outside refused by the server", byServer("read_text_file", map[string]any{"path": filepath.Join(granted, "link-to-outside.txt")}))
	t.Run("../ escape refused by the server", byServer("read_text_file", map[string]any{"path": granted + "/../../outside.txt"}))
	t.Run("~/.ssh refused by the server", byServer("read_text_file", map[string]any{"path": sshKey}))
	t.Run("~/.ssh listing refused by the server", byServer("list_directory", map[string]any{"path": filepath.Dir(sshKey)}))

	// The server resolved its roots at start; now the granted folder's path
	// names another folder.
	if err := os.Rename(granted, granted+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(private, granted); err != nil {
		t.Fatal(err)
	}
	t.Run("a folder moved to the granted path after start refused by Landlock", byLandlock("read_text_file", map[string]any{"path": filepath.Join(granted, "secret.txt")}))
	t.Run("a write there refused by Landlock", byLandlock("write_file", map[string]any{"path": filepath.Join(granted, "planted.txt"), "content": "x"}))
	if _, err := os.Stat(filepath.Join(granted, "planted.txt")); !os.IsNotExist(err) {
		t.Errorf("the refused write left a file: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(granted+".old", "new.txt")); err != nil || string(data) != "written" {
		t.Errorf("the granted write: %q %v", data, err)
	}
}
