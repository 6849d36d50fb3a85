package install

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/catalog"
)

// makeBundle zips files into an .mcpb.
func makeBundle(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func serve(t *testing.T, body []byte) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	t.Cleanup(srv.Close)
	return srv.URL + "/fixture.mcpb"
}

func TestInstallMCPB(t *testing.T) {
	needNPM(t)
	server, err := os.ReadFile("testdata/fixture-server/bin/server.js")
	if err != nil {
		t.Fatal(err)
	}
	manifest := `{
  "manifest_version": "0.3", "name": "fixture", "version": "0.9.0",
  "server": {"type": "node", "entry_point": "server/index.js",
    "mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js", "--label", "${user_config.label}", "${user_config.paths}"],
      "env": {"API_KEY": "${user_config.api_key}", "MODE": "plain"}}},
  "user_config": {
    "api_key": {"type": "string", "title": "API key", "sensitive": true, "required": true},
    "label": {"type": "string", "default": "dflt"},
    "paths": {"type": "directory", "multiple": true}
  }
}`
	bundle := makeBundle(t, map[string]string{"manifest.json": manifest, "server/index.js": string(server)})
	sum := sha256.Sum256(bundle)
	url := serve(t, bundle)
	d1, d2 := t.TempDir(), t.TempDir()

	pkg := catalog.Package{RegistryType: catalog.RegistryMCPB, Identifier: url, FileSHA256: hex.EncodeToString(sum[:]),
		Transport: catalog.Transport{Type: "stdio"}}
	values := map[string]string{"api_key": "mcpb-secret-value", "paths": d1 + "\n" + d2}

	t.Run("good sha256", func(t *testing.T) {
		in := newInstaller(t, Options{})
		var rec recorder
		res, err := in.Install(context.Background(), Request{Server: "bundle", Package: pkg, Values: values}, rec.add)
		if err != nil {
			t.Fatalf("Install: %v\n%s", err, rec.text())
		}
		dir := filepath.Join(in.ServersDir(), "bundle", "0.9.0")
		want := []string{filepath.Join(dir, "server", "index.js"), "--label", "dflt", d1, d2}
		if res.Dir != dir || strings.Join(res.Config.Args, "|") != strings.Join(want, "|") {
			t.Errorf("dir %q args %q; want %q %q", res.Dir, res.Config.Args, dir, want)
		}
		if res.Config.Env["MODE"] != "plain" || res.Config.Env["API_KEY"] != "" || len(res.SecretEnv) != 1 || res.SecretEnv[0] != "API_KEY" {
			t.Errorf("env %v, secretEnv %v", res.Config.Env, res.SecretEnv)
		}
		found := false
		for _, tl := range res.Tools {
			found = found || tl.Name == "secret_present"
		}
		if !found {
			t.Errorf("verify did not get the sensitive user_config value: tools %v", res.Tools)
		}
		if strings.Contains(rec.text(), "mcpb-secret-value") {
			t.Error("the secret leaked into progress")
		}
		if _, err := os.Stat(filepath.Join(dir, ".bundle.mcpb")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the downloaded bundle was left in place: %v", err)
		}
	})

	t.Run("bad sha256", func(t *testing.T) {
		in := newInstaller(t, Options{})
		bad := pkg
		bad.FileSHA256 = strings.Repeat("ab", 32)
		_, err := in.Install(context.Background(), Request{Server: "bundle", Package: bad, Values: values}, nil)
		if err == nil || !strings.Contains(err.Error(), "SHA-256 is "+hex.EncodeToString(sum[:])) {
			t.Fatalf("err = %v, want a SHA-256 mismatch", err)
		}
		if _, err := os.Stat(filepath.Join(in.ServersDir(), "bundle")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("server dir left: %v", err)
		}
		if keys, _ := in.opts.Secrets.Keys("bundle"); len(keys) != 0 {
			t.Errorf("secrets left: %q", keys)
		}
	})

	t.Run("missing sha256", func(t *testing.T) {
		in := newInstaller(t, Options{})
		bad := pkg
		bad.FileSHA256 = ""
		if _, err := in.Install(context.Background(), Request{Server: "bundle", Package: bad, Values: values}, nil); err == nil || !strings.Contains(err.Error(), "fileSha256") {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("missing required user_config", func(t *testing.T) {
		in := newInstaller(t, Options{})
		_, err := in.Install(context.Background(), Request{Server: "bundle", Package: pkg, Values: map[string]string{}}, nil)
		var ie *InputError
		if !errors.As(err, &ie) || ie.Input != "api_key" {
			t.Errorf("err = %v, want an InputError for api_key", err)
		}
	})

	t.Run("too large", func(t *testing.T) {
		in := newInstaller(t, Options{MaxDownload: 100})
		if _, err := in.Install(context.Background(), Request{Server: "bundle", Package: pkg, Values: values}, nil); err == nil || !strings.Contains(err.Error(), "limit") {
			t.Errorf("err = %v, want a size limit error", err)
		}
	})
}

func TestUnzipRefusesTraversal(t *testing.T) {
	for _, name := range []string{"../evil.js", "a/../../evil.js", "/abs.js", `..\evil.js`} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "b.zip")
			if err := os.WriteFile(src, makeBundle(t, map[string]string{"ok.txt": "ok", name: "x"}), 0o600); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := unzip(src, out, 1<<20); err == nil || !strings.Contains(err.Error(), "outside") {
				t.Errorf("err = %v, want a refusal", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "evil.js")); err == nil {
				t.Error("a file escaped the directory")
			}
		})
	}
}

// An OCI install runs docker pull, then docker run. A fake docker on PATH
// stands in for the engine (none runs here): it logs pull and execs the
// fixture server for run, which proves the -e pass-through of the secret.
func TestInstallOCIWithFakeDocker(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("shell script fake")
	}
	needNPM(t)
	bin := t.TempDir()
	server, _ := filepath.Abs("testdata/fixture-server/bin/server.js")
	script := "#!/bin/sh\nif [ \"$1\" = pull ]; then echo \"pulling $2\"; echo 'Status: Downloaded newer image'; exit 0; fi\n" +
		"if [ \"$1\" = run ]; then exec node " + server + "; fi\nexit 2\n"
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	in := newInstaller(t, Options{PATH: bin + string(os.PathListSeparator) + os.Getenv("PATH")})
	var rec recorder
	res, err := in.Install(context.Background(), Request{Server: "img", Package: catalog.Package{
		RegistryType: catalog.RegistryOCI, Identifier: "mcp/fixture", Version: "1.0",
		Transport:       catalog.Transport{Type: "stdio"},
		EnvironmentVars: []catalog.KeyValue{{Name: "API_KEY", Input: catalog.Input{IsSecret: true, IsRequired: true}}},
	}, Values: map[string]string{"API_KEY": "docker-secret"}}, rec.add)
	if err != nil {
		t.Fatalf("Install: %v\n%s", err, rec.text())
	}
	want := []string{"run", "-i", "--rm", "-e", "API_KEY", "mcp/fixture:1.0"}
	if res.Config.Command != filepath.Join(bin, "docker") || strings.Join(res.Config.Args, " ") != strings.Join(want, " ") {
		t.Errorf("config %q %q", res.Config.Command, res.Config.Args)
	}
	if !strings.Contains(rec.text(), "pulling mcp/fixture:1.0") {
		t.Errorf("docker pull output not streamed: %s", rec.text())
	}
	if len(res.Tools) != 3 {
		t.Errorf("tools = %v", res.Tools)
	}
}

func TestMissingRuntime(t *testing.T) {
	empty := t.TempDir()
	in := newInstaller(t, Options{PATH: empty})
	tests := []struct {
		pkg  catalog.Package
		want string
	}{
		{catalog.Package{RegistryType: catalog.RegistryNPM, Identifier: "x", Version: "1"}, "npm not found in PATH: install Node.js 18 or newer"},
		{catalog.Package{RegistryType: catalog.RegistryPyPI, Identifier: "x", Version: "1"}, "uvx not found in PATH: install uv"},
		{catalog.Package{RegistryType: catalog.RegistryOCI, Identifier: "x"}, "neither docker nor podman found in PATH"},
		{catalog.Package{RegistryType: catalog.RegistryNuGet, Identifier: "x"}, `packages of type "nuget" cannot be installed`},
		{catalog.Package{RegistryType: catalog.RegistryCommand, Identifier: "no-such-program-x"}, `command "no-such-program-x" not found in PATH`},
		{catalog.Package{RegistryType: catalog.RegistryNPM, Identifier: "x", Transport: catalog.Transport{Type: "sse"}}, `transport "sse" is not supported`},
	}
	for _, tt := range tests {
		_, err := in.Install(context.Background(), Request{Server: "s", Package: tt.pkg}, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.pkg.RegistryType, err, tt.want)
		}
	}
	if _, err := in.Install(context.Background(), Request{Server: "../etc", Package: tests[0].pkg}, nil); err == nil || !strings.Contains(err.Error(), "invalid server name") {
		t.Errorf("bad server name: %v", err)
	}
	if _, err := os.Stat(in.ServersDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("failed installs created %s", in.ServersDir())
	}
}
