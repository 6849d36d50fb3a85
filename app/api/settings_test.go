package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/autostart"
	"github.com/switchboardhq/switchboard/app/config"
)

func TestSettings(t *testing.T) {
	e := newEnv(t)
	got, err := e.client.Settings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got.Retention.MaxAge.Duration != api.DefaultRetentionAge || got.Retention.MaxBytes != api.DefaultRetentionBytes {
		t.Errorf("defaults: %+v", got)
	}
	resp := e.request(t, http.MethodPut, "/api/v1/settings", `{"retention":{"maxAge":"168h","maxBytes":268435456}}`, nil)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("PUT: %d", resp.StatusCode)
	}
	if h := e.cfg.Current().History; h.MaxAge.Duration != 7*24*time.Hour || h.MaxBytes != 256<<20 {
		t.Errorf("config after PUT: %+v", h)
	}
	for body, want := range map[string]string{
		`{"retention":{"maxAge":"-1h"}}`:  "history.maxAge",
		`{"retention":{"maxBytes":5}}`:    "history.maxBytes",
		`{"retention":{"maxAge":"soon"}}`: "invalid",
	} {
		resp := e.request(t, http.MethodPut, "/api/v1/settings", body, nil)
		var er wire.ErrorResponse
		_ = json.NewDecoder(resp.Body).Decode(&er)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(er.Error, want) {
			t.Errorf("PUT %s: %d %q, want 400 naming %s", body, resp.StatusCode, er.Error, want)
		}
	}
}

func TestSettingsStartAtLogin(t *testing.T) {
	home := t.TempDir()
	entry, err := autostart.New(autostart.Env{GOOS: "linux", Home: home})
	if err != nil {
		t.Fatal(err)
	}
	cmd := []string{"/opt/switchboard/switchboard-tray"}
	e := newEnv(t, func(o *api.Options) { o.Autostart, o.AutostartCommand = entry, cmd })
	st, err := e.client.Settings(t.Context())
	if err != nil || st.StartAtLogin == nil || *st.StartAtLogin {
		t.Fatalf("before: %+v %v", st, err)
	}
	resp := e.request(t, http.MethodPut, "/api/v1/settings", `{"startAtLogin":true}`, nil)
	resp.Body.Close()
	file := filepath.Join(home, ".config", "autostart", autostart.Name+".desktop")
	data, err := os.ReadFile(file)
	if resp.StatusCode != 200 || err != nil || !strings.Contains(string(data), cmd[0]) {
		t.Fatalf("enable: %d, %v\n%s", resp.StatusCode, err, data)
	}
	resp = e.request(t, http.MethodPut, "/api/v1/settings", `{"startAtLogin":false}`, nil)
	resp.Body.Close()
	if _, err := os.Stat(file); resp.StatusCode != 200 || !os.IsNotExist(err) {
		t.Errorf("disable: %d, file %v", resp.StatusCode, err)
	}
	// A daemon that cannot manage the entry leaves it out.
	plain := newEnv(t)
	if st, _ := plain.client.Settings(t.Context()); st.StartAtLogin != nil {
		t.Errorf("without an entry: %+v", st)
	}
}

// TestSettingsSessionTimeout: the MCP session timeout is a setting in
// config.json: 30 minutes by default, validated, kept by a PUT that omits it.
func TestSettingsSessionTimeout(t *testing.T) {
	e := newEnv(t)
	got, err := e.client.Settings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got.SessionTimeout == nil || got.SessionTimeout.Duration != api.DefaultSessionTimeout {
		t.Errorf("default session timeout: %+v", got.SessionTimeout)
	}
	put := func(body string) (int, string) {
		resp := e.request(t, http.MethodPut, "/api/v1/settings", body, nil)
		defer resp.Body.Close()
		var er wire.ErrorResponse
		_ = json.NewDecoder(resp.Body).Decode(&er)
		return resp.StatusCode, er.Error
	}
	if code, msg := put(`{"retention":{},"sessionTimeout":"5m"}`); code != 200 {
		t.Fatalf("PUT 5m: %d %s", code, msg)
	}
	if d := e.cfg.Current().SessionTimeout.Duration; d != 5*time.Minute {
		t.Errorf("config after PUT: %s", d)
	}
	if code, msg := put(`{"retention":{}}`); code != 200 || e.cfg.Current().SessionTimeout.Duration != 5*time.Minute {
		t.Errorf("a PUT without sessionTimeout changed it: %d %s %s", code, msg, e.cfg.Current().SessionTimeout)
	}
	if code, msg := put(`{"retention":{},"sessionTimeout":"10s"}`); code != 400 || !strings.Contains(msg, "sessionTimeout") {
		t.Errorf("PUT 10s: %d %q, want 400 naming sessionTimeout", code, msg)
	}
	if code, _ := put(`{"retention":{},"sessionTimeout":"0s"}`); code != 200 || e.cfg.Current().SessionTimeout.Duration != 0 {
		t.Errorf("PUT 0 (default): %d %s", code, e.cfg.Current().SessionTimeout)
	}
	if st, _ := e.client.Settings(t.Context()); st.SessionTimeout == nil || st.SessionTimeout.Duration != api.DefaultSessionTimeout {
		t.Errorf("after restoring the default: %+v", st.SessionTimeout)
	}
}

func TestSettingsRedactValues(t *testing.T) {
	e := newEnv(t)
	st, err := e.client.Settings(t.Context())
	if err != nil || st.RedactValues == nil || !*st.RedactValues {
		t.Fatalf("default: %+v %v (want redactValues true)", st, err)
	}
	put := func(body string) wire.Settings {
		t.Helper()
		resp := e.request(t, http.MethodPut, "/api/v1/settings", body, nil)
		defer resp.Body.Close()
		var got wire.Settings
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
			t.Fatalf("PUT %s: %d %v", body, resp.StatusCode, err)
		}
		return got
	}
	if got := put(`{"redactValues":false}`); *got.RedactValues || !e.cfg.Current().History.KeepSecretValues {
		t.Errorf("after turning it off: %+v, config %+v", got, e.cfg.Current().History)
	}
	// A PUT without it (retention only) leaves it off.
	if got := put(`{"retention":{"maxAge":"48h"}}`); *got.RedactValues || !e.cfg.Current().History.KeepSecretValues {
		t.Errorf("a retention PUT changed it: %+v, config %+v", got, e.cfg.Current().History)
	}
	// A PUT without retention leaves the history's bounds as they are.
	if got := put(`{"redactValues":true}`); !*got.RedactValues || e.cfg.Current().History.KeepSecretValues || got.Retention.MaxAge.Duration != 48*time.Hour {
		t.Errorf("after turning it on: %+v, config %+v", got, e.cfg.Current().History)
	}
}

// storeConfig is the daemon's config: a config.Store on a real file.
type storeConfig struct{ *config.Store }

func (s storeConfig) Update(_ context.Context, fn func(*config.Config) error) (*config.Config, error) {
	return s.Store.Update(fn)
}

// TestSettingsToolSearch: /mcp's search mode is a setting, off by default,
// written through the config store into config.json (the rest of the
// file as it was, unknown keys included), kept by a PUT that omits it.
func TestSettingsToolSearch(t *testing.T) {
	home := t.TempDir()
	t.Setenv("SWITCHBOARD_HOME", home)
	path := filepath.Join(home, config.FileName)
	cfg := config.Default()
	cfg.Servers["fs"] = config.Server{Command: "npx", Args: []string{"-y", "server-filesystem", "/tmp"}}
	cfg.Profiles = map[string]config.Profile{"coding": {Servers: []string{"fs"}, Tools: map[string][]string{"fs": {"read_file"}}}}
	if err := cfg.Save(path); err != nil {
		t.Fatal(err)
	}
	// The user's own key, which Switchboard does not know.
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before = []byte(strings.Replace(string(before), "\n}", ",\n  \"myNote\": \"mine\"\n}", 1))
	if err := os.WriteFile(path, before, 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := config.NewStore(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *api.Options) { o.Config = storeConfig{store} })

	st, err := e.client.Settings(t.Context())
	if err != nil || st.ToolSearch == nil || *st.ToolSearch {
		t.Fatalf("default: %+v %v (want toolSearch false)", st, err)
	}
	// The one setting, as a script would PUT it.
	resp := e.request(t, http.MethodPut, "/api/v1/settings", `{"toolSearch":true}`, nil)
	var got wire.Settings
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 || got.ToolSearch == nil || !*got.ToolSearch {
		t.Fatalf("turning it on: %d %+v %v", resp.StatusCode, got, err)
	}
	resp.Body.Close()
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := config.Load(path)
	if err != nil || !onDisk.ToolSearch || onDisk.Profiles["coding"].Tools["fs"][0] != "read_file" {
		t.Fatalf("config.json after the PUT: %v\n%s", err, after)
	}
	// The file is the one before with the one line added.
	var added []string
	beforeLines := strings.Split(string(before), "\n")
	for _, line := range strings.Split(string(after), "\n") {
		if !slices.Contains(beforeLines, line) {
			added = append(added, line)
		}
	}
	if len(added) != 1 || strings.TrimSpace(added[0]) != `"toolSearch": true,` || len(strings.Split(string(after), "\n")) != len(beforeLines)+1 {
		t.Errorf("config.json changed by more than the toolSearch line (added %q):\nbefore:\n%s\nafter:\n%s", added, before, after)
	}
	if !strings.Contains(string(after), `"myNote": "mine"`) {
		t.Errorf("the user's own key is gone:\n%s", after)
	}
	// A PUT without it (retention only) keeps it on; GET answers it.
	resp = e.request(t, http.MethodPut, "/api/v1/settings", `{"retention":{"maxAge":"48h"}}`, nil)
	resp.Body.Close()
	st, err = e.client.Settings(t.Context())
	if resp.StatusCode != 200 || err != nil || st.ToolSearch == nil || !*st.ToolSearch || st.Retention.MaxAge.Duration != 48*time.Hour {
		t.Errorf("after a PUT without toolSearch: %d %+v %v", resp.StatusCode, st, err)
	}
	// The dashboard's way: the settings it read, with the box changed.
	off := false
	st.ToolSearch = &off
	if got, err := e.client.UpdateSettings(t.Context(), st); err != nil || *got.ToolSearch || store.Current().ToolSearch {
		t.Errorf("turning it off: %+v %v", got, err)
	}
	if data, _ := os.ReadFile(path); strings.Contains(string(data), "toolSearch") || !strings.Contains(string(data), `"maxAge": "48h"`) {
		t.Errorf("config.json after turning it off (want no toolSearch, maxAge 48h kept):\n%s", data)
	}
}

// TestSettingsPutKeepsWhatItLeavesOut: a PUT naming a field the settings do
// not have (a typo: "days", "tool_search") is refused with the field named,
// and changes nothing; a retention naming one bound keeps the other, as a
// setting a PUT leaves out keeps its value (a misspelt bound used to put
// both back to the defaults, and the next retention pass pruned the
// history to them).
func TestSettingsPutKeepsWhatItLeavesOut(t *testing.T) {
	e := newEnv(t)
	put := func(body string) (int, string) {
		t.Helper()
		resp := e.request(t, http.MethodPut, "/api/v1/settings", body, nil)
		defer resp.Body.Close()
		var er wire.ErrorResponse
		_ = json.NewDecoder(resp.Body).Decode(&er)
		return resp.StatusCode, er.Error
	}
	if code, msg := put(`{"retention":{"maxAge":"2160h","maxBytes":268435456}}`); code != 200 {
		t.Fatalf("PUT 90 days, 256 MiB: %d %s", code, msg)
	}
	want := config.History{MaxAge: config.Duration{Duration: 2160 * time.Hour}, MaxBytes: 256 << 20}
	for body, field := range map[string]string{
		`{"retention":{"days":7}}`:                    `"days"`,
		`{"retention":{"maxAge":"24h","days":7}}`:     `"days"`,
		`{"tool_search":true}`:                        `"tool_search"`,
		`{"redactValues":false,"retentionDays":3}`:    `"retentionDays"`,
		`{"retention":{"maxAge":"1h"},"bogus":null}`:  `"bogus"`,
		`{"sessionTimeout":"5m","retention":{"x":1}}`: `"x"`,
	} {
		code, msg := put(body)
		if code != http.StatusBadRequest || !strings.Contains(msg, field) {
			t.Errorf("PUT %s: %d %q, want 400 naming %s", body, code, msg, field)
		}
		if c := e.cfg.Current(); c.History != want || c.SessionTimeout.Duration != 0 {
			t.Fatalf("PUT %s changed the settings: history %+v, session timeout %s", body, c.History, c.SessionTimeout)
		}
	}
	// One bound keeps the other.
	if code, msg := put(`{"retention":{"maxAge":"48h"}}`); code != 200 {
		t.Fatalf("PUT maxAge: %d %s", code, msg)
	}
	want.MaxAge.Duration = 48 * time.Hour
	if h := e.cfg.Current().History; h != want {
		t.Errorf("after a PUT of maxAge alone: %+v, want %+v", h, want)
	}
	if code, msg := put(`{"retention":{"maxBytes":134217728}}`); code != 200 {
		t.Fatalf("PUT maxBytes: %d %s", code, msg)
	}
	want.MaxBytes = 128 << 20
	if h := e.cfg.Current().History; h != want {
		t.Errorf("after a PUT of maxBytes alone: %+v, want %+v", h, want)
	}
	// An empty retention changes nothing; a zero bound is the default.
	if code, _ := put(`{"retention":{}}`); code != 200 || e.cfg.Current().History != want {
		t.Errorf("after a PUT of an empty retention: %d %+v, want %+v", code, e.cfg.Current().History, want)
	}
	if code, _ := put(`{"retention":{"maxAge":"0s"}}`); code != 200 || e.cfg.Current().History.MaxAge.Duration != 0 {
		t.Errorf("after a PUT of maxAge 0: %d %+v, want the default (0)", code, e.cfg.Current().History)
	}
}
