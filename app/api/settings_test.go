package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
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
		var er api.ErrorResponse
		_ = json.NewDecoder(resp.Body).Decode(&er)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(er.Error, want) {
			t.Errorf("PUT %s: %d %q, want 400 naming %s", body, resp.StatusCode, er.Error, want)
		}
	}
}
