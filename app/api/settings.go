package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/app/config"
)

// Settings are the daemon's settings the dashboard changes
// (GET and PUT /api/v1/settings); they live in config.json.
type Settings struct {
	Retention Retention `json:"retention"`
	// SessionTimeout closes an MCP client session that sent no request for
	// this long. GET answers the timeout in force; a PUT with 0 restores
	// the default (30 minutes), and one without it leaves it as it is.
	SessionTimeout *config.Duration `json:"sessionTimeout,omitempty"`
	// StartAtLogin tells whether Switchboard starts when the user logs in
	// (an XDG autostart file, a LaunchAgent, a Run value); absent when this
	// daemon cannot manage that entry.
	StartAtLogin *bool `json:"startAtLogin,omitempty"`
	// RedactValues tells whether credentials found inside call arguments,
	// responses and server logs (sk-…, ghp_…, JWTs, PEM keys) are replaced
	// before they are stored in the history. GET always answers it; a PUT
	// without it leaves it as it is.
	RedactValues *bool `json:"redactValues,omitempty"`
}

// Retention is how much call history is kept. GET answers the bounds in
// force (defaults filled in); a PUT with 0 restores a default.
type Retention struct {
	MaxAge   config.Duration `json:"maxAge"`
	MaxBytes int64           `json:"maxBytes"`
}

// The history's defaults, as config.History's zero value means.
const (
	DefaultRetentionAge   = 30 * 24 * time.Hour
	DefaultRetentionBytes = 1 << 30
)

func (s *Server) settingsRoutes() {
	s.mux.Handle("GET /api/v1/settings", handle(s.getSettings, http.StatusOK))
	s.mux.Handle("PUT /api/v1/settings", handle(s.putSettings, http.StatusOK))
}

func settingsOf(c *config.Config) Settings {
	r := Retention{MaxAge: c.History.MaxAge, MaxBytes: c.History.MaxBytes}
	if r.MaxAge.Duration == 0 {
		r.MaxAge.Duration = DefaultRetentionAge
	}
	if r.MaxBytes == 0 {
		r.MaxBytes = DefaultRetentionBytes
	}
	timeout := c.SessionTimeout
	if timeout.Duration == 0 {
		timeout.Duration = DefaultSessionTimeout
	}
	redact := !c.History.KeepSecretValues
	return Settings{Retention: r, SessionTimeout: &timeout, RedactValues: &redact}
}

// DefaultSessionTimeout is config.SessionTimeout's zero value's meaning.
const DefaultSessionTimeout = 30 * time.Minute

func (s *Server) getSettings(*http.Request) (Settings, error) {
	st := settingsOf(s.cfg.Current())
	return st, s.readStartAtLogin(&st)
}

// readStartAtLogin fills in whether the autostart entry exists.
func (s *Server) readStartAtLogin(st *Settings) error {
	if s.autostart == nil {
		return nil
	}
	on, err := s.autostart.Enabled()
	if err != nil {
		return fmt.Errorf("reading the start-at-login entry %s: %w", s.autostart.Where(), err)
	}
	st.StartAtLogin = &on
	return nil
}

// putSettings writes the settings into config.json; the daemon applies
// them at once (the next retention pass uses the new bounds).
func (s *Server) putSettings(r *http.Request) (Settings, error) {
	var in Settings
	if err := decodeBody(r, &in); err != nil {
		return Settings{}, err
	}
	if in.StartAtLogin != nil {
		if s.autostart == nil {
			return Settings{}, errorf(http.StatusConflict, "this Switchboard cannot manage starting at login")
		}
		var err error
		if *in.StartAtLogin {
			err = s.autostart.Enable(s.autostartCmd)
		} else {
			err = s.autostart.Disable()
		}
		if err != nil {
			return Settings{}, fmt.Errorf("changing the start-at-login entry %s: %w", s.autostart.Where(), err)
		}
	}
	cfg, err := s.cfg.Update(r.Context(), func(c *config.Config) error {
		keep := c.History.KeepSecretValues
		if in.RedactValues != nil {
			keep = !*in.RedactValues
		}
		c.History = config.History{MaxAge: in.Retention.MaxAge, MaxBytes: in.Retention.MaxBytes, KeepSecretValues: keep}
		if in.SessionTimeout != nil {
			c.SessionTimeout = *in.SessionTimeout
		}
		if err := c.Validate(); err != nil {
			return errorf(http.StatusBadRequest, "invalid settings: %v", err)
		}
		return nil
	})
	if err != nil {
		return Settings{}, updateError(err)
	}
	st := settingsOf(cfg)
	return st, s.readStartAtLogin(&st)
}
