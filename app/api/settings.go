package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
)

// The history's defaults, as config.History's zero value means.
const (
	DefaultRetentionAge   = 30 * 24 * time.Hour
	DefaultRetentionBytes = 1 << 30
)

func (s *Server) settingsRoutes() {
	s.mux.Handle("GET /api/v1/settings", handle(s.getSettings, http.StatusOK))
	s.mux.Handle("PUT /api/v1/settings", handle(s.putSettings, http.StatusOK))
}

func settingsOf(c *config.Config) wire.Settings {
	r := wire.Retention{MaxAge: wire.Duration{Duration: c.History.MaxAge.Duration}, MaxBytes: c.History.MaxBytes}
	if r.MaxAge.Duration == 0 {
		r.MaxAge.Duration = DefaultRetentionAge
	}
	if r.MaxBytes == 0 {
		r.MaxBytes = DefaultRetentionBytes
	}
	timeout := wire.Duration{Duration: c.SessionTimeout.Duration}
	if timeout.Duration == 0 {
		timeout.Duration = DefaultSessionTimeout
	}
	redact := !c.History.KeepSecretValues
	search := c.ToolSearch
	ask := wire.Duration{Duration: c.AskTimeout.Duration}
	if ask.Duration == 0 {
		ask.Duration = DefaultAskTimeout
	}
	return wire.Settings{Retention: r, SessionTimeout: &timeout, RedactValues: &redact, ToolSearch: &search, AskTimeout: &ask}
}

// DefaultAskTimeout is config.AskTimeout's zero value's meaning (the
// gateway's DefaultAskTimeout).
const DefaultAskTimeout = 2 * time.Minute

// DefaultSessionTimeout is config.SessionTimeout's zero value's meaning.
const DefaultSessionTimeout = 30 * time.Minute

func (s *Server) getSettings(*http.Request) (wire.Settings, error) {
	st := settingsOf(s.cfg.Current())
	return st, s.readStartAtLogin(&st)
}

// readStartAtLogin fills in whether the autostart entry exists.
func (s *Server) readStartAtLogin(st *wire.Settings) error {
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
// them at once (the next retention pass uses the new bounds; /mcp's search
// mode holds for the sessions opened from then on).
func (s *Server) putSettings(r *http.Request) (wire.Settings, error) {
	// Retention, shadowing the embedded one, tells whether the body has
	// it, and which bounds: a PUT of one setting ({"toolSearch": true}) or
	// one bound keeps the others as they are rather than restoring the
	// defaults. A field the settings do not have is refused: a misspelt
	// one ({"retention": {"days": 7}}) would otherwise change nothing, or
	// the bounds it sits next to, and answer 200.
	var body struct {
		wire.Settings
		Retention *struct {
			MaxAge   *wire.Duration `json:"maxAge"`
			MaxBytes *int64         `json:"maxBytes"`
		} `json:"retention"`
	}
	if err := decodeStrictBody(r, &body); err != nil {
		return wire.Settings{}, err
	}
	in := body.Settings
	if in.StartAtLogin != nil {
		if s.autostart == nil {
			return wire.Settings{}, errorf(http.StatusConflict, "this Switchboard cannot manage starting at login")
		}
		var err error
		if *in.StartAtLogin {
			err = s.autostart.Enable(s.autostartCmd)
		} else {
			err = s.autostart.Disable()
		}
		if err != nil {
			return wire.Settings{}, fmt.Errorf("changing the start-at-login entry %s: %w", s.autostart.Where(), err)
		}
	}
	cfg, err := s.cfg.Update(r.Context(), func(c *config.Config) error {
		keep := c.History.KeepSecretValues
		if in.RedactValues != nil {
			keep = !*in.RedactValues
		}
		c.History.KeepSecretValues = keep
		if rt := body.Retention; rt != nil {
			if rt.MaxAge != nil {
				c.History.MaxAge = config.Duration{Duration: rt.MaxAge.Duration}
			}
			if rt.MaxBytes != nil {
				c.History.MaxBytes = *rt.MaxBytes
			}
		}
		if in.SessionTimeout != nil {
			c.SessionTimeout = config.Duration{Duration: in.SessionTimeout.Duration}
		}
		if in.ToolSearch != nil {
			c.ToolSearch = *in.ToolSearch
		}
		if in.AskTimeout != nil {
			c.AskTimeout = config.Duration{Duration: in.AskTimeout.Duration}
		}
		if err := c.Validate(); err != nil {
			return errorf(http.StatusBadRequest, "invalid settings: %v", err)
		}
		return nil
	})
	if err != nil {
		return wire.Settings{}, updateError(err)
	}
	st := settingsOf(cfg)
	return st, s.readStartAtLogin(&st)
}
