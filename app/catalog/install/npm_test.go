package install

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/config"
)

const fixtureSecret = "sk-fixture-0123456789"

func fixturePackage(tgz string) catalog.Package {
	return catalog.Package{
		RegistryType: catalog.RegistryNPM,
		Identifier:   tgz,
		Transport:    catalog.Transport{Type: "stdio"},
		RuntimeArguments: []catalog.Argument{
			{Type: "named", Name: "--yes", Input: catalog.Input{Format: "boolean", Value: "true"}},
		},
		PackageArguments: []catalog.Argument{
			{Type: "positional", ValueHint: "root", Input: catalog.Input{Format: "directory", IsRequired: true}},
			{Type: "named", Name: "--label", Input: catalog.Input{}},
		},
		EnvironmentVars: []catalog.KeyValue{
			{Name: "API_KEY", Input: catalog.Input{IsRequired: true, IsSecret: true}},
			{Name: "LOG_LEVEL", Input: catalog.Input{Default: "info", Choices: []string{"debug", "info"}}},
		},
	}
}

// callTool starts cfg as the daemon would (secrets resolved) and calls tool.
func callTool(t *testing.T, in *Installer, server string, res Result, tool string, args map[string]any) string {
	t.Helper()
	launch := res.Config
	vals, err := in.opts.Secrets.Resolve(server, res.SecretEnv)
	if err != nil {
		t.Fatal(err)
	}
	launch.Env = map[string]string{}
	for k, v := range res.Config.Env {
		launch.Env[k] = v
	}
	for k, v := range vals {
		launch.Env[k] = v
	}
	if launch.Args, err = in.opts.Secrets.Expand(server, res.Config.Args); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := in.startSession(ctx, server, launch, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	r, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return r.Content[0].(*mcp.TextContent).Text
}

func TestInstallNPMTarball(t *testing.T) {
	tgz := packFixture(t)
	in := newInstaller(t, Options{})
	root := t.TempDir()
	var rec recorder
	req := Request{
		Server:  "fixture",
		Entry:   catalog.Entry{Name: "io.github.switchboardhq/fixture", Version: "1.2.3"},
		Package: fixturePackage(tgz),
		Values:  map[string]string{"API_KEY": fixtureSecret, "root": root, "--label": "a label; $(rm -rf ~) `x`"},
	}
	res, err := in.Install(context.Background(), req, rec.add)
	if err != nil {
		t.Fatalf("Install: %v\nprogress: %s", err, rec.text())
	}

	// The config runs node directly on the absolute bin.
	node, _ := filepath.Abs(in.opts.Node)
	wantDir := filepath.Join(in.ServersDir(), "fixture", "1.2.3")
	wantBin := filepath.Join(wantDir, "node_modules", "switchboard-fixture-server", "bin", "server.js")
	want := config.Server{
		Command: node,
		Args:    []string{wantBin, root, "--label", "a label; $(rm -rf ~) `x`"},
		Env:     map[string]string{"LOG_LEVEL": "info"},
	}
	if diff := cmp.Diff(want, res.Config, cmp.AllowUnexported(config.Server{}, config.Pool{})); diff != "" {
		t.Errorf("Config (-want +got):\n%s", diff)
	}
	if res.Version != "1.2.3" || res.Dir != wantDir {
		t.Errorf("Version, Dir = %q, %q; want 1.2.3, %s", res.Version, res.Dir, wantDir)
	}
	if diff := cmp.Diff([]string{"API_KEY"}, res.SecretEnv); diff != "" {
		t.Errorf("SecretEnv (-want +got):\n%s", diff)
	}
	// Verify ran with the secret (the fixture lists secret_present only then).
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if diff := cmp.Diff([]string{"echo", "argv", "secret_present"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	// The secret is in the store and nowhere in the result or the progress.
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), fixtureSecret) || strings.Contains(rec.text(), fixtureSecret) {
		t.Errorf("the secret leaked into the result or progress: %s", b)
	}
	if v, err := in.opts.Secrets.Get("fixture", "API_KEY"); err != nil || v != fixtureSecret {
		t.Errorf("secret store: %q, %v", v, err)
	}
	// Phases in order, npm's own lines streamed, one final Done.
	if diff := cmp.Diff([]Phase{PhaseResolve, PhaseDownload, PhaseInstall, PhaseVerify}, rec.phases()); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	reps := rec.reports()
	if last := reps[len(reps)-1]; !last.Done || last.Err != "" || last.Percent != 100 {
		t.Errorf("last report = %+v, want Done", last)
	}
	sawNPM := slices.ContainsFunc(reps, func(p Progress) bool { return p.Output && p.Phase == PhaseDownload })
	sawServer := slices.ContainsFunc(reps, func(p Progress) bool {
		return p.Output && p.Phase == PhaseVerify && p.Line == "fixture server ready"
	})
	if !sawNPM || !sawServer {
		t.Errorf("missing streamed output (npm %v, server stderr %v): %s", sawNPM, sawServer, rec.text())
	}
	// The argument with shell syntax reached the server as one argv element.
	got := callTool(t, in, "fixture", res, "argv", nil)
	if want := `["` + root + `","--label","a label; $(rm -rf ~) ` + "`x`" + `"]`; got != want {
		t.Errorf("server argv = %s, want %s", got, want)
	}

	// A second fresh install is refused and changes nothing.
	_, err = in.Install(context.Background(), req, nil)
	if !errors.Is(err, ErrAlreadyInstalled) {
		t.Errorf("second Install: err = %v, want ErrAlreadyInstalled", err)
	}
	if _, err := os.Stat(wantBin); err != nil {
		t.Errorf("refused install touched the old files: %v", err)
	}

	// Uninstall removes files and secrets.
	if _, err := in.Uninstall(context.Background(), "fixture", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(in.ServersDir(), "fixture")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("server dir after Uninstall: %v", err)
	}
	if keys, _ := in.opts.Secrets.Keys("fixture"); len(keys) != 0 {
		t.Errorf("secrets after Uninstall: %q", keys)
	}
}

// An update installs beside the old version; a failed one leaves it alone
// and restores the old secret.
func TestUpdate(t *testing.T) {
	tgz := packFixture(t)
	in := newInstaller(t, Options{})
	root := t.TempDir()
	req := Request{Server: "fx", Package: fixturePackage(tgz), Values: map[string]string{"API_KEY": "old-secret", "root": root}}
	first, err := in.Install(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Make the fixture look like an old version so the update has a new one.
	if err := os.Rename(first.Dir, filepath.Join(in.ServersDir(), "fx", "1.0.0")); err != nil {
		t.Fatal(err)
	}
	oldBin := strings.Replace(first.Config.Args[0], first.Dir, filepath.Join(in.ServersDir(), "fx", "1.0.0"), 1)

	// A failing update: the server exits at verify.
	bad := req
	bad.Update = true
	bad.Package.EnvironmentVars = append(slices.Clone(bad.Package.EnvironmentVars),
		catalog.KeyValue{Name: "FIXTURE_FAIL", Input: catalog.Input{Value: "update test"}})
	bad.Values = map[string]string{"API_KEY": "new-secret", "root": root}
	_, err = in.Install(context.Background(), bad, nil)
	var ie *Error
	if !errors.As(err, &ie) || ie.Phase != PhaseVerify || !slices.ContainsFunc(ie.Output, func(l string) bool { return strings.Contains(l, "failing on purpose") }) {
		t.Fatalf("failed update: err = %v, want a verify *Error with the server's stderr", err)
	}
	if got, _ := in.Versions("fx"); !slices.Equal(got, []string{"1.0.0"}) {
		t.Errorf("after the failed update, versions = %q, want only 1.0.0", got)
	}
	if _, err := os.Stat(oldBin); err != nil {
		t.Errorf("old version damaged: %v", err)
	}
	if v, _ := in.opts.Secrets.Get("fx", "API_KEY"); v != "old-secret" {
		t.Errorf("secret after the failed update = %q, want the old one back", v)
	}

	// A good update: new version beside the old, old listed in Previous.
	good := req
	good.Update = true
	good.Values = map[string]string{"API_KEY": "new-secret", "root": root}
	res, err := in.Install(context.Background(), good, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != "1.2.3" || !slices.Equal(res.Previous, []string{"1.0.0"}) {
		t.Errorf("update: version %q, previous %q", res.Version, res.Previous)
	}
	if got, _ := in.Versions("fx"); !slices.Equal(got, []string{"1.0.0", "1.2.3"}) {
		t.Errorf("versions = %q", got)
	}
	if err := in.Remove("fx", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if got, _ := in.Versions("fx"); !slices.Equal(got, []string{"1.2.3"}) {
		t.Errorf("after Remove, versions = %q", got)
	}
	if err := in.Remove("fx", "../x"); err == nil {
		t.Error("Remove accepted a version with ..")
	}
}

func TestInstallMissingNPMPackage(t *testing.T) {
	needNPM(t)
	in := newInstaller(t, Options{})
	var rec recorder
	req := Request{
		Server: "ghost",
		Package: catalog.Package{
			RegistryType: catalog.RegistryNPM, Identifier: "@switchboardhq-nonexistent/no-such-server-7f3a9", Version: "1.0.0",
			Transport:       catalog.Transport{Type: "stdio"},
			EnvironmentVars: []catalog.KeyValue{{Name: "TOKEN", Input: catalog.Input{IsSecret: true, IsRequired: true}}},
		},
		Values: map[string]string{"TOKEN": "tok-should-vanish"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := in.Install(ctx, req, rec.add)
	var ie *Error
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want *Error", err)
	}
	t.Logf("error:\n%v", err)
	if ie.Phase != PhaseDownload || !strings.Contains(err.Error(), "npm") ||
		!slices.ContainsFunc(ie.Output, func(l string) bool { return strings.Contains(l, "404") }) {
		t.Errorf("error does not carry npm's 404 from the download phase: %v", err)
	}
	if _, err := os.Stat(filepath.Join(in.ServersDir(), "ghost")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("server dir left behind: %v", err)
	}
	if keys, _ := in.opts.Secrets.Keys("ghost"); len(keys) != 0 {
		t.Errorf("secrets left behind: %q", keys)
	}
	reps := rec.reports()
	if last := reps[len(reps)-1]; !last.Done || last.Err == "" {
		t.Errorf("last report = %+v, want Done with Err", last)
	}
}

// Cancelling while npm runs kills npm's process group and rolls back. npm
// is pointed at a local registry that never answers, so it is reliably
// mid-install when the context is cancelled.
func TestInstallCancel(t *testing.T) {
	needNPM(t)
	hung := make(chan struct{})
	requests := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case requests <- r.URL.Path:
		default:
		}
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hung)

	home := isolate(t)
	in := newInstaller(t, Options{Home: home})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := Request{Server: "cancelme", Package: catalog.Package{
		RegistryType: catalog.RegistryNPM, Identifier: "some-mcp-server", Version: "1.0.0",
		RegistryBaseURL: srv.URL + "/", Transport: catalog.Transport{Type: "stdio"},
		EnvironmentVars: []catalog.KeyValue{{Name: "K", Input: catalog.Input{IsSecret: true, Value: ""}}},
	}, Values: map[string]string{"K": "cancelled-secret"}}
	type outcome struct {
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	go func() {
		_, err := in.Install(ctx, req, nil)
		done <- outcome{err, time.Now()}
	}()
	select {
	case p := <-requests:
		t.Logf("npm asked the registry for %s", p)
	case o := <-done:
		t.Fatalf("Install ended before npm reached the registry: %v", o.err)
	case <-time.After(2 * time.Minute):
		t.Fatal("npm never reached the local registry")
	}
	stage := filepath.Join(home, "servers", "cancelme")
	if runtime.GOOS == "linux" && len(processesMentioning(stage)) == 0 {
		t.Error("no npm process was running before cancel; the test proves nothing")
	}
	start := time.Now()
	cancel()
	o := <-done
	took := o.at.Sub(start)
	t.Logf("Install returned %s after cancel: %v", took, o.err)
	if !errors.Is(o.err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", o.err)
	}
	if took > 5*time.Second {
		t.Errorf("cancel took %s", took)
	}
	if procs := processesMentioning(stage); len(procs) != 0 {
		t.Errorf("processes left after cancel: %q", procs)
	}
	if _, err := os.Stat(stage); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("server dir left after cancel: %v", err)
	}
	if keys, _ := in.opts.Secrets.Keys("cancelme"); len(keys) != 0 {
		t.Errorf("secrets left after cancel: %q", keys)
	}
}

const everythingVersion = "2026.8.31"

// A real install from the npm registry. It needs the network (the npm
// registry is reachable here and in CI); it is skipped only without npm.
func TestInstallServerEverything(t *testing.T) {
	needNPM(t)
	in := newInstaller(t, Options{})
	var rec recorder
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := in.Install(ctx, Request{
		Server: "everything",
		Entry:  catalog.Entry{Name: "io.github.modelcontextprotocol/everything", Version: everythingVersion},
		Package: catalog.Package{RegistryType: catalog.RegistryNPM, Identifier: "@modelcontextprotocol/server-everything",
			Version: everythingVersion, Transport: catalog.Transport{Type: "stdio"}},
	}, rec.add)
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	t.Logf("installed in %s: %d tools, config %q %q", time.Since(start).Round(time.Millisecond), len(res.Tools), res.Config.Command, res.Config.Args)
	if res.Version != everythingVersion {
		t.Errorf("version = %q", res.Version)
	}
	wantBin := filepath.Join(res.Dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if len(res.Config.Args) != 1 || res.Config.Args[0] != wantBin || filepath.Base(res.Config.Command) != "node" {
		t.Errorf("config = %q %q, want node %s", res.Config.Command, res.Config.Args, wantBin)
	}
	if !slices.ContainsFunc(res.Tools, func(tl Tool) bool { return tl.Name == "echo" }) {
		t.Errorf("tools %v lack echo", res.Tools)
	}
	if got := callTool(t, in, "everything", res, "echo", map[string]any{"message": "hi"}); !strings.Contains(got, "hi") {
		t.Errorf("echo answered %q", got)
	}
}

// A server's data folder (where inputs with a dataPath point by default)
// outlives an old version's removal and an uninstall without purge; a
// reinstall finds it; purge deletes it.
func TestDataFolderKept(t *testing.T) {
	tgz := packFixture(t)
	in := newInstaller(t, Options{})
	pkg := fixturePackage(tgz)
	pkg.EnvironmentVars = append(slices.Clone(pkg.EnvironmentVars), catalog.KeyValue{Name: "STATE_FILE",
		Input: catalog.Input{Format: "filepath", DataPath: "graph.jsonl", Description: "the state"}})
	req := Request{Server: "fx", Package: pkg, Values: map[string]string{"API_KEY": fixtureSecret, "root": t.TempDir()}}
	res, err := in.Install(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := in.DataDir("fx")
	want := filepath.Join(data, "graph.jsonl")
	if got := res.Config.Env["STATE_FILE"]; got != want {
		t.Fatalf("STATE_FILE = %q, want %q (in the data folder, outside %s)", got, want, res.Dir)
	}
	if strings.HasPrefix(want, res.Dir) {
		t.Fatalf("the data folder is inside the version folder %s", res.Dir)
	}
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("data folder: %v %v", fi, err)
	}
	if err := os.WriteFile(want, []byte("the user's graph\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if vs, _ := in.Versions("fx"); !slices.Equal(vs, []string{res.Version}) {
		t.Errorf("versions %v, want only %s (not the data folder)", vs, res.Version)
	}

	u, err := in.Uninstall(context.Background(), "fx", false)
	if err != nil || u.Data != data || u.Purged {
		t.Fatalf("Uninstall = %+v, %v; want the data kept in %s", u, err, data)
	}
	if _, err := os.Stat(res.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the version folder stays after uninstall: %v", err)
	}
	if got, _ := os.ReadFile(want); string(got) != "the user's graph\n" {
		t.Fatalf("data after uninstall: %q", got)
	}

	// Installed again, it points at the same file, which is still there.
	res, err = in.Install(context.Background(), req, nil)
	if err != nil {
		t.Fatalf("reinstall over kept data: %v", err)
	}
	if res.Config.Env["STATE_FILE"] != want {
		t.Errorf("STATE_FILE after reinstall = %q", res.Config.Env["STATE_FILE"])
	}
	// Removing a version (what an update does to the old one) keeps it.
	if err := in.Remove("fx", res.Version); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(want); string(got) != "the user's graph\n" {
		t.Fatalf("data after removing a version: %q", got)
	}
	u, err = in.Uninstall(context.Background(), "fx", true)
	if err != nil || u.Data != "" || !u.Purged {
		t.Fatalf("Uninstall --purge = %+v, %v", u, err)
	}
	if _, err := os.Stat(filepath.Join(in.ServersDir(), "fx")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("server folder after purge: %v", err)
	}
}

// An update of a server installed before its data input defaulted to the
// data folder carries the data it kept inside its old version folder over
// to the data folder, before the old folder goes.
func TestUpdateCarriesDataOut(t *testing.T) {
	tgz := packFixture(t)
	in := newInstaller(t, Options{})
	req := Request{Server: "fx", Package: fixturePackage(tgz), Values: map[string]string{"API_KEY": fixtureSecret, "root": t.TempDir()}}
	first, err := in.Install(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(in.ServersDir(), "fx", "1.0.0")
	if err := os.Rename(first.Dir, old); err != nil {
		t.Fatal(err)
	}
	// Where a server without the input keeps its file: beside its code.
	kept := filepath.Join(old, "node_modules", "switchboard-fixture-server", "graph.jsonl")
	if err := os.WriteFile(kept, []byte("the user's graph\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	up := req
	up.Update = true
	up.Package.EnvironmentVars = append(slices.Clone(up.Package.EnvironmentVars), catalog.KeyValue{Name: "STATE_FILE",
		Input: catalog.Input{Format: "filepath", DataPath: "graph.jsonl", Description: "the state"}})
	res, err := in.Install(context.Background(), up, nil)
	if err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(in.DataDir("fx"), "graph.jsonl")
	if res.Config.Env["STATE_FILE"] != moved {
		t.Fatalf("STATE_FILE = %q, want %q", res.Config.Env["STATE_FILE"], moved)
	}
	if got, _ := os.ReadFile(moved); string(got) != "the user's graph\n" {
		t.Fatalf("data in the data folder after the update: %q", got)
	}
	for _, v := range res.Previous {
		if err := in.Remove("fx", v); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(moved); string(got) != "the user's graph\n" {
		t.Errorf("data after the old version was removed: %q", got)
	}
}

// A server installed by a Switchboard from before data folders (memory
// without MEMORY_FILE_PATH) keeps its data file beside its code. Uninstall
// without purge must not delete it with the version folder: it is carried
// to the data folder, kept and reported, as an update does.
func TestUninstallKeepsDataOfAnOldInstall(t *testing.T) {
	tgz := packFixture(t)
	in := newInstaller(t, Options{})
	req := Request{Server: "memory", Package: fixturePackage(tgz), Values: map[string]string{"API_KEY": fixtureSecret, "root": t.TempDir()}}
	res, err := in.Install(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Where memory kept its graph before: beside its code. The name is the
	// one the catalog's memory entry declares as its data file.
	kept := filepath.Join(res.Dir, "node_modules", "switchboard-fixture-server", "memory.jsonl")
	if err := os.WriteFile(kept, []byte("the user's graph\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := in.Uninstall(context.Background(), "memory", false)
	data := in.DataDir("memory")
	if err != nil || u.Data != data {
		t.Fatalf("Uninstall = %+v, %v; want the data kept in %s", u, err, data)
	}
	if got, _ := os.ReadFile(filepath.Join(data, "memory.jsonl")); string(got) != "the user's graph\n" {
		t.Fatalf("the graph after uninstall: %q", got)
	}
	if _, err := os.Stat(res.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the version folder stays after uninstall: %v", err)
	}
}
