package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/autostart"
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
	if got := put(`{"redactValues":true}`); !*got.RedactValues || e.cfg.Current().History.KeepSecretValues {
		t.Errorf("after turning it on: %+v, config %+v", got, e.cfg.Current().History)
	}
}
